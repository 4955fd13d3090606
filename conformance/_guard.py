"""Calling into a binding: a time limit, and a clear error when the binding itself misbehaves."""

from __future__ import annotations

import contextvars
import errno
import os
import queue
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


class ResourceExhausted(Exception):
    """The scenario ran out of a resource of the process (memory, stack, file descriptors) out of
    the binding's calls, in the suite's own steps: errored, no verdict on the library (`ran_out`
    says what ran out; a binding call that runs out is a BindingError)."""


class Blocked(Exception):
    """A scenario's precondition, which another requirement asks for, did not happen: the scenario
    cannot judge its own requirement, and is reported `blocked` by that one, never `passed`."""

    def __init__(self, requirement: str, what: str) -> None:
        super().__init__(f"blocked by {requirement}: {what}")
        self.requirement = requirement


class CheckFailed(AssertionError):
    """A check of the suite's own that failed while the binding was running (an unexpected model
    call, a request the cassette does not hold): the library's failure. Any other exception that
    escapes a binding call, an `AssertionError` too (a binding's `assert isinstance(...)`), is the
    binding's: `call` makes it a BindingError, so a scenario fails only on the suite's own checks."""


class RunawayRun(BaseException):
    """A run kept calling the model long after its script was spent and its step cap should have
    stopped it: the suite ends it there, rather than at the scenario's timeout with a core spinning.
    A BaseException, so that a library's `except Exception` retry loop does not swallow it."""


class ImplementationHung(CheckFailed):
    """A binding operation did not return in time: the implementation (or its binding) hangs."""


class _Worker:
    """One long-lived daemon thread that runs the binding operations of a session, one at a time.

    Its identity is stable, so libraries whose global settings belong to the thread that first set
    them (dspy's `configure`) see configure, build and run on one thread; the suite's own thread
    only waits, with a time limit. A worker stuck in a hung operation is abandoned (it is a daemon,
    so it never keeps the process alive) and the next operation gets a new one.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="conformance binding", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            self.jobs.get()()


_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _current_worker() -> _Worker:
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()
        return _worker


def _forget_worker() -> None:
    # A forked child (mutmut forks one per mutant) inherits `_worker` but not its thread: a job
    # queued for it would never run, and every operation would time out as hung.
    global _worker, _worker_lock
    _worker, _worker_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_worker)


def _abandon(worker: _Worker) -> None:
    global _worker
    with _worker_lock:
        if _worker is worker:
            _worker = None


def call(operation: str, fn: Callable[[], T], timeout: float) -> T:
    """Call the binding on the session's binding thread; a hang past `timeout` seconds, or any
    exception it lets escape (`SystemExit` too), costs one scenario, never the run.

    A `KeyboardInterrupt` from the binding stops the run as pytest's own would.
    """
    worker = _current_worker()
    if threading.current_thread() is worker.thread:  # a binding operation calling back in
        inline: T = _settle(operation, _run(fn))
        return inline
    done = threading.Event()
    context = contextvars.copy_context()
    box: dict[str, Any] = {}

    def job() -> None:
        box.update(_run(lambda: context.run(fn)))
        done.set()

    worker.jobs.put(job)
    if not done.wait(timeout):
        _abandon(worker)
        raise ImplementationHung(
            f"binding.{operation} did not return within {timeout:g} s. The implementation (or its "
            "binding) hangs; the suite moved on. Raise --conformance-timeout if it is only slow."
        )
    value: T = _settle(operation, box)
    return value


def _run(fn: Callable[[], object]) -> dict[str, Any]:
    try:
        return {"value": fn()}
    except BaseException as exc:  # every escape is the binding's fault; `fault` tells them apart
        return {"error": exc}


def _settle(operation: str, box: dict[str, Any]) -> Any:
    if "error" in box:
        raise fault(operation, box["error"])
    return box["value"]


def fault(operation: str, error: BaseException) -> BaseException:
    """What to raise for an exception that escaped `binding.<operation>`: the suite's own checks as
    they are, a `KeyboardInterrupt` as it is (it stops the run), anything else (a plain
    `AssertionError` too) as a BindingError."""
    if isinstance(error, RunawayRun):
        return CheckFailed(str(error))
    if isinstance(error, CheckFailed | BindingError | Blocked | KeyboardInterrupt):
        return error
    binding_error = _binding_error(operation, error)
    binding_error.__cause__ = error
    return binding_error


#: What ran out, for the exceptions that say a resource of the process is exhausted.
_EXHAUSTED = {MemoryError: "memory", RecursionError: "stack (recursion depth)"}
_EXHAUSTED_ERRNO = {errno.EMFILE: "file descriptors", errno.ENFILE: "file descriptors",
                    errno.ENOMEM: "memory"}


def _exhausted(exc: BaseException) -> str | None:
    """What resource `exc` says the process ran out of, if it says so."""
    for kind, resource in _EXHAUSTED.items():
        if isinstance(exc, kind):
            return resource
    if isinstance(exc, OSError):
        return _EXHAUSTED_ERRNO.get(exc.errno or 0)
    return None


#: What `ran_out` advises: a process of its own for each scenario.
ISOLATE_ADVICE = ("The rest of this process may be short of it too: run with --conformance-isolate, "
                  "which runs each scenario in a process of its own.")


def ran_out(who: str, exc: BaseException, advice: str = ISOLATE_ADVICE) -> str | None:
    """What to say when `who` (`binding.run`, "the scenario") ran out of a resource of the process
    with `exc`, or None if `exc` says nothing ran out."""
    resource = _exhausted(exc)
    if resource is None:
        return None
    said = f": {exc}" if str(exc) else ""
    return f"{who} ran out of {resource} ({type(exc).__name__}{said}). {advice}"


def _binding_error(operation: str, exc: BaseException) -> BindingError:
    name = type(exc).__name__
    exhausted = ran_out(f"binding.{operation}", exc)
    if exhausted is not None:
        return BindingError(exhausted)
    escaped = f"{name}: {exc}" if isinstance(exc, Exception) else f"{name}({exc})"
    return BindingError(
        f"binding.{operation} raised {escaped}. A binding must report the library's exceptions "
        "as data (ErrorInfo / Outcome.error), not let them escape."
    )


def validated(operation: str, model: type[M], value: object) -> M:
    """`value` as `model`, or a BindingError naming the field that is wrong. An instance is checked
    too: `model_construct` makes one that skipped validation."""
    try:
        if isinstance(value, model):
            return model.model_validate(value.model_dump(round_trip=True, warnings=False))
        return model.model_validate(value)
    except (ValidationError, TypeError, ValueError, AttributeError) as exc:
        raise BindingError(
            f"binding.{operation} returned {type(value).__name__}, not a valid {model.__name__}:\n"
            f"{exc}"
        ) from exc
