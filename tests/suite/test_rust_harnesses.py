"""The bundled Rust harnesses (`--impl rig`): their committed reports name the crates their Cargo.lock
pins, each known failure they list holds against the library driven directly (the harness's own
`cargo test`), they are clippy- and rustfmt-clean, and their first-use build says clearly what went
wrong (a fresh run's comparison with the committed report is tests/suite/test_node_harnesses.py's,
for every bundled harness).

The first run builds each harness from its pinned Cargo.lock (`cargo build --locked`,
conformance/_rust_harness.py), as `--impl` does for a user; cargo must be on PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import _build, _loader, _rust_harness
from conformance._loader import RUST_HARNESSES
from tests.test_peers import DOCS

needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (the CI machine has it)")


def _locked(name: str) -> dict[str, str]:
    """The version Cargo.lock pins of each package it names."""
    lock = (_loader.HARNESS_DIR / name / "Cargo.lock").read_text(encoding="utf-8")
    return dict(re.findall(r'^name = "([^"]+)"\nversion = "([^"]+)"', lock, re.M))


def _cargo(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["cargo", *args], cwd=_loader.HARNESS_DIR / name, capture_output=True, text=True,
                          check=False)


@pytest.mark.parametrize("name", RUST_HARNESSES)
def test_the_committed_report_of_a_rust_harness_names_its_locked_crates(name: str) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))["binding"]
    locked = _locked(name)
    assert committed["dependencies"] and all(locked[crate] == version
                                             for crate, version in committed["dependencies"].items())
    assert committed["version"] == committed["dependencies"][name]  # the library's own crate among them
    manifest = (_loader.HARNESS_DIR / name / "Cargo.toml").read_text(encoding="utf-8")
    pinned = rf'^{re.escape(name)} = \{{ version = "={re.escape(committed["version"])}"'
    assert re.search(pinned, manifest, re.M), "Cargo.toml pins the library's exact version"


@pytest.mark.parametrize("name", RUST_HARNESSES)
def test_a_rust_harness_claims_only_what_it_can_back_with_known_failures(name: str) -> None:
    report = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    assert [s for s in report["scenarios"] if s["verdict"] in ("failed", "errored")] == []
    reasons = [s["message"] for s in report["scenarios"] if s["verdict"] == "known-failure"]
    # Each reason says where in the library's source: a file of its crates, by path.
    assert reasons and all(len(r) > 20 and "\n" not in r and re.search(r"\w+/[\w/]+\.rs", r) for r in reasons)


@needs_cargo
@pytest.mark.parametrize("name", RUST_HARNESSES)
def test_each_known_failure_of_a_rust_harness_holds_against_the_library_itself(name: str) -> None:
    # tests/library.rs drives the library with a plain HTTP client of its own, no suite.
    done = _cargo(name, "test", "--locked", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@needs_cargo
@pytest.mark.parametrize("name", RUST_HARNESSES)
def test_a_rust_harness_passes_clippy_and_rustfmt(name: str) -> None:
    linted = _cargo(name, "clippy", "--locked", "--quiet", "--all-targets", "--", "-D", "warnings")
    assert linted.returncode == 0 and linted.stderr == "", linted.stderr
    formatted = _cargo(name, "fmt", "--check")
    assert formatted.returncode == 0, f"not rustfmt-formatted: {formatted.stdout[-3000:]}"


@needs_cargo
def test_the_rust_protocol_module_reports_a_library_that_does_not_return_as_hung() -> None:
    # Its unit tests (harnesses/lib/rust/src/lib.rs): `within` gives a call's result in time, or
    # LibraryHung, and the abandoned run's later requests never reach the suite.
    done = subprocess.run(["cargo", "test", "--locked", "--quiet"], cwd=_loader.HARNESS_DIR / "lib" / "rust",
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


def test_a_rust_harness_without_cargo_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_build.shutil, "which", lambda program: None)
    with pytest.raises(pytest.UsageError, match=r"needs Rust's cargo \(1\.95 or later\) on PATH"):
        _loader.harness_command(RUST_HARNESSES[0])


@needs_cargo
def test_a_rust_harness_that_does_not_build_shows_cargo_s_own_reason(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "broken"\nversion = "0.0.0"\nedition = "2021"\n\n'
        '[[bin]]\nname = "broken-harness"\npath = "main.rs"\n', encoding="utf-8")
    (tmp_path / "Cargo.lock").write_text(
        'version = 4\n\n[[package]]\nname = "broken"\nversion = "0.0.0"\n', encoding="utf-8")
    (tmp_path / "main.rs").write_text("fn main() { undefined() }\n", encoding="utf-8")
    with pytest.raises(pytest.UsageError) as raised:
        _rust_harness.command("broken", tmp_path)
    message = str(raised.value)
    assert "building the Rust harness failed" in message and "cargo build --locked" in message
    assert "cannot find function `undefined`" in message, message


def test_a_rust_harness_that_is_not_here_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(pytest.UsageError, match=r"has no Cargo\.toml"):
        _rust_harness.command("rig", tmp_path)
