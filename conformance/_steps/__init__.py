"""Step definitions, one module per kind of step; registered by the plugin under `--impl`."""

from __future__ import annotations

import json

from pydantic import JsonValue

#: The step modules, in the order the plugin registers them.
MODULES = (
    "conformance._fixtures",
    "conformance._steps.setup",
    "conformance._steps.run",
    "conformance._steps.checks",
    "conformance._steps.interrupts",
    "conformance._steps.streams",
    "conformance._steps.wire",
)


def parse_json(text: str) -> JsonValue:
    """A JSON value written in a feature file, with a message that points at the typo."""
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"the feature file has invalid JSON {text!r}: {exc}") from exc
    return value
