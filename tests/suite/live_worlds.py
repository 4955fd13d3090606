"""A plugin for child runs of the suite (`-p tests.suite.live_worlds`): at the end of the session,
how many scenarios' states (`World`s) are still alive, written to the file $LIVE_WORLDS_FILE names.

A scenario's state holds everything its library said; one kept for the whole session makes memory
grow with every scenario (a library's 30 MB messages once made a run peak at 2 GB)."""

from __future__ import annotations

import gc
import os

import pytest

from conformance._world import World


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    gc.collect()
    alive = sum(1 for o in gc.get_objects() if isinstance(o, World))
    with open(os.environ["LIVE_WORLDS_FILE"], "w", encoding="utf-8") as out:
        out.write(f"{alive}\n")
