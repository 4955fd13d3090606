"""One comparison for every JSON value the suite checks (REQUIREMENTS.md, "Equal JSON values").

Two JSON values are equal when they have the same structure, strings, booleans and null, and
numbers equal as IEEE-754 binary64 values (RFC 8259 section 6): `1.0` and `1` are the same number,
and an integral float above 2^53 is the integer with the same binary64 value. A JavaScript library
cannot tell those apart, so neither may the suite. A boolean is never a number (`true` is not `1`),
and a number is never text (`4` is not `"4"`).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["canonical", "json_equal", "json_key", "loads_deep", "of_declared_type"]


def json_key(value: Any) -> Any:
    """A hashable form of the JSON `value`, equal for two values exactly when `json_equal` is:
    compare lists of them, or put them in sets."""
    if value is None or isinstance(value, bool | str):
        return (type(value).__name__, value)  # "bool" and "str" apart from numbers and each other
    if isinstance(value, int | float):
        return ("number", _binary64(value))
    if isinstance(value, list | tuple):
        return ("array", tuple(json_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), json_key(v)) for k, v in value.items())))
    return ("other", repr(value))  # not JSON: equal only to the same text


def json_equal(a: Any, b: Any) -> bool:
    """Whether the JSON values `a` and `b` are equal (numbers as binary64 values). Iterative, as
    `json_key` is not: tool args nested a hundred thousand levels deep compare too (ARGS-5)."""
    stack = [(a, b)]
    while stack:
        left, right = stack.pop()
        if isinstance(left, list | tuple) and isinstance(right, list | tuple):
            if len(left) != len(right):
                return False
            stack.extend(zip(left, right, strict=True))
        elif isinstance(left, dict) and isinstance(right, dict):
            if {str(k) for k in left} != {str(k) for k in right} or len(left) != len(right):
                return False
            other = {str(k): v for k, v in right.items()}
            stack.extend((v, other[str(k)]) for k, v in left.items())
        elif isinstance(left, list | tuple | dict) or isinstance(right, list | tuple | dict):
            return False
        elif json_key(left) != json_key(right):
            return False
    return True


_TOKEN = re.compile(r'\s*(?:([\[\]{}:,])|("(?:[^"\\]|\\.)*")|([^\s\[\]{}:,"]+))', re.S)


def loads_deep(text: str) -> Any:
    """JSON text parsed without recursion, to any depth (`json.loads` stops near a thousand
    levels): tool args nested a hundred thousand levels deep, as a harness sends them (ARGS-5).
    It checks brackets and that one value is all there is, not where commas and colons stand: it
    reads what a harness serialised, not what a model wrote."""
    stack: list[list[Any] | dict[str, Any]] = []
    keys: list[str | None] = []
    value: Any = None
    done = False
    pos = 0
    while True:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            if done and not text[pos:].strip():
                return value
            raise ValueError(f"not JSON at character {pos}: {text[pos:pos + 40]!r}")
        pos = match.end()
        if done:
            raise ValueError(f"not JSON: more after the value, at character {match.start()}")
        punct, string, bare = match.groups()
        if punct in ("[", "{"):
            stack.append([] if punct == "[" else {})
            keys.append(None)
            continue
        if punct in (",", ":"):
            continue
        if punct in ("]", "}"):
            if not stack or keys[-1] is not None or isinstance(stack[-1], list) != (punct == "]"):
                raise ValueError(f"not JSON: an unmatched {punct!r} at character {match.start()}")
            value = stack.pop()
            keys.pop()
        else:
            value = json.loads(string if string is not None else bare)
        if not stack:
            done = True
            continue
        top = stack[-1]
        if isinstance(top, list):
            top.append(value)
        elif keys[-1] is None:
            keys[-1] = value
        else:
            top[str(keys[-1])] = value
            keys[-1] = None


def canonical(value: Any) -> str:
    """`value` as JSON text with sorted keys, for messages only: compare with `json_equal`."""
    return json.dumps(value, sort_keys=True, default=repr)


def _binary64(number: int | float) -> float | int:
    try:
        return float(number)
    except OverflowError:  # an integer beyond every binary64 value: only itself is equal to it
        return number


#: The JSON values each declared parameter type (`binding.FieldType`) takes.
_DECLARED: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "list": (list,),
    "dict": (dict,),
}


def of_declared_type(value: Any, kind: str) -> bool:
    """Whether the JSON `value` is of the declared parameter type `kind` (a boolean is no number)."""
    return isinstance(value, _DECLARED[kind]) and not (isinstance(value, bool) and kind in ("int", "float"))
