"""`cannot_express`: a binding or harness says the library's API cannot express a scenario's setup,
with a reason. The scenario is reported as not claimed, the reason beside it in every output, never
as a pass and never as a refusal by the library."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from conformance._site import build_site, load_report
from tests.suite.cannot_express_bindings import NO_TOOL_EDIT, REASON
from tests.suite.conftest import suite_run

M = "tests.suite.cannot_express_bindings"
EDITS = ("-k", "edit")
SHOWN = f"not claimed: the library cannot express this: {REASON}"


def test_a_scenario_listed_by_name_is_not_claimed_with_its_reason_in_every_output(tmp_path: Path) -> None:
    junit, markdown = tmp_path / "junit.xml", tmp_path / "report.md"
    run = suite_run(tmp_path, f"{M}:CannotNameAnotherToolInAnEdit", *EDITS,
                    "--junitxml", str(junit), "--conformance-markdown", str(markdown))
    assert run.returncode == 0, run.output[-3000:]
    report = run.report
    assert report is not None
    # JSON: the requirement passed on the others, k of n, the reason beside it; the scenario itself
    # is not claimed, never passed.
    assert report["requirements"] == {"HITL-7": "passed"}
    skipped = [s for s in report["scenarios"] if s["name"] == NO_TOOL_EDIT]
    assert [(s["verdict"], s["message"]) for s in skipped] == [("not-claimed", SHOWN)]
    assert report["judged"]["HITL-7"] == [len(report["scenarios"]) - 1, len(report["scenarios"])]
    assert report["reasons"] == {"HITL-7": SHOWN}
    assert report["binding"]["cannot_express"] == {NO_TOOL_EDIT: REASON}
    # The terminal: the requirement's line carries the reason.
    assert any(line.startswith("HITL-7") and "passed (" in line
               and "the library cannot express this: its approval API" in line
               for line in run.output.splitlines()), run.output[-3000:]
    # Markdown: the row and the binding's list.
    page = markdown.read_text(encoding="utf-8")
    assert f"| ✅ passed ({len(report['scenarios']) - 1} of {len(report['scenarios'])}) | {SHOWN} |" in page
    assert f"- `{NO_TOOL_EDIT}`: {REASON}" in page
    # JUnit: a skip whose message is the reason.
    messages = [s.get("message") for s in ET.parse(junit).iter("skipped")]
    assert messages == [SHOWN]
    # The site: the reason on the library's page, by the requirement and in the binding's list.
    json_report = tmp_path / "report.json"
    build_site([load_report(json_report)], tmp_path / "site")
    library = (tmp_path / "site" / "lib" / "reference.html").read_text(encoding="utf-8")
    assert "<h2>Scenarios the library cannot express</h2>" in library
    assert "its approval API takes new args only, never another tool&#x27;s name" in library
    assert "<strong>Reason:</strong> <span class=reason>not claimed: the library cannot express" in library
    # Under pytest-xdist, the same verdicts and reasons.
    (tmp_path / "parallel").mkdir()
    parallel = suite_run(tmp_path / "parallel", f"{M}:CannotNameAnotherToolInAnEdit", *EDITS, "-n", "2")
    assert parallel.report is not None, parallel.output[-3000:]
    assert ({s["id"]: (s["verdict"], s["message"]) for s in parallel.report["scenarios"]}
            == {s["id"]: (s["verdict"], s["message"]) for s in report["scenarios"]})
    assert (parallel.report["judged"], parallel.report["reasons"]) == (report["judged"], report["reasons"])


def test_a_requirement_listed_by_id_over_the_harness_protocol_is_not_claimed(tmp_path: Path) -> None:
    # --conformance-isolate runs the binding in a worker that speaks the harness protocol: the
    # list travels in the welcome.
    run = suite_run(tmp_path, f"{M}:CannotExpressAnyEdit", *EDITS, "--conformance-isolate")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None
    assert run.report["requirements"] == {"HITL-7": "not-claimed"}
    assert run.report["reasons"] == {
        "HITL-7": "not claimed: the library cannot express this: edits are not part of its API"}
    assert {s["verdict"] for s in run.report["scenarios"]} == {"not-claimed"}
    assert run.report["binding"]["cannot_express"] == {"HITL-7": "edits are not part of its API"}


def test_a_blank_reason_an_unknown_name_or_an_entry_also_known_to_fail_is_a_usage_error(
    tmp_path: Path,
) -> None:
    blank = suite_run(tmp_path, f"{M}:GivesNoReason", *EDITS)
    assert blank.returncode == 4, blank.output[-3000:]
    assert f"cannot_express gives no reason for [{NO_TOOL_EDIT!r}]" in blank.output
    unknown = suite_run(tmp_path, f"{M}:NamesNoScenario", *EDITS)
    assert unknown.returncode == 4, unknown.output[-3000:]
    assert "lists cannot_express that name no scenario or requirement" in unknown.output
    assert f"did you mean {NO_TOOL_EDIT!r}" in unknown.output
    twice = suite_run(tmp_path, f"{M}:ListsItTwice", *EDITS)
    assert twice.returncode == 4, twice.output[-3000:]
    assert "listed both in cannot_express and in known_failures" in twice.output


def test_a_core_requirement_cannot_be_listed_whole_by_id_or_by_every_scenario(tmp_path: Path) -> None:
    for binding in ("CannotExpressACoreRequirement", "CannotExpressAnyScenarioOfACoreRequirement"):
        refused = suite_run(tmp_path, f"{M}:{binding}", "-k", "finish")
        assert refused.returncode == 4, refused.output[-3000:]
        assert "every scenario of the core requirement(s) ['LOOP-2']" in refused.output, binding
    one = suite_run(tmp_path, f"{M}:CannotExpressOneScenarioOfACoreRequirement", "-k", "finish")
    assert one.returncode == 0, one.output[-3000:]
    assert one.report is not None
    verdicts = {s["name"]: s["verdict"] for s in one.report["scenarios"] if s["requirement"] == "LOOP-2"}
    assert verdicts == {"Choosing finish stops the loop at once": "passed",
                        "Choosing finish first runs no tool at all": "not-claimed"}
