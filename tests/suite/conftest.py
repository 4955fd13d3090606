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


@pytest.fixture
def run_suite(tmp_path: Path) -> RunSuite:
    """`run_suite("reference", "-k", "LOOP")`: the suite in a child process, from an empty dir."""

    def run(impl: str, *args: str, cwd: Path | None = None) -> SuiteRun:
        report_path = tmp_path / "report.json"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "--impl", impl, "--conformance-json",
             str(report_path), "-p", "no:cacheprovider", "-q", *args],
            cwd=cwd or tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )
        report = json.loads(report_path.read_text()) if report_path.exists() else None
        return SuiteRun(proc.returncode, proc.stdout + proc.stderr, report)

    return run
