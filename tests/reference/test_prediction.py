"""Prediction, Step and ToolErrorRecord: output values plus how a run went."""

from __future__ import annotations

import pytest

from reference import Prediction, Step, ToolErrorRecord


def test_outputs_read_as_attributes_and_items() -> None:
    prediction = Prediction({"answer": "42", "sources": ["a"]})
    assert prediction.answer == "42" and prediction["sources"] == ["a"]
    assert prediction.outputs() == {"answer": "42", "sources": ["a"]}
    with pytest.raises(AttributeError, match="no field 'missing'"):
        _ = prediction.missing
    with pytest.raises(KeyError):
        _ = prediction["missing"]


def test_run_fields_default_to_empty() -> None:
    prediction = Prediction({"a": 1})
    assert (prediction.trajectory, prediction.stop_reason, prediction.iterations,
            prediction.fallback, prediction.tool_errors) == ([], None, 0, None, [])
    assert "stop_reason=None" in repr(prediction)


def test_outputs_returns_a_copy() -> None:
    prediction = Prediction({"a": 1})
    prediction.outputs()["a"] = 2
    assert prediction.a == 1


def test_steps_and_error_records_are_validated_models() -> None:
    step = Step(thought="t", tool_name="add", tool_args={"a": 1}, observation=2)
    assert step.model_dump() == {"thought": "t", "tool_name": "add", "tool_args": {"a": 1},
                                 "observation": 2}
    record = ToolErrorRecord(tool="add", kind="ValueError", message="bad")
    assert record.model_dump() == {"tool": "add", "kind": "ValueError", "message": "bad"}
    with pytest.raises(ValueError):
        Step(thought="t", tool_name="add", tool_args=[1], observation=None)  # type: ignore[arg-type]
