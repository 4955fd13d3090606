"""Equal JSON values: one comparison for every check, numbers as binary64 values."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import _fuzz
from conformance._values import canonical, json_equal, json_key


@pytest.mark.parametrize(("a", "b"), [
    (1, 1.0),
    (0, -0.0),
    ({"x": [1, 2.0]}, {"x": [1.0, 2]}),
    (2**53 + 1, 2.0**53),  # the same binary64 value
    (9007199254740992.0, 9007199254740992),
    (1e16, 10**16),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (10**400, 10**400),
])
def test_numbers_are_equal_as_binary64_values(a: Any, b: Any) -> None:
    assert json_equal(a, b)
    assert json_key(a) == json_key(b)


@pytest.mark.parametrize(("a", "b"), [
    (True, 1),
    (False, 0),
    (None, 0),
    ("4", 4),
    ("true", True),
    ([1], [1, 1]),
    ({"a": 1}, {"a": 1, "b": None}),
    ({"a": 1}, [["a", 1]]),
    (2**53 - 1, 2**53),
    (0.1, 0.1000001),
    (10**400, 10**400 + 1),
    ("", None),
])
def test_types_and_values_still_tell_apart(a: Any, b: Any) -> None:
    assert not json_equal(a, b)
    assert json_key(a) != json_key(b)


def test_canonical_is_for_messages_and_keeps_spelling() -> None:
    assert canonical({"b": 1.0, "a": [True]}) == '{"a": [true], "b": 1.0}'


@given(_fuzz._json_objects)
def test_generated_integers_are_exact_in_every_language(value: dict[str, Any]) -> None:
    def integers(v: Any) -> list[int]:
        if isinstance(v, dict):
            return [i for x in v.values() for i in integers(x)]
        if isinstance(v, list):
            return [i for x in v for i in integers(x)]
        return [v] if isinstance(v, int) and not isinstance(v, bool) else []

    assert all(abs(i) <= 2**53 - 1 for i in integers(value))
    assert json_equal(value, value)


def test_the_integer_bounds_are_generated() -> None:
    bounds = st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
    assert repr(bounds) in repr(_fuzz._json_scalars())


def test_loads_deep_parses_any_json_as_json_loads_does_and_to_any_depth() -> None:
    import json

    import pytest

    from conformance._values import loads_deep

    for text in ('{"a": [1, 2.5, "x\\"y", true, null, {}], "b": {"c": -1e5}}', "[]", '"s"', "3",
                 '[[[]], []]', '{"k": "a,b:{}[]", "u": "\\u002d"}'):
        assert loads_deep(text) == json.loads(text), text
    value = loads_deep('{"a":' * 100_000 + "1" + "}" * 100_000)
    depth = 0
    while isinstance(value, dict):
        value, depth = value["a"], depth + 1
    assert (depth, value) == (100_000, 1)
    for bad in ('{"a": }', "[1,", "", "[1] 2"):
        with pytest.raises(ValueError):
            loads_deep(bad)
