"""Signatures from arrow strings, subclasses and values; clear errors for malformed ones."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import InputField, OutputField, Signature, SignatureError


def test_an_arrow_string_gives_str_fields_in_order_and_default_instructions() -> None:
    sig = Signature("context, question -> answer, sources")
    assert list(sig.inputs) == ["context", "question"]
    assert list(sig.outputs) == ["answer", "sources"]
    assert all(f.annotation is str and f.desc == "" for f in (*sig.inputs.values(),
                                                               *sig.outputs.values()))
    assert sig.inputs["question"].name == "question"
    assert "`context`, `question`" in sig.instructions and "`answer`, `sources`" in sig.instructions


def test_an_arrow_string_may_name_types() -> None:
    sig = Signature("question: str, n: int, ok: bool -> answer: float, items: list, data: dict")
    kinds = {n: f.annotation for n, f in (*sig.inputs.items(), *sig.outputs.items())}
    assert kinds == {"question": str, "n": int, "ok": bool, "answer": float, "items": list,
                     "data": dict}


class QA(Signature):
    """Answer the question briefly."""

    question: str = InputField(desc="what the user asked")
    n: int = InputField()
    answer: str = OutputField(desc="a short answer")
    choice: Literal["a", "b"] = OutputField()


def test_a_subclass_gives_its_fields_docstring_and_descriptions() -> None:
    sig = QA()
    assert sig.instructions == "Answer the question briefly."
    assert list(sig.inputs) == ["question", "n"] and list(sig.outputs) == ["answer", "choice"]
    assert sig.inputs["question"].desc == "what the user asked"
    assert sig.inputs["n"].annotation is int
    assert sig.outputs["choice"].annotation == Literal["a", "b"]
    assert sig.outputs["answer"].desc == "a short answer"


def test_a_value_built_in_code() -> None:
    sig = Signature(inputs={"question": InputField(desc="asked"), "n": int},
                    outputs={"answer": str}, instructions="  Be brief.  ")
    assert sig.inputs["question"].desc == "asked" and sig.inputs["n"].annotation is int
    assert sig.outputs["answer"].is_input is False and sig.instructions == "Be brief."
    assert str(sig) == "question, n: int -> answer"


def test_coerce_takes_a_string_a_subclass_or_a_value() -> None:
    value = Signature("a -> b")
    assert Signature.coerce(value) is value
    assert Signature.coerce("a -> b") == value
    assert Signature.coerce(QA) == QA()
    for bad in (42, None, dict, Signature, ["a -> b"]):
        with pytest.raises(SignatureError, match="cannot make a signature"):
            Signature.coerce(bad)


def test_equality_is_by_fields_and_instructions() -> None:
    assert Signature("a -> b") == Signature("a->b")
    assert Signature("a -> b") != Signature("a -> c")
    assert Signature("a -> b") != Signature("a: int -> b")
    assert Signature("a -> b") != Signature("a -> b", instructions="other")
    assert Signature("a -> b") != "a -> b"


@pytest.mark.parametrize(("text", "says"), [
    ("question answer", "no '->'"),
    ("a -> b -> c", "more than one '->'"),
    (" -> answer", "no input fields"),
    ("question ->  ", "no output fields"),
    ("a,,b -> c", "empty field name"),
    ("a, -> c", "empty field name"),
    ("a-b -> c", "'a-b' in signature 'a-b -> c' is not a valid identifier"),
    ("1st -> c", "'1st'"),
    ("a, b, a -> c", "field 'a' appears more than once"),
    ("a -> b, b", "field 'b' appears more than once"),
    ("q, a -> a", "field 'a' is both an input and an output"),
    ("q: integer -> a", "unknown type 'integer' for field 'q'"),
    ("q -> a: List[str]", "unknown type 'List[str]' for field 'a'"),
])
def test_a_malformed_string_fails_at_construction_naming_problem_and_text(text: str,
                                                                         says: str) -> None:
    with pytest.raises(SignatureError) as info:
        Signature(text)
    assert says in str(info.value) and repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_malformed_value_or_subclass_fails_at_construction() -> None:
    with pytest.raises(SignatureError, match="'q' is both an input and an output"):
        Signature(inputs={"q": str}, outputs={"q": str})
    with pytest.raises(SignatureError, match="no output fields"):
        Signature(inputs={"q": str}, outputs={})
    with pytest.raises(SignatureError, match=r"'bad name' .* not a valid identifier"):
        Signature(inputs={"bad name": str}, outputs={"a": str})
    with pytest.raises(SignatureError, match="not both"):
        Signature("a -> b", inputs={"a": str})
    with pytest.raises(SignatureError, match="needs an arrow string"):
        Signature()
    with pytest.raises(SignatureError, match="signature class NoOutputs has no output fields"):
        class NoOutputs(Signature):
            question: str = InputField()


def test_extended_adds_inputs_and_replaces_outputs_and_instructions() -> None:
    sig = Signature("question -> answer", instructions="Be brief.")
    more = sig.extended(inputs={"trajectory": str})
    assert list(more.inputs) == ["question", "trajectory"] and more.outputs == sig.outputs
    assert more.instructions == "Be brief." and list(sig.inputs) == ["question"]
    other = sig.extended(outputs={"x": int}, instructions="Other.")
    assert list(other.outputs) == ["x"] and other.instructions == "Other."


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
_types = st.sampled_from(["", "str", "int", "float", "bool", "list", "dict"])
_space = st.sampled_from(["", " ", "  "])


@given(st.lists(st.tuples(_names, _types, _space, _space), min_size=2, max_size=8,
                unique_by=lambda t: t[0]),
       st.integers(min_value=1, max_value=7))
def test_property_signature_strings_round_trip_through_str(
        fields: list[tuple[str, str, str, str]], cut: int) -> None:
    parts = [f"{pad}{name}{f'{pad2}:{pad}{kind}' if kind else ''}{pad2}"
             for name, kind, pad, pad2 in fields]
    cut = min(cut, len(parts) - 1)
    text = f"{','.join(parts[:cut])}->{','.join(parts[cut:])}"
    sig = Signature(text)
    assert Signature(str(sig)) == sig
    assert str(Signature(str(sig))) == str(sig)
