"""The contract's versions: a version-1 binding keeps working; a confused one fails at load with an
error that names the contract version and what to change."""

from __future__ import annotations

import pytest

from conformance._features import catalogue
from tests.suite.conftest import RunSuite

C = "tests.suite.contract_bindings"


def test_a_version_one_binding_runs_unchanged_and_passes_what_it_passed(run_suite: RunSuite) -> None:
    run = run_suite(f"{C}:VersionOne")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None
    binding = run.report["binding"]
    assert binding["contract_version"] == 1
    # Its capabilities read in version 3: signature implied, human-in-the-loop split in two, the
    # ones that became core in version 2 dropped, and what version 3 split out of version 2's
    # judgement added (so it is judged as before).
    assert set(binding["capabilities"]) == {"signature", "max-steps-extract", "max-steps-error",
                                            "lm-retry", "ask-user", "tool-approval", "async",
                                            "streaming", "http", "adapters", "per-call-cap",
                                            "repeated-error-stop", "cap-summary", "approval-edit",
                                            "durable-approvals"}
    assert run.requirements("not-claimed") == {"LOOP-6", "EXH-7"}
    assert run.requirements("passed") == set(catalogue()) - {"LOOP-6", "EXH-7"}


@pytest.mark.parametrize(("binding", "says"), [
    ("VersionOneClaimingSignature", "declares no contract_version (so version 1). Add "
                                    "`contract_version = 3`"),
    ("VersionTwoClaimingToolErrors", "capabilities of contract version 1: tool-errors, tool-args and "
                                     "stop-reason are core now"),
    ("UnclaimsTheCore", "core requirements cannot be unclaimed"),
    ("FromTheFuture", "contract_version = 4; this react-conformance speaks contract versions 1 to 3"),
    ("ClaimsAndUnclaims", "both claimed and listed in not_claimed"),
])
def test_a_confused_binding_fails_at_load_saying_what_to_change(
    run_suite: RunSuite, binding: str, says: str
) -> None:
    run = run_suite(f"{C}:{binding}")
    assert run.returncode == 4, run.output[-2000:]
    assert says in run.output, run.output[-2000:]
    assert "Traceback" not in run.output


def test_a_mutation_that_changed_nothing_is_the_bindings_error_never_a_snapshot_pass(
    run_suite: RunSuite,
) -> None:
    run = run_suite("tests.suite.bindings:MutatesNothing", "-k", "snapshot or Mutating")
    assert run.report is not None, run.output[-3000:]
    snapshots = [s for s in run.report["scenarios"] if s["requirement"] in {"TRJ-2", "EXH-2"}]
    # TRJ-2's run and pause scenarios, EXH-2's history: each mutation changed nothing.
    assert {s["requirement"] for s in snapshots} == {"TRJ-2", "EXH-2"}, snapshots
    assert len([s for s in snapshots if s["requirement"] == "TRJ-2"]) == 2, snapshots
    for scenario in snapshots:
        assert scenario["verdict"] == "errored", scenario
        assert "mutate_last_result returned None: it changed nothing" in scenario["message"]
        assert "a pause's context trajectory" in scenario["message"]
    assert run.requirements("errored") == {"TRJ-2", "EXH-2"}
    assert run.returncode == 1


def test_a_container_the_library_refuses_to_let_the_caller_mutate_is_a_snapshot(
    run_suite: RunSuite,
) -> None:
    # A library handing out an immutable sequence: the caller's mutation raises, the binding says
    # so ("refused: ..."), and TRJ-2 holds by construction; a refusal that names nothing errors.
    run = run_suite("tests.suite.bindings:HandsOutAnImmutableTrajectory", "-k",
                    "Mutating_a_returned_trajectory or mutating_a_returned_trajectory")
    assert run.returncode == 0, run.output[-3000:]
    assert run.requirements("passed") == {"TRJ-2"}, run.output[-3000:]
    parallel = run_suite("tests.suite.bindings:HandsOutAnImmutableTrajectory", "-n", "2", "-k",
                         "Mutating_a_returned_trajectory or mutating_a_returned_trajectory")
    assert parallel.requirements("passed") == {"TRJ-2"}, parallel.output[-3000:]
    blank = run_suite("tests.suite.bindings:SaysRefusedWithoutSayingWhat", "-k",
                      "mutating_a_returned_trajectory")
    assert blank.requirements("errored") == {"TRJ-2"}, blank.output[-3000:]
    assert "a line 'refused: <container>: <what the library raised>'" in blank.output
    assert blank.requirements("errored") == run_suite(
        "tests.suite.bindings:SaysRefusedWithoutSayingWhat", "-n", "2", "-k",
        "mutating_a_returned_trajectory").requirements("errored")


def test_ext_2_judges_where_the_answer_came_from_and_leaves_its_text_to_loop_7(
    run_suite: RunSuite,
) -> None:
    selection = ("-k", "partial_trajectory_after_the_step_cap or not_joined_with_the_text")
    joined = run_suite("tests.suite.bindings:JoinsEveryThoughtIntoTheAnswer", *selection)
    assert joined.requirements("passed") == {"EXT-2"}, joined.output[-3000:]
    assert joined.requirements("failed") == {"LOOP-7"}, joined.output[-3000:]
    other = run_suite("tests.suite.bindings:AnswersSomethingElseOnTheCap", *selection)
    assert "EXT-2" in other.requirements("failed"), other.output[-3000:]
    assert "expected the extraction reply 'partial'" in other.output
