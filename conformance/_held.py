"""What the endpoint holds between requests, per owner (the loopback endpoint, the scripted model
an in-memory seam serves, a replaying cassette): Anthropic's message threads, the Responses API's
stored responses. A request that names something its owner does not hold is `Refused`, as the real
API refuses it."""

from __future__ import annotations

import threading
import weakref
from typing import Any, TypeVar

T = TypeVar("T")

_HELD: weakref.WeakKeyDictionary[object, dict[type[Any], Any]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


class Refused(Exception):
    """A request the endpoint answers with an error, as the real API would: its status and body."""

    def __init__(self, status: int, body: dict[str, Any], message: str) -> None:
        super().__init__(message)
        self.status, self.body = status, body


def held(owner: object, kind: type[T]) -> T:
    """The `kind` of state (a class built with no arguments) that `owner` holds, made on first use;
    it goes when the owner does."""
    with _LOCK:
        kinds = _HELD.setdefault(owner, {})
        if kind not in kinds:
            kinds[kind] = kind()
        state: T = kinds[kind]
        return state
