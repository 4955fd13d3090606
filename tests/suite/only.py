"""A plugin for child runs of the suite (`-p tests.suite.only --only REQ,REQ`): only the scenarios
of those requirements run, after the smoke tier, so a test can run a binding on what it breaks."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--only", metavar="REQ,REQ", default="", help="run only these requirements")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = set(filter(None, config.getoption("only").split(",")))
    if not wanted:
        return
    kept, dropped = [], []
    for item in items:
        requirement = item.get_closest_marker("conformance_req")
        keep = item.get_closest_marker("conformance_smoke") or (
            requirement is not None and requirement.args[0] in wanted)
        (kept if keep else dropped).append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept
