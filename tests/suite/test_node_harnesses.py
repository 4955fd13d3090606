"""The bundled Node harnesses: `--impl dspy-ts`, `ax`, `ai`, `openai-agents-js`, `langgraph-js`, `mastra`,
`openai-runtools`, `strands-ts`, `anthropic-ts`, `llamaindex-ts`, `genkit`, `adk-ts` and the opt-in
configurations, and the Java and Rust harnesses, reproduce their committed reports
(tests/suite/test_java_harnesses.py and test_rust_harnesses.py check the Java and Rust builds and
pins; the Go harnesses are compared in tests/suite/test_go_harnesses.py).

The first run installs each harness's locked packages (`npm install --no-save`), as `--impl` does
for a user; Node.js 20 and npm must be on PATH.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance import _loader
from conformance._loader import JAVA_HARNESSES, NODE_HARNESSES, RUST_HARNESSES
from tests.suite.conftest import suite_run
from tests.test_peers import DOCS, _verdicts

#: The harnesses whose committed reports a fresh run reproduces here.
HARNESSES = NODE_HARNESSES + JAVA_HARNESSES + RUST_HARNESSES


@pytest.mark.parametrize("name", HARNESSES)
def test_the_committed_report_of_a_node_harness_matches_a_fresh_run(name: str, tmp_path: Path) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    fresh = suite_run(tmp_path, name)
    assert fresh.returncode == 0, fresh.output[-3000:]
    assert fresh.report is not None and fresh.report["binding"]["name"] == name
    assert not fresh.requirements("errored"), fresh.output[-3000:]
    assert fresh.report["requirements"] == committed["requirements"], (
        "verdicts changed: rerun `nox -s peers` and commit docs/conformance/ if the change is right")
    assert _verdicts(fresh.report, name) == _verdicts(committed, name)
    assert fresh.report["binding"]["dependencies"] == committed["binding"]["dependencies"], (
        "the welcome's dependencies are not the committed report's")


def _installed(name: str) -> dict[str, str]:
    """The version npm installed of each package the harness's package.json depends on."""
    _loader.harness_command(name)  # installs the harness's packages if no run has yet
    directory = _loader.HARNESS_DIR / _loader.HARNESS_DIRS.get(name, (name,))[0]
    manifest = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    return {package: json.loads((directory / "node_modules" / package / "package.json")
                                .read_text(encoding="utf-8"))["version"]
            for package in manifest["dependencies"]}


@pytest.mark.parametrize("name", NODE_HARNESSES)
def test_the_committed_report_of_a_node_harness_names_its_installed_packages(name: str) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    installed = _installed(name)
    assert committed["binding"]["dependencies"] == installed
    assert committed["binding"]["version"] in installed.values()  # the library's own package among them


@pytest.mark.parametrize("name", NODE_HARNESSES)
def test_a_node_harness_claims_only_what_it_can_back_with_known_failures(name: str) -> None:
    report = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    failing = [s for s in report["scenarios"] if s["verdict"] in ("failed", "errored")]
    assert failing == []
    reasons = [s["message"] for s in report["scenarios"] if s["verdict"] == "known-failure"]
    # A harness that conforms (anthropic-ts) lists none; each one listed gives its reason in a line.
    assert all(len(r) > 20 and "\n" not in r for r in reasons)


def test_a_bundled_harness_without_node_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_loader.shutil, "which", lambda program: None)
    with pytest.raises(pytest.UsageError, match=r"needs Node\.js 20 or later, with npm, on PATH"):
        _loader.harness_command("ax")


def test_a_failed_install_shows_npm_s_own_reason(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "broken", "dependencies": ', encoding="utf-8")
    npm = shutil.which("npm")
    assert npm is not None, "the Node harness tests need npm on PATH"
    with pytest.raises(pytest.UsageError) as raised:
        _loader._install("broken", tmp_path, npm)
    message = str(raised.value)
    assert "installing the harness's Node packages failed" in message
    assert "package.json" in message and "JSON" in message, message
