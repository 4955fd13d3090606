"""What CI shows of a run: JUnit XML with requirement IDs, GitHub's step summary and annotations,
and every message cut to a readable size (one ARGS-5 failure holds a 5 MB argument)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from conformance._report import MESSAGE_LIMIT
from tests.suite.conftest import ROOT

#: The most a capped message can be: the limit and "... (N more chars)".
CAPPED = MESSAGE_LIMIT + 40


@dataclass
class CiRun:
    output: str
    out: Path


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory: pytest.TempPathFactory) -> CiRun:
    """The whole suite (on two processes) against a binding that fails ARGS-5 with a 5 MB error
    message, as GitHub runs it."""
    out = tmp_path_factory.mktemp("ci")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_ACTIONS": "true",
           "GITHUB_STEP_SUMMARY": str(out / "summary.md")}
    (out / "summary.md").write_text("earlier steps' summary\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2", "--impl",
         "tests.suite.ci_bindings:NoSizeLimit", f"--junitxml={out / 'r.xml'}",
         f"--conformance-json={out / 'r.json'}", f"--conformance-markdown={out / 'r.md'}"],
        cwd=out, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    return CiRun(proc.stdout + proc.stderr, out)


def _cases(run: CiRun) -> dict[str, tuple[str, dict[str, str], ET.Element]]:
    tree = ET.parse(run.out / "r.xml")
    return {case.get("name", ""): (case.get("classname", ""),
                                  {p.get("name", ""): p.get("value", "") for p in case.iter("property")},
                                  case)
            for case in tree.iter("testcase")}


def _scenario_line(feature: str, name: str) -> int:
    """The line of scenario `name` in `features/<feature>`: where a report must point."""
    lines = (ROOT / "features" / feature).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1)
                if line.strip() in (f"Scenario: {name}", f"Scenario Outline: {name}"))


#: The scenario the binding fails, the line its report and annotation point at, and one row's test.
NAME = "Tool args of any size or nesting reach the tool intact, or are refused saying why"
BIG = _scenario_line("tool_args.feature", NAME)
CASE = ("test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
        "[transfer-a recipient of 5000000 characters]")


def test_junit_test_cases_carry_requirement_capability_verdict_and_feature(ci_run: CiRun) -> None:
    cases = _cases(ci_run)
    assert len(cases) > 100
    classname, props, case = cases[CASE]
    assert classname == "tool_args"
    assert props["requirement"] == "ARGS-5" and props["verdict"] == "failed"
    assert props["capability"] == "core" and props["scenario"] == f"tool_args.feature:{BIG}"
    assert props["reason"].startswith("the implementation made fewer model calls")
    failure = case.find("failure")
    assert failure is not None and failure.get("message", "").startswith("AssertionError: the implementation")
    for classname, props, _ in cases.values():
        assert props["requirement"] and props["verdict"] and classname and "." not in classname
        if props["verdict"] == "not-claimed":
            assert "does not claim" in props["reason"]
        if props["verdict"] == "passed":
            assert "reason" not in props
    assert any(p["verdict"] == "not-claimed" for _, p, _ in cases.values())
    assert any(p["capability"] == "http" for _, p, _ in cases.values())


def test_every_message_is_capped_and_says_how_much_was_cut(ci_run: CiRun) -> None:
    # The error alone is 5,000,000 characters; each output holds the message at most a few times.
    assert len(ci_run.output) < 200_000
    assert "more chars)" in ci_run.output
    for name in ("r.xml", "r.json", "r.md", "summary.md"):
        assert (ci_run.out / name).stat().st_size < 200_000, name
    report = json.loads((ci_run.out / "r.json").read_text())
    assert all(len(s["message"]) <= CAPPED for s in report["scenarios"])
    [big] = [s for s in report["scenarios"] if s["id"] == CASE]
    assert big["verdict"] == "failed"
    assert re.search(r"\.\.\. \(49\d{5} more chars\)$", big["message"])
    _, props, case = _cases(ci_run)[CASE]
    assert len(props["reason"]) <= CAPPED
    assert all(len(line) <= CAPPED for line in (case.findtext("failure") or "").splitlines())


def test_the_github_step_summary_gets_the_requirement_table(ci_run: CiRun) -> None:
    summary = (ci_run.out / "summary.md").read_text()
    assert summary.startswith("earlier steps' summary\n")  # appended, not overwritten
    assert "| Requirement | Level | Profile | Verdict |" in summary
    assert re.search(r"^\| ARGS-5 \| MUST \| core \| ❌ failed \|", summary, re.M)


def test_failed_requirements_are_annotated_with_their_scenario(ci_run: CiRun) -> None:
    errors = re.findall(r"^::error (.*)$", ci_run.output, re.M)
    assert errors, ci_run.output[-3000:]
    big, *rows = [e for e in errors if f"tool_args.feature:{BIG})" in e]
    assert len(rows) == 5  # one annotation per failed row of the outline
    # The binding's file is not under the working directory: no file GitHub could show.
    assert big.startswith("title=ARGS-5 failed%3A Tool args"), big[:300]
    assert "::the implementation made fewer model calls" in big
    assert big.endswith(f"%0A(react-conformance scenario tool_args.feature:{BIG})")
    assert len(big) < CAPPED + 300


def test_an_annotation_points_at_the_binding_or_harness_file_in_the_repository(tmp_path: Path) -> None:
    from conformance._annotations import binding_location, error_lines
    from conformance._report import ScenarioResult
    from tests.suite.ci_bindings import NoSizeLimit

    source = (ROOT / "tests" / "suite" / "ci_bindings.py").read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(source, 1) if text.startswith("class NoSizeLimit("))
    assert binding_location(NoSizeLimit(), ROOT) == ("tests/suite/ci_bindings.py", line)
    assert binding_location(NoSizeLimit(), tmp_path) is None

    class Harness(NoSizeLimit):
        _argv: ClassVar[list[str]] = ["ruby", "-w", "conformance/harness.rb"]

    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "harness.rb").write_text("# a harness\n")
    assert binding_location(Harness(), tmp_path) == ("conformance/harness.rb", 1)
    failed = ScenarioResult(id="test_x", feature="loop.feature", name="It stops", requirement="LOOP-3",
                            verdict="failed", message="ran 4 steps")
    passed = failed.model_copy(update={"verdict": "passed"})
    [error] = error_lines([(failed, "loop.feature:12"), (passed, "loop.feature:20")], Harness(),
                          tmp_path)
    assert error == ("::error file=conformance/harness.rb,line=1,title=LOOP-3 failed%3A It stops::"
                     "ran 4 steps%0A(react-conformance scenario loop.feature:12)")


def test_an_annotation_of_an_isolated_binding_points_at_its_module() -> None:
    # The worker's command ends with `--timeout N`: its last word, taken for the binding's name,
    # was the timeout, and an isolated binding's annotations named no file.
    from conformance._annotations import binding_location
    from conformance._loader import load_binding

    binding = load_binding("tests.suite.ci_bindings:NoSizeLimit", isolate=True)
    assert binding_location(binding, ROOT) == ("tests/suite/ci_bindings.py", 1)
