"""Calling into a binding: a time limit, and a clear error when the binding itself misbehaves."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: Seconds one binding operation may take before the scenario fails as hung.
DEFAULT_TIMEOUT = 30.0


class BindingError(Exception):
    """The binding raised, or returned something that is not what the contract says: a binding bug."""


class Blocked(Exception):
    """A scenario's precondition, which another requirement asks for, did not happen: the scenario
    cannot judge its own requirement, and is reported `blocked` by that one, never `passed`."""

    def __init__(self, requirement: str, what: str) -> None:
        super().__init__(f"blocked by {requirement}: {what}")
        self.requirement = requirement


class ImplementationHung(AssertionError):
    """A binding operation did not return in time: the implementation (or its binding) hangs."""


def call(operation: str, fn: Callable[[], T], timeout: float | None = None) -> T:
    """Call the binding; with a `timeout`, in a daemon thread so a hang fails only one scenario.

    Without one the call stays on the suite's thread: libraries whose global settings belong to
    the thread that first set them (dspy's `configure`) need configure and build to stay put.
    """
    if timeout is None:
        try:
            return fn()
        except (AssertionError, BindingError, Blocked):
            raise
        except Exception as exc:
            raise _binding_error(operation, exc) from exc
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = context.run(fn)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"conformance {operation}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise ImplementationHung(
            f"binding.{operation} did not return within {timeout:g} s. The implementation (or its "
            "binding) hangs; the suite moved on. Raise --conformance-timeout if it is only slow."
        )
    if "error" in box:
        error: BaseException = box["error"]
        if isinstance(error, AssertionError | BindingError | Blocked):
            raise error
        raise _binding_error(operation, error) from error
    value: T = box["value"]
    return value


def _binding_error(operation: str, exc: BaseException) -> BindingError:
    return BindingError(
        f"binding.{operation} raised {type(exc).__name__}: {exc}. A binding must report the "
        "library's exceptions as data (ErrorInfo / Outcome.error), not let them escape."
    )


def validated(operation: str, model: type[M], value: object) -> M:
    """`value` as `model`, or a BindingError naming the field that is wrong."""
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise BindingError(
            f"binding.{operation} returned {type(value).__name__}, not a valid {model.__name__}:\n"
            f"{exc}"
        ) from exc
