"""The suite's own time against the reference: start-up, per-scenario time, and what `-n 2` gains.

Serial runs (`python -m pytest --impl reference -q -p no:cacheprovider`) and `-n 2` runs alternate,
after one untimed run of each that leaves the bytecode cached, as after a normal install. Each run is
timed from outside (wall and CPU time of the whole process tree, xdist's workers included); the
serial runs also load `bench._suite_clock`, which notes when the plugins were configured, when
collection ended and when each scenario started and ended.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._results import Spread, SuiteOwn
from bench._suite_clock import ENV, now

COMMAND = [sys.executable, "-m", "pytest", "--impl", "reference", "-q", "-p", "no:cacheprovider"]
#: How many of the slowest scenarios the page names.
SLOWEST = 5


def _run(root: Path, env: dict[str, str], *args: str) -> tuple[float, float]:
    """Wall and CPU seconds of one run (the CPU time of every process it started, too)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = now()
    done = subprocess.run([*COMMAND, *args], cwd=root, env=env, capture_output=True, text=True)
    wall = now() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tally = next((line for line in done.stdout.splitlines() if line.startswith("requirements: ")), "")
    # Every requirement the reference claims passes: the tally names no other verdict.
    if done.returncode != 0 or "passed" not in tally or any(
            v in tally for v in ("failed", "errored", "blocked", "known-failure")):
        raise RuntimeError(f"the suite against the reference did not pass (exit {done.returncode}):\n"
                           f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(root: Path, env: dict[str, str], runs: int) -> SuiteOwn:
    """`runs` serial and `runs` `-n 2` runs, alternating; their figures."""
    serial_wall, serial_cpu, parallel_wall, parallel_cpu = [], [], [], []
    phases: dict[str, list[float]] = {k: [] for k in ("plugins", "collection", "startup", "scenarios",
                                                       "teardown", "median", "mean", "cpu_median")}
    by_scenario: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        clock = Path(tmp) / "clock.json"
        timed = {**env, ENV: str(clock)}
        _run(root, env)  # untimed: the bytecode gets cached
        _run(root, env, "-n", "2")
        for _ in range(runs):
            started = now()
            wall, cpu = _run(root, timed, "-p", "bench._suite_clock")
            ended = started + wall
            serial_wall.append(wall)
            serial_cpu.append(cpu)
            data = json.loads(clock.read_text(encoding="utf-8"))
            scenarios, marks = data["scenarios"], data["marks"]
            first, last = scenarios[0]["start"], scenarios[-1]["end"]
            phases["plugins"].append(marks["configured"] - started)
            phases["collection"].append(marks["collected"] - marks["configured"])
            phases["startup"].append(first - started)
            phases["scenarios"].append(last - first)
            phases["teardown"].append(ended - last)
            durations = [(s["end"] - s["start"]) * 1e3 for s in scenarios]
            phases["median"].append(statistics.median(durations))
            phases["mean"].append(statistics.fmean(durations))
            phases["cpu_median"].append(statistics.median(s["cpu"] * 1e3 for s in scenarios))
            for s, ms in zip(scenarios, durations, strict=True):
                by_scenario.setdefault(s["id"], []).append(ms)
            wall, cpu = _run(root, env, "-n", "2")
            parallel_wall.append(wall)
            parallel_cpu.append(cpu)
    slowest = sorted(by_scenario, key=lambda s: statistics.median(by_scenario[s]), reverse=True)[:SLOWEST]
    return SuiteOwn(
        runs=runs, scenarios=len(by_scenario),
        serial_wall_s=Spread.of(serial_wall), serial_cpu_s=Spread.of(serial_cpu),
        parallel_wall_s=Spread.of(parallel_wall), parallel_cpu_s=Spread.of(parallel_cpu),
        plugins_s=Spread.of(phases["plugins"]), collection_s=Spread.of(phases["collection"]),
        startup_s=Spread.of(phases["startup"]), scenarios_s=Spread.of(phases["scenarios"]),
        teardown_s=Spread.of(phases["teardown"]), scenario_median_ms=Spread.of(phases["median"]),
        scenario_mean_ms=Spread.of(phases["mean"]), scenario_cpu_median_ms=Spread.of(phases["cpu_median"]),
        slowest_ms={s: Spread.of(by_scenario[s]) for s in slowest},
    )

