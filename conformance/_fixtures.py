"""The fixtures the step definitions share; registered only when `--impl` is given."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance._world import World


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    """One scenario's state; the library's global adapter is reset afterwards."""
    from conformance.plugin import session_of

    config = request.config
    state = World(session_of(config).binding, config.getoption("conformance_timeout"))
    yield state
    if state.global_adapter is not None:
        state.configure(None)
