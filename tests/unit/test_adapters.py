"""Adapters format a signature into messages and parse replies, enforcing the field types."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import AdapterParseError, ChatAdapter, JSONAdapter, Signature

SIG = Signature(inputs={"question": str},
                outputs={"text": str, "n": int, "args": dict, "tool": Literal["add", "finish"]})
ADAPTERS = [ChatAdapter(), JSONAdapter()]

# Chat sections are delimited by markers and whitespace: values are kept free of both at the edges.
_text = st.text(min_size=1).map(str.strip).filter(lambda s: s and "[[" not in s and "]]" not in s)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=["chat", "json"])
@given(text=_text, n=st.integers(), args=st.dictionaries(st.text(), _json, max_size=4),
       tool=st.sampled_from(["add", "finish"]))
def test_property_format_reply_then_parse_round_trips(
    adapter: ChatAdapter | JSONAdapter, text: str, n: int, args: dict[str, Any], tool: str
) -> None:
    values = {"text": text, "n": n, "args": args, "tool": tool}
    assert adapter.parse(SIG, adapter.format_reply(SIG, values)) == values


def test_chat_messages_describe_fields_types_choices_and_instructions() -> None:
    system, user = ChatAdapter().format(SIG, {"question": "Why?"})
    assert system["role"] == "system" and "[[ ## completed ## ]]" in system["content"]
    assert "`tool` (one of: add, finish)" in system["content"]
    assert "`args` (a JSON object)" in system["content"]
    assert SIG.instructions in system["content"]
    assert "[[ ## question ## ]]\nWhy?" in user["content"]


def test_json_messages_ask_for_one_json_object_without_chat_markers() -> None:
    system, user = JSONAdapter().format(SIG, {"question": "Why?"})
    assert "JSON object" in system["content"] and "[[ ##" not in system["content"] + user["content"]
    assert "Why?" in user["content"]


@pytest.mark.parametrize(("adapter", "reply", "field", "says"), ids=lambda v: str(v)[:30], argvalues=[
    (ChatAdapter(), "[[ ## text ## ]]\nhi\n\n[[ ## completed ## ]]", "n", "missing"),
    (ChatAdapter(), "[[ ## text ## ]]\nhi\n[[ ## n ## ]]\nmany\n[[ ## args ## ]]\n{}\n[[ ## tool ## ]]\nadd",
     "n", "is not a int"),
    (ChatAdapter(), "[[ ## text ## ]]\nhi\n[[ ## n ## ]]\n1\n[[ ## args ## ]]\n[1]\n[[ ## tool ## ]]\nadd",
     "args", "must be a JSON object"),
    (ChatAdapter(), "[[ ## text ## ]]\nhi\n[[ ## n ## ]]\n1\n[[ ## args ## ]]\n{}\n[[ ## tool ## ]]\nrm",
     "tool", "'rm' is not one of add, finish"),
    (JSONAdapter(), '{"text": "hi", "n": 1, "args": {}}', "tool", "missing"),
    (JSONAdapter(), '{"text": "hi", "n": true, "args": {}, "tool": "add"}', "n", "is not a int"),
    (JSONAdapter(), '{"text": "hi", "n": 1, "args": "{a", "tool": "add"}', "args", "not valid JSON"),
    (JSONAdapter(), '{"text": "hi", "n": 1,', None, "not valid JSON"),
    (JSONAdapter(), "[1]", None, "not a JSON object"),
    (JSONAdapter(), '{"a": ' + "[" * 5000 + "]" * 5000 + "}", None, "nests deeper"),
])
def test_a_bad_reply_names_the_field_and_quotes_the_reply(
    adapter: ChatAdapter | JSONAdapter, reply: str, field: str | None, says: str
) -> None:
    with pytest.raises(AdapterParseError) as info:
        adapter.parse(SIG, reply)
    assert info.value.field == field and info.value.reply == reply
    assert says in str(info.value) and "the reply was" in str(info.value)


def test_json_replies_may_be_fenced() -> None:
    reply = '```json\n{"text": "hi", "n": 2, "args": {"a": 1}, "tool": "finish"}\n```'
    assert JSONAdapter().parse(SIG, reply)["args"] == {"a": 1}
