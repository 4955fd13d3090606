"""Text a binding controls reaches every writer safe: no lost run, no forged output, no lost report.

A lone surrogate (what `json.loads("\\"\\\\ud800\\"")` or a JavaScript string cut inside an emoji
makes) in any binding message once aborted the run with INTERNALERROR; binding names, versions,
reasons and messages once reached the terminal raw (workflow commands a CI runner obeys, ANSI
escapes) and forged headings and table rows in the Markdown reports; a report path into a folder
that does not exist aborted the run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import _text
from tests.suite.conftest import ROOT, RunSuite
from tests.suite.test_harness import HARNESS

B = "tests.suite.bindings"


@pytest.mark.parametrize("workers", [[], ["-n", "2"], ["--conformance-isolate"]],
                         ids=["serial", "xdist", "isolated"])
def test_lone_surrogates_in_binding_text_never_lose_the_run(
    run_suite: RunSuite, tmp_path: Path, workers: list[str]
) -> None:
    markdown, junit = tmp_path / "r.md", tmp_path / "junit.xml"
    run = run_suite(f"{B}:SpeaksInSurrogates", "--conformance-markdown", str(markdown),
                    "--junitxml", str(junit), "-ra", *workers)
    assert "INTERNALERROR" not in run.output and "no tests ran" not in run.output, run.output[-3000:]
    assert run.report is not None and run.report["complete"], run.output[-3000:]
    assert run.report["binding"]["name"] == "surrogate\ufffd"
    assert run.report["binding"]["version"] == "1.0\ufffd"
    verdicts = {s["id"]: s["verdict"] for s in run.report["scenarios"]}
    assert len(verdicts) > 150 and "passed" in verdicts.values()
    assert any("cut emoji \ufffd" in s["message"] for s in run.report["scenarios"]
               if s["verdict"] == "errored"), run.report["scenarios"]
    assert "surrogate\ufffd" in markdown.read_text(encoding="utf-8")
    assert "testcase" in junit.read_text(encoding="utf-8")


def test_report_paths_into_missing_folders_are_created(run_suite: RunSuite, tmp_path: Path) -> None:
    markdown = tmp_path / "new" / "deeper" / "r.md"
    json_report = tmp_path / "other" / "r.json"
    run = run_suite("reference", "-k", "finish_stops", "--conformance-markdown", str(markdown),
                    "--conformance-json", str(json_report))
    assert run.returncode == 0 and "INTERNALERROR" not in run.output, run.output[-3000:]
    assert json.loads(json_report.read_text())["complete"]
    assert markdown.read_text().startswith("# Conformance of `reference`")


def test_a_step_summary_into_a_missing_folder_is_created(
    run_suite: RunSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It once failed a passing run with a traceback at the end of the session.
    summary = tmp_path / "runner" / "step" / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = run_suite("reference", "-k", "finish_stops")
    assert run.returncode == 0 and "Traceback" not in run.output, run.output[-3000:]
    assert summary.read_text(encoding="utf-8").startswith("# Conformance of `reference`")


def test_a_harness_transcript_into_a_missing_folder_is_created(run_suite: RunSuite, tmp_path: Path) -> None:
    # --harness-debug into a folder that does not exist aborted the run with INTERNALERROR.
    transcript = tmp_path / "logs" / "today" / "harness.jsonl"
    run = run_suite(f"cmd:{HARNESS}", "-k", "finish_stops", "--harness-debug", str(transcript))
    assert run.returncode == 0 and "INTERNALERROR" not in run.output, run.output[-3000:]
    assert '"type":"welcome"' in transcript.read_text(encoding="utf-8").replace(" ", "")


def _workflow_commands(output: str) -> list[str]:
    """The lines of `output` a GitHub runner would take for a command, but the suite's own `::error`."""
    return [line for line in output.splitlines()
            if re.match(r"\s*(::|##\[)", line) and not line.startswith("::error ")]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_binding_text_cannot_command_the_ci_runner_or_forge_markdown(
    run_suite: RunSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    """Names, versions, messages and the reasons of not_claimed and known_failures (printed raw in
    `-ra`'s XFAIL lines once) command nothing, serially and under xdist."""
    summary, markdown = tmp_path / "summary.md", tmp_path / "r.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("CI", "true")  # pytest then prints each failure's whole message in `-ra`'s summary
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = run_suite(f"{B}:SpeaksInCommands", "--conformance-markdown", str(markdown), "-ra",
                    "-k", "not_choose or arrow or parallel or not_text", *workers)
    assert run.report is not None, run.output[-3000:]
    assert "XFAIL" in run.output and "known failure: it errs" in run.output
    assert "\n::error " in run.output  # the suite's own annotations are still there
    assert _workflow_commands(run.output) == [], run.output
    assert "\x1b" not in run.output and "\r" not in run.output
    for text in (markdown.read_text(encoding="utf-8"), summary.read_text(encoding="utf-8")):
        _assert_no_forged_markdown(text)
    compared = subprocess.run([sys.executable, "-m", "conformance", "compare", str(tmp_path / "report.json")],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert compared.returncode == 0, compared.stderr
    _assert_no_forged_markdown(compared.stdout)
    assert "\x1b" not in json.dumps(run.report, ensure_ascii=False)


@pytest.mark.parametrize("workers", [[], ["-n", "2"], ["--conformance-isolate"]],
                         ids=["serial", "xdist", "isolated"])
def test_binding_and_library_text_commands_the_ci_runner_on_no_output_path(
    run_suite: RunSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    """A library's failure message, a binding's exception, a known-failure and a not-claimed
    reason, each holding workflow commands, command nothing in the terminal and `-ra`, JUnit, the
    Markdown report, the step summary, `compare` or the site (the JSON report is data). The
    site's pages once held each of those messages' lines raw: a `cat` of them in CI obeyed."""
    summary, markdown, junit = tmp_path / "summary.md", tmp_path / "r.md", tmp_path / "junit.xml"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("CI", "true")  # pytest then prints each failure's whole message in `-ra`'s summary
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = run_suite(f"{B}:SpeaksInCommands", "--conformance-markdown", str(markdown), "-ra",
                    "--junitxml", str(junit), "-o", "junit_logging=all",
                    "-k", "not_choose or parallel or not_text or ask_to_user or argument_schema",
                    *workers)
    assert run.report is not None, run.output[-3000:]
    said = {s["verdict"]: s["message"] for s in run.report["scenarios"]}
    assert "\n::add-mask::failure" in said["failed"], said  # the library's own words, in its failure
    assert "\n::stop-commands::halt" in said["errored"], said  # the binding's exception
    assert "::add-mask::known" in said["known-failure"], said  # reasons are escaped as declared
    assert "::stop-commands::halt" in said["not-claimed"], said
    observed = [s["observed"] for s in run.report["scenarios"] if s["verdict"] == "known-failure"]
    assert "\n::add-mask::failure" in observed[0], observed
    site = tmp_path / "site"
    built = subprocess.run([sys.executable, "-m", "conformance", "site", "--out", str(site),
                            str(tmp_path / "report.json")],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert built.returncode == 0, built.stderr
    compared = subprocess.run([sys.executable, "-m", "conformance", "compare",
                               str(tmp_path / "report.json")],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert compared.returncode == 0, compared.stderr
    pages = sorted(p for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".md", ".svg"))
    assert pages, built.stdout
    outputs = {"terminal": run.output, "compare": compared.stdout, "site": built.stdout + built.stderr}
    for path in (summary, markdown, junit, *pages):
        outputs[str(path.relative_to(tmp_path))] = path.read_text(encoding="utf-8")
    commanding = {name: _workflow_commands(text) for name, text in outputs.items()}
    assert {name: lines for name, lines in commanding.items() if lines} == {}


def _assert_no_forged_markdown(text: str) -> None:
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert not [h for h in headings if re.match(r"#+ Forged", h)], headings
    assert not _workflow_commands(text), text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
    assert len(widths) == 1, rows  # no row split into more cells than the header


@pytest.mark.parametrize(("text", "expected"), [
    ("a\ud800b", "a\ufffdb"),
    ("\ud83d\ude00", "\U0001f600"),  # a surrogate pair is the character it encodes
    ("x\n::add-mask::y", "x\n\\::add-mask::y"),
    ("  ##[warning]x", "  \\##[warning]x"),
    ("\x1b[31mred\x1b[0m\r", "red\\r"),
])
def test_terminal_text_is_encodable_and_commands_nothing(text: str, expected: str) -> None:
    assert _text.terminal(text) == expected
    _text.terminal(text).encode("utf-8")


def test_every_message_is_capped_once_whatever_its_size() -> None:
    huge = "x" * 20_000_000
    assert len(_text.safe(huge)) < _text.MESSAGE_LIMIT + 40
    assert len(_text.name(huge)) < _text.NAME_LIMIT + 40


def test_megabytes_from_a_binding_are_capped_before_every_writer(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    # A 20 MB name made the JSON report 21 MB, rewritten after every scenario; skip and xfail
    # reasons reached JUnit whole.
    junit, markdown = tmp_path / "junit.xml", tmp_path / "r.md"
    run = run_suite(f"{B}:SpeaksAtLength", "--junitxml", str(junit), "--conformance-markdown",
                    str(markdown), "-ra", "-k", "step_cap or parallel")
    assert run.report is not None, run.output[-3000:]
    assert {"known-failure", "not-claimed"} <= {s["verdict"] for s in run.report["scenarios"]}
    for path in (junit, markdown, tmp_path / "report.json"):
        assert path.stat().st_size < 300_000, path.name
    assert len(run.output) < 300_000
    assert "more chars)" in junit.read_text(encoding="utf-8")


def test_a_librarys_output_is_capped_in_junit_whatever_it_logs(run_suite: RunSuite, tmp_path: Path) -> None:
    # With junit_logging, the captured output of every scenario reached JUnit whole (from its
    # teardown report, which the suite left as it was): 330 MB for eleven scenarios printing 30 MB.
    junit = tmp_path / "junit.xml"
    run = run_suite(f"{B}:PrintsAtLength", "--junitxml", str(junit), "-o", "junit_logging=all",
                    "-k", "finish_stops or chosen_tool_runs or never_runs")
    assert run.report is not None and len(run.report["scenarios"]) >= 3, run.output[-3000:]
    text = junit.read_text(encoding="utf-8")
    assert "more chars)" in text and "oooo" in text and "eeee" in text and "llll" in text
    assert len(text) < 100_000 * len(run.report["scenarios"])
    assert "\x1b" not in text and "\n::add-mask::" not in text


def test_a_scenario_state_is_not_kept_after_its_scenario(
    run_suite: RunSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every scenario's state (its outcomes, with all its library said) was kept on its item for the
    # whole session: 50 scenarios failing on a library's 30 MB message peaked at 2 GB.
    alive = tmp_path / "alive.txt"
    monkeypatch.setenv("LIVE_WORLDS_FILE", str(alive))
    run = run_suite(f"{B}:CrashesAtLengthOnARaisingTool", "-p", "tests.suite.live_worlds",
                    "-k", "tool_errors or raising or finish_stops")
    assert run.report is not None, run.output[-3000:]
    verdicts = [s["verdict"] for s in run.report["scenarios"]]
    assert {"failed", "blocked"} <= set(verdicts), verdicts
    assert int(alive.read_text()) <= 1


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_report_paths_are_resolved_once_where_the_run_started(
    run_suite: RunSuite, tmp_path: Path, workers: list[str]
) -> None:
    run = run_suite(f"{B}:ChangesDirectory", "-k", "finish_stops or LOOP",
                    "--conformance-markdown", "r.md", "--junitxml", "j.xml", *workers)
    assert run.report is not None and "INTERNALERROR" not in run.output, run.output[-3000:]
    assert (tmp_path / "r.md").is_file() and (tmp_path / "j.xml").is_file()
    assert (tmp_path / "library").is_dir()  # the binding did change directory
    assert not list((tmp_path / "library").rglob("r.md")), "a report followed the binding's chdir"


@pytest.mark.parametrize("where", ["folder", "under_a_file"])
def test_a_report_path_that_cannot_be_written_is_a_usage_error_before_any_scenario(
    run_suite: RunSuite, tmp_path: Path, where: str
) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "a_file").write_text("")
    path = {"folder": "reports", "under_a_file": "a_file/r.md"}[where]
    run = run_suite("reference", "-k", "finish_stops", "--conformance-markdown", path)
    assert run.returncode == 4, run.output[-3000:]
    assert "INTERNALERROR" not in run.output and "Traceback" not in run.output
    assert f"--conformance-markdown {path}: " in run.output
    assert "passed" not in run.output  # no scenario ran


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_report_that_cannot_be_written_loses_none_of_the_others(
    run_suite: RunSuite, tmp_path: Path, workers: list[str]
) -> None:
    run = run_suite(f"{B}:BreaksTheMarkdownFolder", "-k", "finish_stops or LOOP",
                    "--conformance-markdown", "md/r.md", "--junitxml", "j.xml", *workers)
    assert run.report is not None and run.report["complete"], run.output[-3000:]
    assert "INTERNALERROR" not in run.output and (tmp_path / "j.xml").is_file()
    assert run.output.count("the report md/r.md could not be written: ") == 1, run.output
