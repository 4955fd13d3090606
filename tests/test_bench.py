"""The benchmark's quick path runs end to end and writes valid JSON (timings are never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench._results import Results

ROOT = Path(__file__).resolve().parents[1]


def test_the_quick_benchmark_writes_valid_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, "-m", "bench", "--quick", str(out), "--impl", "reference", "bare",
                           "--steps", "1", "3"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    results = Results.model_validate_json(out.read_text(encoding="utf-8"))
    assert results.quick and results.steps == [1, 3]
    assert set(results.per_step_us) == {"reference", "bare"}
    for by_n in results.per_step_us.values():
        assert set(by_n) == {"1", "3"}
        for spread in by_n.values():
            assert len(spread.samples) == results.repetitions
            assert 0 < spread.min <= spread.median <= spread.max
    assert set(results.import_ms) == {"reference", "pydantic"} and results.suite_s == results.session_s == {}
    # Only the targets whose figures a two-implementation run has: reference against the bare loop needs N=50.
    assert results.targets == []

