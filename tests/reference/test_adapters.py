"""ChatAdapter and JSONAdapter: the messages they write, the replies they parse, strictly."""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import (
    Adapter,
    AdapterParseError,
    ChatAdapter,
    InputField,
    JSONAdapter,
    OutputField,
    Signature,
)


class Pick(Signature):
    """Pick a colour for the question."""

    question: str = InputField(desc="what was asked")
    n: int = InputField()
    colour: Literal["red", "blue"] = OutputField(desc="the colour")
    score: float = OutputField()


ADAPTERS = [ChatAdapter(), JSONAdapter()]


def test_the_chat_system_message_lists_fields_types_format_and_instructions() -> None:
    system, user = (m["content"] for m in ChatAdapter().format(Pick(), {"question": "q?", "n": 3}))
    assert "`question` (str): what was asked" in system and "`n` (int)" in system
    assert "`colour` (one of: red, blue): the colour" in system and "`score` (float)" in system
    assert "[[ ## colour ## ]]" in system and "[[ ## completed ## ]]" in system
    assert system.endswith("Pick a colour for the question.")
    assert "[[ ## question ## ]]\nq?" in user and "[[ ## n ## ]]\n3" in user


def test_the_json_system_message_asks_for_a_json_object_without_chat_markers() -> None:
    messages = JSONAdapter().format(Pick(), {"question": "q?", "n": 3})
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = (m["content"] for m in messages)
    assert "JSON object" in system and "[[ ##" not in system
    assert '"colour", "score"' in system and "`colour` (one of: red, blue)" in system
    assert "Pick a colour for the question." in system
    assert "question:\nq?" in user and "n:\n3" in user and "[[ ##" not in user


def test_non_text_inputs_are_written_as_json() -> None:
    sig = Signature("data: dict, items: list, flag: bool -> answer")
    user = ChatAdapter().format(sig, {"data": {"a": 1}, "items": [1, "x"], "flag": True})[1]
    assert '{"a": 1}' in user["content"] and '[1, "x"]' in user["content"]
    assert "[[ ## flag ## ]]\ntrue" in user["content"]


def test_chat_parse_reads_sections_and_coerces_types() -> None:
    sig = Signature("q -> text, n: int, x: float, ok: bool, items: list, data: dict")
    reply = ("[[ ## text ## ]]\n  two\nlines [x] \n\n[[ ## n ## ]]\n7\n[[ ## x ## ]]\n2\n"
             "[[ ## ok ## ]]\nfalse\n[[ ## items ## ]]\n[1, \"a\"]\n"
             "[[ ## data ## ]]\n```json\n{\"k\": [1]}\n```\n\n[[ ## completed ## ]]")
    assert ChatAdapter().parse(sig, reply) == {
        "text": "two\nlines [x]", "n": 7, "x": 2.0, "ok": False, "items": [1, "a"],
        "data": {"k": [1]}}


def test_json_parse_reads_an_object_fenced_or_not() -> None:
    reply = '{"colour": "red", "score": 1, "extra": "ignored"}'
    assert JSONAdapter().parse(Pick(), reply) == {"colour": "red", "score": 1.0}
    assert JSONAdapter().parse(Pick(), f"```json\n{reply}\n```") == {"colour": "red",
                                                                        "score": 1.0}


@pytest.mark.parametrize(("adapter", "reply", "field", "says"), [
    (ChatAdapter(), "[[ ## colour ## ]]\ngreen\n[[ ## score ## ]]\n1", "colour",
     "'green' is not one of red, blue"),
    (JSONAdapter(), '{"colour": "green", "score": 1}', "colour", "is not one of red, blue"),
    (ChatAdapter(), "[[ ## colour ## ]]\nred", "score", "missing from the reply"),
    (JSONAdapter(), '{"colour": "red"}', "score", "missing from the reply"),
    (ChatAdapter(), "[[ ## colour ## ]]\nred\n[[ ## score ## ]]\nhigh", "score",
     "'high' is not a valid float"),
    (JSONAdapter(), '{"colour": "red", "score": "1.5"}', "score", "'1.5' is not a valid float"),
    (JSONAdapter(), '{"colour": "red", "score": true}', "score", "True is not a valid float"),
    (JSONAdapter(), "not json", None, "the reply is not valid JSON"),
    (JSONAdapter(), "[1, 2]", None, "the reply is not a JSON object"),
])
def test_a_reply_that_does_not_fit_names_the_field_and_quotes_the_reply(
        adapter: Adapter, reply: str, field: str | None, says: str) -> None:
    with pytest.raises(AdapterParseError) as info:
        adapter.parse(Pick(), reply)
    error = info.value
    assert error.field == field and error.reply == reply and isinstance(error, ValueError)
    assert says in str(error) and repr(reply) in str(error)
    if field:
        assert f"field {field!r}" in str(error)


@pytest.mark.parametrize(("kind", "value", "says"), [
    ("int", "7.0", "is not a valid int"),
    ("int", "true", "is not a valid int"),
    ("bool", "1", "is not a valid bool"),
    ("list", '{"a": 1}', "is not a valid list"),
    ("dict", "[1]", "must be a JSON object, not an array"),
    ("dict", "{a: 1}", "not valid JSON"),
    ("list", "[" * 5000, "nests deeper than"),
    ("dict", "{" * 5000, "nest deeper than"),
])
def test_typed_chat_fields_are_strict(kind: str, value: str, says: str) -> None:
    sig = Signature(f"q -> v: {kind}")
    with pytest.raises(AdapterParseError, match=says) as info:
        ChatAdapter().parse(sig, f"[[ ## v ## ]]\n{value}\n\n[[ ## completed ## ]]")
    assert info.value.field == "v"


def test_a_hostile_json_reply_is_refused_without_recursion_error() -> None:
    sig = Signature("q -> v: dict")
    for reply in ('{"v": ' + "[" * 100_000, "[" * 100_000,
                  json.dumps({"v": {"x": "y" * 200_000}})):
        with pytest.raises(AdapterParseError):
            JSONAdapter().parse(sig, reply)


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("kind", ["int", "dict", "list"])
def test_an_integer_too_long_for_int_is_a_parse_error(adapter: Adapter, kind: str) -> None:
    # json.loads raises a plain ValueError past sys.get_int_max_str_digits() (4,300 by default).
    number = "9" * (sys.get_int_max_str_digits() + 1)
    value = {"int": number, "dict": '{"a": ' + number + "}", "list": "[" + number + "]"}[kind]
    reply = (f"[[ ## v ## ]]\n{value}\n\n[[ ## completed ## ]]" if isinstance(adapter, ChatAdapter)
             else '{"v": ' + value + "}")
    with pytest.raises(AdapterParseError, match="digits"):
        adapter.parse(Signature(f"q -> v: {kind}"), reply)


def test_the_quoted_reply_is_truncated() -> None:
    reply = "[[ ## colour ## ]]\n" + "x" * 5000
    with pytest.raises(AdapterParseError) as info:
        ChatAdapter().parse(Pick(), reply)
    assert len(str(info.value)) < 500 and str(info.value).endswith("...'")
    assert info.value.reply == reply


def test_format_reply_writes_what_each_adapter_expects() -> None:
    values = {"colour": "red", "score": 0.5}
    chat = ChatAdapter().format_reply(Pick(), values)
    assert chat == "[[ ## colour ## ]]\nred\n\n[[ ## score ## ]]\n0.5\n\n[[ ## completed ## ]]"
    assert json.loads(JSONAdapter().format_reply(Pick(), values)) == values


ROUND_TRIP = Signature("q -> text, n: int, x: float, ok: bool, items: list, data: dict")
_MARKER = re.compile(r"\[\[ ## \w+ ## \]\]")
_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20)
_chat_text = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\n[]#{} "),
                     ).map(str.strip).filter(lambda s: not _MARKER.search(s))


def _values(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "text": text, "n": st.integers(), "x": st.floats(allow_nan=False),
        "ok": st.booleans(), "items": st.lists(_json, max_size=5),
        "data": st.dictionaries(st.text(max_size=10), _json, max_size=5),
    })


@given(_values(_chat_text))
def test_property_chat_format_reply_then_parse_round_trips(values: dict[str, Any]) -> None:
    adapter = ChatAdapter()
    assert adapter.parse(ROUND_TRIP, adapter.format_reply(ROUND_TRIP, values)) == values


@given(_values(st.text()))
def test_property_json_format_reply_then_parse_round_trips(values: dict[str, Any]) -> None:
    adapter = JSONAdapter()
    assert adapter.parse(ROUND_TRIP, adapter.format_reply(ROUND_TRIP, values)) == values


@given(st.text(), st.sampled_from(ADAPTERS))
def test_property_any_reply_parses_or_raises_adapter_parse_error(text: str,
                                                                 adapter: Adapter) -> None:
    try:
        adapter.parse(ROUND_TRIP, text)
    except AdapterParseError:
        pass
