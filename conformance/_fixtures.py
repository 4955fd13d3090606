"""The fixtures the step definitions share; registered only when `--impl` is given."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance._world import World


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    """One scenario's state; the library's global adapter is reset and its HTTP endpoint closed
    afterwards."""
    from conformance.plugin import http_profile, session_of

    config = request.config
    mark = request.node.get_closest_marker("conformance_req")
    state = World(session_of(config).binding, config.getoption("conformance_timeout"),
                  requirement=str(mark.args[0]) if mark is not None else None)
    if any(m.args[0] == "http" for m in request.node.iter_markers("conformance_capability")):
        state.http = http_profile(request.node, state.binding)
    try:
        yield state
        if state.global_adapter is not None:
            state.configure(None)
    finally:
        # What the scenario observed without judging it (a library's limits, its timeout).
        request.node.user_properties.extend(("observed", note) for note in state.notes)
        if state.http is not None:
            state.http.close()
