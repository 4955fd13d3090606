"""The reports' rendering of verdicts with reasons: comparison, Markdown, requirement reasons."""

from __future__ import annotations

from conformance._attribution import resolve_blocked
from conformance._features import catalogue
from conformance._report import (
    BindingInfo,
    Report,
    ScenarioResult,
    comparison,
    conformance_line,
    conforms,
    judged,
    levels,
    markdown,
    not_judged,
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
    assert "- lib does not conform (MUST: " in table and "(date unknown, suite 0)" in table


def test_the_markdown_report_lists_reasons_and_what_is_not_claimed() -> None:
    text = markdown(_report("lib", RESULTS, {"ask-user": "no such tool"}), catalogue())
    assert "- `ask-user`: no such tool" in text
    assert "| ERR-3 | MUST | repeated-error-stop | ⛔ blocked | blocked by ERR-2" in text


def test_a_report_made_outside_ci_says_so_in_its_markdown_and_in_the_comparison() -> None:
    report = _report("lib", RESULTS, {})
    assert "outside CI" not in markdown(report, catalogue())
    assert "outside CI" not in comparison([report], catalogue())
    why = "run outside CI: the library's registry is not reachable here"
    report.binding.run_outside_ci = why
    assert f"**{why}**." in markdown(report, catalogue())
    table = comparison([report, _report("other", RESULTS, {})], catalogue())
    listed = table.partition("Reports made outside CI (CI cannot install the library, so it does not "
                             "regenerate them):\n\n")[2].partition("\n\n")[0]
    assert listed == f"- **lib 1**: {why}"
    # The reason is text a person typed on a command line: made safe as every message is.
    assert BindingInfo(name="lib", version="1", capabilities=[],
                       run_outside_ci=f"{why}\x1b[31m").run_outside_ci == why


def test_the_markdown_report_says_when_concurrent_runs_use_an_agent_per_run() -> None:
    report = _report("lib", RESULTS, {})
    assert "Concurrent runs" not in markdown(report, catalogue())
    report.binding.parity = {"concurrency": "shared"}
    assert "Concurrent runs" not in markdown(report, catalogue())
    report.binding.parity = {"concurrency": "per-run: Agent is not coroutine-safe (agent.py, Agent)"}
    assert ("Concurrent runs (ASYNC-2) use an agent built per run: Agent is not coroutine-safe "
            "(agent.py, Agent).") in markdown(report, catalogue())


def test_a_scenario_blocked_by_a_requirement_that_passed_is_a_failure_of_its_own() -> None:
    results = resolve_blocked([_result("ERR-2", "passed"),
                               _result("ERR-3", "blocked", "blocked by ERR-2: it never stopped",
                                       "ERR-2"),
                               _result("TRJ-3", "blocked", "blocked by ERR-1: crashed", "ERR-1"),
                               _result("ERR-1", "failed", "crashed")])
    err3 = next(r for r in results if r.requirement == "ERR-3")
    assert (err3.verdict, err3.blocked_by) == ("failed", None)
    assert "but ERR-2 passed" in err3.message
    # blocked by a requirement that failed: still blocked
    assert next(r for r in results if r.requirement == "TRJ-3").verdict == "blocked"


def test_blocked_by_passed_resolves_through_a_chain() -> None:
    results = resolve_blocked([_result("LOOP-3", "passed"),
                               _result("EXH-4", "blocked", "x", "LOOP-3"),
                               _result("EXH-6", "blocked", "y", "EXH-4")])
    # EXH-4 fails on its own, so EXH-6, blocked by it, stays blocked
    assert [r.verdict for r in results] == ["passed", "failed", "blocked"]


def test_a_library_conforms_when_every_must_requirement_that_applies_passed() -> None:
    cat = catalogue()
    assert cat["ERR-4"].level == "should" and cat["ERR-1"].level == "must"
    assert conforms({"ERR-1": "passed", "ERR-4": "failed", "HITL-1": "not-claimed"}, cat) is True
    assert conforms({"ERR-1": "known-failure", "ERR-4": "passed"}, cat) is False
    assert conforms({"ERR-1": "blocked"}, cat) is False
    assert conforms({"HITL-1": "not-claimed", "ERR-4": "passed"}, cat) is None
    assert levels({"ERR-1": "passed", "ERR-4": "failed"}, cat) == {"ERR-1": "must", "ERR-4": "should"}


def test_a_requirement_passed_on_part_of_its_scenarios_says_k_of_n() -> None:
    results = [_result("NET-1", "passed"), _result("NET-1", "not-claimed"), _result("NET-1", "passed"),
               _result("LOOP-1", "passed")]
    verdicts = requirement_verdicts(results, catalogue())
    assert judged(results, verdicts) == {"NET-1": [2, 3]}
    report = _report("lib", results, {})
    report = report.model_copy(update={"judged": judged(results, verdicts),
                                       "levels": levels(verdicts, catalogue()),
                                       "conforms": conforms(verdicts, catalogue())})
    assert "✅ passed (2 of 3)" in markdown(report, catalogue())
    assert "✅ passed (2 of 3)" in comparison([report], catalogue())
    assert conformance_line(report, catalogue()) == "lib conforms (MUST: 2 passed)"


def test_a_known_failure_shows_what_was_observed_beside_the_declared_reason() -> None:
    result = _result("ERR-1", "known-failure", "declared: the tool error ends the run").model_copy(
        update={"observed": "the call raised ValueError: the disk is on fire"})
    text = markdown(_report("lib", [result], {}), catalogue())
    assert ("(known-failure): declared: the tool error ends the run Observed: the call raised "
            "ValueError: the disk is on fire") in text


def test_a_report_that_judged_only_some_must_requirements_says_how_many_were_not_judged() -> None:
    report = _report("lib", [_result("LOOP-1", "passed")], {})
    musts = [rid for rid, r in catalogue().items()
             if r.level == "must" and r.profile in ("core", "async")]
    assert not_judged(report.requirements, report.binding.capabilities, catalogue()) == [
        rid for rid in musts if rid != "LOOP-1"]
    line = conformance_line(report, catalogue())
    assert line.startswith(f"lib conformance not judged: {len(musts) - 1} MUST requirement(s) of "
                           "the core and of its claims were not judged")
    assert "run the whole suite to judge it (MUST: 1 passed)" in line
    whole = {rid: "passed" for rid in musts}
    assert not_judged(whole, ["async"], catalogue()) == []
    assert conformance_line(report.model_copy(update={"requirements": whole}), catalogue()) == (
        f"lib conforms (MUST: {len(musts)} passed)")
