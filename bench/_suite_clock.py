"""A pytest plugin the benchmark loads into the suite's runs (`-p bench._suite_clock`).

It notes, on the system-wide monotonic clock (so the parent's clock reads the same), when the
plugins were configured, when collection ended, and when each scenario started and ended, in wall
and CPU time, and writes them as JSON to the file `BENCH_SUITE_CLOCK` names (an xdist worker adds its
name). Without that variable it does nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

ENV = "BENCH_SUITE_CLOCK"
_marks: dict[str, float] = {}
_scenarios: list[dict[str, Any]] = []


def now() -> float:
    """Seconds on the clock every process of the machine shares."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    _marks["configured"] = now()


def pytest_collection_finish(session: pytest.Session) -> None:
    _marks["collected"] = now()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    start, cpu = now(), time.process_time()
    try:
        return (yield)
    finally:
        _scenarios.append({"id": item.nodeid.split("::", 1)[-1], "start": start, "end": now(),
                           "cpu": time.process_time() - cpu})


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    # The xdist worker this process is, if any: by its config, not the environment, which a run
    # started from inside another xdist worker (the tests under `pytest -n auto`) inherits.
    worker = getattr(config, "workerinput", {}).get("workerid")
    out = Path(f"{path}.{worker}" if worker else path)
    out.write_text(json.dumps({"marks": _marks, "scenarios": _scenarios}), encoding="utf-8")
