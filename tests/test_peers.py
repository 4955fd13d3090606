"""The committed peer reports are what the suite says today: a changed verdict or message fails here.

Each bundled Python binding runs once, in its own environment (tests/peer_envs.py): the suite and
that library's extra alone, as the library's own CI would install it. The Node harnesses are
tests/suite/test_node_harnesses.py's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance._loader import GO_HARNESSES, HARNESSES, JAVA_HARNESSES, NODE_HARNESSES, RUST_HARNESSES
from conformance._report import CANNOT_EXPRESS, Report
from conformance.binding import CAPABILITIES
from tests.peer_envs import PeerEnvError, outside_ci, peers, python_of
from tests.suite.conftest import suite_run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "conformance"
#: The bundled Python bindings; the reference is the suite's own and runs in this environment.
PEERS = tuple(name for name in peers() if name not in HARNESSES)
#: The peers whose library CI cannot install, as noxfile.OUTSIDE_CI lists them, each with what its
#: committed report must say: CI compares no fresh run with these reports; it checks that they say so.
OUTSIDE_CI = {name: "run outside CI: the library's registry is not reachable here"
              for name in ("dspy-rb", "dspy-ex", "dspy-ex+chat-adapter")}


#: Requirements a bundled library meets or fails, row by row, by the state of its runtime rather than
#: by its code, each with what was seen: a row of one may pass in one run and be the known failure in
#: another, so a fresh run's rows of it are compared with the committed report's as "passed or the
#: known failure". The requirement's own verdict is still compared exactly, and must be the known
#: failure (test_a_run_dependent_requirement_is_a_known_failure_in_its_committed_report).
RUN_DEPENDENT: dict[str, dict[str, str]] = {
    name: {"ARGS-5": "how deep Jackson's recursion gets in the JVM's default 1 MB thread stack depends "
                     "on how much of it the JIT has compiled by then: in CI a 5000-deep row passed "
                     "that failed in every run on a quiet machine (every row passed with a 3 MB stack; "
                     "the 100000-deep object failed in every run)"}
    for name in ("google-adk-java", "google-adk-java+resumable")
}
#: What a row of a run-dependent requirement is compared as, when it passed or was the known failure.
_PASSED_OR_KNOWN = "passed or known-failure"


def _verdicts(report: dict[str, object], name: str = "") -> dict[str, str]:
    """Each scenario's verdict, a row of a requirement RUN_DEPENDENT lists for `name` folded."""
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    varies = RUN_DEPENDENT.get(name, {})
    return {s["id"]: _PASSED_OR_KNOWN if s["requirement"] in varies and s["verdict"] in
            ("passed", "known-failure") else s["verdict"] for s in scenarios}


def _messages(report: dict[str, object]) -> dict[str, str]:
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    return {s["id"]: s["message"] for s in scenarios}


def _library(name: str) -> str:
    return name.partition("+")[0]


def peer_python(name: str) -> Path | str:
    """The Python that runs `name`'s suite: its own environment's, built on first use."""
    if name == "reference":
        return sys.executable
    try:
        return python_of(name)
    except PeerEnvError as exc:  # no network, a pin that does not resolve: say so, never skip
        pytest.fail(f"{name}: {exc}", pytrace=False)


@pytest.mark.parametrize("name", PEERS)
def test_the_committed_report_matches_a_fresh_run_in_the_peer_s_own_environment(
    name: str, tmp_path: Path
) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    # `nox -s peers` writes the committed reports from serial runs, the binding in this process;
    # this one runs on two workers (`-n 2`), the binding isolated in a worker process of each
    # (`--conformance-isolate`, one process for all the scenarios a worker runs). So a verdict that
    # hangs on the order scenarios run in, on state shared between scenarios, or on the process
    # the binding runs in fails here as well as a changed one: every bundled binding gives the
    # same verdicts and messages isolated as in process. (The harnesses are processes already.)
    fresh = suite_run(tmp_path, name, "-n", "2", "--conformance-isolate", python=peer_python(name))
    assert fresh.report is not None, fresh.output[-3000:]
    assert not fresh.requirements("errored"), fresh.output[-3000:]
    assert fresh.report["requirements"] == committed["requirements"], (
        f"verdicts changed: rerun `nox -s peer-{_library(name)}` and commit docs/conformance/ if the "
        "change is right")
    assert _verdicts(fresh.report, name) == _verdicts(committed, name)
    assert _messages(fresh.report) == _messages(committed), (
        f"messages changed: rerun `nox -s peer-{_library(name)}` and commit docs/conformance/ if the "
        "change is right")


def test_the_reports_made_outside_ci_are_listed_and_say_so_instead_of_being_compared() -> None:
    # DSPy.rb and dspy.ex are not in a registry CI reaches: no fresh run can reproduce their reports
    # here. They are listed, not skipped: each report must say it was run outside CI, no other report
    # may, and every other committed report is compared with a fresh run by some test.
    assert outside_ci() == tuple(OUTSIDE_CI), "noxfile.OUTSIDE_CI and this listing must agree"
    reports = {path.stem: Report.model_validate_json(path.read_text(encoding="utf-8"))
               for path in sorted(DOCS.glob("*.json"))}
    marked = {name: r.binding.run_outside_ci for name, r in reports.items() if r.binding.run_outside_ci}
    assert marked == OUTSIDE_CI
    compared = (set(PEERS) | set(NODE_HARNESSES) | set(JAVA_HARNESSES) | set(GO_HARNESSES)
                | set(RUST_HARNESSES))
    assert set(reports) - compared == set(OUTSIDE_CI)
    for name in OUTSIDE_CI:
        assert name in peers() and name not in PEERS  # in the comparison; never compared with a run here
        report = reports[name]
        assert report.binding.name == name and report.complete
        assert "errored" not in {s.verdict for s in report.scenarios}
        assert f"**{OUTSIDE_CI[name]}**." in (DOCS / f"{name}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(RUN_DEPENDENT))
def test_a_run_dependent_requirement_is_a_known_failure_in_its_committed_report(name: str) -> None:
    # Folding "passed" with "known-failure" must never hide a requirement that passes: each one listed
    # is the binding's declared known failure, whose reason says that its rows vary between runs.
    report = Report.model_validate_json((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    for requirement in RUN_DEPENDENT[name]:
        assert report.requirements[requirement] == "known-failure", (name, requirement)
        failed = [s.message for s in report.scenarios
                  if s.requirement == requirement and s.verdict == "known-failure"]
        assert failed, (name, requirement)
        assert all("depends on the JVM's state" in message for message in failed), failed[0]


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.json")), ids=lambda p: p.stem)
def test_every_bundled_binding_gives_a_reason_for_each_capability_it_does_not_claim(path: Path) -> None:
    report = Report.model_validate_json(path.read_text(encoding="utf-8"))
    assert report.format_version == 3, f"{path.name} is an old report: rerun `nox -s peers`"
    claimed, reasons = set(report.binding.capabilities), report.binding.not_claimed
    assert claimed | set(reasons) == CAPABILITIES, (
        f"{report.binding.name}: no reason for {sorted(CAPABILITIES - claimed - set(reasons))}")
    assert all(reason.strip() for reason in reasons.values())
    # Every requirement not passed says why, and a known failure's reason is the binding's own.
    # A requirement passed on part of its scenarios says why the library cannot express the others.
    partly = {s.requirement for s in report.scenarios
              if s.verdict == "not-claimed" and CANNOT_EXPRESS in s.message}
    assert set(report.reasons) == {r for r, v in report.requirements.items() if v != "passed"} | (
        {r for r, v in report.requirements.items() if v == "passed"} & partly)
