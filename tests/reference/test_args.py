"""parse_tool_args: a JSON object or a ToolArgsError with a reason; hostile input fails fast."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import ToolArgsError, parse_tool_args
from reference._args import MAX_CHARS, MAX_DEPTH


@pytest.mark.parametrize("text", [
    '{"a": 1, "b": [true, null]}',
    '  {"a": 1, "b": [true, null]}\n',
    '```json\n{"a": 1, "b": [true, null]}\n```',
    '```\n{"a": 1, "b": [true, null]}\n```',
    '```json {"a": 1, "b": [true, null]} ```',
])
def test_a_json_object_bare_or_fenced(text: str) -> None:
    assert parse_tool_args(text) == {"a": 1, "b": [True, None]}


def test_a_mapping_is_taken_as_is() -> None:
    args = {"a": [1]}
    assert parse_tool_args(args) == args and parse_tool_args(args) is not args


@pytest.mark.parametrize(("text", "says"), [
    ('[50, "Ann"]', "must be a JSON object, not an array"),
    ('"amount=50"', "must be a JSON object, not a string"),
    ("50", "must be a JSON object, not a number"),
    ("1.5", "must be a JSON object, not a number"),
    ("true", "must be a JSON object, not a boolean"),
    ("null", "must be a JSON object, not null"),
    ('{"amount": 50', "not valid JSON"),
    ("{amount: 50}", "not valid JSON"),
    ('{"a": 1,, "b": 2}', "not valid JSON"),
    ("not json at all", "not valid JSON"),
    ("", "not valid JSON"),
    ("```json\n```", "not valid JSON"),
])
def test_anything_but_an_object_is_refused_with_a_reason(text: str, says: str) -> None:
    with pytest.raises(ToolArgsError, match=says):
        parse_tool_args(text)


def test_a_value_that_is_neither_text_nor_a_mapping_is_refused() -> None:
    with pytest.raises(ToolArgsError, match="not an array"):
        parse_tool_args([1, 2])  # type: ignore[arg-type]


def test_the_size_limit_is_checked_first() -> None:
    at_limit = '{"a": "' + "x" * (MAX_CHARS - 10) + '"}'
    assert len(parse_tool_args(at_limit)["a"]) == MAX_CHARS - 10
    with pytest.raises(ToolArgsError, match=f"{MAX_CHARS + 1} characters long; the limit is"):
        parse_tool_args("{" + " " * (MAX_CHARS - 1) + "}")
    start = time.perf_counter()
    with pytest.raises(ToolArgsError, match="characters long"):
        parse_tool_args('{"a": "' + "x" * 5_000_000 + '"}')
    assert time.perf_counter() - start < 0.5


def _nested(depth: int) -> str:
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


def test_nesting_up_to_the_limit_parses_and_deeper_is_refused_before_parsing() -> None:
    assert parse_tool_args(_nested(MAX_DEPTH))
    with pytest.raises(ToolArgsError, match=f"nest deeper than {MAX_DEPTH} levels"):
        parse_tool_args(_nested(MAX_DEPTH + 1))
    with pytest.raises(ToolArgsError, match="nest deeper"):
        parse_tool_args("[" * (MAX_DEPTH + 1))


def test_hostile_depth_fails_fast_without_recursion_error() -> None:
    start = time.perf_counter()
    for text in ("[" * 99_000, '{"a": ' * 15_000, "{" * 50_000 + "}" * 50_000):
        with pytest.raises(ToolArgsError):
            parse_tool_args(text)
    assert time.perf_counter() - start < 1.0


def test_an_integer_too_long_for_int_is_a_tool_args_error() -> None:
    # json.loads raises a plain ValueError past sys.get_int_max_str_digits() (4,300 by default).
    digits = sys.get_int_max_str_digits() + 1
    with pytest.raises(ToolArgsError, match=f"more than {digits - 1} digits"):
        parse_tool_args('{"a": ' + "9" * digits + "}")
    assert parse_tool_args('{"a": ' + "9" * (digits - 1) + "}")["a"] > 0


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"a": "[{" * 1000, "b": 'say \\"[[[" ok'})
    assert parse_tool_args(text) == json.loads(text)


def test_a_fence_with_a_long_run_of_whitespace_is_linear() -> None:
    # A backtracking regex for the fence took minutes on this input.
    start = time.perf_counter()
    with pytest.raises(ToolArgsError):
        parse_tool_args("```json" + " " * (MAX_CHARS - 20) + "x")
    assert time.perf_counter() - start < 0.5


_scalars = (st.none() | st.booleans() | st.integers() | st.text()
            | st.floats(allow_nan=False, allow_infinity=False))
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=5)
                     | st.dictionaries(st.text(), inner, max_size=5), max_leaves=30)
_objects = st.dictionaries(st.text(), _json, max_size=8)


@given(_objects)
def test_property_any_json_object_survives_unchanged(obj: dict[str, Any]) -> None:
    assert parse_tool_args(json.dumps(obj)) == obj
    assert parse_tool_args(f"```json\n{json.dumps(obj, indent=2)}\n```") == obj


@given(st.text())
def test_property_arbitrary_text_raises_nothing_but_tool_args_error(text: str) -> None:
    try:
        result = parse_tool_args(text)
    except ToolArgsError:
        return
    assert isinstance(result, dict)


@given(st.text(alphabet='{}[]":,1a\\ ', max_size=200))
def test_property_bracket_soup_raises_nothing_but_tool_args_error(text: str) -> None:
    try:
        assert isinstance(parse_tool_args(text), dict)
    except ToolArgsError:
        pass


@given(_scalars | st.lists(_json, max_size=5))
def test_property_json_that_is_not_an_object_is_refused(value: Any) -> None:
    with pytest.raises(ToolArgsError, match="must be a JSON object, not"):
        parse_tool_args(json.dumps(value))
