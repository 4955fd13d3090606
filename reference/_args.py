"""Tool arguments: the model's text becomes a JSON object, or a ToolArgsError saying why not."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

#: Longer argument text is refused before it is parsed.
MAX_CHARS = 100_000
#: Deeper nesting is refused before it is parsed (json.loads would recurse).
MAX_DEPTH = 64


class ToolArgsError(ValueError):
    """Tool arguments that cannot be used; the message says why."""


def parse_tool_args(value: str | Mapping[str, Any]) -> dict[str, Any]:
    """A JSON object (optionally in a ```json fence) as a dict; anything else is a ToolArgsError."""
    if not isinstance(value, str):
        if isinstance(value, Mapping):
            return dict(value)
        raise ToolArgsError(f"tool arguments must be a JSON object, not {_kind(value)}")
    if len(value) > MAX_CHARS:
        raise ToolArgsError(f"tool arguments are {len(value)} characters long; "
                            f"the limit is {MAX_CHARS}")
    text = unfence(value)
    if too_deep(text, MAX_DEPTH):
        raise ToolArgsError(f"tool arguments nest deeper than {MAX_DEPTH} levels")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolArgsError(f"tool arguments are not valid JSON ({exc.msg} at char {exc.pos})"
                            ) from None
    except ValueError:  # not a JSONDecodeError: an integer too long for int() to read
        raise ToolArgsError(f"tool arguments hold an integer of more than {max_digits()} digits"
                            ) from None
    if not isinstance(parsed, dict):
        raise ToolArgsError(f"tool arguments must be a JSON object, not {_kind(parsed)}")
    return parsed


def max_digits() -> int:
    """The most digits json.loads reads in an integer; a longer one is a plain ValueError."""
    return sys.get_int_max_str_digits()


def unfence(text: str) -> str:
    """`text` stripped, and without the markdown code fence (```json ... ```) around it, if any."""
    text = text.strip()
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        body = text[3:-3]
        return (body[4:] if body.startswith("json") else body).strip()
    return text


def too_deep(text: str, limit: int) -> bool:
    """Whether brackets in `text` nest deeper than `limit`, string contents skipped; one pass."""
    if text.count("[") + text.count("{") <= limit:  # too few to nest that deep: skip the slow scan
        return False
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


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
