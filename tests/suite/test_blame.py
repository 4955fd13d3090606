"""Blame: a verdict on the library only from the suite's own checks; what escapes a binding, a
harness or a worker is `errored`, with what is needed to reproduce it.

An `AssertionError` raised inside a binding, an unvalidated `Outcome.model_construct`, and a worker
crashing on one fuzzed input (hypothesis then reported "Inconsistent results from replaying") were
once all `failed`: the library was blamed for its binding's faults. A library hanging on fuzzed
inputs made hypothesis shrink through hang after hang.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import _guard
from conformance._model import UnexpectedModelCall
from tests.suite.conftest import RunSuite
from tests.suite.test_harness import HARNESS

B = "tests.suite.bindings"
FUZZ = "Any JSON object the model writes"
_FUZZ_K = "any_json_object_the_model_writes"


def _scenario(run_report: dict[str, object] | None, fragment: str) -> dict[str, str]:
    assert run_report is not None
    found = [s for s in run_report["scenarios"] if fragment in s["id"]]  # type: ignore[attr-defined]
    assert len(found) == 1, found
    return found[0]  # type: ignore[no-any-return]


def test_an_assertion_inside_a_binding_is_errored_not_failed(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:AssertsInRun", "-k", "finish_stops")
    assert run.report is not None, run.output[-3000:]
    verdicts = {s["verdict"] for s in run.report["scenarios"]}
    assert verdicts == {"errored"}, run.report["scenarios"]
    message = run.report["scenarios"][0]["message"]
    assert "binding.run raised AssertionError: not the agent this binding built" in message


def test_an_unvalidated_outcome_is_errored_naming_the_field(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:ConstructsAnInvalidOutcome", "-k", "finish_stops")
    assert run.report is not None, run.output[-3000:]
    assert {s["verdict"] for s in run.report["scenarios"]} == {"errored"}, run.report["scenarios"]
    assert "not a valid Outcome" in run.report["scenarios"][0]["message"]


def test_the_suites_own_checks_inside_a_binding_call_still_fail_the_library() -> None:
    assert isinstance(_guard.fault("run", UnexpectedModelCall("x")), UnexpectedModelCall)
    assert isinstance(_guard.fault("run", AssertionError("x")), _guard.BindingError)
    assert isinstance(_guard.fault("run", _guard.Blocked("LOOP-3", "x")), _guard.Blocked)


def test_a_worker_crash_while_fuzzing_is_errored_with_the_input_seed_and_stderr(
    run_suite: RunSuite,
) -> None:
    run = run_suite(f"{B}:CrashesOnTheThirdFuzzedCall", "--conformance-isolate", "-k", _FUZZ_K,
                    "--conformance-seed", "1234", timeout=300)
    scenario = _scenario(run.report, _FUZZ_K)
    message = scenario["message"]
    assert scenario["verdict"] == "errored", message
    assert "Inconsistent results" not in message
    assert "on the example: {" in message and "--conformance-seed 1234" in message, message
    assert "segfault in the native parser" in message, message  # the worker's stderr tail


def test_a_binding_fault_while_fuzzing_is_errored_with_the_input_and_seed(run_suite: RunSuite) -> None:
    # An in-process binding's fault on one input was shrunk: hypothesis then reported its own
    # "unreliable results" (the replay did not raise), with neither the fault nor the seed.
    run = run_suite(f"{B}:RaisesOnTheThirdFuzzedCall", "-k", _FUZZ_K, "--conformance-seed", "1234",
                    timeout=300)
    scenario = _scenario(run.report, _FUZZ_K)
    message = scenario["message"]
    assert scenario["verdict"] == "errored", message
    assert "Flaky" not in message and "unreliable" not in message, message
    assert "binding.run raised AssertionError: the binding lost track of its agent" in message
    assert "on the example: {" in message and "--conformance-seed 1234" in message, message


def test_a_harness_crash_while_fuzzing_is_errored_with_the_input_seed_and_stderr(
    run_suite: RunSuite,
) -> None:
    # A harness that crashes on every fuzzed call: hypothesis once shrank through crash after crash.
    run = run_suite(f"cmd:{HARNESS} --break crash --when 'Record this'", "-k", _FUZZ_K,
                    "--conformance-seed", "99", timeout=300)
    scenario = _scenario(run.report, _FUZZ_K)
    message = scenario["message"]
    assert scenario["verdict"] == "errored", message
    assert "exited with code 3" in message and "harness: something went badly wrong" in message
    assert "on the example: {" in message and "--conformance-seed 99" in message, message


def test_fuzzing_a_library_that_hangs_stops_at_the_first_hang(
    run_suite: RunSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hangs = tmp_path / "hangs.txt"
    monkeypatch.setenv("HANGS_FILE", str(hangs))
    run = run_suite(f"{B}:HangsOnFuzzedData", "-k", _FUZZ_K, "--conformance-timeout", "0.5",
                    timeout=300)
    scenario = _scenario(run.report, _FUZZ_K)
    assert "did not return within 0.5 s" in scenario["message"], scenario
    assert "on the example: {" in scenario["message"] and '"data": {' in scenario["message"]
    assert hangs.read_text().splitlines() == ["hang"]  # never shrunk through hang after hang
