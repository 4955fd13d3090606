"""Then steps on the model log: what each model call showed, how many there were, which tools were offered."""

from __future__ import annotations

import json
import re

from pydantic import JsonValue
from pytest_bdd import parsers, then

from conformance import _attribution, _guard, render
from conformance._steps import _QUOTED, _show
from conformance._world import World
from conformance.binding import LMCall, StepTurn


def _calls(world: World, which: str) -> list[LMCall]:
    calls = world.model.calls
    if which == "every model call":
        chosen = calls
    elif which == "every step call":
        chosen = [c for c in calls if c.kind == "step"]
    elif which == "the extraction call":
        chosen = [c for c in calls if c.kind == "extract"]
        assert len(chosen) == 1, f"expected one extraction call, the model received {len(chosen)}"
    else:
        number = int(which.removeprefix("step call "))
        steps = [c for c in calls if c.kind == "step"]
        assert len(steps) >= number, f"there was no step call {number}; there were {len(steps)}"
        chosen = [steps[number - 1]]
    assert chosen, f"there was no model call for {which!r}"
    return chosen

_WHICH = r"(?P<which>every model call|every step call|the extraction call|step call \d+)"

@then(parsers.re(rf'{_WHICH} (?:shows|mentions) (?P<texts>"[^"]*"(?: and "[^"]*")*)$'))
def calls_show(world: World, which: str, texts: str) -> None:
    for call in _calls(world, which):
        shown = call.text()
        for text in _QUOTED.findall(texts):
            assert text in shown, (
                f"{which} should show {text!r}; the {call.kind} call was:\n{_show(shown, 3000)}"
            )

@then(parsers.re(rf'{_WHICH} does not show "(?P<text>[^"]*)"$'))
def calls_do_not_show(world: World, which: str, text: str) -> None:
    for call in _calls(world, which):
        assert text not in call.text(), f"{which} must not show {text!r} yet"

@then(parsers.parse('every step call shows the tool "{name}" with its description and its arguments'))
def step_calls_show_tool(world: World, name: str) -> None:
    """STEP-3: the tool's name, description and argument schema, however the library writes them:
    prompt text, native declarations, or a schema inside a JSON string (read as JSON)."""
    spec = world.tool(name).spec
    for call in _calls(world, "every step call"):
        shown = call.text()
        values = _json_values([*call.messages, *(call.tools or [])])
        text = "\n".join([shown, *(json.dumps(v) for v in values if isinstance(v, dict | list))])
        for part in [spec.name, spec.description]:
            assert part in text, (
                f"every step call should show the tool {name!r}: its name and description "
                f"{spec.description!r}; {part!r} is missing from:\n{_show(shown, 3000)}"
            )
        for param in spec.parameters:
            types = _SCHEMA_TYPES[param.type]
            if _declared(values, param.name, types):
                continue
            # A schema in prose names each argument as a key, `"a":` or `a:`, and says its type: the
            # bare name could be any letter of the prose (a description's "a and b"), so it proves nothing.
            key = re.search(rf"""(["']{re.escape(param.name)}["']|\b{re.escape(param.name)})\s*:""", text)
            assert key and any(t in text for t in types), (
                f"every step call should show the argument schema of {name!r}: the argument "
                f"{param.name!r} as a key with its type ({' or '.join(types)}); "
                f"{'its type' if key else 'the key'} is missing from:\n{_show(shown, 3000)}"
            )

#: A fenced code block of a prompt written in Markdown (DSPy.rb's prompts show their inputs, tools
#: among them, as one JSON object in a ```json block).
_FENCED = re.compile(r"```[a-z]*[ \t]*\n(.*?)\n[ \t]*```", re.S)


def _json_values(value: JsonValue) -> list[JsonValue]:
    """`value` and every JSON value inside it, including those written as JSON text in a string
    (a tool declaration whose schema is a JSON string, a message holding a JSON object, or a JSON
    object in a fenced block of a message)."""
    found: list[JsonValue] = [value]
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, list):
        items = list(value)
    elif isinstance(value, str):
        texts = [value] if value.lstrip()[:1] in ("{", "[") else _FENCED.findall(value)
        items = []
        for text in texts:
            try:
                items.append(json.loads(text))
            except ValueError:
                pass
    else:
        items = []
    for item in items:
        found.extend(_json_values(item))
    return found

def _declared(values: list[JsonValue], param: str, types: tuple[str, ...]) -> bool:
    """Whether some JSON schema among `values` declares the property `param` with one of `types`."""
    for value in values:
        properties = value.get("properties") if isinstance(value, dict) else None
        declared = properties.get(param) if isinstance(properties, dict) else None
        # Gemini's Schema (the OpenAPI subset its API takes, and ADK sends) spells types in
        # capitals: "STRING" is JSON Schema's "string".
        if isinstance(declared, dict) and str(declared.get("type")).lower() in types:
            return True
    return False

#: How an argument schema may spell each ParamSpec type (JSON Schema, Python, TypeScript).
_SCHEMA_TYPES: dict[str, tuple[str, ...]] = {
    "int": ("integer", "int"), "float": ("number", "float"), "str": ("string", "str"),
    "bool": ("boolean", "bool"), "list": ("array", "list"), "dict": ("object", "dict"),
}

@then("the model was never called")
def model_never_called(world: World) -> None:
    assert not world.model.calls, (
        f"the model should not have been called; it got {len(world.model.calls)} call(s)"
    )

def _blocked_if_asked_late(world: World, got: int, expected: int, runs: slice, what: str) -> None:
    """A step count of the runs `runs` (a slice of `World.early_stops`) that is wrong because a cap
    asked the model a step late (Genkit's `maxTurns`) is LOOP-3's failure: the scenario is blocked
    by LOOP-3 (LOOP-3's own fails, saying why). One too low because a run returned right after a
    reply whose tool calls never ran (`World.dropped_calls`) is LOOP-1's, blocked by LOOP-1."""
    dropped = next((d for d in world.dropped_calls[runs] if d), None) if got < expected else None
    world.blocked_unless(dropped is None, _attribution.CHOSEN_TOOL, f"{dropped} ({what})")
    runs_early = world.early_stops[runs]
    cause = _attribution.late_step_count(got, expected, runs_early, world.max_steps)
    world.blocked_unless(cause is None, _attribution.STEP_CAP, f"{cause} ({what})")

@then(parsers.re(r"the model received (?P<steps>\d+) step calls? and (?P<extracts>\d+) extraction calls?$"))
def model_received(world: World, steps: str, extracts: str) -> None:
    got = (world.model.count("step"), world.model.count("extract"))
    if got[1] == int(extracts):
        _blocked_if_asked_late(world, got[0], int(steps), slice(None),
                               f"expected {steps} step call(s); the model received {got[0]}")
    assert got == (int(steps), int(extracts)), (
        f"expected {steps} step and {extracts} extraction call(s); got {got[0]} and {got[1]}"
    )

@then(parsers.re(r"the model received (?P<extracts>\d+) extraction calls?$"))
def model_received_extractions(world: World, extracts: str) -> None:
    got = world.model.count("extract")
    assert got == int(extracts), f"expected {extracts} extraction call(s); the model received {got}"

@then(parsers.re(r"the model received exactly (?P<steps>\d+) step calls?$"))
def model_received_steps(world: World, steps: str) -> None:
    got = world.model.count("step")
    what = f"expected exactly {steps} step call(s); the model received {got}"
    _blocked_if_asked_late(world, got, int(steps), slice(None), what)
    if got != int(steps):
        world.blocked_if_ended_on_unread_reply()
    assert got == int(steps), what

@then(parsers.re(r"call (?P<number>\d+) made exactly (?P<steps>\d+) step calls?$"))
def call_made_steps(world: World, number: str, steps: str) -> None:
    calls = world.calls_per_run[int(number) - 1]
    got = sum(1 for c in calls if c.kind == "step")
    what = f"call {number} should have made {steps} step call(s); it made {got}"
    _blocked_if_asked_late(world, got, int(steps), slice(int(number) - 1, int(number)), what)
    if got != int(steps):
        world.blocked_if_ended_on_unread_reply(int(number) - 1)
    assert got == int(steps), what

@then("the extraction call is the last model call")
def extraction_is_last(world: World) -> None:
    kinds = [c.kind for c in world.model.calls]
    assert kinds and kinds[-1] == "extract" and kinds.count("extract") == 1, (
        f"one extraction call should end the run; the calls were {kinds}"
    )

@then("the final answer is the last model call")
def final_is_last(world: World) -> None:
    calls, finals = world.model.calls, world.model.finals
    kinds = [c.kind for c in calls]
    assert len(finals) == 1, (
        f"the run should end with one final answer; the model's calls were {kinds} and "
        f"{len(finals)} of them {'was' if len(finals) == 1 else 'were'} a final answer"
    )
    assert finals[0] == len(calls) - 1, (
        f"the final answer should end the run, but the model was called again after it: the "
        f"calls were {kinds}, the final answer call #{finals[0] + 1}"
    )

@then(parsers.re(r"the model received (?P<steps>\d+) step calls?, the last one its final answer$"))
def model_received_final(world: World, steps: str) -> None:
    model_received_steps(world, steps)
    final_is_last(world)

@then(parsers.re(r'the tools offered to the model are exactly "(?P<names>[^"]*)"$'))
def tools_offered(world: World, names: str) -> None:
    """STEP-1 for every library: `next_tool_name`'s choices (`signature`), or else the native tool
    declarations of every step call. `finish` and the library's own final-answer tool are allowed,
    not required; `ask_to_user` only where it is enabled (the library's default, under `ask-user`)."""
    expected = sorted(n.strip() for n in names.split(",") if n.strip())
    agent = world.agent
    admitted = _guard.call("step_tool_names", lambda: world.binding.step_tool_names(agent),
                           world.timeout)
    # One list of the libraries' final-answer tools, shared with the endpoint that renders them.
    final_tools = {"finish", *render.FINAL_ANSWER_TOOLS}
    if world.enable_ask_to_user is None and "ask-user" in world.capabilities:
        # The scenario leaves ask_to_user to the library's default, which is on (HITL-1): STEP-1
        # allows it beside the agent's tools, whether the library offers it or not.
        final_tools = final_tools | ({"ask_to_user"} - set(expected))
    if admitted is not None:
        offered = sorted(set(admitted) - final_tools)
        assert offered == expected, (
            f"next_tool_name admits {sorted(admitted)}; the tools must be {expected} (plus, at most, "
            "finish or the library's final-answer tool)")
        return
    steps = [c for c in world.model.calls if c.kind == "step"]
    assert steps, "the agent made no step call, so it offered the model no tools"
    for number, call in enumerate(steps, 1):
        offered = sorted(set(render.tool_names(call.tools)) - final_tools)
        assert offered == expected, (
            f"step call {number} declared the tools {sorted(render.tool_names(call.tools))} to the "
            f"model; they must be exactly {expected} (plus the library's final-answer tool)"
        )

#: A step prompt that says the tool arguments are a JSON object: in words ("a valid JSON object"),
#: or as a JSON schema of type object, close to where it says JSON.
_JSON_OBJECT = re.compile(r"json.{0,200}?(?:object|dict)|(?:object|dict).{0,200}?json", re.I | re.S)

@then("every step call says that the tool arguments are a JSON object")
def step_calls_say_json_object(world: World) -> None:
    """STEP-2, in the library's own words: DSPy's field is `next_tool_args`, but another library may
    name it otherwise; what the prompt must say is that the arguments are a JSON object. Native tool
    declarations say it by their protocol: each declares its arguments as a JSON schema of an object."""
    for number, call in enumerate(_calls(world, "every step call"), 1):
        shown = call.text()
        declared = [v for v in _json_values(call.tools or []) if isinstance(v, dict)
                    and v.get("type") == "object" and isinstance(v.get("properties"), dict)]
        assert _JSON_OBJECT.search(shown) or declared, (
            f"step call {number} should say that the tool arguments are a JSON object; it says "
            f"neither in words nor as a schema:\n{_show(shown, 3000)}"
        )

@then(parsers.parse("step call {number:d} shows every earlier step's thought, args and observation"))
def step_call_shows_trajectory(world: World, number: int) -> None:
    """STEP-3's whole trajectory: a long run's late step call still shows its first steps (a
    library that keeps only the last few shows the agent a different run)."""
    (call,) = _calls(world, f"step call {number}")
    shown = call.text()
    steps = [t for t in world.turns_per_run[-1] if isinstance(t, StepTurn)][: number - 1]
    results: dict[str, list[JsonValue]] = {n: list(t.results) for n, t in world.tools.items()}
    missing = []
    for index, turn in enumerate(steps, 1):
        result = results.get(turn.tool_name, [None]).pop(0) if results.get(turn.tool_name) else None
        wanted = [turn.thought, *_leaves(turn.tool_args), *([] if result is None else _leaves(result))]
        absent = [w for w in wanted if not _shows(shown, w)]
        if absent:
            missing.append(f"step {index} ({turn.thought!r}): {absent}")
    assert not missing, (
        f"step call {number} should show the whole trajectory so far; it lacks\n  "
        + "\n  ".join(missing) + f"\nIt was:\n{_show(shown, 3000)}"
    )

def _leaves(value: JsonValue) -> list[str]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value if isinstance(value, str) else json.dumps(value)]

def _shows(text: str, value: str) -> bool:
    """Whether `text` shows `value`; a number as a whole number (`101` is not in `7101`)."""
    if re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", text) is not None
    return value in text
