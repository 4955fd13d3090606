"""The Ruby protocol module (harnesses/lib/protocol.rb) drives the suite to verdicts: a tiny Ruby
loop (tests/ruby/loop.rb) bound by a harness that writes only its translation
(tests/ruby/harness.rb), every message checked against the protocol."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.suite.conftest import ROOT, suite_run

HARNESS = ROOT / "tests" / "ruby" / "harness.rb"


@pytest.mark.skipif(shutil.which("ruby") is None,
                    reason="needs Debian's ruby (.ci/run installs it)")
def test_a_ruby_harness_reaches_the_verdicts_of_its_loop(tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    run = suite_run(tmp_path, f"cmd:ruby {HARNESS}", "--harness-debug", str(transcript))
    assert run.returncode == 0, run.output[-3000:]
    report = run.report
    assert report is not None and report["complete"], run.output[-3000:]
    assert report["binding"]["name"] == "ruby-loop"
    assert set(report["requirements"].values()) <= {"passed", "not-claimed"}, report["requirements"]
    # The loop, its tool errors and arguments, its cap, parallel calls and the per-call cap.
    assert {"LOOP-1", "LOOP-2", "LOOP-3", "LOOP-4", "LOOP-6", "ERR-1", "ERR-2", "ARGS-1", "ARGS-3",
            "ARGS-5", "TRJ-1", "TRJ-2", "EXH-5", "EXH-7"} <= run.requirements("passed")
    # Every message in both directions was valid under the protocol (else the run would be errored).
    assert transcript.stat().st_size > 0


@pytest.mark.skipif(shutil.which("ruby") is None,
                    reason="needs Debian's ruby (.ci/run installs it)")
def test_an_auxiliary_call_is_answered_without_a_scripted_turn(tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    run = suite_run(tmp_path, f"cmd:env OBSERVER=1 ruby {HARNESS}", "--harness-debug", str(transcript),
                    "-k", "chosen_tool_runs or choosing_finish")
    assert run.returncode == 0, run.output[-3000:]
    assert run.requirements("passed") >= {"LOOP-1", "LOOP-2"}
    lines = transcript.read_text(encoding="utf-8").splitlines()
    asked = [line for line in lines if '"kind":"auxiliary"' in line and '"auxiliary":"observation"' in line]
    answered = [line for line in lines if '"auxiliary":"continue"' in line]
    assert asked and len(answered) == len(asked), lines[:20]
