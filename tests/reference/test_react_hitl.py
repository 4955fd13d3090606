"""Human in the loop: ask_to_user, interruptible tools, the interrupt's fields, and every resume path."""

from __future__ import annotations

import asyncio
import copy
import pickle
from collections.abc import Callable
from typing import Any, get_args

import pytest

from reference import HumanInTheLoopRequired, ReAct, Step, Tool, ToolCall
from tests.reference.conftest import ScriptedLM, answer, step

DELETED: list[str] = []


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def delete_file(path: str) -> str:
    """Delete a file."""
    DELETED.append(path)
    return f"deleted {path}"


def confirmed(func: Any) -> Tool:
    """`func` as a tool that needs a person's approval before every call."""
    return Tool(func, interruptible=True)


@pytest.fixture(autouse=True)
def _nothing_deleted() -> None:
    DELETED.clear()


def agent(**options: Any) -> ReAct:
    return ReAct("question -> answer", [add, confirmed(delete_file)], **options)


def interrupted(react: ReAct, **inputs: Any) -> HumanInTheLoopRequired:
    with pytest.raises(HumanInTheLoopRequired) as info:
        react(**inputs)
    return info.value


def pause_on_delete(lm: ScriptedLM, react: ReAct) -> HumanInTheLoopRequired:
    lm.replies += [step("adding", "add", {"a": 20, "b": 22}), step("delete it", "delete_file",
                                                                     {"path": "/tmp/report"})]
    return interrupted(react, question="Sum and clean")


# -- ask_to_user ------------------------------------------------------------------------------


def names(react: ReAct) -> set[str]:
    return set(get_args(react.step.signature.outputs["next_tool_name"].annotation))


def test_ask_to_user_is_on_by_default_and_absent_when_disabled() -> None:
    # Seed 004 (HITL-1): built in unless disabled.
    assert names(agent()) == {"add", "delete_file", "ask_to_user", "finish"}
    assert names(agent(enable_ask_to_user=False)) == {"add", "delete_file", "finish"}
    assert names(agent(enable_ask_to_user=True)) == {"add", "delete_file", "ask_to_user", "finish"}


def test_the_step_prompt_describes_ask_to_user(lm: ScriptedLM) -> None:
    lm.replies += [step("done", "finish"), answer(answer="x")]
    agent(enable_ask_to_user=True)(question="q")
    assert "ask_to_user: Ask the user a question" in lm.text(0)


def test_a_user_tool_may_not_take_the_built_in_name() -> None:
    def ask_to_user(question: str) -> str:
        return question

    with pytest.raises(ValueError, match="ask_to_user"):
        ReAct("question -> answer", [ask_to_user])  # on by default
    assert "ask_to_user" in names(ReAct("question -> answer", [ask_to_user], enable_ask_to_user=False))


def test_asking_the_user_raises_an_interrupt_with_the_saved_state(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}),
                   step("I need to ask", "ask_to_user", {"question": "Which units, metres?"})]
    interrupt = interrupted(agent(enable_ask_to_user=True), question="How far?")
    assert interrupt.question == str(interrupt) == "Which units, metres?"
    assert interrupt.tool_call is None
    assert interrupt.context == {
        "trajectory": [Step(thought="adding", tool_name="add", tool_args={"a": 2, "b": 3},
                            observation=5)],
        "iteration": 1,
        "input_args": {"question": "How far?"},
    }
    assert isinstance(interrupt.interrupt_id, str) and interrupt.interrupt_id


def test_every_interrupt_has_its_own_id(lm: ScriptedLM) -> None:
    react = agent(enable_ask_to_user=True)
    lm.replies += [step("ask", "ask_to_user", {"question": "A?"}),
                   step("ask", "ask_to_user", {"question": "B?"})]
    first, second = interrupted(react, question="1"), interrupted(react, question="2")
    assert first.interrupt_id != second.interrupt_id


def test_the_users_answer_is_the_observation_whatever_it_says(lm: ScriptedLM) -> None:
    react = agent(enable_ask_to_user=True)
    lm.replies += [step("ask", "ask_to_user", {"question": "Shall I?"})]
    interrupt = interrupted(react, question="q")
    lm.replies += [step("told", "finish"), answer(answer="fine")]
    prediction = react.resume("yes", interrupt)
    assert prediction.trajectory[0] == Step(thought="ask", tool_name="ask_to_user",
                                            tool_args={"question": "Shall I?"}, observation="yes")
    assert "observation_0: yes" in lm.text(1)


def test_ask_to_user_with_invalid_args_is_an_error_observation(lm: ScriptedLM) -> None:
    lm.replies += [step("ask", "ask_to_user", {"q": "?"}), step("done", "finish"), answer(answer="x")]
    prediction = agent(enable_ask_to_user=True)(question="q")
    assert "invalid arguments for ask_to_user" in prediction.trajectory[0].observation


# -- interruptible tools ----------------------------------------------------------------------


def test_an_interruptible_tool_does_not_run_before_approval(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    assert DELETED == []
    assert interrupt.question == (
        'Confirm execution of delete_file with args: {"path": "/tmp/report"}? (yes/no)')
    assert interrupt.tool_call is not None
    assert (interrupt.tool_call.name, interrupt.tool_call.args) == ("delete_file", {"path": "/tmp/report"})
    assert interrupt.tool_call.call_id
    assert interrupt.context["iteration"] == 1 and interrupt.context["input_args"] == {
        "question": "Sum and clean"}
    assert [s.tool_name for s in interrupt.context["trajectory"]] == ["add"]


def test_invalid_args_for_an_interruptible_tool_never_ask(lm: ScriptedLM) -> None:
    lm.replies += [step("delete", "delete_file", {"path": 5}), step("done", "finish"), answer(answer="x")]
    prediction = agent()(question="q")
    assert DELETED == [] and "invalid arguments for delete_file" in prediction.trajectory[0].observation


@pytest.mark.parametrize("response", ["yes", "y", " YES ", "Y"])
def test_approving_runs_the_pending_call_once_and_continues(lm: ScriptedLM, response: str) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    prediction = react.resume(response, interrupt)
    assert DELETED == ["/tmp/report"] and prediction.answer == "gone"
    assert [(s.tool_name, s.observation) for s in prediction.trajectory] == [
        ("add", 42), ("delete_file", "deleted /tmp/report"), ("finish", "Completed.")]
    assert prediction.iterations == 3 and prediction.stop_reason == "finish"
    assert "Sum and clean" in lm.text(2) and "observation_0: 42" in lm.text(2)


@pytest.mark.parametrize("response", ["no", "n", "No"])
def test_rejecting_never_runs_the_call_and_the_agent_chooses_again(lm: ScriptedLM, response: str) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("add instead", "add", {"a": 1, "b": 1}),
                   step("done", "finish"),
                   answer(answer="kept")]
    prediction = react.resume(response, interrupt)
    assert DELETED == [] and prediction.answer == "kept"
    rejected = prediction.trajectory[1]
    assert rejected.tool_name == "delete_file" and "rejected" in rejected.observation
    assert "observation_1: delete_file did not run; the user rejected the call" in lm.text(2)
    assert [s.tool_name for s in prediction.trajectory] == ["add", "delete_file", "add", "finish"]


def test_free_text_is_fed_back_as_the_observation(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("I was told", "finish"), answer(answer="kept")]
    prediction = react.resume("Keep the report, delete the drafts instead", interrupt)
    assert DELETED == []
    assert "Keep the report, delete the drafts instead" in prediction.trajectory[1].observation
    assert "Keep the report, delete the drafts instead" in lm.text(2)


def test_an_edit_changes_the_call_before_it_runs(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    edit = '{"edit": {"name": "delete_file", "args": {"path": "/tmp/drafts"}}}'
    prediction = react.resume(edit, interrupt)
    assert DELETED == ["/tmp/drafts"]
    assert prediction.trajectory[1].tool_args == {"path": "/tmp/drafts"}


def test_an_edit_may_call_another_tool(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("done", "finish"), answer(answer="2")]
    prediction = react.resume('{"edit": {"name": "add", "args": {"a": 1, "b": 1}}}', interrupt)
    assert DELETED == [] and prediction.trajectory[1].observation == 2


@pytest.mark.parametrize(("edit", "says"), [
    ('{"edit": {"name": "delete_file", "args": {"path": 5}}}', "invalid arguments for delete_file"),
    ('{"edit": {"name": "delete_file", "args": {"file": "x"}}}', "invalid arguments for delete_file"),
    ('{"edit": {"name": "rm", "args": {}}}', "there is no tool 'rm'"),
])
def test_an_edit_is_validated_like_any_call(lm: ScriptedLM, edit: str, says: str) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("done", "finish"), answer(answer="x")]
    prediction = react.resume(edit, interrupt)
    assert DELETED == [] and says in prediction.trajectory[1].observation


def test_a_malformed_edit_is_feedback(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("done", "finish"), answer(answer="x")]
    prediction = react.resume('{"edit": "the drafts"}', interrupt)
    assert DELETED == [] and "the user says" in prediction.trajectory[1].observation


def test_resuming_twice_never_runs_the_call_twice(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    react.resume("yes", interrupt)
    calls = len(lm.requests)
    with pytest.raises(RuntimeError, match="already resumed"):
        react.resume("yes", interrupt)
    with pytest.raises(RuntimeError, match="already resumed"):
        asyncio.run(react.aresume("yes", interrupt))
    assert DELETED == ["/tmp/report"] and len(lm.requests) == calls


def test_an_altered_interrupt_is_refused_and_stays_resumable(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    assert interrupt.tool_call is not None
    interrupt.tool_call.args["path"] = "/"
    with pytest.raises(ValueError, match="altered"):
        react.resume("yes", interrupt)
    original = interrupt.tool_call
    interrupt.tool_call = ToolCall(name="add", args={"a": 1, "b": 2}, call_id=original.call_id)
    with pytest.raises(ValueError, match="altered"):
        react.resume("yes", interrupt)
    assert DELETED == []
    interrupt.tool_call = original
    original.args["path"] = "/tmp/report"
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    assert react.resume("yes", interrupt).answer == "gone"
    assert DELETED == ["/tmp/report"]


def test_the_interrupt_context_is_a_snapshot(lm: ScriptedLM) -> None:
    react = agent()
    interrupt = pause_on_delete(lm, react)
    interrupt.context["trajectory"][0].observation = "tampered"
    interrupt.context["input_args"]["question"] = "tampered"
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    prediction = react.resume("yes", interrupt)
    assert "tampered" not in lm.text(2) and prediction.trajectory[0].observation == 42


def test_resume_keeps_the_calls_budget(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 1, "b": 1}),
                   step("delete it", "delete_file", {"path": "/tmp/x"})]
    react = agent(max_iters=5)
    with pytest.raises(HumanInTheLoopRequired) as info:
        react(question="q", max_iters=2)
    lm.replies += [answer(answer="partial")]
    prediction = react.resume("y", info.value)
    assert prediction.stop_reason == "max_iters" and prediction.iterations == 2
    assert DELETED == ["/tmp/x"] and prediction.fallback is not None


def test_a_second_interrupt_in_a_resumed_run_resumes_too(lm: ScriptedLM) -> None:
    react = agent()
    first = pause_on_delete(lm, react)
    lm.replies += [step("and the drafts", "delete_file", {"path": "/tmp/drafts"})]
    with pytest.raises(HumanInTheLoopRequired) as info:
        react.resume("yes", first)
    second = info.value
    assert second.interrupt_id != first.interrupt_id and second.context["iteration"] == 2
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    prediction = react.resume("yes", second)
    assert DELETED == ["/tmp/report", "/tmp/drafts"] and prediction.iterations == 4


def test_an_interrupt_not_raised_by_a_run_is_refused() -> None:
    with pytest.raises(ValueError, match="did not pause a ReAct run"):
        agent().resume("yes", HumanInTheLoopRequired("Proceed?"))


def test_an_interrupt_resumes_only_on_the_agent_that_raised_it(lm: ScriptedLM) -> None:
    # Resumed on another agent, it once ran that agent's tool with the first agent's arguments.
    react, other = agent(), agent()
    interrupt = pause_on_delete(lm, react)
    for resume in (lambda: other.resume("yes", interrupt),
                   lambda: asyncio.run(other.aresume("yes", interrupt))):
        with pytest.raises(ValueError, match="raised by another agent"):
            resume()
    assert DELETED == [] and len(lm.requests) == 2
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    assert react.resume("yes", interrupt).answer == "gone" and DELETED == ["/tmp/report"]


def _pickled(interrupt: HumanInTheLoopRequired) -> HumanInTheLoopRequired:
    copied = pickle.loads(pickle.dumps(interrupt))
    assert isinstance(copied, HumanInTheLoopRequired)
    return copied


@pytest.mark.parametrize("copier", [copy.deepcopy, copy.copy, _pickled])
def test_a_copy_of_an_interrupt_never_resumes_a_used_pause(
        lm: ScriptedLM, copier: Callable[[HumanInTheLoopRequired], HumanInTheLoopRequired]) -> None:
    # Copies once each carried their own "used" flag: the approved tool ran once per copy.
    react = agent()
    interrupt = pause_on_delete(lm, react)
    copies = [copier(interrupt) for _ in range(3)]
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    assert react.resume("yes", copies[0]).answer == "gone"
    for used in (interrupt, *copies):
        with pytest.raises(RuntimeError, match="already resumed"):
            react.resume("yes", used)
        with pytest.raises(RuntimeError, match="already resumed"):
            asyncio.run(react.aresume("yes", used))
    assert DELETED == ["/tmp/report"]


@pytest.mark.parametrize("copier", [copy.deepcopy, copy.copy])
def test_a_copy_of_the_agent_does_not_resume_the_originals_interrupts(
        lm: ScriptedLM, copier: Callable[[ReAct], ReAct]) -> None:
    # A copy sharing the pending interrupts would let each of the two run the approved call.
    react = agent()
    interrupt = pause_on_delete(lm, react)
    twin = copier(react)
    with pytest.raises(ValueError, match="raised by another agent"):
        twin.resume("yes", interrupt)
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    assert react.resume("yes", interrupt).answer == "gone" and DELETED == ["/tmp/report"]
    lm.replies += [step("delete it", "delete_file", {"path": "/tmp/x"})]
    own = interrupted(twin, question="q")  # the copy pauses and resumes its own runs
    lm.replies += [step("done", "finish"), answer(answer="x")]
    assert twin.resume("yes", own).answer == "x" and DELETED == ["/tmp/report", "/tmp/x"]


@pytest.mark.parametrize(("response", "error", "says"), [
    ('{"edit": ' * 100_000, ValueError, "nests deeper than"),
    ("[" * 100_000, ValueError, "nests deeper than"),
    (None, TypeError, "must be a string"),
    (b"yes", TypeError, "must be a string"),
], ids=["nested-edit", "nested-brackets", "none", "bytes"])
def test_a_bad_response_is_refused_and_the_run_stays_resumable(
        lm: ScriptedLM, response: Any, error: type[Exception], says: str) -> None:
    # A deeply nested response once raised RecursionError after the interrupt was used up.
    react = agent()
    interrupt = pause_on_delete(lm, react)
    with pytest.raises(error, match=says):
        react.resume(response, interrupt)
    with pytest.raises(error, match=says):
        asyncio.run(react.aresume(response, interrupt))
    assert DELETED == []
    lm.replies += [step("done", "finish"), answer(answer="gone")]
    assert react.resume("yes", interrupt).answer == "gone" and DELETED == ["/tmp/report"]


def test_a_bad_answer_to_ask_to_user_is_refused_and_the_run_stays_resumable(lm: ScriptedLM) -> None:
    react = agent(enable_ask_to_user=True)
    lm.replies += [step("ask", "ask_to_user", {"question": "Shall I?"})]
    interrupt = interrupted(react, question="q")
    with pytest.raises(TypeError, match="must be a string"):
        react.resume(42, interrupt)  # type: ignore[arg-type]
    lm.replies += [step("told", "finish"), answer(answer="fine")]
    assert react.resume("[" * 100_000, interrupt).trajectory[0].observation == "[" * 100_000


def test_aresume_gives_the_same_result_as_resume(lm: ScriptedLM) -> None:
    results = []
    for resume in (lambda r, i: r.resume("yes", i), lambda r, i: asyncio.run(r.aresume("yes", i))):
        react = agent()
        interrupt = pause_on_delete(lm, react)
        lm.replies += [step("done", "finish"), answer(answer="gone")]
        prediction = resume(react, interrupt)
        results.append((prediction.outputs(), prediction.trajectory, prediction.stop_reason))
    assert results[0] == results[1] and DELETED == ["/tmp/report", "/tmp/report"]
