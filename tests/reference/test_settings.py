"""configure() sets the process-wide adapter; context() overrides it, and sets the language model,
for this thread or task only."""

from __future__ import annotations

import asyncio
import threading

import pytest

import reference
from reference import ChatAdapter, JSONAdapter, configure, context, settings
from tests.reference.conftest import ScriptedLM


def test_configure_sets_the_adapter_and_no_language_model() -> None:
    adapter = JSONAdapter()
    configure(adapter=adapter)
    assert settings().adapter is adapter and settings().lm is None
    configure(adapter=None)
    assert settings().adapter is None


def test_configure_takes_no_language_model() -> None:
    with pytest.raises(TypeError, match="lm"):
        configure(lm=ScriptedLM(), adapter=None)  # type: ignore[call-arg]


def test_context_overrides_only_its_keys_and_restores_on_exit() -> None:
    inner, adapter = ScriptedLM(), JSONAdapter()
    configure(adapter=adapter)
    with context(lm=inner) as current:
        assert current.lm is inner and current.adapter is adapter
        with context(adapter=None):  # None is an override, unlike not passing adapter
            assert settings().lm is inner and settings().adapter is None
        assert settings().adapter is adapter
    assert settings().lm is None and settings().adapter is adapter


def test_context_restores_even_when_the_block_raises() -> None:
    try:
        with context(adapter=JSONAdapter()):
            raise KeyError("boom")
    except KeyError:
        pass
    assert settings().adapter is None


def test_configure_inside_a_context_changes_the_base_not_the_override() -> None:
    override = ChatAdapter()
    with context(adapter=override):
        configure(adapter=JSONAdapter())
        assert settings().adapter is override
    assert isinstance(settings().adapter, JSONAdapter)


def test_threads_never_see_each_others_context_but_all_see_configure() -> None:
    configure(adapter=(base := ChatAdapter()))
    barrier = threading.Barrier(2)
    seen: dict[str, object] = {}

    def worker(name: str) -> None:
        own = JSONAdapter() if name == "json" else ChatAdapter()
        with context(adapter=own):
            barrier.wait()  # both overrides are active at once
            seen[name] = settings().adapter is own
            barrier.wait()
        seen[f"{name} after"] = settings().adapter is base

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("json", "chat")]
    for t in threads:
        t.start()
    with context(adapter=ChatAdapter()):
        for t in threads:
            t.join()
    assert seen == {"json": True, "chat": True, "json after": True, "chat after": True}


def test_asyncio_tasks_never_see_each_others_context() -> None:
    async def task(adapter: reference.Adapter, started: asyncio.Event,
                   other: asyncio.Event) -> bool:
        with context(adapter=adapter):
            started.set()
            await other.wait()
            return settings().adapter is adapter

    async def main() -> list[bool]:
        a, b = asyncio.Event(), asyncio.Event()
        return list(await asyncio.gather(task(JSONAdapter(), a, b), task(ChatAdapter(), b, a)))

    assert asyncio.run(main()) == [True, True]
    assert settings().adapter is None
