"""Signatures from arrow strings, subclasses and values; malformed ones fail at construction."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import InputField, OutputField, Signature, SignatureError


def test_an_arrow_string_gives_typed_inputs_and_outputs() -> None:
    sig = Signature("context, question: str, n: int -> answer, score: float")
    assert list(sig.inputs) == ["context", "question", "n"]
    assert list(sig.outputs) == ["answer", "score"]
    assert sig.inputs["n"].annotation is int and sig.outputs["score"].annotation is float
    assert sig.instructions == (
        "Given the fields `context`, `question`, `n`, produce the fields `answer`, `score`.")


def test_a_subclass_gives_its_fields_descriptions_and_docstring() -> None:
    class QA(Signature):
        """Answer tersely."""

        question: str = InputField(desc="what is asked")
        answer: int = OutputField()

    sig = Signature.coerce(QA)
    assert sig.instructions == "Answer tersely."
    assert sig.inputs["question"].desc == "what is asked"
    assert sig.outputs["answer"].annotation is int
    assert QA() == sig


def test_a_value_built_in_code() -> None:
    sig = Signature(inputs={"question": str}, outputs={"answer": InputField(desc="d")},
                    instructions="Be brief.")
    assert sig.outputs["answer"].is_input is False and sig.outputs["answer"].desc == "d"
    assert sig.instructions == "Be brief."
    assert str(sig) == "question -> answer"


@pytest.mark.parametrize(("text", "says"), [
    ("question answer", "no '->'"),
    ("a -> b -> c", "more than one '->'"),
    (" -> answer", "no input fields"),
    ("question ->", "no output fields"),
    ("a,,b -> c", "empty field name"),
    ("a-b -> c", "'a-b' in signature 'a-b -> c' is not a valid identifier"),
    ("question, question -> answer", "field 'question' appears more than once"),
    ("question -> question", "field 'question' is both an input and an output"),
    ("question: complex -> answer", "unknown type 'complex' for field 'question'"),
])
def test_a_malformed_signature_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(SignatureError) as info:
        Signature(text)
    assert says in str(info.value)


def test_a_malformed_class_or_value_fails_too() -> None:
    with pytest.raises(SignatureError, match="no output fields"):
        class OnlyInputs(Signature):
            question: str = InputField()
    with pytest.raises(SignatureError, match="'q' is both an input and an output"):
        Signature(inputs={"q": str}, outputs={"q": str})
    with pytest.raises(SignatureError, match="cannot make a signature from 42"):
        Signature.coerce(42)


_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_types = st.sampled_from(["", ": int", ": float", ": bool", ": list", ": dict", ": str"])


@given(st.lists(st.tuples(_names, _types), min_size=2, max_size=6, unique_by=lambda t: t[0]),
       st.integers(min_value=1))
def test_signature_strings_round_trip(fields: list[tuple[str, str]], cut: int) -> None:
    cut = 1 + cut % (len(fields) - 1)
    side = lambda fs: ", ".join(n + t for n, t in fs)  # noqa: E731
    sig = Signature(f"{side(fields[:cut])} -> {side(fields[cut:])}")
    assert Signature(str(sig)) == sig
