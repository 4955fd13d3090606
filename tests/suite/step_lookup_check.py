"""Loaded with `-p`: asks pytest-bdd's own step lookup too, for every step, and counts the steps
where the suite's cached lookup found other definitions."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from conformance._bdd import _CachedLookup

_bdd = importlib.import_module("pytest_bdd.scenario")
_counts = {"checked": 0, "differing": 0}


@pytest.hookimpl(trylast=True)  # after the suite's plugin installed its lookup
def pytest_configure(config: pytest.Config) -> None:
    cached = _bdd.find_fixturedefs_for_step
    assert isinstance(cached, _CachedLookup), "the suite's plugin did not install its step lookup"

    def both(step: Any, fixturemanager: Any, node: Any) -> Any:
        found = list(cached(step, fixturemanager, node))
        _counts["checked"] += 1
        if found != list(cached.original(step=step, fixturemanager=fixturemanager, node=node)):
            _counts["differing"] += 1
        return iter(found)

    _bdd.find_fixturedefs_for_step = both


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line("step lookups: {checked} checked, {differing} differing".format(**_counts))
