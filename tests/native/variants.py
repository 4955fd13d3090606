"""Correct variants of the native loop's binding: other ways a library may write what the suite
reads, which the suite must judge as it judges the loop itself (tests/suite/test_native.py)."""

from __future__ import annotations

import json
from typing import Any, cast

from conformance import CallRequest, Outcome, ScriptedModel
from conformance.binding import LMCall, Turn
from tests.native.binding import NativeBinding


class _SchemasAsText:
    """A model that sees each tool's argument schema as JSON text, as some libraries send it."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    def answer(self, call: LMCall) -> Turn:
        tools = [_as_text(t) for t in call.tools or []]
        return self.model.answer(call.model_copy(update={"tools": tools or call.tools}))


def _as_text(tool: Any) -> Any:
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or "parameters" not in function:
        return tool
    return {**tool, "function": {**function, "parameters": json.dumps(function["parameters"])}}


class DeclaresSchemasAsJSONText(NativeBinding):
    """The tool declarations carry each argument schema as a JSON string (STEP-3 reads it)."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return super().run(agent, call, cast(ScriptedModel, _SchemasAsText(model)))
