"""The quickstarts of docs/writing-a-binding.md and docs/writing-a-harness.md, each followed word for
word by a fresh third-party project: the page's code block is the project's binding or harness (so
the test breaks if the page drifts), bound to a small native loop written here, and the run finds
no false failure."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A small native tool-calling loop, as a third-party library would ship it.
MYLIB = Path(__file__).resolve().parent / "quickstart" / "mylib.py"
#: The same in JavaScript, as an npm package's module.
MYLIB_JS = MYLIB.with_suffix(".mjs")


def _quickstart(page: str, language: str = "python") -> tuple[str, list[str]]:
    """The quickstart's code block in `language` and its shell commands."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    section = text[text.index("## Quickstart"):]
    code = re.search(rf"```{language}\n(.*?)```", section, re.S)
    shell = re.search(r"```sh\n(.*?)```", section, re.S)
    assert code is not None and shell is not None, "the quickstart lost its code or its commands"
    commands = [line.split("#")[0].strip() for line in shell[1].splitlines() if line.strip()]
    return code[1], commands


def test_a_binding_written_from_the_quickstart_gets_no_false_failure(tmp_path: Path) -> None:
    code, commands = _quickstart("writing-a-binding.md")
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "conformance.py").write_text(code)
    (tmp_path / "mylib.py").write_text(MYLIB.read_text(encoding="utf-8"))
    (tmp_path / "mylib-0.1.dist-info").mkdir()
    (tmp_path / "mylib-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mylib\nVersion: 0.1\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    assert [c.split()[:3] for c in commands] == [["pytest", "--impl", "mypkg.conformance:MyBinding"]] * 2
    reports = []
    for index, command in enumerate(commands):
        report = tmp_path / f"report-{index}.json"
        run = subprocess.run([sys.executable, "-m", *command.split(), "-q", "-p", "no:cacheprovider",
                              f"--conformance-json={report}"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
        reports.append(json.loads(report.read_text()))
    smoke, whole = reports
    assert set(smoke["requirements"].values()) <= {"passed", "not-claimed"}, smoke["requirements"]
    verdicts = whole["requirements"]
    assert set(verdicts.values()) == {"passed", "not-claimed"}, verdicts
    # The final call on the cap (tools declared, tool_choice "none") is judged, and passes.
    assert verdicts["EXT-2"] == "passed" and verdicts["LOOP-3"] == "passed", verdicts
    # The approval pause is judged (resumed from the session as last saved, the whole run's
    # trajectory reported), and passes; only the scenarios of unclaimed capabilities are left out.
    assert {rid: verdicts[rid] for rid in ("HITL-3", "HITL-4", "HITL-5", "HITL-6", "TRJ-2")} == dict.fromkeys(
        ("HITL-3", "HITL-4", "HITL-5", "HITL-6", "TRJ-2"), "passed"), verdicts


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_a_harness_written_from_the_quickstart_gets_no_false_failure(tmp_path: Path) -> None:
    code, commands = _quickstart("writing-a-harness.md", "js")
    # A fresh project: its package.json depends on the library, installed in its node_modules.
    (tmp_path / "harness.mjs").write_text(code)
    (tmp_path / "package.json").write_text(json.dumps(
        {"name": "mylib-conformance", "private": True, "type": "module", "dependencies": {"mylib": "0.1.0"}}))
    package = tmp_path / "node_modules" / "mylib"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps(
        {"name": "mylib", "version": "0.1.0", "type": "module", "exports": "./index.mjs"}))
    (package / "index.mjs").write_text(MYLIB_JS.read_text(encoding="utf-8"))
    copy, *runs = commands
    assert copy.startswith("cp react-conformance/harnesses/lib/"), copy
    # The suite's checkout is this one.
    subprocess.run(shlex.split(copy.replace("react-conformance/", f"{ROOT}/")), cwd=tmp_path, check=True)
    assert [shlex.split(c)[:3] for c in runs] == [["pytest", "--impl", "cmd:node harness.mjs"]] * 2
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    reports = []
    for index, command in enumerate(runs):
        report = tmp_path / f"report-{index}.json"
        run = subprocess.run([sys.executable, "-m", *shlex.split(command), "-q", "-p", "no:cacheprovider",
                              f"--conformance-json={report}"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
        reports.append(json.loads(report.read_text()))
    smoke, whole = reports
    # The smoke tier: LOOP-2's scenario passes (SIG-1's is a signature's, not claimed).
    assert smoke["requirements"] == {"SIG-1": "not-claimed", "LOOP-2": "passed"}, smoke["requirements"]
    assert whole["binding"]["dependencies"] == {"mylib": "0.1.0"}
    verdicts = whole["requirements"]
    assert set(verdicts.values()) == {"passed", "not-claimed"}, verdicts
    assert verdicts["EXT-2"] == "passed" and verdicts["LOOP-3"] == "passed", verdicts
