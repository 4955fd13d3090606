"""The built wheel alone runs the whole suite, from an empty directory, in a fresh virtualenv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv (installed by the dev extra)")
def test_the_wheel_alone_runs_the_suite_against_the_reference(tmp_path: Path) -> None:
    built = _run("uv", "build", "--wheel", "--out-dir", tmp_path / "dist", ROOT, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("react_conformance-*.whl")
    venv = tmp_path / "venv"
    assert _run("uv", "venv", "--python", sys.executable, venv, cwd=tmp_path).returncode == 0
    python = venv / "bin" / "python"
    installed = _run("uv", "pip", "install", "--python", python, wheel, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    run = _run(python, "-m", "pytest", "--impl", "reference", "-q", "-p", "no:cacheprovider", cwd=empty)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
    assert "requirements: " in run.stdout
