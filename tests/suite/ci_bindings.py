"""Bindings that cannot be loaded at all: each must be a clear usage error, never a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

from conformance import AgentSpec, Binding, CallRequest, ErrorInfo, Outcome, ScriptedModel, SuiteTool
from conformance.bindings.reference import ReferenceBinding


class Abstract(Binding):
    """Implements none of the abstract methods."""


class RaisesOnCreation(ReferenceBinding):
    """Its constructor raises, as a binding whose library is misconfigured would."""

    def __init__(self) -> None:
        raise RuntimeError("the library needs OPENAI_API_KEY")


class NoSizeLimit(ReferenceBinding):
    """A library that fails on arguments of any size or nesting (ARGS-5's question) with an error of
    five million characters: the scenarios fail, quoting it, and every output must cap it."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if call.inputs.get("question") == "Store it":
            return Outcome(error=ErrorInfo(type="RuntimeError", message="x" * 5_000_000))
        return super().run(agent, call, model)


class _DropsEmptyKeys(SuiteTool):
    """A tool wrapper that loses `""` keys of its `data` argument before the tool sees them."""

    def __init__(self, tool: SuiteTool) -> None:
        self.__dict__.update(tool.__dict__)
        self._tool = tool

    def __call__(self, **kwargs: Any) -> Any:
        data = kwargs.get("data")
        if isinstance(data, dict):
            kwargs["data"] = {k: v for k, v in data.items() if k}
        return self._tool(**kwargs)


class DropsEmptyKeys(ReferenceBinding):
    """Loses the empty-string keys of an object argument: only generated arguments find it."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return super().build(spec, [_DropsEmptyKeys(t) for t in tools])


def _deep(depth: int) -> None:
    if depth == 0:
        raise KeyError("the library lost its place")
    _deep(depth - 1)


class NoisyAndFailsAtScale(ReferenceBinding):
    """Prints and logs a warning with a traceback on every call, and from its 100th call on lets an
    exception out of 30 frames of its own: a fuzz failure's output must show the last example's
    warnings and the innermost frames, not all of them."""

    calls: ClassVar[int] = 0

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        NoisyAndFailsAtScale.calls += 1
        try:
            raise ValueError("noisylib-warning")
        except ValueError:
            logging.getLogger("noisylib").exception("noisylib recovered")
        print("noisylib-stderr", file=sys.stderr)
        if NoisyAndFailsAtScale.calls >= 100:
            _deep(30)
        return super().run(agent, call, model)


class NoneKnownFailureReason(ReferenceBinding):
    """Lists a known failure with no reason: once silently dropped."""

    known_failures: ClassVar[dict[str, Any]] = {"LOOP-1": None}


class BlankKnownFailureReason(ReferenceBinding):
    """Lists a known failure with a blank reason: once accepted."""

    known_failures: ClassVar[dict[str, str]] = {"LOOP-1": " "}
