"""The native loop with its approval callback: the binding of a library that asks a person to
approve a call during the run (`approval_form = "callback"`), not by a pause it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, Literal

from conformance import (
    AgentSpec,
    CallRequest,
    ErrorInfo,
    Outcome,
    ScriptedModel,
    SuiteTool,
    render,
    translate,
)
from tests.native import loop
from tests.native.binding import NativeBinding, _Agent


class ApprovingNativeBinding(NativeBinding):
    """Runs the suite against tests/native/loop.py, its interruptible tools approved by a callback."""

    name = "native-loop+approvals"
    capabilities = NativeBinding.capabilities | {"tool-approval", "approval-edit"}
    approval_form: ClassVar[Literal["pause", "callback"]] = "callback"
    not_claimed: ClassVar[Mapping[str, str]] = {
        **{c: r for c, r in NativeBinding.not_claimed.items()
           if c not in ("tool-approval", "approval-edit")},
        "durable-approvals": "approval is a callback during the run: there is no pause to keep",
    }

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        if isinstance(built, _Agent):
            built.agent.needs_approval = frozenset(t.name for t in spec.tools if t.interruptible)
        return built

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        agent.agent.approve = partial(_approve, model)
        return super().run(agent, call, model)


def _approve(model: ScriptedModel, name: str, args: dict[str, Any], call_id: str) -> loop.Answer:
    """The loop's approval callback: the person's answer, in the loop's terms."""
    answer = translate.approval(model.approve(name, render.json_value(args), call_id))
    if answer.decision == "edit":
        return {"name": answer.name, "args": answer.args}
    return {"approve": True, "reject": False}.get(answer.decision, answer.text)
