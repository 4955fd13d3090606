"""The binding for smolagents' `ToolCallingAgent`, with its defaults.

Seam: smolagents' own `OpenAIModel` (a `smolagents.models.Model`), built with the documented
`client=` argument: an `openai.OpenAI` client over an in-memory httpx transport that answers each
chat-completions request from the script. So the agent's own message building, tool declarations
(`get_tool_json_schema`), tool-call parsing, argument validation and tool execution run, and so does
the model client users run (the openai client, whose default `max_retries=2` retries timeouts,
connection errors, 429 and 5xx; smolagents' own `Retrying` adds retries on rate limits only).
Each request is logged as an `LMCall` from its body (`server.native_call`: messages as text, the
tools as native declarations). A step is answered with native `tool_calls`; a final answer with a
call of smolagents' own `final_answer` tool ({"answer": reply}), which is how a ToolCallingAgent
ends a run; raw (malformed) tool args go verbatim into `arguments`, for smolagents to parse.

Cap: `max_steps` counts action steps, one model call each (`MultiStepAgent._run_stream` loops while
`step_number <= max_steps`), so N steps map to `max_steps=N`; `agent.run(max_steps=N)` is the
per-call cap. On the cap smolagents makes one tool-less call (`provide_final_answer`, logged as an
extraction) and returns its text, with `RunResult.state == "max_steps_error"`.
Trajectory, stop reason and step count are read from `agent.memory.steps` and the `RunResult`; a
step's error flag is its `ActionStep.error` (set when its calls failed), its call id the tool call's.
Over HTTP (`http`) the agent runs on `OpenAIModel(api_base=call.base_url)`, smolagents' own client;
the endpoint answers a final turn with a call of the `final_answer` tool the request offers.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

from smolagents import ActionStep, RunResult, Tool, ToolCallingAgent
from smolagents.models import OpenAIModel
from smolagents.monitoring import LogLevel
from smolagents.utils import AgentMaxStepsError

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    Outcome,
    SignatureSpec,
    Step,
)
from conformance.render import json_value, user_message

_STOP_REASONS = {"success": "finish", "max_steps_error": "max_steps"}
_TWICE = ("after _handle_max_steps_reached, MultiStepAgent._run_stream yields the last ActionStep a "
          "second time (`yield action_step`): the stream shows the last step twice")


@dataclass
class _Agent:
    """A built agent, the signature its outputs are reported under, and what its last call handed out."""

    agent: ToolCallingAgent
    signature: SignatureSpec
    last: list[Any] = field(default_factory=list)


class SmolagentsBinding(Binding):
    """Runs the suite against smolagents' `ToolCallingAgent`."""

    name = "smolagents"
    dependencies = ("smolagents", "openai", "huggingface-hub")
    contract_version = 3
    capabilities = frozenset({"max-steps-extract", "per-call-cap", "streaming", "parallel-tool-calls",
                              "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: no signatures, step predictor or adapters",
        "adapters": "no pluggable format-and-parse layer: each Model class (models.py) owns its wire "
                    "format",
        "cap-summary": "on the cap MultiStepAgent._handle_max_steps_reached returns only the text of "
                       "the tool-less provide_final_answer call: no word of the tools tried or the "
                       "last error",
        "repeated-error-stop": "no repeated-error stop: MultiStepAgent._run_stream records each "
                               "AgentToolExecutionError on its ActionStep and loops on to max_steps",
        "max-steps-error": "on the cap MultiStepAgent._handle_max_steps_reached always makes a final "
                           "tool-less call and returns its text; no option raises",
        "max-steps-return": "on the cap the run always makes the extra provide_final_answer model call; "
                            "it never returns without it",
        "ask-user": "its only ask-the-user tool, UserInputTool (user_input, off by default), reads "
                    "stdin with input() inside the run: no pause, interrupt id or resume",
        "tool-approval": "no approval step: ToolCallingAgent.execute_tool_call runs every call at once",
        "approval-edit": "no approval to edit: ToolCallingAgent.execute_tool_call runs every call at once",
        "durable-approvals": "no approval pause to serialise: ToolCallingAgent.execute_tool_call runs "
                             "every call at once",
        "async": "no async form: MultiStepAgent.run is synchronous only",
    }
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: RunResult.state, 'success' or 'max_steps_error' (agents.py "
                       "MultiStepAgent.run); a stream's, as run computes it, from the AgentMaxStepsError "
                       "on the last memory step (agents.py _handle_max_steps_reached)",
        "iterations": "derived: counted from agent.memory.steps, one ActionStep per model call, less "
                      "the cap's tool-less final step (memory.py AgentMemory)",
        "max_iterations": "none: on max_steps smolagents raises nothing; it makes a tool-less call and "
                          "returns its text (agents.py _handle_max_steps_reached)",
        "partial_run": "none: on max_steps smolagents raises nothing; agent.memory keeps the steps",
        "concurrency": "shared",
    }
    known_failures: ClassVar[Mapping[str, str]] = {
        "Eleven parallel calls keep the order the model gave them":
            "a step's tool calls and their observations are ordered by call id, not by the reply's "
            "order: call_1_10 runs and is recorded before call_1_2 (agents.py, "
            "ToolCallingAgent.process_tool_calls: sorted(parallel_calls.keys()))",
        "A streaming run stopped by the step cap still ends with one done event": _TWICE,
        **dict.fromkeys(
            translate.ARGS5_DEEP,
            "args nested thousands deep that json.loads can parse (models.py parse_json_if_needed keeps "
            "the text only when it cannot) are walked recursively by make_json_serializable (utils.py) "
            "when the next step writes memory to messages (memory.py ToolCall.dict, agents.py "
            "write_memory_to_messages): RecursionError escapes run"),
    }

    @property
    def version(self) -> str:
        return version("smolagents")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(ToolCallingAgent(
            tools=[_smol_tool(t) for t in tools],
            # Replaced by the scripted model on each run.
            model=OpenAIModel(model_id="scripted", api_base=server.IN_MEMORY_URL, api_key=server.API_KEY),
            instructions=spec.signature.instructions or None,
            max_steps=spec.max_steps,
            verbosity_level=LogLevel.OFF,  # console output only; no behaviour depends on it
        ), spec.signature))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        smol = agent.agent
        if call.base_url is None:
            smol.model = OpenAIModel(model_id="scripted", client=server.openai_client(
                model, server.native_call, asynchronous=False))
        else:  # `http`: smolagents' own OpenAI client, at the suite's endpoint
            smol.model = OpenAIModel(model_id="scripted", api_base=call.base_url, api_key=server.API_KEY)
        task = user_message(call.inputs)

        def whole() -> tuple[Any, str]:
            result = smol.run(task, max_steps=call.max_steps, return_full_result=True)
            assert isinstance(result, RunResult)
            agent.last = [result]
            return result.output, result.state

        def stream(events: list[Event]) -> tuple[Any, str]:
            """The memory's steps as they are streamed; the last item is the FinalAnswerStep."""
            streamed = []
            for item in smol.run(task, stream=True, max_steps=call.max_steps):
                streamed.append(item)
                if isinstance(item, ActionStep):
                    events.extend(translate.step_event(model, s) for s in _steps(item))
            agent.last = streamed
            return streamed[-1].output, _state(smol)

        return translate.reported(model, call.mode, partial(_finished, agent), partial(_failed, agent),
                                  sync=whole, stream=stream)

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for item in agent.last:
            if isinstance(item, RunResult):  # its steps: dicts of the memory, as it hands them out
                for step in item.steps:
                    step["observations"] = step["model_output"] = marker
                item.steps.append({"observations": marker, "model_output": marker, "tool_calls": []})
            elif isinstance(item, ActionStep):  # the memory's own step objects, streamed
                item.observations = item.model_output = marker
        return [f"the run's result and memory steps ({held} items)"] if held else []

def _smol_tool(tool: SuiteTool) -> Tool:
    """A `smolagents.Tool` subclass for `tool`: its name, description and inputs from the tool's JSON
    schema, and a `forward` with the matching signature that calls it (errors are not caught)."""
    schema = tool.spec.json_schema()
    inputs = {name: {"type": prop["type"], "description": prop["description"]}
              for name, prop in schema["properties"].items()}
    params = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=translate.PYTHON_TYPES[p.type]) for p in tool.spec.parameters]
    signature = inspect.Signature(params, return_annotation=Any)

    def forward(self: Tool, *args: Any, **kwargs: Any) -> Any:
        # As a plain Python method would: unknown, missing or surplus arguments fail before the body.
        return tool(**signature.bind(*args, **kwargs).arguments)

    forward.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *params])
    forward.__annotations__ = {p.name: p.annotation for p in params} | {"return": Any}
    cls = type(f"SuiteTool_{tool.name}", (Tool,), {
        "name": tool.name, "description": tool.spec.description, "inputs": inputs,
        "output_type": "any", "forward": forward,
    })
    instance: Tool = cls()
    return instance


def _finished(agent: _Agent, end: tuple[Any, str]) -> Outcome:
    """A run that returned its final output and state; its steps as the agent's memory keeps them."""
    output, state = end
    return translate.finished(agent.signature, _answer(output), _trajectory(agent.agent),
                              _iterations(agent.agent), _STOP_REASONS.get(state, state))


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the run let escape, with the steps the agent's memory kept."""
    return Outcome(error=ErrorInfo.from_exception(exc), trajectory=_trajectory(agent.agent),
                   iterations=_iterations(agent.agent))


def _state(agent: ToolCallingAgent) -> str:
    """The run's state as `MultiStepAgent.run` computes it for its RunResult."""
    last = agent.memory.steps[-1] if agent.memory.steps else None
    return "max_steps_error" if isinstance(getattr(last, "error", None), AgentMaxStepsError) else "success"


def _answer(output: Any) -> Any:
    return str(output) if isinstance(output, str) else json_value(output)


def _iterations(agent: ToolCallingAgent) -> int:
    """The action steps in memory (one model call each), less the cap's tool-less final step."""
    return sum(1 for s in agent.memory.steps
               if isinstance(s, ActionStep) and not isinstance(s.error, AgentMaxStepsError))


def _trajectory(agent: ToolCallingAgent) -> list[Step]:
    return [step for s in agent.memory.steps if isinstance(s, ActionStep) for step in _steps(s)]


def _steps(step: ActionStep) -> list[Step]:
    """One Step per tool call of an action step: `tool_calls` once they all ran, else the calls of
    the model's message (a step that failed); the final answer's own call is not a tool step."""
    calls: list[tuple[str, Any, str | None]] = [(c.name, c.arguments, c.id) for c in step.tool_calls or []]
    if not calls and step.model_output_message is not None:
        calls = [(c.function.name, c.function.arguments, c.id)
                 for c in step.model_output_message.tool_calls or []]
    if step.is_final_answer:
        calls = [c for c in calls if c[0] != "final_answer"]
    if step.observations is not None:
        # smolagents joins the observations of one step's calls with newlines, in call-id order.
        lines = step.observations.split("\n")
        one_each = len(calls) > 1 and len(lines) == len(calls)
        observations = lines if one_each else [step.observations] * len(calls)
    else:  # the calls failed: the observation is the error as the step shows it to the model
        observations = [_shown_error(step)] * len(calls)
    thought = step.model_output if isinstance(step.model_output, str) else None
    # The step's own error flag: ActionStep.error is set when its tool calls failed (memory.py).
    failed = step.error is not None
    return [Step(thought=thought, tool_name=name, tool_args=json_value(args), observation=obs,
                 is_error=failed, call_id=call_id)
            for (name, args, call_id), obs in zip(calls, observations, strict=True)]


def _shown_error(step: ActionStep) -> str | None:
    """A failed step's error as `ActionStep.to_messages` shows it to the model (its last message)."""
    if step.error is None:
        return None
    content = step.to_messages()[-1].content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)
