"""The package exports every contract model a binding needs, as docs/writing-a-binding.md says."""

from __future__ import annotations

import conformance
from conformance import binding


def test_the_models_a_binding_returns_or_renders_are_importable_from_the_package() -> None:
    from conformance import Event, FinalTurn, ResumeRequest, ToolCall

    assert (Event, FinalTurn, ResumeRequest, ToolCall) == (
        binding.Event, binding.FinalTurn, binding.ResumeRequest, binding.ToolCall)


def test_everything_in_all_is_exported() -> None:
    assert all(hasattr(conformance, name) for name in conformance.__all__)
    assert {"Event", "FinalTurn", "ResumeRequest", "ToolCall"} <= set(conformance.__all__)
