"""The benchmark's quick path runs end to end and writes valid JSON; the page renders (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench._report import GROWTH_CAUSES, growth, markdown
from bench._results import Machine, Results, Spread, Target

ROOT = Path(__file__).resolve().parents[1]


def test_the_quick_benchmark_writes_valid_json_and_the_page_renders_from_it(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, "-m", "bench", "--quick", str(out), "--impl", "reference", "bare",
                           "--steps", "1", "3"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    results = Results.model_validate_json(out.read_text(encoding="utf-8"))
    assert results.quick and results.steps == [1, 3]
    assert set(results.per_step_us) == set(results.per_step_wall_us) == {"reference", "bare"}
    for by_n in results.per_step_us.values():
        assert set(by_n) == {"1", "3"}
        for spread in by_n.values():
            assert len(spread.samples) == results.repetitions
            assert 0 < spread.min <= spread.median <= spread.max
    assert set(results.import_ms) == {"reference", "pydantic"} and results.suite_s == results.session_s == {}
    own = results.suite_own  # the suite's own time: one serial and one `-n 2` run of it
    assert own is not None and own.runs == 1 and own.scenarios > 100
    assert 0 < own.plugins_s.median < own.startup_s.median < own.serial_wall_s.median
    assert own.startup_s.median + own.scenarios_s.median + own.teardown_s.median == pytest.approx(
        own.serial_wall_s.median)
    assert 0 < own.scenario_median_ms.median <= max(s.median for s in own.slowest_ms.values())
    # Only the targets whose figures a two-implementation run has: reference against the bare loop
    # needs N=50; the suite's own time has its two.
    assert [t.name for t in results.targets] == [
        "the suite against the reference, serial, wall s: at most 3",
        "the suite with -n 2 over serial, wall time: under 1 (-n 2 faster)"]
    # The page renders from that JSON (without matplotlib), and explains a missed target from the figures.
    results.targets = [Target(name="import reference, in ms: at most 1/3 of import udspy", value=120.0,
                              limit=60.0, met=False)]
    page = markdown(results)
    assert "| 1 | " in page and "| 3 | " in page and "bare loop (floor)" in page
    assert "| import reference, in ms: at most 1/3 of import udspy | 120 | 60 | **missed** |" in page
    speedup = f"| **`-n 2` speed-up**: serial wall over `-n 2` wall, medians | **{own.speedup:.2f}x** | |"
    assert speedup in page
    assert f"| **start-up in all, to the first scenario** | {own.startup_s.median:.2f} |" in page
    floor = results.import_ms["pydantic"].median
    assert f"Importing pydantic and defining one model takes {floor:.0f} ms" in page


def test_the_page_explains_each_implementation_whose_episode_time_grows_faster_than_linearly() -> None:
    def spread(us: float) -> Spread:
        return Spread.of([us])

    machine = Machine(platform="p", cpu="c", cores=2, python="3.11", load_average=[1.0, 1.0, 1.0])
    per_step = {"dspy": {"10": spread(100.0), "50": spread(300.0)},  # T(50)/T(10) = 15
                "bare": {"10": spread(5.0), "50": spread(5.0)}}      # 5: linear
    results = Results(quick=True, machine=machine, versions={}, steps=[10, 50], repetitions=1, warmups=0,
                      per_step_us=per_step, per_step_wall_us=per_step, import_ms={}, suite_s={}, session_s={},
                      targets=[])
    assert growth(results) == {"dspy": 15.0, "bare": 5.0}
    page = markdown(results)
    assert "| dspy | 15.00 **(faster than linear)** |" in page and "| bare loop (floor) | 5.00 |" in page
    assert f"- **dspy** (15.0): {GROWTH_CAUSES['dspy']}" in page
