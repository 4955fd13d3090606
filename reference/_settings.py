"""The default adapter (process-wide) and language model, overridable per thread or asyncio task."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reference._adapters import Adapter
    from reference._lm import LanguageModel


@dataclass(frozen=True)
class Settings:
    """What a Predict uses when it was given no language model or adapter of its own."""

    lm: LanguageModel | None = None
    adapter: Adapter | None = None


_UNSET: Any = object()  # tells `context(adapter=None)` apart from not passing `adapter`
_base = Settings()
# The keys context() overrides, for the current thread or asyncio task only; never mutated.
_override: ContextVar[dict[str, Any]] = ContextVar("reference_settings", default={})  # noqa: B039


def settings() -> Settings:
    """The settings in force here: the innermost context()'s overrides over what configure() set."""
    override = _override.get()
    return replace(_base, **override) if override else _base


def configure(*, adapter: Adapter | None) -> None:
    """Set the process-wide default adapter, seen by every thread and task (ADP-1).

    The language model has no process-wide default: no requirement asks for one, and a run gets
    its model from `Predict(lm=...)` or `context(lm=...)`."""
    global _base
    _base = replace(_base, adapter=adapter)


@contextmanager
def context(*, lm: LanguageModel | None = _UNSET,
            adapter: Adapter | None = _UNSET) -> Iterator[Settings]:
    """Override the language model and/or adapter within the block, for this thread or task only."""
    token = _override.set({**_override.get(), **_given(lm=lm, adapter=adapter)})
    try:
        yield settings()
    finally:
        _override.reset(token)


def _given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not _UNSET}
