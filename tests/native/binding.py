"""The binding of the test-only native loop (tests/native/loop.py): a contract-version-3 binding
that does not claim `signature`, bound as any native tool-calling library would be.

It is the worked example of docs/writing-a-binding.md, which quotes it (a test keeps the quotes
verbatim): it imports only the suite's public names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from conformance import (
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    ExtractTurn,
    FinalTurn,
    LMCall,
    Outcome,
    ScriptedModel,
    Step,
    StepTurn,
    SuiteTool,
    render,
)
from tests.native import loop


class _Agent:
    """A built agent, its spec, and the result its last run handed out."""

    def __init__(self, agent: loop.Agent, spec: AgentSpec) -> None:
        self.agent, self.spec = agent, spec
        self.last: loop.Result | loop.MaxStepsError | None = None


class NativeBinding(Binding):
    """Runs the suite against tests/native/loop.py."""

    name = "native-loop"
    contract_version = 3
    capabilities = frozenset({"max-steps-return", "max-steps-error", "cap-summary", "per-call-cap",
                              "repeated-error-stop", "parallel-tool-calls"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native loop: no signature, adapters or extraction call",
        "adapters": "a native loop: the model's replies are tool calls, in no adapter's format",
        "max-steps-extract": "on the cap the run returns; no extra call writes the outputs",
        "ask-user": "no built-in tool to ask the user",
        "tool-approval": "no approval of tool calls",
        "approval-edit": "no approval of tool calls, so no edit of one",
        "durable-approvals": "no approval of tool calls, so no pause to keep",
        "async": "no async form",
        "streaming": "no event stream",
        "lm-retry": "the model is a plain function: no client, no retries",
        "http": "the model is a plain function: no HTTP client",
    }
    #: The loop class to build: the broken variants substitute their own.
    loop_class: ClassVar[type[loop.Agent]] = loop.Agent

    @property
    def version(self) -> str:
        return "0"

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        defs = [loop.ToolDef(t.spec.name, t.spec.description, t.spec.json_schema(), t) for t in tools]
        # The model is installed per run: the agent holds a placeholder until then.
        agent = self.loop_class(defs, _no_model, max_steps=spec.max_steps,
                                instructions=spec.signature.instructions,
                                on_cap="raise" if spec.on_max_steps == "raise" else "return")
        return _Agent(agent, spec)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        agent.agent.model = _seam(model)
        try:
            result = agent.agent.run(render.user_message(call.inputs), max_steps=call.max_steps)
        except loop.MaxStepsError as exc:
            agent.last = exc
            return Outcome(error=_max_steps(exc))
        except Exception as exc:  # the loop let it escape: report it
            return Outcome(error=ErrorInfo.from_exception(exc))
        agent.last = result
        return Outcome(
            outputs=None if result.output is None else render.reply_outputs(agent.spec.signature,
                                                                             result.output),
            trajectory=[_step(s) for s in result.steps],
            stop_reason=result.stop_reason,
            iterations=result.steps_used,
            fallback=result.message,
            tool_errors=list(result.tool_errors),
        )

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        last = agent.last
        if last is None:
            return None
        steps = last.steps if isinstance(last, loop.Result) else last.history
        changed = [f"{'result.steps' if isinstance(last, loop.Result) else 'error.history'} "
                   f"({len(steps)} steps)"]
        for step in steps:
            step["thought"] = step["observation"] = marker
        steps.append({"thought": marker, "tool_name": marker, "tool_args": {}, "observation": marker})
        if isinstance(last, loop.Result):
            last.messages.append({"role": "user", "content": marker})
            changed.append("result.messages")
        return changed


def _step(step: dict[str, Any]) -> Step:
    """One step as the loop keeps it: its error flag and the id binding it to its call too."""
    return Step(thought=step["thought"] or None, tool_name=step["tool_name"],
                tool_args=render.json_value(step["tool_args"]),
                observation=render.json_value(step["observation"]), is_error=step["failed"],
                call_id=step["call_id"])


def _max_steps(exc: loop.MaxStepsError) -> ErrorInfo:
    return ErrorInfo(type=type(exc).__name__, message=str(exc), kind="max-iterations", fields={
        "iterations": exc.iterations, "max_iterations": exc.max_iterations,
        "tools_used": list(exc.tools_used),
        "history": [_step(s).model_dump(mode="json") for s in exc.history],
        "last_observation": render.json_value(exc.last_observation),
        "partial_final_answer": exc.partial_final_answer,
    })


def _no_model(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> loop.Reply:
    raise RuntimeError("the agent was run without a model")


def _seam(model: ScriptedModel) -> loop.Model:
    """The loop's model answered from the script, each request logged as the model saw it."""
    counter = iter(range(1, 1_000_000))

    def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> loop.Reply:
        shown = [{"role": m["role"], "content": _text(m)} for m in messages]
        # A call that may choose no tool writes the outputs: the suite's extraction call.
        turn = model.answer(LMCall(kind="step" if tools is not None else "extract", adapter="native",
                                   messages=shown, tools=render.json_value(tools)))
        number = next(counter)
        if isinstance(turn, StepTurn):
            return loop.Reply(turn.thought, tuple(
                loop.ToolCallRequest(f"call_{number}_{i}", c.tool_name, c.args_text())
                for i, c in enumerate(turn.calls())))
        if isinstance(turn, FinalTurn | ExtractTurn):
            final = turn if isinstance(turn, FinalTurn) else FinalTurn(outputs=turn.outputs)
            return loop.Reply(final.reply_text())
        raise ConnectionError(f"the model's transport failed: {turn.fault}")

    return answer


def _text(message: dict[str, Any]) -> str:
    """A message as the model reads it: its content, and the tool calls an assistant made."""
    calls = message.get("tool_calls") or []
    return "\n".join([str(message.get("content") or ""),
                      *(f"call {c['name']}({c['arguments']})" for c in calls)]).strip() or json.dumps(
        message)
