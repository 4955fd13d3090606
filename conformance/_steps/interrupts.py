"""Human-in-the-loop steps: ask_to_user, interruptible tools, the interrupt, the user's answers."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import given, parsers, then, when

from conformance._steps import ERROR_WORDS, _show, parse_json
from conformance._steps.observations import observation_names, saw_error_or_retried
from conformance._steps.setup import _TYPE_NAMES
from conformance._steps.tools import schema_problems
from conformance._tools import SuiteTool
from conformance._values import json_equal, json_key
from conformance._world import World, interrupt_id
from conformance.binding import ErrorInfo, ParamSpec, Step, StepTurn, ToolSpec


@given(parsers.re(r'the interruptible tool "(?P<name>\w+)" that takes the string "(?P<param>\w+)"$'))
def interruptible_tool(world: World, name: str, param: str) -> None:
    assert name not in world.tools, f"the scenario declares the tool {name!r} twice"
    spec = ToolSpec(
        name=name,
        description=f"Run {name} with the given arguments. A person approves every call.",
        parameters=(ParamSpec(name=param, type="str", description=f"the {param}"),),
        interruptible=True,
    )
    world.tools[name] = SuiteTool(spec, lambda args: f"{name} accepted {sorted(args)}")


@given("the agent can ask the user")
def can_ask(world: World) -> None:
    world.enable_ask_to_user = True


@given("the agent cannot ask the user")
def cannot_ask(world: World) -> None:
    world.enable_ask_to_user = False


@when(
    parsers.re(
        r'the user answers (?:"(?P<text>[^"]*)"|(?P<edit>\{.*\}))'
        r"(?: to the (?P<again>same|first) interrupt again)?(?P<asynchronously> asynchronously)?"
        r'(?: through another agent named "(?P<another>[^"]+)")?'
        r"(?:, as (?P<requirement>[A-Z]+-\d+) requires)?$"
    )
)
def user_answers(
    world: World, text: str | None, edit: str | None, again: str | None, asynchronously: str | None,
    another: str | None, requirement: str | None,
) -> None:
    """With "as X requires", a resume that raises is X's failure: the scenario is blocked by X."""
    if edit is not None:
        parse_json(edit)  # a typo in the feature file fails here, not in the library
    if again:
        assert world.answered, "no interrupt was answered yet, so none can be answered again"
    world.resume(
        text if text is not None else str(edit),
        mode="async" if asynchronously else "sync",
        interrupt=(world.answered[-1] if again == "same" else world.answered[0]) if again else None,
        another_agent=another,
        precondition=requirement,
    )


@given(parsers.re(r'the person will answer (?:"(?P<text>[^"]*)"|(?P<edit>\{.*\})) when asked to approve$'))
def person_will_answer(world: World, text: str | None, edit: str | None) -> None:
    """The person's answer to the next approval: handed to the library's approval callback during
    the run, or (pause and resume) given by `resume` when the scenario says."""
    if edit is not None:
        parse_json(edit)
    world.queue_approval(text if text is not None else str(edit))


@given("the library may refuse the person's answer")
def may_refuse(world: World) -> None:
    world.may_stop_early = True


@when("the person's answers are given")
def answers_given(world: World) -> None:
    """Pause and resume: each queued answer resumes the latest pause, in order. An approval
    callback was answered during the run: nothing to do."""
    if world.approval_by_callback:
        return
    for answer in world.approval_answers:
        # A resume that raises whatever the answer is HITL-4's (udspy's missing aresume), unless
        # the scenario lets the library refuse this answer.
        world.resume(answer, precondition=None if world.may_stop_early else "HITL-4")


@then("the resumed run paused again")
def paused_again(world: World) -> None:
    world.blocked_unless(len(world.interrupts) >= 2, "HITL-3",
                         "the resumed run should have paused before its next approval-needing call")


@then("the answer was refused")
def answer_refused(world: World) -> None:
    """A refusal is an error or a pause of its own; an answer or a run that ended as if the
    person's word had been taken is not one."""
    outcome = world.last
    assert outcome.error is not None, (
        f"an answer to a pause of another agent should have been refused (an error), but the call "
        f"returned {outcome.outputs!r} without one"
    )


@then(parsers.parse('the approval request is the call "{name}" with {args}'))
def approval_request(world: World, name: str, args: str) -> None:
    """HITL-3: the library asked a person to approve the call, carrying its name, args and id;
    in a pause, a question it words names the tool."""
    call = world.approval_requests()[0]
    assert call.get("name") == name and json_equal(call.get("args"), parse_json(args)), (
        f"the approval request should be for the call {name!r} with {args}: {call!r}")
    assert isinstance(call.get("call_id"), str) and call["call_id"], (
        f"the approval request carries no call id: {call!r}")
    if not world.approval_by_callback:
        asks_to_confirm(world, name)


#: Words that tell the agent its call was not approved, in any library's words.
_NOT_APPROVED = re.compile(r"den(?:y|ied)|declin|not approved|disapprov|reject|refus|cancel|block|"
                           r"not (?:allowed|permitted)|rather not|did not run|not run", re.IGNORECASE)


@then(parsers.parse('the agent was told that the call of "{tool}" was not approved'))
def told_not_approved(world: World, tool: str) -> None:
    """HITL-4: the step call after the rejection shows the agent that its call did not run."""
    calls = [c for c in world.model.calls if c.kind == "step"]
    assert len(calls) >= 2, (
        f"after the rejection the agent should choose again; it made {len(calls)} step call(s)")
    seen = set(calls[0].text().splitlines())
    added = "\n".join(line for line in calls[1].text().splitlines() if line not in seen)
    assert _NOT_APPROVED.search(added) or ERROR_WORDS.search(added), (
        f"after the person rejected the call of {tool!r} the agent should be told; the next step "
        f"call adds:\n{_show(added, 2000)}")


@then(parsers.parse('no tool ran, and the person or the agent was told that "{tool}" is no tool'))
def edit_of_no_tool(world: World, tool: str) -> None:
    """HITL-7: an edit naming a tool the agent lacks runs nothing, and gives a clear error naming
    it: to the person (the answer refused) or to the agent (an error observation, or a step asked
    again with one)."""
    ran = {name: t.calls for name, t in world.tools.items() if t.calls}
    assert not ran, f"an edit naming no tool should run nothing, but these ran: {ran}"
    error = world.last.error
    if error is not None and error.kind == "other":
        # An error that does not name the tool may be no refusal at all but a resume that fails
        # whatever the answer: HITL-4's, if HITL-4 failed; where it passed, this scenario fails.
        world.blocked_unless(tool in error.message, "HITL-4", (
            f"the library refused the edit, with an error that does not name {tool!r}: "
            f"{error.type}: {error.message}"))
        return
    world.check_script(world.last)
    saw_error_or_retried(world, 1)


def _interrupted(world: World) -> ErrorInfo:
    """The latest call's interrupt: the call must have paused for a person."""
    error = world.last.error
    assert error is not None and error.kind == "human-in-the-loop", (
        "the call should have paused for a person (HumanInTheLoopRequired); it "
        + (f"raised {error.type}: {error.message}" if error else "returned a prediction")
    )
    return error


@then(parsers.re(r'the call was interrupted with the question "(?P<question>.*)"$'))
def interrupted_with(world: World, question: str) -> None:
    expected = question.replace('\\"', '"')  # Gherkin keeps the backslashes of \" in step text
    asked = _interrupted(world).fields.get("question")
    assert asked == expected, f"the interrupt asks {asked!r}; it should ask {expected!r}"


@then(parsers.parse('the interrupt asks to confirm the call of "{tool}"'))
def asks_to_confirm(world: World, tool: str) -> None:
    """HITL-3 asks that the pause ask to confirm the call, not for particular words: a library that
    pauses with the pending call asks by pausing; any question it words must name the tool."""
    asked = _interrupted(world).fields.get("question")
    assert asked is None or (isinstance(asked, str) and tool in asked), (
        f"the interrupt's question should ask to confirm the call of {tool!r}: {asked!r}"
    )


@then(parsers.parse("the interrupt's context holds the trajectory, the iteration and the inputs {inputs}"))
def interrupt_context(world: World, inputs: str) -> None:
    context = _interrupted(world).fields.get("context")
    assert isinstance(context, dict) and {"trajectory", "iteration", "input_args"} <= set(context), (
        f"the interrupt's context should hold trajectory, iteration and input_args: {context!r}"
    )
    assert json_equal(context["input_args"], parse_json(inputs)), (
        f"the interrupt's input_args are {context['input_args']!r}, expected {inputs}"
    )
    trajectory = context["trajectory"]
    assert isinstance(trajectory, list), f"the interrupt's trajectory is not a list: {trajectory!r}"
    # The steps before the paused one, as scripted; a pending step without observation may follow.
    scripted = [t for t in world.turns_per_run[-1] if isinstance(t, StepTurn)][:-1]
    steps = [Step.model_validate(s) for s in trajectory]
    done = [(s.tool_name, json_key(s.tool_args)) for s in steps if s.observation is not None]
    assert done == [(t.tool_name, json_key(t.tool_args)) for t in scripted], (
        f"the interrupt's trajectory should hold the {len(scripted)} step(s) before the pause: "
        f"{trajectory!r}"
    )
    iteration = context["iteration"]
    assert isinstance(iteration, int) and iteration in (len(scripted), len(scripted) + 1), (
        f"the interrupt's iteration should be the paused step's index ({len(scripted)} counting "
        f"from 0, {len(scripted) + 1} from 1): {iteration!r}"
    )


@then("the interrupt has an id")
def interrupt_has_id(world: World) -> None:
    interrupt_id(_interrupted(world))


@then("the two interrupts have different ids")
def interrupt_ids_differ(world: World) -> None:
    assert len(world.interrupts) >= 2, f"expected two interrupts, there were {len(world.interrupts)}"
    first, second = (interrupt_id(i) for i in world.interrupts[-2:])
    assert first != second, f"two interrupts share the id {first!r}"


@then(parsers.parse('the interrupt\'s tool call is "{name}" with {args}'))
def interrupt_tool_call(world: World, name: str, args: str) -> None:
    call = _interrupted(world).fields.get("tool_call")
    assert isinstance(call, dict), f"the interrupt carries no tool_call: {call!r}"
    assert call.get("name") == name and json_equal(call.get("args"), parse_json(args)), (
        f"the interrupt's tool call should be {name!r} with {args}: {call!r}"
    )
    assert isinstance(call.get("call_id"), str) and call["call_id"], (
        f"the interrupt's tool call carries no call id: {call!r}"
    )


@given(parsers.re(r'the interruptible tool "(?P<name>\w+)" that takes the (?P<kind>integer|number|boolean) '
                  r'"(?P<param>\w+)"$'))
def interruptible_typed_tool(world: World, name: str, kind: str, param: str) -> None:
    """An interruptible tool whose argument is not text: an edit can break its schema (HITL-7)."""
    interruptible_tool(world, name, param)
    tool = world.tools[name]
    typed = ParamSpec(name=param, type=_TYPE_NAMES[kind], description=f"the {param}")  # type: ignore[arg-type]
    tool.spec = tool.spec.model_copy(update={"parameters": (typed,)})


def _edited_args(world: World) -> dict[str, Any]:
    """The args of the edit the person answered with (the scenario's last approval answer)."""
    answers = [a for a in world.approval_answers if a.lstrip().startswith("{")]
    assert answers, "the scenario queues no edit for the person to answer with"
    args = parse_json(answers[-1])["edit"]["args"]  # type: ignore[index,call-overload]
    assert isinstance(args, dict), f"the edit's args are not an object: {args!r}"
    return args


@then(parsers.parse('the tool "{name}" never received a wrong-typed or missing value from the edit, '
                    'or the person or the agent was told of "{field}"'))
def edit_schema_kept(world: World, name: str, field: str) -> None:
    """HITL-7: an edit's args are held to the tool's schema as ARGS-4 holds the model's. The tool
    runs only on args that fit it (the edit's, patched onto the pending call's or not, or their
    lossless conversion, `"50"` to 50); else the edit is refused with an error naming the field, to
    the person (the answer refused) or to the agent (an error observation for the edited step)."""
    edit, tool = _edited_args(world), world.tool(name)
    if tool.calls:
        # An edit may patch the pending call: a value it leaves out may be the model's own.
        asked = world.approval_requests()[0].get("args")
        sent = {**(asked if isinstance(asked, dict) else {}), **edit}
        wrong = [problem for got in tool.calls for problem in schema_problems(tool.spec, sent, got)]
        # A library that holds not even the model's args to the schema fails ARGS-4 for it.
        world.blocked_unless(not wrong, "ARGS-4", (
            f"the person edited the call to {name}({json.dumps(edit)}), against its schema, and the "
            f"tool ran with {tool.calls}: {'; '.join(wrong)}"))
        world.notes.append(f"the edit {json.dumps(edit)} was converted to {tool.calls[0]} and ran")
        return
    error = world.last.error
    if error is not None and error.kind == "other":
        # An error that does not name the field may be no refusal at all but a resume that fails
        # whatever the answer: HITL-4's, if HITL-4 failed; where it passed, this scenario fails.
        world.blocked_unless(
            bool(re.search(rf"(?<!\w){re.escape(field)}(?!\w)", error.message)), "HITL-4",
            f"the library refused the edit {json.dumps(edit)}, with an error that does not name "
            f"{field!r}: {error.type}: {error.message}")
        return
    world.check_script(world.last)
    observation_names(world, 1, field)
