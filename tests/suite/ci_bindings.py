"""Bindings that cannot be loaded at all: each must be a clear usage error, never a traceback."""

from __future__ import annotations

from conformance import Binding
from conformance.bindings.reference import ReferenceBinding


class Abstract(Binding):
    """Implements none of the abstract methods."""


class RaisesOnCreation(ReferenceBinding):
    """Its constructor raises, as a binding whose library is misconfigured would."""

    def __init__(self) -> None:
        raise RuntimeError("the library needs OPENAI_API_KEY")
