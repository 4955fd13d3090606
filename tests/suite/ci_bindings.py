"""Bindings that cannot be loaded at all: each must be a clear usage error, never a traceback."""

from __future__ import annotations

from conformance import Binding, CallRequest, Outcome, ScriptedModel
from conformance.bindings.reference import ReferenceBinding
from reference import _args


class Abstract(Binding):
    """Implements none of the abstract methods."""


class RaisesOnCreation(ReferenceBinding):
    """Its constructor raises, as a binding whose library is misconfigured would."""

    def __init__(self) -> None:
        raise RuntimeError("the library needs OPENAI_API_KEY")


class NoSizeLimit(ReferenceBinding):
    """Passes arguments of any size to the tool: ARGS-5 fails with a multi-megabyte message."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        limit = _args.MAX_CHARS
        _args.MAX_CHARS = 10**9
        try:
            return super().run(agent, call, model)
        finally:
            _args.MAX_CHARS = limit
