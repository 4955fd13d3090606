"""The words the suite reads as a library telling its agent that a call was not approved (HITL-4):
any library's words, never one library's phrase."""

from __future__ import annotations

import pytest

from conformance._steps.interrupts import _NOT_APPROVED


@pytest.mark.parametrize("text", [
    "Tool execution blocked by hook. Tool: delete_file",  # CrewAI's before_tool_call hook
    "The user denied this tool call.",
    "Tool call rejected by the user",
    "The call was cancelled: Keep the report",
    "delete_file is not allowed",
    "The tool did not run.",
])
def test_a_library_s_words_of_refusal_tell_the_agent_its_call_was_not_approved(text: str) -> None:
    assert _NOT_APPROVED.search(text)


@pytest.mark.parametrize("text", ["Deleted /tmp/report", "5555", 'call delete_file({"path": "/tmp/report"})'])
def test_a_tool_s_result_is_not_read_as_a_refusal(text: str) -> None:
    assert not _NOT_APPROVED.search(text)
