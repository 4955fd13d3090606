"""Build and start a bundled Rust harness: `cargo build --locked` from its pinned Cargo.lock, on first
use, as the Node harnesses' packages are installed on first use (cargo rebuilds only what changed
after that)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest


def command(name: str, directory: Path) -> str:
    """The command line that runs the Rust harness in `directory` (its binary is named
    `<name>-harness`), built first; the build goes to the harness's own `target/`, kept out of git."""
    if not (directory / "Cargo.toml").is_file():
        raise pytest.UsageError(
            f"--impl {name}: the bundled harness is not here ({directory} has no Cargo.toml). The Rust "
            "harnesses ship with a checkout of react-conformance, not with the wheel."
        )
    cargo = shutil.which("cargo")
    if cargo is None:
        raise pytest.UsageError(f"--impl {name}: the harness needs Rust's cargo (1.95 or later) on PATH.")
    target = directory / "target"
    import fcntl  # here, not at the top: the plugin must still load where fcntl does not exist

    target.mkdir(exist_ok=True)
    # Two runs at once (xdist, parallel tests) must not build into the same directory together.
    with open(target / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        build = [cargo, "build", "--locked", "--quiet", "--manifest-path", str(directory / "Cargo.toml"),
                 "--target-dir", str(target)]
        done = subprocess.run(build, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise pytest.UsageError(
            f"--impl {name}: building the Rust harness failed ({shlex.join(build[:4])} ... exit "
            f"{done.returncode}):\n  " + "\n  ".join(lines[:12])
        )
    return shlex.join([str(target / "debug" / f"{name}-harness")])
