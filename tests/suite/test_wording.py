"""The words the suite reads as a library telling its agent that a call was not approved (HITL-4),
and as an observation reporting an error: any library's words, never one library's phrase."""

from __future__ import annotations

import pytest

from conformance._steps import ERROR_WORDS
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


@pytest.mark.parametrize("text", [
    # zod 4's issue list, which the OpenAI Node SDK's runTools shows the model as a refusal's text
    '[{"code": "unrecognized_keys", "keys": ["memo"], "path": [],'
    ' "message": "Unrecognized key: \\"memo\\""}]',
    "Invalid input: expected number, received string",
    "Error executing transfer: the disk is on fire",
    'Invalid tool_call: "nope". Available options are: "add". Please try again',
    # Jackson's refusal of deep args, which Spring AI shows the model as the tool's result (ARGS-5)
    "Document nesting depth (501) exceeds the maximum allowed (500, from "
    "`StreamReadConstraints.getMaxNestingDepth()`)",
])
def test_a_library_s_words_of_error_mark_an_observation_as_one(text: str) -> None:
    assert ERROR_WORDS.search(text)


@pytest.mark.parametrize("text", ["5555", "sent 50 to Ann", '{"recipient": "Ann", "amount": 50}',
                                  "the total exceeds 100"])
def test_a_tool_s_result_is_not_read_as_an_error(text: str) -> None:
    assert not ERROR_WORDS.search(text)
