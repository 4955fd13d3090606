"""Tool-argument parsing: any JSON object in, everything else refused with a reason, fast."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import ToolArgsError, parse_tool_args
from reference._args import MAX_CHARS, MAX_DEPTH

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_objects = st.dictionaries(st.text(), _json, max_size=6)


@given(_objects)
def test_property_any_json_object_survives_unchanged(obj: dict[str, Any]) -> None:
    text = json.dumps(obj)
    assert json.dumps(parse_tool_args(text)) == text
    assert json.dumps(parse_tool_args(f"```json\n{text}\n```")) == text


@given(st.text())
def test_property_arbitrary_text_raises_nothing_but_tool_args_error(text: str) -> None:
    try:
        result = parse_tool_args(text)
    except ToolArgsError as exc:
        assert str(exc)
    else:
        assert isinstance(result, dict)


@given(_json.filter(lambda v: not isinstance(v, dict)))
def test_property_json_that_is_not_an_object_is_refused(value: Any) -> None:
    with pytest.raises(ToolArgsError, match="must be a JSON object, not"):
        parse_tool_args(json.dumps(value))


@pytest.mark.parametrize(("text", "says"), [
    ("[1, 2]", "not an array"),
    ('"a"', "not a string"),
    ("12", "not a number"),
    ("null", "not null"),
    ("true", "not a boolean"),
    ('{"a": 1,', "not valid JSON"),
    ("{a: 1}", "not valid JSON"),
    ("", "not valid JSON"),
])
def test_what_is_refused_and_why(text: str, says: str) -> None:
    with pytest.raises(ToolArgsError, match=says):
        parse_tool_args(text)


def test_hostile_input_fails_fast_before_parsing() -> None:
    with pytest.raises(ToolArgsError, match=f"the limit is {MAX_CHARS}"):
        parse_tool_args('{"a": "' + "x" * MAX_CHARS + '"}')
    with pytest.raises(ToolArgsError, match=f"deeper than {MAX_DEPTH}"):
        parse_tool_args('{"a": ' + "[" * 10_000 + "]" * 10_000 + "}")
    nested_ok = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert parse_tool_args(nested_ok)
    # brackets inside strings are not nesting
    assert parse_tool_args(json.dumps({"a": "[" * 500})) == {"a": "[" * 500}


def test_a_mapping_is_copied() -> None:
    given_args = {"a": 1}
    parsed = parse_tool_args(given_args)
    assert parsed == given_args and parsed is not given_args
