"""configure() is process-wide; context() is per thread and per task, and nests."""

from __future__ import annotations

import asyncio
import threading

import reference
from reference import ChatAdapter, JSONAdapter, configure, context, settings


def test_context_overrides_and_restores() -> None:
    configure(adapter=ChatAdapter())
    try:
        with context(adapter=JSONAdapter()):
            assert type(settings().adapter) is JSONAdapter
            with context(lm=None):
                assert type(settings().adapter) is JSONAdapter
        assert type(settings().adapter) is ChatAdapter
    finally:
        configure(adapter=None)
    assert settings() == reference.Settings()


def test_threads_do_not_see_each_others_context() -> None:
    seen: dict[str, object] = {}
    ready = threading.Barrier(2)

    def worker(name: str, adapter: object) -> None:
        with context(adapter=adapter):  # type: ignore[arg-type]
            ready.wait()
            seen[name] = type(settings().adapter)

    threads = [threading.Thread(target=worker, args=("a", ChatAdapter())),
               threading.Thread(target=worker, args=("b", JSONAdapter()))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": ChatAdapter, "b": JSONAdapter}


def test_tasks_do_not_see_each_others_context() -> None:
    async def task(adapter: object) -> type:
        with context(adapter=adapter):  # type: ignore[arg-type]
            await asyncio.sleep(0)
            return type(settings().adapter)

    async def main() -> list[type]:
        return await asyncio.gather(task(ChatAdapter()), task(JSONAdapter()))

    assert asyncio.run(main()) == [ChatAdapter, JSONAdapter]
