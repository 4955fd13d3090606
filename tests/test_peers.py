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

from conformance._loader import GO_HARNESSES, HARNESSES, JAVA_HARNESSES, NODE_HARNESSES, RUN_OUTSIDE_CI
from conformance._report import Report
from conformance.binding import CAPABILITIES
from tests.peer_envs import PeerEnvError, peers, python_of
from tests.suite.conftest import suite_run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "conformance"
#: The bundled Python bindings; the reference is the suite's own and runs in this environment.
PEERS = tuple(name for name in peers() if name not in HARNESSES)


def _verdicts(report: dict[str, object]) -> dict[str, str]:
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    return {s["id"]: s["verdict"] for s in scenarios}


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
    assert _verdicts(fresh.report) == _verdicts(committed)
    assert _messages(fresh.report) == _messages(committed), (
        f"messages changed: rerun `nox -s peer-{_library(name)}` and commit docs/conformance/ if the "
        "change is right")


def test_the_reports_no_fresh_run_checks_are_exactly_those_run_outside_ci_and_each_says_so() -> None:
    # Their libraries' registries are not reachable from CI, so no test here can run them again:
    # instead of a comparison, each report says it was run outside CI (its page, the comparison and
    # the site show it), and no other report is left unchecked.
    compared = set(PEERS) | set(NODE_HARNESSES) | set(JAVA_HARNESSES) | set(GO_HARNESSES)
    unchecked = {path.stem for path in DOCS.glob("*.json")} - compared
    assert unchecked == set(RUN_OUTSIDE_CI) == {"dspy-ex"}
    for name, sentence in RUN_OUTSIDE_CI.items():
        report = Report.model_validate_json((DOCS / f"{name}.json").read_text(encoding="utf-8"))
        assert report.binding.run_outside_ci == sentence == (
            "run outside CI: the library's registry is not reachable here")
        assert report.complete and "errored" not in report.requirements.values()
        page = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        assert f"**{sentence[0].upper()}{sentence[1:]}**." in page
    for path in DOCS.glob("*.json"):
        if path.stem not in RUN_OUTSIDE_CI:
            assert Report.model_validate_json(path.read_text(encoding="utf-8")).binding.run_outside_ci is None


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.json")), ids=lambda p: p.stem)
def test_every_bundled_binding_gives_a_reason_for_each_capability_it_does_not_claim(path: Path) -> None:
    report = Report.model_validate_json(path.read_text(encoding="utf-8"))
    assert report.format_version == 3, f"{path.name} is an old report: rerun `nox -s peers`"
    claimed, reasons = set(report.binding.capabilities), report.binding.not_claimed
    assert claimed | set(reasons) == CAPABILITIES, (
        f"{report.binding.name}: no reason for {sorted(CAPABILITIES - claimed - set(reasons))}")
    assert all(reason.strip() for reason in reasons.values())
    # Every requirement not passed says why, and a known failure's reason is the binding's own.
    assert set(report.reasons) == {r for r, v in report.requirements.items() if v != "passed"}
