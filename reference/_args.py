"""Tool arguments: the model's text becomes a JSON object, or a reason why it cannot."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

#: Larger argument text is refused before it is parsed.
MAX_CHARS = 100_000
#: Deeper nesting is refused before it is parsed (json.loads would recurse).
MAX_DEPTH = 64

_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?\s*```$", re.DOTALL)


class ToolArgsError(ValueError):
    """Tool arguments that cannot be used; the message says why."""


def parse_tool_args(value: str | Mapping[str, Any]) -> dict[str, Any]:
    """A JSON object (optionally in a ```json fence) as a dict; anything else is a ToolArgsError."""
    if isinstance(value, Mapping):
        return dict(value)
    if len(value) > MAX_CHARS:
        raise ToolArgsError(f"tool arguments are {len(value)} characters long; the limit is {MAX_CHARS}")
    text = value.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if nesting_exceeds(text, MAX_DEPTH):
        raise ToolArgsError(f"tool arguments nest deeper than {MAX_DEPTH} levels")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolArgsError(f"tool arguments are not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(parsed, dict):
        raise ToolArgsError(f"tool arguments must be a JSON object, not {_json_kind(parsed)}")
    return parsed


def nesting_exceeds(text: str, limit: int) -> bool:
    """Whether brackets in `text` nest deeper than `limit`, skipping string contents; one pass."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"
