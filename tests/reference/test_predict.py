"""Predict: inputs checked first; adapter and language model resolved at call time."""

from __future__ import annotations

import pytest

from reference import (
    AdapterParseError,
    ChatAdapter,
    InputField,
    JSONAdapter,
    OutputField,
    Predict,
    Prediction,
    Signature,
    configure,
    context,
)
from tests.reference.conftest import ScriptedLM, answer


class QA(Signature):
    """Answer briefly."""

    question: str = InputField()
    answer: str = OutputField()


def test_a_call_formats_completes_and_parses(lm: ScriptedLM) -> None:
    lm.replies.append(answer(answer="Paris"))
    prediction = Predict("question -> answer")(question="Capital of France?")
    assert isinstance(prediction, Prediction)
    assert prediction.answer == "Paris" and prediction["answer"] == "Paris"
    assert "[[ ## question ## ]]\nCapital of France?" in lm.user(0)
    assert prediction.trajectory == [] and prediction.stop_reason is None


@pytest.mark.parametrize("signature", [QA, QA(), "question -> answer",
                                       Signature(inputs={"question": str},
                                                 outputs={"answer": str})])
def test_any_form_of_signature(lm: ScriptedLM, signature: object) -> None:
    lm.replies.append(answer(answer="yes"))
    assert Predict(signature)(question="q").answer == "yes"


def test_missing_or_unexpected_inputs_fail_before_any_model_call(lm: ScriptedLM) -> None:
    predict = Predict("context, question -> answer")
    with pytest.raises(ValueError, match="missing input\\(s\\) context, question"):
        predict()
    with pytest.raises(ValueError, match="missing input\\(s\\) question and unexpected input"
                                         "\\(s\\) extra"):
        predict(context="c", extra=1)
    assert lm.requests == []


def test_no_language_model_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="no language model"):
        Predict("q -> a")(q="x")


def test_its_own_language_model_wins_over_the_contextual_one() -> None:
    own, contextual = ScriptedLM(answer(a="own")), ScriptedLM()
    with context(lm=contextual):
        assert Predict("q -> a", lm=own)(q="x").a == "own" and contextual.requests == []


def test_the_adapter_is_its_own_else_the_contextual_one_else_chat(lm: ScriptedLM) -> None:
    lm.replies += [answer(a="chat"), '{"a": "json"}', '{"a": "own"}', answer(a="chat again")]
    assert Predict("q -> a")(q="x").a == "chat"
    assert "[[ ## completed ## ]]" in lm.system(0)
    with context(adapter=JSONAdapter()):
        assert Predict("q -> a")(q="x").a == "json"
    configure(adapter=ChatAdapter())
    assert Predict("q -> a", adapter=JSONAdapter())(q="x").a == "own"
    assert "JSON object" in lm.system(2)
    assert Predict("q -> a")(q="x").a == "chat again"


def test_a_reply_that_does_not_fit_raises_adapter_parse_error(lm: ScriptedLM) -> None:
    lm.replies.append("no sections here")
    with pytest.raises(AdapterParseError, match="field 'a': missing from the reply"):
        Predict("q -> a")(q="x")
