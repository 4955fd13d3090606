"""The committed peer reports are what the suite says today: a changed verdict fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.suite.conftest import suite_run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "conformance"
PEERS = ["reference", "dspy", "udspy"]


def _verdicts(report: dict[str, object]) -> dict[str, str]:
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    return {s["id"]: s["verdict"] for s in scenarios}


@pytest.mark.parametrize("name", PEERS)
def test_the_committed_report_matches_a_fresh_run(name: str, tmp_path: Path) -> None:
    if name != "reference" and importlib.util.find_spec(name) is None:
        pytest.fail(f"{name} is not installed: install the peers extra, pip install -e '.[dev,peers]'")
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    fresh = suite_run(tmp_path, name)
    assert fresh.report is not None, fresh.output[-3000:]
    assert not fresh.requirements("errored"), fresh.output[-3000:]
    assert fresh.report["requirements"] == committed["requirements"], (
        "verdicts changed: rerun `nox -s peers` and commit docs/conformance/ if the change is right")
    assert _verdicts(fresh.report) == _verdicts(committed)
