"""The bundled Go harnesses (`--impl langchaingo`) reproduce their committed reports, and each known
failure they list holds against the library driven directly (the harness's own `go test`).

The first run builds each harness from its pinned go.mod and go.sum (`go build`), as `--impl` does
for a user; Go must be on PATH (the CI machine has it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import _build, _loader
from conformance._loader import GO_HARNESSES
from tests.suite.conftest import suite_run
from tests.test_peers import DOCS, _verdicts

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="needs Go (the CI machine has it)")


def _directory(name: str) -> Path:
    return _loader.HARNESS_DIR / _loader.HARNESS_DIRS.get(name, (name,))[0]


def _pinned(name: str) -> dict[str, str]:
    """The version go.mod pins of each module the committed report names as a dependency."""
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    go_mod = (_directory(name) / "go.mod").read_text(encoding="utf-8")
    pinned = {}
    for module in committed["binding"]["dependencies"]:
        found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} v(\S+)", go_mod, re.M)
        assert found, f"{name}: go.mod pins no version of {module}"
        pinned[module] = found.group(1)
    return pinned


@needs_go
@pytest.mark.parametrize("name", GO_HARNESSES)
def test_the_committed_report_of_a_go_harness_matches_a_fresh_run(name: str, tmp_path: Path) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    fresh = suite_run(tmp_path, name)
    assert fresh.returncode == 0, fresh.output[-3000:]
    assert fresh.report is not None and fresh.report["binding"]["name"] == name
    assert not fresh.requirements("errored"), fresh.output[-3000:]
    assert fresh.report["requirements"] == committed["requirements"], (
        "verdicts changed: rerun `nox -s peers` and commit docs/conformance/ if the change is right")
    assert _verdicts(fresh.report, name) == _verdicts(committed, name)
    assert fresh.report["binding"]["dependencies"] == committed["binding"]["dependencies"]


@pytest.mark.parametrize("name", GO_HARNESSES)
def test_the_committed_report_of_a_go_harness_names_its_pinned_modules(name: str) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    pinned = _pinned(name)
    assert committed["binding"]["dependencies"] == pinned
    assert committed["binding"]["version"] in pinned.values()  # the library's own module among them


@pytest.mark.parametrize("name", GO_HARNESSES)
def test_a_go_harness_claims_only_what_it_can_back_with_known_failures(name: str) -> None:
    report = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    failing = [s for s in report["scenarios"] if s["verdict"] in ("failed", "errored")]
    assert failing == []
    reasons = [s["message"] for s in report["scenarios"] if s["verdict"] == "known-failure"]
    assert reasons and all(len(r) > 20 and "\n" not in r for r in reasons)


@needs_go
@pytest.mark.parametrize("name", GO_HARNESSES)
def test_each_known_failure_of_a_go_harness_holds_against_the_library_itself(name: str) -> None:
    # library_test.go drives the library with a plain model of its own interface, no suite.
    done = subprocess.run(["go", "test", "-mod=readonly", "-count=1", "."], cwd=_directory(name),
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@needs_go
@pytest.mark.parametrize("name", GO_HARNESSES)
def test_a_go_harness_passes_go_vet_and_gofmt(name: str) -> None:
    vetted = subprocess.run(["go", "vet", "-mod=readonly", "."], cwd=_directory(name), capture_output=True,
                            text=True, check=False)
    assert vetted.returncode == 0 and vetted.stderr == "", vetted.stderr
    unformatted = subprocess.run(["gofmt", "-l", "."], cwd=_directory(name), capture_output=True, text=True,
                                 check=False)
    assert unformatted.stdout == "", f"not gofmt-formatted: {unformatted.stdout}"


def test_a_go_harness_without_go_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_build.shutil, "which", lambda program: None)
    with pytest.raises(pytest.UsageError, match=r"needs Go 1\.24 or later on PATH"):
        _loader.harness_command(GO_HARNESSES[0])


@needs_go
def test_a_go_harness_that_does_not_build_shows_go_s_own_reason(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module broken\n\ngo 1.22\n", encoding="utf-8")
    (tmp_path / "main.go").write_text("package main\n\nfunc main() { undefined() }\n", encoding="utf-8")
    with pytest.raises(pytest.UsageError) as raised:
        _loader._go_build("broken", tmp_path)
    message = str(raised.value)
    assert "building the Go harness failed" in message
    assert "undefined: undefined" in message, message
