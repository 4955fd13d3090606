"""Build and start a bundled Rust harness: `cargo build --locked` from its pinned Cargo.lock, on first
use, as the Node harnesses' packages are installed on first use (cargo rebuilds only what changed
after that)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from conformance import _build


def command(name: str, directory: Path) -> str:
    """The command line that runs the Rust harness in `directory` (its binary is named
    `<name>-harness`), built first; the build goes to the harness's own `target/`, kept out of git."""
    cargo = _build.require(name, directory, "Cargo.toml", "Rust", "cargo", "Rust's cargo (1.95 or later)")
    target = directory / "target"
    build = [cargo, "build", "--locked", "--quiet", "--manifest-path", str(directory / "Cargo.toml"),
             "--target-dir", str(target)]
    done = _build.locked_run(target / ".build.lock", build)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise pytest.UsageError(
            f"--impl {name}: building the Rust harness failed ({shlex.join(build[:4])} ... exit "
            f"{done.returncode}):\n  " + "\n  ".join(lines[:12])
        )
    return shlex.join([str(target / "debug" / f"{name}-harness")])
