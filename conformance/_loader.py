"""Find a binding by entry-point name or `module:attr`."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

import pytest

from conformance.binding import CAPABILITIES, Binding

GROUP = "react_conformance.bindings"


def available() -> list[str]:
    """The names registered in the `react_conformance.bindings` entry-point group."""
    return sorted({ep.name for ep in entry_points(group=GROUP)})


def load_binding(name: str) -> Binding:
    """Instantiate the binding `name`; a bad name is a usage error that lists what exists."""
    target: object
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise pytest.UsageError(
                f"--impl {name}: could not load {attr!r} from module {module_name!r} ({exc})."
            ) from exc
    else:
        matches = [ep for ep in entry_points(group=GROUP) if ep.name == name]
        if not matches:
            names = ", ".join(available()) or "(none installed)"
            raise pytest.UsageError(
                f"--impl {name}: no binding of that name. Available bindings: {names}. "
                f"Register one under the entry-point group {GROUP!r}, or pass module:attr."
            )
        try:
            target = matches[0].load()
        except ImportError as exc:
            raise pytest.UsageError(
                f"--impl {name}: the binding is registered but its library is not installed "
                f"({exc}). Install the matching extra, e.g. pip install 'react-conformance[{name}]'."
            ) from exc
    binding = target() if isinstance(target, type) else target
    if not isinstance(binding, Binding):
        raise pytest.UsageError(
            f"--impl {name}: {target!r} is not a conformance.Binding (subclass it)."
        )
    unknown = set(binding.capabilities) - CAPABILITIES
    if unknown:
        raise pytest.UsageError(
            f"--impl {name}: unknown capabilities {sorted(unknown)}; "
            f"known ones are {sorted(CAPABILITIES)}."
        )
    return binding
