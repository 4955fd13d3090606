"""What the compiled harnesses' builders share (Go in `_loader`, Rust in `_rust_harness`): the
harness is in this checkout, its tool is on PATH, and one build at a time writes its output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def require(name: str, directory: Path, manifest: str, language: str, tool: str, needs: str) -> str:
    """The path of `tool`, once `directory` holds the harness's `manifest`; a usage error otherwise."""
    if not (directory / manifest).is_file():
        raise pytest.UsageError(
            f"--impl {name}: the bundled harness is not here ({directory} has no {manifest}). The "
            f"{language} harnesses ship with a checkout of react-conformance, not with the wheel."
        )
    found = shutil.which(tool)
    if found is None:
        raise pytest.UsageError(f"--impl {name}: the harness needs {needs} on PATH.")
    return found


def locked_run(lock: Path, command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `command` holding `lock`: two runs at once (xdist, parallel tests) must not build into the
    same place together."""
    import fcntl  # here, not at the top: the plugin must still load where fcntl does not exist

    lock.parent.mkdir(exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
