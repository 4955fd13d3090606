"""Predictions: the output values of a call, and for ReAct the steps that led to them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Step(BaseModel):
    """One step of a ReAct trajectory: what the model thought and called, and what it saw."""

    thought: str
    tool_name: str
    tool_args: dict[str, Any]
    observation: Any


class ToolErrorRecord(BaseModel):
    """A tool call that raised: the tool, the exception's type name, and its message."""

    tool: str
    kind: str
    message: str


class Prediction:
    """Output values as attributes (`p.answer`, `p["answer"]`), plus how a ReAct run went."""

    def __init__(self, outputs: dict[str, Any], *, trajectory: list[Step] | None = None,
                 stop_reason: str | None = None, iterations: int = 0, fallback: str | None = None,
                 tool_errors: list[ToolErrorRecord] | None = None) -> None:
        self._outputs = outputs
        #: The steps taken, in order: a copy the caller owns.
        self.trajectory: list[Step] = trajectory if trajectory is not None else []
        #: Why the loop stopped: "finish", "max_iters", "repeated_tool_errors"; None from Predict.
        self.stop_reason = stop_reason
        #: How many step calls the run made.
        self.iterations = iterations
        #: What to tell the user when the run stopped without finishing by itself, else None.
        self.fallback = fallback
        #: The run's last tool errors, oldest first, ten at most.
        self.tool_errors: list[ToolErrorRecord] = tool_errors if tool_errors is not None else []

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_outputs"][name]
        except KeyError:
            raise AttributeError(f"the prediction has no field {name!r}") from None

    def __getitem__(self, name: str) -> Any:
        return self._outputs[name]

    def outputs(self) -> dict[str, Any]:
        """The output values by field name."""
        return dict(self._outputs)

    def __repr__(self) -> str:
        return f"Prediction({self._outputs!r}, stop_reason={self.stop_reason!r})"
