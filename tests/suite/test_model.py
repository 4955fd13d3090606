"""The scripted model's rendezvous: concurrent runs are all in flight before any goes on."""

from __future__ import annotations

import threading

import pytest

from conformance import _model
from conformance._model import ScriptedModel
from conformance.binding import FinalTurn, LMCall, StepTurn

CALL = LMCall(kind="step", adapter="chat", messages=[{"role": "user", "content": "go"}])


def _model_with(rendezvous: threading.Barrier) -> ScriptedModel:
    model = ScriptedModel([StepTurn(thought="t", tool_name="add", tool_args={}),
                           FinalTurn(thought="done", outputs={"answer": "ok"})],
                          finish_then_extract=False)
    model.rendezvous = rendezvous
    return model


def test_no_run_gets_its_first_answer_before_every_run_has_asked() -> None:
    shared = threading.Barrier(3)
    models = [_model_with(shared) for _ in range(3)]
    answered = threading.Event()

    def first_run() -> None:
        models[0].answer(CALL)
        answered.set()

    first = threading.Thread(target=first_run)
    first.start()
    assert not answered.wait(0.2), "the first run was answered while the others had not asked"
    others = [threading.Thread(target=m.answer, args=(CALL,)) for m in models[1:]]
    for thread in others:
        thread.start()
    for thread in [first, *others]:
        thread.join(5)
    assert answered.is_set()
    assert [len(m.calls) for m in models] == [1, 1, 1]


def test_a_run_alone_goes_on_after_the_wait_and_only_its_first_request_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_model, "RENDEZVOUS_WAIT", 0.05)
    model = _model_with(threading.Barrier(2))  # the other run never reaches the model
    assert model.answer(CALL).kind == "step"
    assert model.rendezvous is None
    assert model.answer(CALL).kind == "final"
