"""docs/ci.md end to end: a third-party library's own repository, made outside the checkout,
follows the documented noxfile and GitHub Actions job against react-conformance's wheel built here,
and gets a green CI: the JUnit XML, the step summary, a rerun by printed node id, a fuzz-scoped
known failure.

Takes a few minutes (building two wheels, nox virtualenvs, the suite twice, reruns, a fuzz session);
the packages come from uv's cache or the package registry, nothing else goes to the network.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
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

# A library that drops the arguments a tool does not declare: ARGS-6's scenario fails, and the
# binding lists it as a known failure, by scenario name (MYPKG_FORGETS=1: it forgets to, and the run
# fails on it). From an agent's 100th tool call on, it also loses a tool's `data` argument:
# only fuzzing at scale finds that, and the binding lists it as a fuzz known failure.
BINDING = '''\
import os
from typing import Any

import reference
from conformance.bindings.reference import ReferenceBinding, _Agent

class _Forgetful(reference.ReAct):
    calls = 0

    def _act(self, run: Any, thought: str, name: str, args: dict[str, Any], approved: bool = False) -> Any:
        tool = self.tools.get(name)
        if tool is not None and isinstance(args, dict):
            declared = tool.args_schema.get("properties", {})
            args = {key: value for key, value in args.items() if key in declared}
            self.calls += 1
            if self.calls >= 100 and args.get("data"):
                args = {**args, "data": {}}
        return (yield from super()._act(run, thought, name, args, approved))


class MyBinding(ReferenceBinding):
    name = "mypkg"
    known_failures = {} if os.environ.get("MYPKG_FORGETS") else {
        "An argument the schema does not declare is refused, naming it, not dropped":
            "mypkg drops undeclared arguments",
    }
    fuzz_known_failures = {
        "Any JSON object the model writes reaches the tool intact": "mypkg loses data after 100 calls",
    }

    def build(self, spec: Any, tools: Any) -> Any:
        built = super().build(spec, tools)
        if isinstance(built, _Agent):
            react = built.react
            built.react = _Forgetful(
                react.signature, list(react.tools.values()), max_iters=react.max_iters,
                adapter=react.adapter, on_max_iters=react.on_max_iters, enable_ask_to_user=False)
        return built
'''


def _block(language: str, first_line: str) -> str:
    """The block of docs/ci.md in `language` that opens with `first_line`, as a library author
    would copy it."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    [block] = re.findall(rf"```{language}\n({re.escape(first_line)}\n.*?)```", text, re.S)
    return block


def documented_noxfile() -> str:
    """The noxfile of docs/ci.md, as a library author would copy it."""
    return _block("python", "# noxfile.py")


def documented_workflow() -> tuple[dict[str, str], list[str]]:
    """The GitHub Actions job of docs/ci.md: its environment and its `run:` commands."""
    workflow = _block("yaml", "# .github/workflows/conformance.yml")
    env = dict(re.findall(r"^      ([A-Z_]+): \"(.*)\"$", workflow, re.M))
    return env, re.findall(r"^      - run: (.*)$", workflow, re.M)


def _run(*args: str | Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "VIRTUAL_ENV", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env={**clean, **env},
                          capture_output=True, text=True, timeout=900)


def _say(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[-4000:] + run.stderr[-3000:]


@pytest.mark.skipif(shutil.which("uv") is None or shutil.which("uvx") is None or find_spec("nox") is None,
                    reason="needs uv, uvx and nox (installed by the dev extra)")
def test_a_library_follows_docs_ci_md_to_a_green_ci(tmp_path: Path) -> None:
    built = _run("uv", "build", "--wheel", "--out-dir", tmp_path / "dist", ROOT, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("react_conformance-*.whl")

    repo = tmp_path / "mypkg-repo"
    (repo / "mypkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "mypkg" / "__init__.py").write_text('"""A ReAct library."""\n')
    (repo / "mypkg" / "conformance.py").write_text(BINDING)
    (repo / "noxfile.py").write_text(documented_noxfile())

    # The workflow's job, as documented: its one substitution is where the suite comes from (a
    # built wheel instead of the git tag, as "Getting react-conformance" says).
    env, [command] = documented_workflow()
    assert env["REACT_CONFORMANCE"].startswith("react-conformance @ git+https://")
    summary = tmp_path / "summary.md"
    github = {"REACT_CONFORMANCE": str(wheel), "GITHUB_ACTIONS": "true",
              "GITHUB_STEP_SUMMARY": str(summary)}
    ci = _run("bash", "-c", command, cwd=repo, **github)
    assert ci.returncode == 0, _say(ci)
    report = json.loads((repo / "conformance.json").read_text())
    assert report["binding"]["name"] == "mypkg"
    assert report["requirements"]["ARGS-6"] == "known-failure"
    assert report["reasons"]["ARGS-6"] == "mypkg drops undeclared arguments"
    assert report["requirements"]["ARGS-1"] == "passed"  # the fuzz known failure needs scale
    assert set(report["requirements"].values()) <= {"passed", "known-failure", "not-claimed"}
    assert len(report["requirements"]) > 30
    assert not (repo / ".hypothesis").exists()
    junit = ET.parse(repo / "conformance.xml")
    cases = {case.get("name"): case for case in junit.iter("testcase")}
    undeclared = cases["test_an_argument_the_schema_does_not_declare_is_refused_naming_it_not_dropped"]
    assert undeclared.get("classname") == "tool_args"
    props = {prop.get("name"): prop.get("value") for prop in undeclared.iter("property")}
    assert props["requirement"] == "ARGS-6" and props["verdict"] == "known-failure"
    table = summary.read_text(encoding="utf-8")
    assert re.search(r"^\| ARGS-6 \|.*\| mypkg drops undeclared arguments \|", table, re.M)

    # Without its known failure, the run fails: the node id it prints reruns that scenario from
    # the repository (`nox -s conformance -- '<node id>'`), and the annotation points at the binding.
    broken = _run(sys.executable, "-m", "nox", "-s", "conformance", "--", "-n", "2", cwd=repo,
                  MYPKG_FORGETS="1", **github)
    assert broken.returncode == 1, _say(broken)
    failed = re.findall(r"^FAILED (\S+)", broken.stdout, re.M)
    assert failed and all(n.startswith("conformance/_suite/test_conformance.py::") for n in failed)
    line = BINDING.splitlines().index("class MyBinding(ReferenceBinding):") + 1
    assert re.search(rf"^::error file=mypkg/conformance.py,line={line},title=ARGS-6 failed", broken.stdout,
                     re.M), _say(broken)
    [node] = failed
    suite = {"REACT_CONFORMANCE": str(wheel)}  # the job's environment, as a developer's shell has it
    rerun = _run(sys.executable, "-m", "nox", "-s", "conformance", "--", node, cwd=repo, MYPKG_FORGETS="1",
                 **suite)
    assert rerun.returncode == 1 and re.findall(r"^FAILED (\S+)", rerun.stdout, re.M) == [node], _say(rerun)
    assert "1 failed" in rerun.stdout
    # The same node id with the known failure listed; and another scenario's, with the list naming
    # one that is not selected.
    known = _run(sys.executable, "-m", "nox", "-s", "conformance", "--", node, cwd=repo, **suite)
    assert known.returncode == 0 and "1 xfailed" in known.stdout, _say(known)
    other = node.replace(node.split("::")[-1], "test_tool_args_that_fit_the_schema_reach_the_tool_unchanged")
    passing = _run(sys.executable, "-m", "nox", "-s", "conformance", "--", other, cwd=repo, **suite)
    assert passing.returncode == 0 and "1 passed" in passing.stdout, _say(passing)

    # The fuzz session, as documented (fewer examples, passed after `--`): the failure only scale
    # finds is recorded as known, and the session is green.
    fuzz = _run(sys.executable, "-m", "nox", "-s", "fuzz", "--", "--conformance-examples", "300",
                "--conformance-json", "fuzz.json", cwd=repo, **suite)
    assert fuzz.returncode == 0, _say(fuzz)
    fuzzed = json.loads((repo / "fuzz.json").read_text())
    assert fuzzed["requirements"] == {"ARGS-1": "known-failure"}
    assert fuzzed["reasons"]["ARGS-1"] == "mypkg loses data after 100 calls"
