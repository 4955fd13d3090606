"""Given steps: the agent, its tools, and what the model will answer."""

from __future__ import annotations

import json
from typing import Any, get_args

from pytest_bdd import given, parsers, when

from conformance._steps import parse_json
from conformance._tools import SuiteTool, ToolFailure
from conformance._world import World
from conformance.binding import (
    AdapterName,
    ExtractTurn,
    FaultTurn,
    FieldSpec,
    FinalTurn,
    ParamSpec,
    SignatureSpec,
    StepTurn,
    ToolCall,
    ToolSpec,
    Turn,
)

_ADAPTERS = get_args(AdapterName)


def _fields(side: str) -> tuple[FieldSpec, ...]:
    """`a, b: int` as fields; a field without a type is a string."""
    fields = []
    for part in (p.strip() for p in side.split(",")):
        if part:
            name, _, kind = part.partition(":")
            fields.append(FieldSpec.model_validate({"name": name.strip(), "type": kind.strip() or "str"}))
    return tuple(fields)


@given(parsers.re(
    r'a ReAct agent with the signature "(?P<text>[^"]*)"(?: in (?P<form>string|class|value) form)?$'))
def agent_with_signature(world: World, text: str, form: str | None) -> None:
    """A signature; a scenario that names its form judges it (`SignatureSpec.form_judged`)."""
    inputs, _, outputs = text.partition("->")
    kind = form or "string"
    world.signature = SignatureSpec.model_validate({
        "inputs": _fields(inputs), "outputs": _fields(outputs), "form": kind,
        "text": text if kind == "string" else None, "form_judged": form is not None})


@given(parsers.parse(
    'the library builds an agent from the signature "{text}" in {form} form, as {requirement} requires'
))
def builds_from_form(world: World, text: str, form: str, requirement: str) -> None:
    """The precondition of a scenario about a signature in a form another requirement judges (SIG-1
    the arrow string, SIG-3 the value): the library has that form at all. Without it, refusing a
    malformed signature in that form proves nothing, and a signature in that form is never built."""
    agent_with_signature(world, text, form)
    world.build()
    error = world.build_error
    world.reset_agent()
    world.blocked_unless(error is None, requirement, (
        f"the library has no signature {form} form: it refused the well-formed {form} {text!r}: "
        f"{error.type}: {error.message}") if error else "")


@given(parsers.parse('the signature\'s instructions are "{instructions}"'))
def signature_instructions(world: World, instructions: str) -> None:
    world.signature = world.signature.model_copy(update={"instructions": instructions})


@given(parsers.parse('the signature\'s field "{name}" is described as "{description}"'))
def field_description(world: World, name: str, description: str) -> None:
    sides = {}
    for side in ("inputs", "outputs"):
        fields = getattr(world.signature, side)
        sides[side] = tuple(f.model_copy(update={"description": description}) if f.name == name else f
                            for f in fields)
    assert name in {f.name for side in sides.values() for f in side}, (
        f"the signature has no field {name!r}")
    world.signature = world.signature.model_copy(update=sides)


def _add_tool(world: World, tool: SuiteTool) -> None:
    assert tool.name not in world.tools, f"the scenario declares the tool {tool.name!r} twice"
    world.tools[tool.name] = tool


@given(parsers.parse('the tool "{name}" that adds the integers "{a}" and "{b}"'))
def tool_that_adds(world: World, name: str, a: str, b: str) -> None:
    spec = ToolSpec(
        name=name,
        description=f"Add two integers, {a} and {b}, and return their sum.",
        parameters=(
            ParamSpec(name=a, type="int", description="the first addend"),
            ParamSpec(name=b, type="int", description="the second addend"),
        ),
    )
    _add_tool(world, SuiteTool(spec, lambda args: args[a] + args[b]))


def _query_tool(name: str, description: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters=(ParamSpec(name="query", type="str", description="what to look up"),),
    )


@given(parsers.parse('the tool "{name}" that returns "{text}"'))
def tool_that_returns(world: World, name: str, text: str) -> None:
    spec = _query_tool(name, f"Look up a query with {name} and return what it finds.")
    _add_tool(world, SuiteTool(spec, lambda args: text))


@given(parsers.re(r'the tool "(?P<name>\w+)" that returns the object (?P<value>\{.*\})$'))
def tool_that_returns_object(world: World, name: str, value: str) -> None:
    result = parse_json(value)
    spec = _query_tool(name, f"Look up a query with {name} and return a record of what it finds.")
    # A fresh copy per call: what a library does to one result must not reach the next.
    _add_tool(world, SuiteTool(spec, lambda args: json.loads(json.dumps(result))))


@given(parsers.re(r'the tool "(?P<name>\w+)" that raises (?P<error>\w+) "(?P<message>[^"]*)"$'))
def tool_that_raises(world: World, name: str, error: str, message: str) -> None:
    spec = _query_tool(name, f"Run {name} on a query.")
    failure = ToolFailure(error_type=error, message=message)
    _add_tool(world, SuiteTool(spec, always_fails=failure))


@given(parsers.parse('the tool "{name}" that raises, call by call'))
def tool_that_raises_by_call(world: World, name: str, datatable: list[list[str]]) -> None:
    header, *rows = datatable
    failures = {
        int(row["call"]): ToolFailure(error_type=row["error"], message=row["message"])
        for row in (dict(zip(header, r, strict=True)) for r in rows)
    }
    spec = _query_tool(name, f"Run {name} on a query.")
    _add_tool(world, SuiteTool(spec, lambda args: f"{name} succeeded", failures=failures))


@given(
    parsers.parse(
        'the tool "{name}" that raises on every call, alternating {first} and {second}, '
        'numbered "{prefix}"'
    )
)
def tool_that_alternates(world: World, name: str, first: str, second: str, prefix: str) -> None:
    failures = {
        n: ToolFailure(error_type=first if n % 2 else second, message=f"{prefix} {n}")
        for n in range(1, 200)
    }
    _add_tool(world, SuiteTool(_query_tool(name, f"Run {name} on a query."), failures=failures))


_PARAM = r'the (?P<t{n}>integer|string|object|number|boolean|list) "(?P<p{n}>\w+)"'
_TYPE_NAMES = {"integer": "int", "string": "str", "object": "dict", "number": "float",
               "boolean": "bool", "list": "list"}


@given(
    parsers.re(
        rf'the tool "(?P<name>\w+)" that takes {_PARAM.format(n=1)}(?: and {_PARAM.format(n=2)})?$'
    )
)
def tool_that_takes(
    world: World, name: str, t1: str, p1: str, t2: str | None, p2: str | None
) -> None:
    params = [ParamSpec(name=p1, type=_TYPE_NAMES[t1], description=f"the {p1}")]  # type: ignore[arg-type]
    if t2 and p2:
        params.append(ParamSpec(name=p2, type=_TYPE_NAMES[t2], description=f"the {p2}"))  # type: ignore[arg-type]
    spec = ToolSpec(
        name=name, description=f"Run {name} with the given arguments.", parameters=tuple(params)
    )
    _add_tool(world, SuiteTool(spec, lambda args: f"{name} accepted {sorted(args)}"))


@given("the agent has no tools")
def no_tools(world: World) -> None:
    world.tools.clear()


@given(parsers.parse("the agent's step cap is {cap:d}"))
def step_cap(world: World, cap: int) -> None:
    world.max_steps = cap


@given("the agent raises on the step cap")
def raises_on_cap(world: World) -> None:
    world.on_max_steps = "raise"


@given("the agent extracts its outputs on the step cap")
def extracts_on_cap(world: World) -> None:
    world.on_max_steps = "extract"


@given("the agent returns normally on the step cap")
def returns_on_cap(world: World) -> None:
    world.on_max_steps = "return"


@given("the agent does not raise on the step cap")
def does_not_raise_on_cap(world: World) -> None:
    # Scenarios tagged `max-steps-extract|max-steps-return`: whichever of the two the library has.
    world.on_max_steps = "extract" if "max-steps-extract" in world.capabilities else "return"


@given(parsers.parse('the global adapter is "{adapter}"'))
def global_adapter(world: World, adapter: str) -> None:
    assert adapter in _ADAPTERS, f"unknown adapter {adapter!r}; the suite knows {_ADAPTERS}"
    world.configure(adapter)  # type: ignore[arg-type]


@given(parsers.parse('the agent\'s adapter is "{adapter}"'))
def agent_adapter(world: World, adapter: str) -> None:
    assert adapter in _ADAPTERS, f"unknown adapter {adapter!r}; the suite knows {_ADAPTERS}"
    world.adapter = adapter  # type: ignore[assignment]


def _turn(row: dict[str, str]) -> Turn:
    kind = row["turn"].strip()
    if kind == "step":
        return StepTurn(thought=row["thought"], tool_name=row["tool"], tool_args=parse_json(row["args"]))
    if kind == "step without args":  # the reply leaves next_tool_args out (`signature` only)
        return StepTurn(thought=row["thought"], tool_name=row["tool"], without_tool_args=True)
    if kind == "step with raw args":
        return StepTurn(thought=row["thought"], tool_name=row["tool"], raw_tool_args=row["args"])
    if kind == "final":
        outputs = parse_json(row["args"])
        assert isinstance(outputs, dict), f"a final turn's args are the outputs, an object: {row}"
        return FinalTurn(thought=row["thought"], outputs=outputs)
    if kind == "fault":
        return FaultTurn.model_validate({"fault": row["args"].strip()})
    if kind == "extract":
        outputs = parse_json(row["args"])
        assert isinstance(outputs, dict), f"an extract turn's args must be an object: {row}"
        return ExtractTurn(outputs=outputs)
    raise AssertionError(
        f"unknown turn kind {kind!r} (step, step with raw args, step without args, and, final, "
        "extract, fault)"
    )


def _turns(rows: list[dict[str, str]]) -> list[Turn]:
    """The table's turns; an `and` row is one more tool call in the step above it."""
    turns: list[Turn] = []
    for row in rows:
        if row["turn"].strip() != "and":
            turns.append(_turn(row))
            continue
        previous = turns[-1] if turns else None
        assert isinstance(previous, StepTurn), f"an `and` row must follow a step row: {row}"
        call = ToolCall(tool_name=row["tool"], tool_args=parse_json(row["args"]))
        turns[-1] = previous.model_copy(update={"parallel": (*previous.parallel, call)})
    return turns


@given("the model replies")
@when("the model replies")
def model_replies(world: World, datatable: list[list[str]]) -> None:
    header, *rows = datatable
    world.model.extend(_turns([dict(zip(header, row, strict=True)) for row in rows]))


@given(parsers.parse('the model answers every step with tool "{tool}" and args {args}'))
def every_step(world: World, tool: str, args: str) -> None:
    world.model.every_step = StepTurn(thought=f"call {tool} again", tool_name=tool,
                                      tool_args=parse_json(args))


@when("the model's standing answers are withdrawn")
def standing_answers_withdrawn(world: World) -> None:
    world.model.every_step = world.model.every_extract = None


@given(parsers.parse("the model answers every extraction with {outputs}"))
def every_extraction(world: World, outputs: str) -> None:
    values = parse_json(outputs)
    assert isinstance(values, dict)
    world.model.every_extract = ExtractTurn(outputs=values)


@given(parsers.re(r'the model\'s step calls "(?P<tool>\w+)" with an object nested (?P<depth>\d+) levels '
                  r"deep(?P<escape> after an escaped quote)?$"))
def deeply_nested_args(world: World, tool: str, depth: str, escape: str | None) -> None:
    # After an escaped quote: a guard that loses track of where that string ends misses the depth.
    param = world.tool(tool).spec.parameters[0].name
    head = '{"note": "say \\"hi\\"", "a": ' if escape else '{"a": '
    raw = '{"' + param + '": ' + head + '{"a": ' * (int(depth) - 1) + "1" + "}" * int(depth) + "}"
    value: Any = 1
    for level in range(int(depth)):
        value = {"note": 'say "hi"', "a": value} if escape and level == int(depth) - 1 else {"a": value}
    world.sent_args.append({param: value})  # built as the text is, without a recursive parser
    world.model.extend([StepTurn(thought="store it", tool_name=tool, raw_tool_args=raw)])


@given(parsers.re(r'the model\'s step calls "(?P<tool>\w+)" with arrays nested (?P<depth>\d+) levels deep'
                  r"(?P<where> inside its object|, each beside an empty one)$"))
def deeply_nested_arrays(world: World, tool: str, depth: str, where: str) -> None:
    # Inside an object the arguments still fit an object schema: only the depth guard stops them.
    # Beside an empty sibling at every level: a guard that counts a closing bracket as anything
    # but one level up loses the depth.
    param = world.tool(tool).spec.parameters[0].name
    level = "[[], " if "beside" in where else "["
    raw = '{"' + param + '": {"a": ' + level * int(depth) + "1" + "]" * int(depth) + "}}"
    value: Any = 1
    for _ in range(int(depth)):
        value = [[], value] if "beside" in where else [value]
    world.sent_args.append({param: {"a": value}})
    world.model.extend([StepTurn(thought="store it", tool_name=tool, raw_tool_args=raw)])


@given(parsers.parse('the model\'s final answer writes "{field}" as a list nested {depth:d} levels deep'))
def deeply_nested_output(world: World, field: str, depth: int) -> None:
    # Deeper than a library's depth limit need be: handed over intact or refused naming the field,
    # but a parser or a depth guard that breaks on it crashes the call.
    value: Any = 1
    for _ in range(depth):
        value = [value]
    world.written_outputs = {field: value}
    world.model.extend([FinalTurn(thought="done", outputs=world.written_outputs)])


@given(parsers.parse('the model\'s step calls "{tool}" with {count:d} small objects side by side'))
def wide_args(world: World, tool: str, count: int) -> None:
    # Many brackets, one level deep: a depth guard that counts brackets instead of nesting refuses
    # arguments that are valid (ARGS-1).
    param = world.tool(tool).spec.parameters[0].name
    args: dict[str, Any] = {param: {f"k{i}": {"a": [i]} for i in range(count)}}
    world.sent_args = [args]
    world.model.extend([StepTurn(thought="store them", tool_name=tool, tool_args=args)])


@given(parsers.parse('the model\'s step calls "{tool}" with a {param} of {size:d} characters'))
def oversized_args(world: World, tool: str, param: str, size: int) -> None:
    args: dict[str, Any] = {p.name: 1 for p in world.tool(tool).spec.parameters}
    args[param] = "x" * size
    world.sent_args.append(args)
    world.model.extend(
        [StepTurn(thought="send it", tool_name=tool, raw_tool_args=json.dumps(args))]
    )


@given(parsers.parse(
    'the model\'s step calls "{tool}" with a {param} of {count:d} escaped quotes and open brackets'
))
def bracketed_args(world: World, tool: str, param: str, count: int) -> None:
    # Brackets inside a string are text, not nesting: a depth guard that counts them refuses args
    # that are valid (ARGS-1); the escaped quotes test that it also knows where strings end.
    args: dict[str, Any] = {p.name: 1 for p in world.tool(tool).spec.parameters}
    args[param] = '"[{' * count
    world.sent_args = [args]
    world.model.extend([StepTurn(thought="send it", tool_name=tool, tool_args=args)])


@given(parsers.parse('the model first answers HTTP {status} asking to retry after {seconds:d} seconds'))
def fault_with_retry_after(world: World, status: str, seconds: int) -> None:
    world.model.extend([FaultTurn.model_validate({"fault": status, "retry_after": seconds})])


@given(parsers.parse('the model fails every call with "{fault}"'))
def model_always_fails(world: World, fault: str) -> None:
    world.model.every_step = FaultTurn.model_validate({"fault": fault})


@given(parsers.parse('the tool "{name}" that takes no arguments and returns "{text}"'))
def tool_without_arguments(world: World, name: str, text: str) -> None:
    # Empty args fit it: a library that reads malformed or missing args as {} runs it on that guess.
    spec = ToolSpec(name=name, description=f"Run {name}; it takes no arguments.", parameters=())
    _add_tool(world, SuiteTool(spec, lambda args: text))
