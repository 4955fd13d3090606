"""The reports' rendering of verdicts with reasons: comparison, Markdown, requirement reasons."""

from __future__ import annotations

from conformance._features import catalogue
from conformance._report import (
    BindingInfo,
    Report,
    ScenarioResult,
    comparison,
    markdown,
    requirement_reasons,
    requirement_verdicts,
)


def _report(name: str, results: list[ScenarioResult], not_claimed: dict[str, str]) -> Report:
    verdicts = requirement_verdicts(results, catalogue())
    return Report(binding=BindingInfo(name=name, version="1", capabilities=["async"],
                                      not_claimed=not_claimed, contract_version=2),
                  suite_version="0", requirements=verdicts,
                  reasons=requirement_reasons(results, verdicts), scenarios=results)


def _result(rid: str, verdict: str, message: str = "", blocked_by: str | None = None) -> ScenarioResult:
    return ScenarioResult.model_validate({"id": f"t_{rid}", "feature": "x.feature", "name": f"s {rid}",
                                          "requirement": rid, "verdict": verdict, "message": message,
                                          "blocked_by": blocked_by})


RESULTS = [
    _result("LOOP-1", "passed"),
    _result("ERR-1", "known-failure", "a raising tool crashes the run (tools.py, run_tool)\nmore"),
    _result("ERR-2", "failed", "the run never stopped"),
    _result("ERR-3", "blocked", "blocked by ERR-2: call 1 stopped with 'max_steps'", "ERR-2"),
    _result("HITL-1", "not-claimed", "not claimed: lib does not claim ask-user: no such tool"),
]


def test_each_requirement_not_passed_has_one_line_of_reason() -> None:
    report = _report("lib", RESULTS, {"ask-user": "no such tool"})
    assert report.reasons == {
        "ERR-1": "a raising tool crashes the run (tools.py, run_tool)",
        "ERR-2": "the run never stopped",
        "ERR-3": "blocked by ERR-2: call 1 stopped with 'max_steps'",
        "HITL-1": "not claimed: lib does not claim ask-user: no such tool",
    }


def test_a_blocked_scenario_does_not_hide_a_failure_of_the_same_requirement() -> None:
    verdicts = requirement_verdicts([_result("ERR-3", "blocked"), _result("ERR-3", "failed")],
                                    catalogue())
    assert verdicts["ERR-3"] == "failed"
    assert requirement_verdicts([_result("ERR-3", "blocked"), _result("ERR-3", "passed")],
                                catalogue())["ERR-3"] == "blocked"


def test_the_comparison_shows_a_known_failure_as_a_failure_with_its_reason() -> None:
    table = comparison([_report("lib", RESULTS, {"ask-user": "no such tool"})], catalogue())
    row = next(line for line in table.splitlines() if line.startswith("| ERR-1 "))
    assert "❌ failed (known) [1]" in row
    assert "1. **lib 1**, ERR-1: a raising tool crashes the run (tools.py, run_tool)" in table
    assert "⛔ blocked" in next(line for line in table.splitlines() if line.startswith("| ERR-3 "))
    assert "- `ask-user`: no such tool" in table
    # Readable by a team choosing a library: titles, links to each page, a legend, dates, versions.
    assert "| [lib](lib.md) 1 |" in table
    assert catalogue()["ERR-1"].title.split("`")[0] in row
    assert "Legend: ✅ passed: " in table and "⛔ blocked: " in table
    assert "- **lib 1** (date unknown, suite 0): " in table


def test_the_markdown_report_lists_reasons_and_what_is_not_claimed() -> None:
    text = markdown(_report("lib", RESULTS, {"ask-user": "no such tool"}), catalogue())
    assert "- `ask-user`: no such tool" in text
    assert "| ERR-3 | core | ⛔ blocked | blocked by ERR-2" in text
