"""Run the conformance suite in a child pytest and read its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class SuiteRun:
    """What one child run of the suite printed, returned and reported."""

    returncode: int
    output: str
    report: dict[str, Any] | None

    def requirements(self, verdict: str) -> set[str]:
        """The requirement IDs that got `verdict`."""
        assert self.report is not None, self.output
        return {rid for rid, v in self.report["requirements"].items() if v == verdict}


RunSuite = Callable[..., SuiteRun]


def suite_run(workdir: Path, impl: str, *args: str, timeout: float = 600,
              python: Path | str = sys.executable) -> SuiteRun:
    """The suite against `impl` in a child pytest started in `workdir` (an empty directory), run
    by `python` (a peer's own environment, tests/peer_envs.py; by default this one)."""
    report_path = workdir / "report.json"
    report_path.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [str(python), "-m", "pytest", "--impl", impl, "--conformance-json", str(report_path),
         "-p", "no:cacheprovider", "-q", *args],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout,
    )
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, report)


@pytest.fixture
def run_suite(tmp_path: Path) -> RunSuite:
    """`run_suite("reference", "-k", "LOOP")`: the suite in a child process, from an empty dir."""
    return lambda impl, *args, **kwargs: suite_run(tmp_path, impl, *args, **kwargs)
