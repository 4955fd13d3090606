"""The fixtures the step definitions share; registered only when `--impl` is given."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance._world import World

#: What a tool-approval scenario judges only where the library returns a pause to the caller and
#: resumes it (REQUIREMENTS.md, `tool-approval`): resuming from the saved step, answering a pause
#: twice, and the snapshot a pause hands out.
PAUSE_AND_RESUME_ONLY = frozenset({"HITL-5", "HITL-6", "TRJ-2"})


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A pause-and-resume scenario of `tool-approval` is not claimed by a binding whose library
    asks an approval callback during the run: it has no pause to return, resume or answer twice."""
    from conformance.plugin import session_of

    binding = session_of(item.config).binding
    needs = {str(m.args[0]) for m in item.iter_markers("conformance_capability")}
    mark = item.get_closest_marker("conformance_req")
    requirement = str(mark.args[0]) if mark is not None else None
    # An async approval scenario (ASYNC-1's) compares an async resume with a sync one.
    resumes = requirement in PAUSE_AND_RESUME_ONLY or "async" in needs
    if "tool-approval" in needs and resumes and binding.approval_form == "callback":
        pytest.skip(f"not claimed: {binding.name} asks for approval through a callback during the "
                    f"run (approval_form = \"callback\"): no pause is returned or resumed, and "
                    f"{requirement} judges pause-and-resume only")
#: Where a scenario's World is kept on its item, for the plugin's report of it.
WORLD = pytest.StashKey[World]()


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    """One scenario's state; the library's global adapter is reset and its HTTP endpoint closed
    afterwards."""
    from conformance.plugin import http_profile, session_of

    config = request.config
    mark = request.node.get_closest_marker("conformance_req")
    session = session_of(config)
    state = World(session.binding, config.getoption("conformance_timeout"),
                  requirement=str(mark.args[0]) if mark is not None else None)
    state.reads_no_reply = session.unread_format
    state.replies_judged_by_step_4 = (state.reads_no_reply is not None
                                      or request.node.get_closest_marker("conformance_smoke") is not None)
    request.node.stash[WORLD] = state
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
        # The call's report has read it; kept on the item, every scenario's state (all its library
        # said) would live as long as the session.
        del request.node.stash[WORLD]
