"""The native loop with an observation processor, as DSPy.rb has: a model call that may rewrite each
tool result before the model sees it. The binding names it as an auxiliary call (contract 3) and
answers it with `ScriptedModel.auxiliary`, as docs/writing-a-binding.md shows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from conformance import ScriptedModel
from conformance.binding import CallRequest, LMCall, Outcome
from tests.native import loop
from tests.native.binding import NativeBinding, _Agent


class _ObservingLoop(loop.Agent):
    #: The library's observation processor: the tool's name and result in, the result to show out.
    observer: Callable[[str, str], str] | None = None

    def execute(self, call: loop.ToolCallRequest) -> tuple[str, Any, Exception | None]:
        observation, args, error = super().execute(call)
        if self.observer is not None:
            observation = self.observer(call.name, observation)
        return observation, args, error


class ObservesEachResult(NativeBinding):
    """Its loop rewrites each tool result through a model call: an auxiliary call."""

    name = "native-observing"
    auxiliary_calls: ClassVar[Mapping[str, str]] = {
        "observation": "the loop may rewrite each tool result with a model call"}
    loop_class: ClassVar[type[loop.Agent]] = _ObservingLoop

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent) and isinstance(agent.agent, _ObservingLoop)

        def observe(tool: str, observation: str) -> str:
            asked = LMCall(kind="auxiliary", adapter="other", messages=[
                {"role": "user", "content": f"Rewrite the result of {tool}, or say continue: {observation}"}])
            answer = model.auxiliary("observation", asked)
            return observation if answer == "continue" else answer

        agent.agent.observer = observe
        return super().run(agent, call, model)


class ObservesWithoutNamingIt(ObservesEachResult):
    """Makes the same auxiliary call without naming it in `auxiliary_calls`: a binding bug, as the
    report could not say what the call is."""

    name = "native-observing-unnamed"
    auxiliary_calls: ClassVar[Mapping[str, str]] = {}
