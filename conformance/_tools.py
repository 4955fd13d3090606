"""Suite-owned tools: they record every call, so "ran with exactly these args" is measured here."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from conformance.binding import ToolSpec

_PY_TYPES: dict[str, type] = {
    "str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict,
}


class ToolFailure(BaseModel):
    """A scripted exception: the tool raises `error_type(message)`."""

    model_config = ConfigDict(frozen=True)
    error_type: str = "RuntimeError"
    message: str

    def model_post_init(self, context: Any, /) -> None:
        if self.error_type not in _ERRORS:
            raise ValueError(f"the scenario scripts an unknown exception type {self.error_type!r}; "
                             f"a tool can raise {', '.join(sorted(_ERRORS))}")


class DiskOnFire(Exception):
    """An exception type of the tool's own, which no library knows of (ERR-1: any type)."""


_ERRORS: dict[str, type[Exception]] = {
    "DiskOnFire": DiskOnFire,
    "RuntimeError": RuntimeError, "ValueError": ValueError, "KeyError": KeyError,
    "TimeoutError": TimeoutError, "PermissionError": PermissionError,
    "ConnectionError": ConnectionError, "TypeError": TypeError,
}

Behaviour = Callable[[dict[str, Any]], Any]


class SuiteTool:
    """A tool the suite owns: `spec` for the library, `__call__` to run it, `calls` to check it."""

    def __init__(
        self,
        spec: ToolSpec,
        behaviour: Behaviour | None = None,
        failures: dict[int, ToolFailure] | None = None,
        always_fails: ToolFailure | None = None,
    ) -> None:
        self.spec = spec
        self.calls: list[dict[str, Any]] = []
        #: The type of each exception the tool raised, in order.
        self.raised: list[str] = []
        #: What each call that returned gave back, in the order they returned.
        self.results: list[Any] = []
        self._behaviour = behaviour or (lambda args: f"{spec.name} done")
        self._failures = failures or {}
        self._always_fails = always_fails
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.spec.name

    def __call__(self, **kwargs: Any) -> Any:
        """Record the call, then return the scripted result or raise the scripted error."""
        with self._lock:
            self.calls.append(dict(kwargs))
            number = len(self.calls)
        failure = self._failures.get(number) or self._always_fails
        if failure is not None:
            error = _ERRORS[failure.error_type](failure.message)
            with self._lock:
                self.raised.append(type(error).__name__)
            raise error
        result = self._behaviour(kwargs)
        with self._lock:
            self.results.append(result)
        return result

    async def acall(self, **kwargs: Any) -> Any:
        """The same call, awaitable."""
        return self(**kwargs)

    def as_function(self) -> Callable[..., Any]:
        """A plain function with a real signature, name, docstring and type hints.

        Most libraries derive a tool's schema from its function; this gives them one to read.
        """

        params = [
            inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=_PY_TYPES[p.type])
            for p in self.spec.parameters
        ]
        signature = inspect.Signature(params, return_annotation=Any)

        def tool(**kwargs: Any) -> Any:
            # As a real function would: missing or unexpected arguments fail before the body runs.
            signature.bind(**kwargs)
            return self(**kwargs)

        tool.__name__ = tool.__qualname__ = self.spec.name
        tool.__doc__ = self.spec.description
        tool.__signature__ = signature  # type: ignore[attr-defined]
        tool.__annotations__ = {p.name: _PY_TYPES[p.type] for p in self.spec.parameters}
        tool.__annotations__["return"] = Any
        return tool
