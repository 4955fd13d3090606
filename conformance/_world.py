"""One scenario's state: the agent being described, the scripted model, the outcomes so far."""

from __future__ import annotations

from typing import Any

from conformance import _guard
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    FieldSpec,
    LMCall,
    Outcome,
    SignatureSpec,
    Step,
)


class World:
    """What a scenario has set up and observed. Step definitions read and write only this."""

    def __init__(self, binding: Binding, timeout: float) -> None:
        self.binding = binding
        self.timeout = timeout
        self.signature = SignatureSpec(
            inputs=(FieldSpec(name="question"),), outputs=(FieldSpec(name="answer"),)
        )
        self.tools: dict[str, SuiteTool] = {}
        self.max_steps = 10
        self.adapter: AdapterName | None = None
        self.on_max_steps: str | None = None
        self.enable_ask_to_user = False
        self.model = ScriptedModel()
        self._agent: object | None = None
        self.build_error: ErrorInfo | None = None
        self.outcomes: list[Outcome] = []
        #: Each call's model calls, in call order (the model log is split at every call).
        self.calls_per_run: list[list[LMCall]] = []
        self.global_adapter: AdapterName | None = None
        #: Arguments sent by generated scenarios, and results of concurrent runs.
        self.sent_args: list[dict[str, Any]] = []
        self.concurrent: list[tuple[str | None, ScriptedModel, str, object]] = []

    def configure(self, adapter: AdapterName | None) -> None:
        """Set the library's global adapter (the fixture resets it after the scenario)."""
        _guard.call("configure", lambda: self.binding.configure(adapter=adapter))
        self.global_adapter = adapter

    # -- building ---------------------------------------------------------------------------

    def spec(self) -> AgentSpec:
        """The agent as described so far."""
        return AgentSpec.model_validate(
            {
                "signature": self.signature,
                "tools": tuple(t.spec for t in self.tools.values()),
                "max_steps": self.max_steps,
                "adapter": self.adapter,
                "on_max_steps": self.on_max_steps,
                "enable_ask_to_user": self.enable_ask_to_user,
            }
        )

    def build(self) -> object | None:
        """Build the agent once; a refusal is kept in `build_error`."""
        if self._agent is None and self.build_error is None:
            spec, tools = self.spec(), list(self.tools.values())
            built = _guard.call("build", lambda: self.binding.build(spec, tools))
            if isinstance(built, ErrorInfo):
                self.build_error = built
            elif built is None:
                raise _guard.BindingError("binding.build returned None instead of an agent.")
            else:
                self._agent = built
        return self._agent

    def reset_agent(self) -> None:
        """Forget the built agent, so the next use builds a new one from the current description."""
        self._agent, self.build_error = None, None

    @property
    def agent(self) -> object:
        """The built agent; fails the scenario if the library refused to build it."""
        agent = self.build()
        if agent is None:
            assert self.build_error is not None
            raise AssertionError(
                f"the library refused to build the agent: {self.build_error.type}: "
                f"{self.build_error.message}\nThe agent was: {self.spec().model_dump_json()}"
            )
        return agent

    # -- running ----------------------------------------------------------------------------

    def call(self, inputs: dict[str, Any], max_steps: int | None = None) -> Outcome:
        """Call the agent once and check the model saw exactly the scripted conversation."""
        agent, model = self.agent, self.model
        request = CallRequest.model_validate({"inputs": inputs, "max_steps": max_steps})
        before = len(model.calls)
        raw = _guard.call("run", lambda: self.binding.run(agent, request, model), self.timeout)
        outcome = _guard.validated("run", Outcome, raw)
        self.outcomes.append(outcome)
        self.calls_per_run.append(model.calls[before:])
        self.check_script(outcome)
        return outcome

    def check_script(self, outcome: Outcome) -> None:
        """Fail on a model call the script did not expect, or on turns left unused."""
        if self.model.violation is not None:
            raise AssertionError(f"unexpected model call: {self.model.violation}")
        interrupted = outcome.error is not None and outcome.error.kind == "human-in-the-loop"
        if self.model.unused and not interrupted:
            unused = ", ".join(t.kind for t in self.model.unused)
            raise AssertionError(
                f"the implementation made fewer model calls than the scenario scripts: "
                f"{len(self.model.unused)} turn(s) unused ({unused}). It made "
                f"{self.model.count('step')} step and {self.model.count('extract')} extraction "
                f"call(s){_raised(outcome)}."
            )

    # -- reading ----------------------------------------------------------------------------

    @property
    def last(self) -> Outcome:
        """The outcome of the latest call."""
        assert self.outcomes, "the scenario never called the agent"
        return self.outcomes[-1]

    def prediction(self) -> Outcome:
        """The latest outcome, which must be a prediction rather than an error."""
        outcome = self.last
        if outcome.error is not None:
            raise AssertionError(
                f"the call raised {outcome.error.type}: {outcome.error.message} "
                "instead of returning a prediction"
            )
        return outcome

    def steps(self) -> list[Step]:
        """The latest trajectory: the prediction's, or the history the error carried."""
        outcome = self.last
        if outcome.error is not None and "history" in outcome.error.fields:
            history = outcome.error.fields["history"]
            assert isinstance(history, list), f"error history is not a list: {history!r}"
            return [Step.model_validate(s) for s in history]
        return outcome.trajectory

    def tool(self, name: str) -> SuiteTool:
        """A tool the scenario declared."""
        assert name in self.tools, f"the scenario declares no tool {name!r}"
        return self.tools[name]


def _raised(outcome: Outcome) -> str:
    if outcome.error is None:
        return ""
    return f", then raised {outcome.error.type}: {outcome.error.message}"
