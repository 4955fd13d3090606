"""configure() sets process-wide defaults; context() overrides them for this thread or task only."""

from __future__ import annotations

import asyncio
import threading

import reference
from reference import ChatAdapter, JSONAdapter, configure, context, settings
from tests.reference.conftest import ScriptedLM


def test_configure_sets_the_defaults_and_keeps_what_it_is_not_given() -> None:
    model, adapter = ScriptedLM(), JSONAdapter()
    configure(lm=model)
    configure(adapter=adapter)
    assert settings().lm is model and settings().adapter is adapter
    configure(adapter=None)
    assert settings().lm is model and settings().adapter is None


def test_context_overrides_only_its_keys_and_restores_on_exit() -> None:
    base, inner, adapter = ScriptedLM(), ScriptedLM(), JSONAdapter()
    configure(lm=base, adapter=adapter)
    with context(lm=inner) as current:
        assert current.lm is inner and current.adapter is adapter
        with context(adapter=None):  # None is an override, unlike not passing adapter
            assert settings().lm is inner and settings().adapter is None
        assert settings().adapter is adapter
    assert settings().lm is base


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
    configure(lm=(base := ScriptedLM()))
    barrier = threading.Barrier(2)
    seen: dict[str, object] = {}

    def worker(name: str) -> None:
        own = JSONAdapter() if name == "json" else ChatAdapter()
        with context(adapter=own):
            barrier.wait()  # both overrides are active at once
            seen[name] = settings().adapter is own and settings().lm is base
            barrier.wait()
        seen[f"{name} after"] = settings().adapter is None

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
