"""The committed peer reports are what the suite says today: a changed verdict fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conformance._report import Report
from conformance.binding import CAPABILITIES
from tests.suite.conftest import suite_run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "conformance"
#: The bundled Python bindings (the Node harnesses are tests/suite/test_node_harnesses.py's), and the
#: module each one's library is imported as.
PEERS = {"reference": "reference", "dspy": "dspy", "udspy": "udspy", "smolagents": "smolagents",
         "pydantic-ai": "pydantic_ai", "openai-agents": "agents",
         "openai-agents+tool-not-found": "agents", "langchain": "langchain",
         "langchain+tool-errors": "langchain", "llama-index": "llama_index.core", "haystack": "haystack"}


def _installed(module: str) -> bool:
    """Whether `module` imports; a dotted name whose parent package is missing is not installed."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _verdicts(report: dict[str, object]) -> dict[str, str]:
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    return {s["id"]: s["verdict"] for s in scenarios}


@pytest.mark.parametrize("name", PEERS)
def test_the_committed_report_matches_a_fresh_run_on_two_workers(name: str, tmp_path: Path) -> None:
    if not _installed(PEERS[name]):
        pytest.fail(f"{name} is not installed: install the peers extra, pip install -e '.[dev,peers]'")
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    # `nox -s peers` writes the committed reports from serial runs; this one runs on two workers
    # (`-n 2`), so a verdict that hangs on the order scenarios run in, or on state shared between
    # scenarios, fails here as well as a changed one.
    fresh = suite_run(tmp_path, name, "-n", "2")
    assert fresh.report is not None, fresh.output[-3000:]
    assert not fresh.requirements("errored"), fresh.output[-3000:]
    assert fresh.report["requirements"] == committed["requirements"], (
        "verdicts changed: rerun `nox -s peers` and commit docs/conformance/ if the change is right")
    assert _verdicts(fresh.report) == _verdicts(committed)


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.json")), ids=lambda p: p.stem)
def test_every_bundled_binding_gives_a_reason_for_each_capability_it_does_not_claim(path: Path) -> None:
    report = Report.model_validate_json(path.read_text(encoding="utf-8"))
    assert report.format_version == 2, f"{path.name} is an old report: rerun `nox -s peers`"
    claimed, reasons = set(report.binding.capabilities), report.binding.not_claimed
    assert claimed | set(reasons) == CAPABILITIES, (
        f"{report.binding.name}: no reason for {sorted(CAPABILITIES - claimed - set(reasons))}")
    assert all(reason.strip() for reason in reasons.values())
    # Every requirement not passed says why, and a known failure's reason is the binding's own.
    assert set(report.reasons) == {r for r, v in report.requirements.items() if v != "passed"}
