"""A faster step lookup for pytest-bdd, installed by the plugin for the suite's own runs.

For every step of every scenario, pytest-bdd asks pytest, for each fixture name of the session,
which definitions the scenario can see, then whether one of them parses the step: about 150 names
for each of the suite's 1100 steps, a tenth of a run. Which step definitions a scenario sees depends
only on its parents and the fixtures registered: they are worked out once for those and kept, and so
is the answer for each step text. The step is matched exactly as pytest-bdd's own
`find_fixturedefs_for_step` does, over the same definitions in the same order.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

#: What the lookup uses of pytest-bdd's scenario module; without any of them it is left as it is
#: (slower, never wrong).
_NEEDS = ("find_fixturedefs_for_step", "get_fixture_names", "getfixturedefs",
          "step_function_context_registry")


def cache_step_lookup() -> None:
    """Replace pytest-bdd's step lookup with the cached one (once per process)."""
    # Imported by name: `pytest_bdd.scenario` the attribute is the `scenario` function.
    scenario = importlib.import_module("pytest_bdd.scenario")
    current = getattr(scenario, "find_fixturedefs_for_step", None)
    if all(hasattr(scenario, name) for name in _NEEDS) and not isinstance(current, _CachedLookup):
        scenario.find_fixturedefs_for_step = _CachedLookup(scenario)  # type: ignore[attr-defined]


class _CachedLookup:
    def __init__(self, scenario: ModuleType) -> None:
        self.bdd = scenario
        #: pytest-bdd's own lookup, which this one must always agree with.
        self.original = scenario.find_fixturedefs_for_step
        self.visible: dict[tuple[Any, ...], list[tuple[Any, Any]]] = {}
        self.found: dict[tuple[Any, ...], list[Any]] = {}

    def __call__(self, step: Any, fixturemanager: Any, node: Any) -> Iterator[Any]:
        # The scenario's parents, not the scenario (no step definition is registered on one), and
        # every fixture name, so that a definition registered later is seen.
        scope = (fixturemanager, tuple(node.listchain()[:-1]),
                 tuple(self.bdd.get_fixture_names(fixturemanager=fixturemanager)))
        key = (step.type, step.name, *scope)
        if key not in self.found:
            self.found[key] = [
                fixturedef for fixturedef, context in self._definitions(scope, fixturemanager, node)
                if (context.type is None or context.type == step.type)
                and context.parser.is_matching(step.name)
            ]
        return iter(self.found[key])

    def _definitions(self, scope: tuple[Any, ...], fixturemanager: Any, node: Any) -> list[tuple[Any, Any]]:
        """Every step definition `node` can see, with its context, in pytest-bdd's order."""
        if scope not in self.visible:
            registry = self.bdd.step_function_context_registry
            self.visible[scope] = [
                (fixturedef, context)
                for name in scope[2]
                for fixturedef in self.bdd.getfixturedefs(fixturemanager, name, node) or []
                if (context := registry.get(fixturedef.func)) is not None
            ]
        return self.visible[scope]
