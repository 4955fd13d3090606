"""docs/ci.md end to end: a third-party library's own repository runs the suite with the
documented noxfile, against react-conformance's wheel built here.

Takes about 40 s (building two wheels, one nox virtualenv, the suite once); the packages come from
uv's cache or the package registry, nothing else goes to the network.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "mypkg"
version = "1.2.3"

[project.entry-points."react_conformance.bindings"]
mypkg = "mypkg.conformance:MyBinding"
"""

# A library whose tools take arguments of any size: ARGS-5's megabytes scenario fails, and the
# binding lists it as a known failure, by scenario name.
BINDING = '''\
from conformance import CallRequest, Outcome, ScriptedModel
from conformance.bindings.reference import ReferenceBinding
from reference import _args


class MyBinding(ReferenceBinding):
    name = "mypkg"
    known_failures = {
        "Tool args of several megabytes fail fast with a clear error": "mypkg has no size limit",
        "Under the JSON adapter, oversized or deeply nested tool args fail fast with a clear error":
            "mypkg has no size limit",
    }

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        limit, _args.MAX_CHARS = _args.MAX_CHARS, 10**9
        try:
            return super().run(agent, call, model)
        finally:
            _args.MAX_CHARS = limit
'''


def documented_noxfile() -> str:
    """The noxfile of docs/ci.md, as a library author would copy it."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```python\n(# noxfile\.py\n.*?)```", text, re.S)
    return block


def _run(*args: str | Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "VIRTUAL_ENV", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env={**clean, **env},
                          capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(shutil.which("uv") is None or find_spec("nox") is None,
                    reason="needs uv and nox (installed by the dev extra)")
def test_a_library_runs_the_suite_with_the_documented_noxfile(tmp_path: Path) -> None:
    built = _run("uv", "build", "--wheel", "--out-dir", tmp_path / "dist", ROOT, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("react_conformance-*.whl")

    repo = tmp_path / "mypkg-repo"
    (repo / "mypkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "mypkg" / "__init__.py").write_text('"""A ReAct library."""\n')
    (repo / "mypkg" / "conformance.py").write_text(BINDING)
    (repo / "noxfile.py").write_text(documented_noxfile())

    run = _run(sys.executable, "-m", "nox", "-s", "conformance", "--", "--impl", "mypkg",
               "--conformance-json", "report.json", "-p", "no:cacheprovider", "-n", "2",
               cwd=repo, REACT_CONFORMANCE=str(wheel))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((repo / "report.json").read_text())
    assert report["binding"]["name"] == "mypkg"
    assert report["requirements"]["ARGS-5"] == "known-failure"
    assert report["reasons"]["ARGS-5"] == "mypkg has no size limit"
    assert set(report["requirements"].values()) <= {"passed", "known-failure", "not-claimed"}
    assert len(report["requirements"]) > 30
    assert not (repo / ".hypothesis").exists()
