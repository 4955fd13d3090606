"""The compatibility site (`python -m conformance site`): the generator on small synthetic reports,
`--out` safety, and the committed reports' site in a real headless Chromium with axe-core."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.__main__ import main
from conformance._features import Requirement, catalogue
from conformance._loader import GO_HARNESSES, RUST_HARNESSES
from conformance._site import (
    SiteReport,
    Snapshot,
    badge_json,
    badge_svg,
    build_site,
    from_git,
    load_history,
    load_report,
    read_report,
    reason,
)
from conformance._site._badges import must_score
from conformance._site._meta import meta
from tests.peer_envs import extra_of, outside_ci, peers

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "conformance"
HISTORY = ROOT / "docs" / "history"
SITE = ROOT / "docs" / "site"
#: The order of the peers session (noxfile.PEERS).
PEERS = peers()

CATALOGUE = {
    "LOOP-1": Requirement(id="LOOP-1", title="Passes everywhere.", profile="core"),
    "LOOP-2": Requirement(id="LOOP-2", title="A title with <b>markup</b> & an ampersand.", profile="core"),
    "ERR-1": Requirement(id="ERR-1", title="Fails on purpose.", profile="core"),
    "ERR-4": Requirement(id="ERR-4", title="Says it (seed 004 is one form).", profile="core", level="should"),
    "EXH-1": Requirement(id="EXH-1", title="Raises on the cap.", profile="max-steps-error|max-steps-return"),
    "HITL-1": Requirement(id="HITL-1", title="Asks the user.", profile="ask-user"),
}

FEATURE = """\
Feature: Synthetic
  Background:
    Given a ReAct agent with the signature "question -> answer"

  @req:LOOP-1
  Scenario: It passes
    Then all is well

  @req:ERR-1 @smoke
  Scenario: It fails
    Then the answer is "<b>bold</b>"

  @req:LOOP-2
  @capability:none
  Scenario Outline: It raises
    Then it raises on <x>

    Examples:
      | x |
      | 1 |
"""


def _scenario(rid: str, name: str, verdict: str, message: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": f"test_{name.lower().replace(' ', '_')}", "feature": "synthetic.feature", "name": name,
            "requirement": rid, "verdict": verdict, "message": message, **extra}


V1: dict[str, Any] = {
    "format_version": 1,
    "binding": {"name": "oldlib", "version": "1.0", "capabilities": ["max-steps-error"]},
    "suite_version": "0.1.0",
    "requirements": {"LOOP-1": "passed", "LOOP-2": "errored", "ERR-1": "failed", "ERR-4": "known-failure",
                     "EXH-1": "passed", "HITL-1": "not-claimed"},
    "scenarios": [
        _scenario("LOOP-1", "It passes", "passed"),
        _scenario("LOOP-2", "It raises", "errored", "TypeError: boom"),
        _scenario("ERR-1", "It fails", "failed", "expected 5, got <script>alert(1)</script>"),
        _scenario("ERR-4", "It is known", "known-failure", "oldlib redacts errors\nsecond line"),
        _scenario("EXH-1", "It raises on the cap", "passed"),
        _scenario("HITL-1", "It asks", "not-claimed"),
    ],
}

#: A newer report: per-requirement levels, an observed message beside a known failure's reason.
V2: dict[str, Any] = {
    "format_version": 3,
    "binding": {"name": "newlib", "version": "2.0", "capabilities": ["max-steps-return"],
                "not_claimed": {"ask-user": "newlib has no human-in-the-loop hook"},
                "contract_version": 3, "a_field_from_the_future": True},
    "suite_version": "0.3.0",
    "generated": "2025-01-02T03:04:05Z",
    "requirements": {"LOOP-1": {"verdict": "passed", "level": "must"}, "LOOP-2": "passed",
                     "ERR-1": "known-failure", "ERR-4": {"verdict": "blocked", "level": "should"},
                     "EXH-1": "failed", "HITL-1": "not-claimed"},
    "reasons": {"ERR-1": "newlib returns the answer in <b>bold</b>",
                "ERR-4": "blocked by ERR-1: it cannot run without it",
                "EXH-1": "stopped without the history",
                "HITL-1": "newlib has no human-in-the-loop hook"},
    "scenarios": [
        _scenario("LOOP-1", "It passes", "passed"),
        _scenario("ERR-1", "It fails", "known-failure", "newlib returns the answer in <b>bold</b>",
                  observed="the answer was 'BOLD' in upper case"),
        _scenario("ERR-4", "It raises", "blocked", "", blocked_by="ERR-1"),
        _scenario("EXH-1", "It stops", "failed", "3 steps, expected 2"),
        _scenario("LOOP-2", "It raises", "passed"),
        _scenario("HITL-1", "It asks", "not-claimed", "newlib has no human-in-the-loop hook"),
    ],
}

BASELINE: dict[str, Any] = {
    **V2,
    "binding": {"name": "reference", "version": "0.3.0", "capabilities": ["max-steps-error", "ask-user"]},
    "requirements": dict.fromkeys(CATALOGUE, "passed"), "reasons": {},
    "scenarios": [_scenario("LOOP-1", "It passes", "passed")],
}

#: An opt-in variant of newlib: grouped under it, whatever its score.
VARIANT: dict[str, Any] = {
    **V2, "binding": {**V2["binding"], "name": "newlib+opt"},
    "requirements": {**V2["requirements"], "EXH-1": "passed", "ERR-1": "passed"},
}


@pytest.fixture
def reports(tmp_path: Path) -> list[Path]:
    paths = []
    for data in (V1, V2):
        path = tmp_path / f"{data['binding']['name']}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture
def features(tmp_path: Path) -> Path:
    folder = tmp_path / "features"
    folder.mkdir()
    (folder / "synthetic.feature").write_text(FEATURE, encoding="utf-8")
    return folder


def _build(paths: list[Path], out: Path, features: Path, **kwargs: Any) -> dict[str, str]:
    written = build_site([load_report(p) for p in paths], out, requirements=CATALOGUE, features=features,
                         **kwargs)
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in written}


def _all(tmp_path: Path) -> list[Path]:
    paths = []
    for data in (V1, V2, BASELINE, VARIANT):
        path = tmp_path / f"{data['binding']['name']}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths


def test_reports_of_every_format_load_with_levels_and_observed_messages(reports: list[Path]) -> None:
    old, new = (load_report(p) for p in reports)
    assert (old.format_version, old.generated, old.reasons) == (1, None, {})
    assert (old.levels, old.conforms) == ({}, None)
    assert new.requirements["LOOP-1"] == "passed" and new.levels == {"LOOP-1": "must", "ERR-4": "should"}
    assert new.scenarios[1].observed == "the answer was 'BOLD' in upper case"
    assert new.scenarios[2].blocked_by == "ERR-1"
    by_scenario = SiteReport.model_validate({**V1, "scenarios": [{**V1["scenarios"][3], "level": "SHOULD"}]})
    assert by_scenario.levels == {"ERR-4": "should"}


def test_the_scorecard_counts_must_requirements_per_topic_and_puts_the_baseline_apart(
        tmp_path: Path, features: Path) -> None:
    index = _build(_all(tmp_path), tmp_path / "site", features)["index.html"]
    card = index[index.index('<table id="scorecard"'):index.index("</table>", index.index('id="scorecard"'))]
    rows = re.findall(r'<tr class="(lib|variant)" data-lib="([^"]+)"', card)
    # By MUST share: newlib 2/3 (LOOP-1, LOOP-2 of LOOP-1, LOOP-2, ERR-1; EXH-1 is newlib's claim
    # and failed: 2/4), oldlib 2/4 (errored LOOP-2 counts as not passed); the variant follows newlib.
    assert [name for _, name in rows] == ["newlib", "newlib+opt", "oldlib", "reference"]
    assert rows[1][0] == "variant"
    assert '<tbody class="base">' in card and card.index('data-lib="reference"') > card.index('class="base"')
    newlib = card[card.index('data-lib="newlib"'):card.index('data-lib="newlib+opt"')]
    assert 'data-label="MUST"><a href="#lib=newlib">2/4</a></td>' in newlib
    assert 'data-label="SHOULD"><a href="lib/newlib.html">0/1</a></td>' in newlib  # ERR-4: SHOULD
    # Every cell is a link: a topic's opens the matrix on that library and topic.
    assert '<a href="#topic=Tool+errors&amp;lib=newlib">' in newlib
    cells = re.findall(r"<td(?! class=\"n chosen\")[^>]*>(.*?)</td>", newlib, re.S)
    assert cells and all("<a " in c for c in cells), cells  # the chosen one is filled by the filter
    scores = json.loads(html.unescape(re.findall(r'data-scores="([^"]*)"', newlib)[0]))
    assert scores == {"core": [2, 3], "max-steps-return": [0, 1]}
    assert "Tool calls: 2 of 2 MUST passed" in newlib and "Tool errors: 0 of 1 MUST passed" in newlib
    assert "Step caps: 0 of 1 MUST passed" in newlib
    assert "Human in the loop: not claimed" in newlib and '<span aria-hidden="true">–</span>' in newlib
    assert '<span class="no">' in newlib and '<span class="lang">' not in newlib  # no data: no language
    # Which catalogue "conforms" is judged against: catalogue 3 is suite 0.3.x.
    assert '<th scope="col">Conforms<br><span class="muted">catalogue&nbsp;3</span></th>' in card
    reference = card[card.index('data-lib="reference"'):]
    assert '<span class="yes">' in reference
    assert 'data-label="MUST"><a href="#lib=reference">5/5</a>' in reference


def test_the_scorecard_never_ranks_a_library_higher_for_claiming_less(tmp_path: Path,
                                                                      features: Path) -> None:
    # "few" claims one capability less than "many" and passes every MUST it claims (a share of 1);
    # "many" passes more MUST requirements and fails one: it ranks first, and the caption says why.
    many = {**V2, "binding": {**V2["binding"], "name": "many"},
            "requirements": {**V2["requirements"], "ERR-1": "passed"}}
    few = {**V2, "binding": {**V2["binding"], "name": "few", "capabilities": []},
           "requirements": {k: v for k, v in V2["requirements"].items() if k not in ("ERR-1", "EXH-1")}}
    paths = []
    for data in (few, many):
        path = tmp_path / f"{data['binding']['name']}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    index = _build(paths, tmp_path / "site", features)["index.html"]
    assert re.findall(r'<tr class="lib" data-lib="([^"]+)"', index) == ["many", "few"]
    assert "Sorted by MUST requirements passed, a count" in index


def test_a_library_with_every_must_passed_conforms_whatever_its_should(tmp_path: Path,
                                                                      features: Path) -> None:
    data = {**V2, "requirements": {**V2["requirements"], "ERR-1": "passed", "EXH-1": "passed"}}
    path = tmp_path / "good.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert "<strong>Conforms</strong>: 4 of 4 MUST" in pages["lib/newlib.html"]
    assert json.loads(pages["badges/newlib.json"])["message"] == "conforms"
    report = SiteReport.model_validate({**data, "conforms": False})  # the report's own word wins
    assert badge_json(report, CATALOGUE)["message"] == "4/4 MUST"


def test_the_matrix_groups_rows_by_topic_with_levels_and_links_every_cell(
        tmp_path: Path, features: Path) -> None:
    index = _build(_all(tmp_path), tmp_path / "site", features)["index.html"]
    matrix = index[index.index('<table id="matrix"'):]
    topics = re.findall(r'<tr class="topic" data-topic="([^"]+)"', matrix)
    assert topics == ["Tool calls", "Tool errors", "Step caps", "Human in the loop"]
    assert 'ERR-4</a> <span class="tag lvl-should">SHOULD</span>' in matrix
    # HITL-1 (ask-user) is claimed by the baseline alone: no library to count.
    assert ('HITL-1</a> <span class="tag lvl-must">MUST</span> '
            '<span class="muted counted">claimed by no library</span>') in matrix
    assert ('ERR-1</a> <span class="tag lvl-must">MUST</span> '
            '<span class="muted counted">passed by 1 of 3</span>') in matrix
    # Every cell: a link to its details, a text label, and a failure is red whether known or not.
    cells = re.findall(r'<td class="v v-([a-z-]*)(?: base)?" data-verdict="[a-z-]*" data-lib="([^"]+)">'
                       r'<a href="([^"]+)">'
                       r'.*?<span class="sr">([^<]+)</span></a></td>', matrix)
    assert len(cells) == len(CATALOGUE) * 4
    assert ("known-failure", "newlib", "lib/newlib.html#r-ERR-1", "newlib, ERR-1: failed (known)") in cells
    from conformance._site._html import CSS
    failed = re.search(r"\.v-failed \{ background: (#\w+); color: (#\w+); \}", CSS)
    known = re.search(r"\.v-known-failure \{ background: (#\w+); color: (#\w+); \}", CSS)
    assert failed and known and failed.groups() == known.groups()
    # Opt-in variants sit under their library, shown by their opt-in.
    heads = re.findall(r'<th scope="col" class="lib ([a-z]*)" data-lib="([^"]+)"', matrix)
    assert heads == [("baseline", "reference"), ("", "newlib"), ("variant", "newlib+opt"), ("", "oldlib")]
    assert '<span aria-hidden="true">+opt</span>' in matrix
    # The baseline's column is set apart and named as such, not read as the winner.
    assert '<span class="sr">reference (the baseline, not a contender)</span>' in matrix
    assert re.findall(r'<td class="v v-[a-z-]* base" data-verdict="[a-z-]*" data-lib="([^"]+)"', matrix) == [
        "reference"] * len(CATALOGUE)


def test_matrix_titles_leave_out_the_seed_notes() -> None:
    from conformance._site._html import plain_title

    assert plain_title("A fresh budget (seed 002 continue, seed 003 per-turn depth).") == "A fresh budget."
    assert plain_title("The tool (`ask_to_user` in seed 004) is built in (on by default).") == (
        "The tool is built in (on by default).")
    assert plain_title("Reach the partial run. Seed 000's fields (`a`, `b`) are one conforming shape.") == (
        "Reach the partial run.")
    assert plain_title("Property-based; the seed is the user's to set.") == (
        "Property-based; the seed is the user's to set.")  # a random seed, not a seed document


def test_a_cells_details_show_scenarios_observed_failure_reason_gherkin_and_command(
        tmp_path: Path, features: Path) -> None:
    pages = _build(_all(tmp_path), tmp_path / "site", features)
    new = pages["lib/newlib.html"]
    section = new[new.index('id="r-ERR-1"'):new.index("</section>", new.index('id="r-ERR-1"'))]
    assert "Declared reason:</strong> newlib returns the answer in &lt;b&gt;bold&lt;/b&gt;" in section
    assert ('Observed:</strong></p><pre class="message">the answer was &#x27;BOLD&#x27; in upper case'
            in section)
    assert "@req:ERR-1 @smoke\nScenario: It fails\n  Then the answer is &quot;&lt;b&gt;bold" in section
    assert "Background:\n  Given a ReAct agent" in section
    assert "<code>pytest --impl newlib -k test_it_fails --runxfail</code>" in section
    # The binding that declares the reason, beside it (no file known for newlib: its name).
    assert "Declared by the binding registered as <code>newlib</code>" in section
    assert 'href="../req/ERR-1.html#s-synthetic-feature-it-fails"' in section
    assert 'id="s-synthetic-feature-it-fails"' in pages["req/ERR-1.html"]
    assert "blocked by <strong>ERR-1</strong>" in new
    assert "(seed" not in new  # the seed notes stay on the requirement's page
    assert "<code>ask-user</code>: newlib has no human-in-the-loop hook" in new
    # A report without `observed` says so rather than passing the reason off as what happened.
    old = pages["lib/oldlib.html"]
    assert "Observed: this report does not carry what the run saw." in old
    assert "Scenario Outline: It raises" in old and "TypeError: boom" in old
    # Every cell's anchor exists on its library's page.
    for lib, slug in (("newlib", "newlib"), ("oldlib", "oldlib"), ("reference", "reference")):
        for rid in CATALOGUE:
            assert f'id="r-{rid}"' in pages[f"lib/{slug}.html"], (lib, rid)


def test_the_filters_are_kept_in_the_url_and_hide_libraries_without_the_capability(
        tmp_path: Path, features: Path) -> None:
    index = _build(_all(tmp_path), tmp_path / "site", features)["index.html"]
    for control in ('name="topic"', 'name="cap"', 'name="lang"', 'name="q"', 'type="checkbox" name="lib"'):
        assert control in index
    assert "history.replaceState" in index and "location.hash" in index
    assert 'data-caps="max-steps-return"' in index and "data-caps" in index.split("<script>")[1]


def test_the_glossary_and_the_libraries_are_explained(tmp_path: Path, features: Path) -> None:
    pages = _build(_all(tmp_path), tmp_path / "site", features)
    glossary = pages["glossary.html"]
    for word in ("passed", "failed (known)", "errored", "blocked", "not claimed", "MUST", "SHOULD",
                 "Conforms", "Core", "Baseline", "<code>HITL-n</code>", "<code>ARGS-n</code>"):
        assert word in glossary, word
    lines = meta()
    for name, info in lines.libraries.items():  # every bundled library and variant is introduced
        assert info.what or info.turns_on, name
        assert lines.library(name).language in ("Python", "TypeScript", "Go", "Java", "Kotlin", "Rust",
                                                "Ruby", "Elixir"), name
    for name in ("ax", "ai", "dspy-ts", "langgraph-js", "mastra", "openai-agents-js", "mastra+retries",
                 "openai-runtools", "strands-ts", "anthropic-ts", "llamaindex-ts", "genkit", "adk-ts"):
        assert lines.library(name).language == "TypeScript", name  # their packages' sources are .ts
    for name in GO_HARNESSES:
        assert lines.library(name).language == "Go", name
    assert lines.library("dspy-rb").language == "Ruby"
    for name in RUST_HARNESSES:
        assert lines.library(name).language == "Rust", name
    assert meta().library("langchain+tool-errors").turns_on.startswith("ToolErrorMiddleware")
    assert lines.library("langchain+tool-errors").package == "langchain"
    ids = [rid for t in lines.topics for rid in t.requirements]
    assert sorted(ids) == sorted(catalogue()) and len(ids) == len(set(ids))
    reference = pages["lib/reference.html"]
    assert "<strong>Baseline.</strong>" in reference and "Python" in reference


def test_a_partial_run_is_marked_and_never_conforms(tmp_path: Path, features: Path) -> None:
    data = {**V2, "complete": False, "stopped_by": "interrupted",
            "requirements": {"LOOP-1": "passed", "LOOP-2": "passed"}}
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert "partial run</span>" in pages["index.html"] and '<span class="no">' in pages["index.html"]
    assert "<strong>Partial run:</strong> interrupted" in pages["lib/newlib.html"]
    assert ("Not judged by this report (the run stopped before them): ERR-1, ERR-4, EXH-1, HITL-1"
            in pages["lib/newlib.html"])


def test_a_report_made_outside_ci_says_so_on_its_page_and_in_the_list_of_libraries(
        tmp_path: Path, features: Path) -> None:
    why = "run outside CI: the library's registry is not reachable here"
    data = {**V2, "binding": {**V2["binding"], "run_outside_ci": why}}
    path = tmp_path / "newlib.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert f"<dt>Where it ran</dt><dd>{html.escape(why)}</dd>" in pages["lib/newlib.html"]
    assert f"{why}." in pages["lib/newlib.md"].splitlines()
    assert f'<span class="muted">{html.escape(why)}</span>' in pages["index.html"]
    plain = _build([_all(tmp_path)[1]], tmp_path / "plain", features)
    assert "Where it ran" not in plain["lib/newlib.html"] and "outside CI" not in plain["index.html"]


def test_every_peer_is_introduced_and_published() -> None:
    workflow = (ROOT / ".github" / "workflows" / "site.yml").read_text(encoding="utf-8")
    for name in PEERS:
        info = meta().library(name)
        assert info.language and info.package and info.binding, name
        assert (ROOT / info.binding).is_file(), (name, info.binding)
        assert info.what or info.turns_on, name
        if name in outside_ci():  # CI cannot install it: the site job takes its committed report
            assert "cp \"$report\" reports/" in workflow and "run_outside_ci" in workflow
            assert f"impl: {name}," not in workflow, f"{name} cannot run in .github/workflows/site.yml"
            continue
        assert f"impl: {name}," in workflow, f"{name} has no job in .github/workflows/site.yml"
        if info.language == "Python" and name != "reference":  # the extra its page says to install
            assert extra_of(name) == (info.variant_of or name), name


def test_the_maintainer_kit_gives_badges_snippets_downloads_and_a_way_to_object(
        tmp_path: Path, features: Path) -> None:
    pages = _build(_all(tmp_path), tmp_path / "site", features, repository="https://example.org/suite",
                   base_url="https://example.org/site/")
    new = pages["lib/newlib.html"]
    assert "[![newlib overall: 2/4 MUST](https://example.org/site/badges/newlib.svg)]" \
           "(https://example.org/site/lib/newlib.html)" in new
    assert "&lt;img src=&quot;https://example.org/site/badges/newlib/max-steps-return.svg&quot;" in new
    # Every markup a README is written in, and the bare URL, each with its Copy button.
    assert (".. image:: https://example.org/site/badges/newlib.svg\n   :target: "
            "https://example.org/site/lib/newlib.html\n   :alt: newlib overall: 2/4 MUST") in new
    assert ('image:https://example.org/site/badges/newlib.svg[&quot;newlib overall: 2/4 MUST&quot;,'
            'link=https://example.org/site/lib/newlib.html]') in new
    boxes = re.findall(r'<textarea readonly rows="2" id="([^"]+)"', new)
    assert len(boxes) == 5 * 2 and len(set(boxes)) == len(boxes)  # overall and max-steps-return
    assert sorted(re.findall(r'data-copy="([^"]+)"', new)) == sorted(boxes)
    assert json.loads(pages["badges/newlib/max-steps-return.json"]) == {
        "schemaVersion": 1, "label": "max-steps-return", "message": "0/1 MUST", "color": "red"}
    ET.fromstring(pages["badges/newlib/max-steps-return.svg"])
    assert 'href="https://example.org/suite/issues/new?title=Wrong%20verdict%20for%20newlib' in new
    assert 'href="newlib.json" download' in new and 'href="newlib.md" download' in new
    assert "<code>python -m conformance site your-report.json --out site</code>" in new
    assert '<a href="../view.html">View a report</a>' in new
    assert load_report(tmp_path / "site" / "lib" / "newlib.json").requirements["ERR-1"] == "known-failure"
    md = pages["lib/newlib.md"]
    assert "| ERR-1 | MUST | failed (known) | newlib returns the answer in &lt;b>bold&lt;/b> |" in md
    assert "publishes\nthe site to the repository's GitHub Pages" in new
    # Reached from the top of the page, not only by scrolling past every requirement.
    assert new.index('<a href="#kit-h">Maintainer kit</a>') < new.index('id="r-LOOP-1"')


def test_a_build_without_its_address_gives_relative_snippets_and_no_placeholder_host(
        tmp_path: Path, features: Path) -> None:
    new = _build(_all(tmp_path), tmp_path / "site", features)["lib/newlib.html"]
    assert "OWNER" not in new and "https://" not in new.split('id="kit-h"', 1)[1].split("Downloads", 1)[0]
    assert "[![newlib overall: 2/4 MUST](badges/newlib.svg)](lib/newlib.html)" in new
    assert "without that address (<code>base_url</code> in the suite's" in new
    assert not any("OWNER" in p.read_text(encoding="utf-8") for p in SITE.rglob("*.html"))


def test_the_repository_and_the_published_address_are_named_in_one_place_the_workflow_reads_too(
        tmp_path: Path, features: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance._site as site_module
    suite = meta().suite.model_copy(update={"repository": "https://example.org/suite",
                                            "base_url": "https://example.org/site/"})
    monkeypatch.setattr(site_module, "meta", lambda: meta().model_copy(update={"suite": suite}))
    new = _build(_all(tmp_path), tmp_path / "site", features)["lib/newlib.html"]
    assert "(https://example.org/site/lib/newlib.html)" in new
    assert 'href="https://example.org/suite/issues/new?' in new
    # The Pages workflow passes neither, and refuses to publish links to another repository.
    workflow = (ROOT / ".github" / "workflows" / "site.yml").read_text(encoding="utf-8")
    assert "--repository" not in workflow and "--base-url" not in workflow
    check = re.search(r"<<'PY'\n(.*?)\n\s*PY\n", workflow, re.S)
    assert check is not None
    script = tmp_path / "check.py"
    lines = (line.removeprefix(" " * 10) for line in check[1].splitlines())  # the YAML block's indent
    script.write_text("\n".join(lines), encoding="utf-8")
    def run(here: str, pages: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), here, pages], capture_output=True, text=True,
                              cwd=ROOT, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    configured = meta().suite
    ok = run(configured.repository.rstrip("/"), configured.base_url)
    assert ok.returncode == 0, ok.stderr
    other = run("https://example.org/fork", configured.base_url)
    assert other.returncode == 1
    assert "libraries.toml's [suite] repository is" in other.stderr and "set it there" in other.stderr
    moved = run(configured.repository.rstrip("/"), "https://example.org/elsewhere/")
    assert moved.returncode == 1 and "Pages publishes at 'https://example.org/elsewhere/'" in moved.stderr


def test_the_reproduce_commands_start_with_installing_the_library_s_environment(
        tmp_path: Path, features: Path) -> None:
    names = ("langchain+tool-errors", "ax", "reference", "dspy-rb")
    for name in names:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**V2, "binding": {**V2["binding"], "name": name}}), encoding="utf-8")
    pages = _build([tmp_path / f"{n}.json" for n in names], tmp_path / "site", features)
    ruby = "<code>pip install -e .</code> and Ruby with the library on its load path"
    assert ruby in pages["lib/dspy-rb.html"]
    assert (f"<code>pip install -e &#x27;.[{extra_of('langchain+tool-errors')}]&#x27;</code>"
            in pages["lib/langchain-tool-errors.html"])
    assert "<code>pip install -e .</code> and Node.js" in pages["lib/ax.html"]
    assert "<code>pip install -e .</code>" in pages["lib/reference.html"]
    # A library the site's data file does not know: no guess at its environment.
    assert "pip install" not in _build(_all(tmp_path), tmp_path / "other", features)["lib/newlib.html"]


def test_a_declared_reason_links_the_binding_file_that_declares_it(tmp_path: Path, features: Path) -> None:
    path = tmp_path / "langchain.json"
    path.write_text(json.dumps({**V2, "binding": {**V2["binding"], "name": "langchain"}}), encoding="utf-8")
    page = _build([path], tmp_path / "site", features, repository="https://example.org/suite")["lib/langchain.html"]
    section = page[page.index('id="r-ERR-1"'):page.index("</section>", page.index('id="r-ERR-1"'))]
    assert ('Declared by <a href="https://example.org/suite/blob/HEAD/conformance/bindings/langchain.py">'
            '<code>conformance/bindings/langchain.py</code></a>') in section


def test_badges_say_conforms_or_the_must_share(reports: list[Path]) -> None:
    old, new = (load_report(p) for p in reports)
    assert badge_json(new, CATALOGUE) == {"schemaVersion": 1, "label": "conformance",
                                          "message": "2/4 MUST", "color": "orange"}
    assert badge_json(old, CATALOGUE)["message"] == "2/4 MUST"
    perfect = SiteReport.model_validate({**V1, "requirements": dict.fromkeys(CATALOGUE, "passed")})
    assert badge_json(perfect, CATALOGUE) == {"schemaVersion": 1, "label": "conformance",
                                              "message": "conforms", "color": "brightgreen"}
    root = ET.fromstring(badge_svg(new, CATALOGUE))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("role") == "img" and root.findtext(f"{ns}title") == "conformance: 2/4 MUST"


def test_every_verdict_gets_its_reason(reports: list[Path]) -> None:
    old, new = (load_report(p) for p in reports)
    assert reason(old, "ERR-4") == "oldlib redacts errors"  # format 1: the first line of the message
    assert reason(old, "LOOP-2") == "TypeError: boom"
    assert reason(old, "LOOP-1") == "" and reason(old, "HITL-1") == ""
    assert reason(new, "ERR-4") == "blocked by ERR-1: it cannot run without it"
    no_reasons = SiteReport.model_validate({**V2, "reasons": {}})
    assert reason(no_reasons, "ERR-4") == "blocked by ERR-1"


def test_history_shows_verdicts_by_version_and_what_changed_since_the_last_run(
        tmp_path: Path, features: Path) -> None:
    older = SiteReport.model_validate({**V2, "binding": {**V2["binding"], "version": "1.9"},
                                       "generated": "2024-12-01T00:00:00Z",
                                       "requirements": {**V2["requirements"], "LOOP-2": "failed"}})
    earlier_suite = SiteReport.model_validate({**V2, "suite_version": "0.2.0",
                                               "generated": "2024-12-20T00:00:00Z"})
    history = [Snapshot.of(older, "run").model_copy(update={"report": older}),
               Snapshot.of(earlier_suite, "git 0123456789")]
    pages = _build(_all(tmp_path), tmp_path / "site", features, history=history)
    strip = pages["index.html"][pages["index.html"].index('class="changed"'):]
    strip = strip[:strip.index("</details>")]
    # Folded, so that the scorecard stays on the first screen.
    assert "<summary><strong>Changed since the last run:</strong> " in strip
    assert "<strong>newlib</strong> (suite 0.2.0 → 0.3.0): no verdict changed" in strip
    page = pages["history.html"]
    newlib = page[page.index('id="h-newlib"'):]
    newlib = newlib[:newlib.index("</table>")]
    assert "(2 library versions, 3 runs)" in newlib
    # By suite version, then library version: each row compares with a run of the same suite
    # where there is one, so a change of the suite is never read as a change of the library.
    rows = re.findall(r'<tr><th scope="row">([^<]+)</th><td data-label="Suite">([^<]+)</td>', newlib)
    assert rows == [("2.0", "0.2.0"), ("1.9", "0.3.0"), ("2.0", "0.3.0")]
    assert "suite 0.2.0 → 0.3.0: LOOP-2: passed → failed" in newlib
    assert "LOOP-2: failed → passed" in newlib and "a run against this release" in newlib
    assert "committed report (git 0123456789)" in newlib and "this site&#x27;s report" in newlib
    # The run against the earlier release is downloadable as it was (its own known failures).
    assert 'a run against this release (<a href="history/newlib-1.9-suite-0.3.0.json" download>' in newlib
    assert load_report(tmp_path / "site" / "history" / "newlib-1.9-suite-0.3.0.json").binding.version == "1.9"
    grid = page[page.index('<table class="grid">'):]
    grid = grid[:grid.index("</table>")]
    assert re.findall(r"<tr><th scope=\"row\">([A-Z]+-\d)</th>", grid) == ["LOOP-2"]  # only what moved
    assert grid.count('<td class="v-failed">') == 1 and grid.count('<td class="v-passed">') == 2


def test_history_tells_a_binding_s_change_from_the_library_s_and_lists_every_library(
        tmp_path: Path, features: Path) -> None:
    # The same library release under the same suite, a verdict apart: the binding moved it.
    same = SiteReport.model_validate({**V2, "generated": "2024-12-20T00:00:00Z",
                                      "requirements": {**V2["requirements"], "LOOP-2": "failed"}})
    history = [Snapshot.of(same, "git 0123456789")]
    pages = _build(_all(tmp_path), tmp_path / "site", features, history=history,
                   repository="https://example.org/suite")
    page = pages["history.html"]
    newlib = page[page.index('id="h-newlib"'):]
    newlib = newlib[:newlib.index("</table>")]
    assert ("not a library change (2.0 both times): the binding or the suite's code changed: "
            "LOOP-2: failed → passed") in newlib
    assert 'git <a href="https://example.org/suite/commit/0123456789"><code>0123456789</code></a>' in newlib
    # Reports that record the binding's digest tell the binding's change from the suite's code's.
    for before, after, whose in (("sha256:aa", "sha256:bb", "the binding changed"),
                                 ("sha256:aa", "sha256:aa", "the suite's code (the same binding) changed")):
        earlier = SiteReport.model_validate({**same.model_dump(), "binding": {
            **same.binding.model_dump(), "digest": before}})
        current = {**V2, "binding": {**V2["binding"], "digest": after}}
        (tmp_path / "digest").mkdir(exist_ok=True)
        (tmp_path / "digest" / "newlib.json").write_text(json.dumps(current), encoding="utf-8")
        built = _build([tmp_path / "digest" / "newlib.json"], tmp_path / f"site-{whose[:5]}", features,
                       history=[Snapshot.of(earlier, "git 0123456789")])
        assert f"not a library change (2.0 both times): {whose}: LOOP-2: failed → passed" in (
            built["history.html"]), whose
    # A library with one run is still listed, and says why there is no table.
    oldlib = page[page.index('id="h-oldlib"'):]
    assert oldlib.index("One run so far") < oldlib.index("</h2>") + 80
    assert '<a\nhref="../history.html#h-newlib">its history</a>' in pages["lib/newlib.html"]


def test_the_history_command_reads_every_committed_version_of_a_report(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                       capture_output=True)
    git("init", "-q")
    (repo / "newlib.json").write_text("{", encoding="utf-8")  # a version the suite cannot read
    git("add", "newlib.json")
    git("commit", "-q", "-m", "broken")
    for i, verdict in enumerate(("failed", "passed", "passed")):
        data = {**V2, "generated": f"2025-01-0{i + 1}T00:00:00Z",
                "requirements": {**V2["requirements"], "LOOP-2": verdict},
                "scenarios": [{**s, "verdict": verdict} if s["requirement"] == "LOOP-2" else s
                              for s in V2["scenarios"]]}
        (repo / "newlib.json").write_text(json.dumps(data), encoding="utf-8")
        git("add", "newlib.json")
        git("commit", "-q", "-m", f"run {i}")
    snapshots = from_git([repo / "newlib.json"])
    # The third run changed nothing: not history.
    assert [s.requirements["LOOP-2"] for s in snapshots] == ["failed", "passed"]
    assert all(s.source.startswith("git ") for s in snapshots)
    assert main(["history", str(repo / "newlib.json"), "--out", str(tmp_path / "h" / "git.json")]) == 0
    assert len(load_history([tmp_path / "h"])) == 2


def test_a_run_against_an_earlier_release_counts_a_declared_failure_it_does_not_have_as_passed(
        tmp_path: Path) -> None:
    # The binding's known failures are the current release's: an earlier release that passes one
    # fails the run only as "listed as a known failure but passed"; for history, it passed.
    xpass = "listed as a known failure but passed: remove it from the binding's known_failures"
    data = {**V2, "requirements": {"ERR-1": "failed", "EXH-1": "failed"},
            "scenarios": [_scenario("ERR-1", "It fails", "failed", xpass),
                          _scenario("ERR-1", "It fails too", "failed", xpass),
                          _scenario("EXH-1", "It stops", "failed", xpass),
                          _scenario("EXH-1", "It stops again", "failed", "3 steps, expected 2")]}
    path = tmp_path / "newlib-1.0.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    [run] = load_history([path])
    assert run.requirements["ERR-1"] == "passed"
    assert run.requirements["EXH-1"] == "failed"  # a true failure beside it: still failed
    # openai-agents 0.21.1 still carried a tool's message (0.24 replaces it with a fixed text).
    assert load_history([HISTORY / "openai-agents-0.21.1.json"])[0].requirements["ERR-4"] == "passed"


def test_the_committed_history_holds_three_libraries_at_three_versions_each() -> None:
    snapshots = load_history([HISTORY]) + [Snapshot.of(load_report(REPORTS / f"{n}.json")) for n in PEERS]
    versions: dict[str, set[str]] = {}
    for s in snapshots:
        versions.setdefault(s.library, set()).add(s.version)
    assert sum(len(v) >= 3 for v in versions.values()) >= 3, versions


def test_hostile_text_is_escaped_everywhere(tmp_path: Path, features: Path) -> None:
    hostile = '<script>alert("x")</script>'
    data = json.loads(json.dumps(V2))
    data["binding"]["name"] = f'evil"{hostile}'
    data["binding"]["version"] = hostile
    data["reasons"]["EXH-1"] = hostile
    data["scenarios"][3]["message"] = f"{hostile}\n' onmouseover='x"
    data["scenarios"][1]["observed"] = hostile
    data["requirements"][hostile] = "failed"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert all(".." not in name for name in pages)
    for name, text in pages.items():
        if name.endswith(".json"):
            continue
        assert "<script>alert" not in text, name
        assert "onmouseover='x" not in text.replace("onmouseover=&#x27;x", ""), name
    assert pages["index.html"].count("<script>") == 1  # only the filters' own
    svg = next(text for name, text in pages.items() if name.endswith(".svg"))
    ET.fromstring(svg)


def test_a_missing_out_folder_is_created(reports: list[Path], tmp_path: Path, features: Path) -> None:
    out = tmp_path / "a" / "new" / "folder"
    _build(reports, out, features)
    assert (out / "index.html").is_file()


def test_the_cli_writes_the_site(reports: list[Path], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(["site", *map(str, reports), "--out", str(out), "--history", str(reports[0])]) == 0
    assert "open" in capsys.readouterr().out
    assert (out / "index.html").is_file() and (out / "lib" / "oldlib.html").is_file()
    assert (out / "history.html").is_file() and (out / "glossary.html").is_file()


def test_the_committed_site_is_built_from_the_committed_reports(tmp_path: Path) -> None:
    fresh = tmp_path / "site"
    build_site([read_report(REPORTS / f"{name}.json") for name in PEERS], fresh,
               history=load_history([HISTORY]))
    def files(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): p.read_text(encoding="utf-8")
                for p in sorted(root.rglob("*")) if p.is_file()}
    assert files(fresh) == files(SITE), (
        "docs/site/ is stale: run `nox -s site` (or `nox -s peers`) and commit docs/site/")


def test_a_library_that_does_not_conform_counts_its_must_failures_by_cause(tmp_path: Path,
                                                                         features: Path) -> None:
    pages = _build(_all(tmp_path), tmp_path / "site", features)
    row = pages["index.html"].split('data-lib="newlib"', 1)[1].split("</tr>", 1)[0]
    # ERR-1 (known) and EXH-1 (failed) fail on their own; ERR-4 is blocked by ERR-1, never a failure.
    assert "2 MUST failures, 2 causes; 1 requirement blocked by them" in row
    assert re.findall(r'#r-[^"]*">([A-Z]+-\d+)</a>', row) == ["ERR-1", "EXH-1"]
    page = pages["lib/newlib.html"]
    causes = page.split('id="causes-h"', 1)[1].split("</ul>", 1)[0]
    assert re.findall(r'<li><a href="#r-[^"]*">([A-Z]+-\d+)</a>', causes) == ["ERR-1", "EXH-1"]
    assert "newlib returns the answer in &lt;b&gt;bold&lt;/b&gt;" in causes
    assert "Blocks 1:</span> <a" in causes and ">ERR-4</a>" in causes
    assert page.index('id="causes-h"') < page.index('class="req"')  # failures first
    assert "A cause is a requirement that failed" in pages["glossary.html"]
    # The Markdown download counts the same causes, never a bare "Does not conform".
    md = pages["lib/newlib.md"]
    assert ("Does not conform: 2 of 4 MUST requirements passed; 2 MUST failures, 2 causes; "
            "1 requirement blocked by them (suite ") in md
    listed = md.split("## Causes", 1)[1].split("## Every requirement", 1)[0]
    assert re.findall(r"^- \*\*([A-Z]+-\d+)\*\*", listed, re.M) == ["ERR-1", "EXH-1"]
    assert "Blocks 1: ERR-4." in listed and "newlib returns the answer in &lt;b>bold&lt;/b>" in listed


def test_a_known_failure_s_reproduce_command_shows_the_failure_it_observed(tmp_path: Path,
                                                                           features: Path) -> None:
    page = _build(_all(tmp_path), tmp_path / "site", features)["lib/newlib.html"]
    commands = {rid: found[0] for rid, section in re.findall(r'id="r-([A-Z]+-\d+)"(.*?)(?=id="r-|$)',
                                                              page, re.S)
                if (found := re.findall(r"Reproduce: <code>([^<]*)</code>", section))}
    assert commands["ERR-1"].endswith(" --runxfail"), commands  # known failure: xfail would hide it
    assert "--runxfail" not in commands["EXH-1"], commands  # a plain failure shows itself


def test_the_committed_site_offers_java_and_says_how_to_run_its_harness() -> None:
    index = (SITE / "index.html").read_text(encoding="utf-8")
    select = index.split('name="lang"', 1)[1].split("</select>", 1)[0]
    languages = re.findall(r'<option value="(\w+)">', select)
    assert {"Python", "TypeScript", "Java"} <= set(languages)
    page = (SITE / "lib" / "langchain4j.html").read_text(encoding="utf-8")
    assert "a JDK 17 and Maven (the harness resolves its pinned artifacts and compiles on its first run)" in (
        page)


@pytest.mark.parametrize("name", ["mastra", "agno"])
def test_the_answer_text_cause_is_shown_once_on_the_scorecard_and_the_library_page(name: str) -> None:
    index = (SITE / "index.html").read_text(encoding="utf-8")
    row = index.split(f'<tr class="lib" data-lib="{name}"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="sr">no: </span>' in row and " MUST failures, " in row
    assert row.count(">LOOP-7</a>") == 1
    page = (SITE / "lib" / f"{name}.html").read_text(encoding="utf-8")
    causes = page.split('id="causes-h"', 1)[1].split("</ul>", 1)[0]
    assert causes.count(">LOOP-7</a>") == 1
    reason = causes.split(">LOOP-7</a>", 1)[1].split("</li>", 1)[0]
    assert "every" in reason and ("step" in reason or "earlier" in reason)
    # Every cause once: no requirement is listed as a cause twice.
    listed = re.findall(r'<li><a href="#r-[^"]*">([A-Z]+-\d+)</a>', causes)
    assert len(listed) == len(set(listed)) and "LOOP-7" in listed


def test_a_library_and_its_opt_in_variants_link_to_each_other() -> None:
    for base, variant in (("mastra", "mastra+retries"), ("langchain", "langchain+tool-errors")):
        base_page = (SITE / "lib" / f"{base}.html").read_text(encoding="utf-8")
        variant_page = (SITE / "lib" / f"{_slug(variant)}.html").read_text(
            encoding="utf-8")
        assert f'<a href="{_slug(variant)}.html"><strong>{variant}</strong></a>' in base_page
        assert f'An opt-in variant of <a href="{base}.html"><strong>{base}</strong></a>' in variant_page


def _slug(name: str) -> str:
    from conformance._site._output import slug
    return slug(name, "library")


def _luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(ink: str, paper: str) -> float:
    high, low = sorted((_luminance(ink), _luminance(paper)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_verdict_colour_the_muted_text_and_the_badge_meet_wcag_aa_contrast() -> None:
    from conformance._site._badges import COLOURS
    from conformance._site._html import CSS

    pairs = re.findall(r"\.v-[a-z-]+(?:, \.v-)? \{ background: (#[0-9a-f]{6}); color: (#[0-9a-f]{6});", CSS)
    assert len(pairs) == 6, pairs  # passed, failed, known failure, errored, blocked, not claimed
    muted = re.search(r"--muted: (#[0-9a-f]{6})", CSS)
    link = re.search(r"--link: (#[0-9a-f]{6})", CSS)
    assert muted and link
    pairs += [(bg, muted.group(1)) for bg in ("#ffffff", "#f6f8fa", "#dafbe1", "#fff8c5", "#ffcecb")]
    pairs += [(bg, link.group(1)) for bg in ("#ffffff", "#f6f8fa", "#dafbe1", "#fff8c5", "#ffcecb")]
    pairs += [(fill, "#ffffff") for _, _, fill in COLOURS] + [("#555555", "#ffffff")]  # the badge
    for paper, ink in pairs:
        assert _contrast(ink, paper) >= 4.5, (ink, paper)


# ---------------------------------------------------------------------------------------------
# In a real browser

CHROMIUM = Path(os.environ.get("CONFORMANCE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: axe-core, installed from tests/suite/a11y/package-lock.json by .ci/run (`npm ci`).
AXE = Path(__file__).parent / "a11y" / "node_modules" / "axe-core" / "axe.min.js"


def _browser_or_skip() -> Any:
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (as .ci/run does), "
                    "or set CONFORMANCE_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not importable: pip install -e '.[dev]'")
    if not AXE.is_file():
        pytest.skip(f"no axe-core at {AXE}: `npm ci --prefix tests/suite/a11y` (as .ci/run does)")
    return sync_playwright


def _serious_violations(page: Any) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in result["violations"]
            if v["impact"] in ("serious", "critical")]


def test_the_site_in_a_real_browser(tmp_path: Path) -> None:
    sync_playwright = _browser_or_skip()
    out = tmp_path / "site"
    reports = [load_report(REPORTS / f"{name}.json") for name in PEERS]
    build_site(reports, out, history=load_history([HISTORY]))
    artifacts = Path(os.environ.get("CONFORMANCE_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: errors.append(f"request: {r.url}")
                    if not r.url.startswith("file://") else None)
            index = (out / "index.html").as_uri()
            page.goto(index)

            # The first screen: the scorecard's filters and its top twenty libraries (with 45 and
            # more, the whole card no longer fits one screen), every library below them, sorted by
            # MUST passed, the reference apart as the baseline.
            card = page.locator("#scorecard").bounding_box()
            top = page.locator("#scorecard tbody:not(.base) tr[data-lib]").nth(19).bounding_box()
            assert card is not None and top is not None
            assert top["y"] + top["height"] <= 1000 and card["x"] + card["width"] <= 1400
            assert page.evaluate("document.documentElement.scrollWidth") <= 1400
            ranked = page.locator("#scorecard tbody:not(.base) tr[data-lib]").evaluate_all(
                "rows => rows.map(r => r.getAttribute('data-lib'))")
            assert sorted(ranked) == sorted(n for n in PEERS if n != "reference")
            assert page.locator("#scorecard tbody.base tr[data-lib]").get_attribute("data-lib") == "reference"
            musts = page.locator("#scorecard tbody:not(.base) tr.lib td[data-label=MUST]").all_inner_texts()
            passed = [int(m.split("/")[0]) for m in musts]
            assert passed == sorted(passed, reverse=True)  # a count: claiming less never ranks higher
            page.screenshot(path=str(artifacts / "site-scorecard.png"))

            # The matrix: after scrolling its box both ways (on a screen too narrow for all its
            # columns), both headers are still in view.
            page.set_viewport_size({"width": 720, "height": 900})
            wrap = page.locator(".matrix-wrap")
            wrap.scroll_into_view_if_needed()
            page.evaluate("document.querySelector('.matrix-wrap').scrollBy(400, 900)")
            scrolled = page.evaluate("[document.querySelector('.matrix-wrap').scrollLeft,"
                                     " document.querySelector('.matrix-wrap').scrollTop]")
            assert scrolled[0] > 100 and scrolled[1] > 300, scrolled
            box = wrap.bounding_box()
            head = page.locator("#matrix thead th[data-lib]").nth(len(PEERS) - 1).bounding_box()
            row = page.locator("#matrix tbody tr.req:visible th").nth(20).bounding_box()
            assert box and head and row
            assert abs(head["y"] - box["y"]) <= 2, (head, box)
            assert abs(row["x"] - box["x"]) <= 2, (row, box)
            page.set_viewport_size({"width": 1400, "height": 1000})
            page.evaluate("document.querySelector('.matrix-wrap').scrollTo(0, 0)")
            page.locator(".matrix-wrap").screenshot(path=str(artifacts / "site-matrix.png"))

            # A cell's details, by keyboard alone: Tab to the first matrix cell, Enter.
            page.goto(index)
            # At most one press per focusable element of the page: the count grows with every peer.
            stops = page.locator("a[href], button, summary, input, select, [tabindex]").count()
            for _ in range(stops + 1):
                page.keyboard.press("Tab")
                if page.evaluate("!!document.activeElement.closest('#matrix td')"):
                    break
            else:
                pytest.fail("Tab never reached a matrix cell")
            assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
            target = page.evaluate("document.activeElement.getAttribute('href')")
            page.keyboard.press("Enter")
            page.wait_for_url(f"**/{target}")
            anchor = target.split("#")[1]
            section = page.locator(f"section#{anchor}")
            assert section.is_visible() and "Scenarios:" in section.inner_text()

            # A known failure's details: the reason, the Gherkin, the command.
            ax = reports[PEERS.index("ax")]
            known = next(rid for rid, v in ax.requirements.items() if v == "known-failure")
            page.goto(f"{(out / 'lib' / 'ax.html').as_uri()}#r-{known}")
            section = page.locator(f"section#r-{known}")
            assert section.locator(".reason").inner_text() == reason(ax, known) != ""
            section.locator("summary").first.click()
            assert "Scenario" in section.locator("details pre").first.inner_text()
            assert "pytest --impl ax -k test_" in section.inner_text()
            # The maintainer kit's Copy button copies a snippet and says so.
            page.locator("#kit-h").scroll_into_view_if_needed()
            page.locator("button[data-copy]").first.click()
            page.wait_for_function("document.getElementById('kit-status').textContent !== ''", timeout=10000)
            assert page.locator("#kit-status").inner_text() == "Copied: Markdown for the overall badge"
            assert page.evaluate("document.activeElement.value").startswith("[![ax overall: ")
            assert _serious_violations(page) == []

            # A URL restores a filter; choosing one writes it into the URL.
            page.goto(f"{index}#topic=Tool+errors&lib=langchain,pydantic-ai")
            shown = page.locator("#matrix thead th[data-lib]:visible").evaluate_all(
                "ths => ths.map(t => t.getAttribute('data-lib'))")
            assert shown == [n for n in PEERS if n in ("langchain", "pydantic-ai")] or \
                sorted(shown) == ["langchain", "pydantic-ai"]
            rows = page.locator("#matrix tbody tr.req:visible th a").all_inner_texts()
            assert rows and all(r.startswith("ERR-") for r in rows)
            assert page.eval_on_selector("select[name=topic]", "s => s.value") == "Tool errors"
            page.select_option("select[name=cap]", "tool-approval")
            assert "cap=tool-approval" in page.evaluate("location.hash")
            page.goto(f"{index}#cap=tool-approval")
            claims = {r.binding.name for r in reports if "tool-approval" in r.binding.capabilities}
            shown = page.locator("#matrix thead th[data-lib]:visible").evaluate_all(
                "ths => ths.map(t => t.getAttribute('data-lib'))")
            assert set(shown) == claims and 0 < len(shown) < len(PEERS)
            assert _serious_violations(page) == []
            # The choosing question in at most 3 clicks: a Python team needing tool-error recovery,
            # approval of risky tools and a hard cap picks its language and tool-approval; the
            # scorecard re-scores on core + tool-approval and the top row is the best such library.
            for language in ("Python", "TypeScript"):
                page.goto(index)
                page.select_option("select[name=lang]", language)  # click 1
                page.select_option("select[name=cap]", "tool-approval")  # click 2
                top = page.locator("#scorecard tbody:not(.base) tr[data-lib]:visible").first
                real = catalogue()
                best = max((must_score(r, real, "core") + must_score(r, real, "tool-approval"))
                           .passed for r in reports if meta().library(r.binding.name).language == language
                           and "tool-approval" in r.binding.capabilities and r.binding.name != "reference")
                assert top.locator("td.chosen").inner_text().split("/")[0] == str(best), language
                assert "MUST passed: core + tool-approval" in page.locator("#scorecard thead").inner_text()
                order = page.locator("#scorecard tbody:not(.base) tr[data-lib]:visible").evaluate_all(
                    "rows => rows.map(r => r.getAttribute('data-lib'))")
                if language == "Python":  # strands' approval resume does not keep the cap (HITL-5)
                    assert order.index("pydantic-ai") < order.index("strands-agents"), order
                top.locator("td.chosen a").click()  # click 3: the scenarios behind the number
                assert "cap=tool-approval" in page.evaluate("location.hash")
            # A topic hides the libraries that claim nothing in it, as a capability does.
            page.goto(f"{index}#topic=Human+in+the+loop")
            hitl = next(t.requirements for t in meta().topics if t.name == "Human in the loop")
            claims = {r.binding.name for r in reports
                      if any(r.requirements.get(rid, "not-claimed") != "not-claimed" for rid in hitl)}
            shown = page.locator("#matrix thead th[data-lib]:visible").evaluate_all(
                "ths => ths.map(t => t.getAttribute('data-lib'))")
            assert set(shown) == claims and 0 < len(shown) < len(PEERS)
            # ... unless chosen by name: then it is shown, every cell "not claimed".
            page.goto(f"{index}#topic=Human+in+the+loop&lib=autogen,langchain")
            shown = page.locator("#matrix thead th[data-lib]:visible").evaluate_all(
                "ths => ths.map(t => t.getAttribute('data-lib'))")
            assert "autogen" not in claims and sorted(shown) == ["autogen", "langchain"]
            # The language and the text search, restored from the URL as well.
            page.goto(f"{index}#lang=TypeScript&q=pause")
            shown = page.locator("#matrix thead th[data-lib]:visible").evaluate_all(
                "ths => ths.map(t => t.getAttribute('data-lang'))")
            assert shown and set(shown) == {"TypeScript"}
            # "passed by k of n" counts the TypeScript libraries shown, not all of them.
            counts = page.locator("#matrix tbody tr.req:visible .counted").all_inner_texts()
            judged = [re.fullmatch(r"passed by (\d+) of (\d+) shown|claimed by no library shown", c)
                      for c in counts]
            assert counts and all(judged), counts
            assert all(int(m[2]) <= len(shown) for m in judged if m and m[2])
            texts = page.locator("#matrix tbody tr.req:visible").evaluate_all(
                "rows => rows.map(r => r.getAttribute('data-text'))")
            assert texts and all("pause" in text for text in texts)
            assert len(texts) < len(catalogue())
            assert page.eval_on_selector("input[name=q]", "i => i.value") == "pause"

            # History: at least three libraries across at least three of their versions each.
            history = browser.new_page()
            history.goto((out / "history.html").as_uri())
            counts = [int(m.group(1)) for h in history.locator("h2").all_inner_texts()
                      if (m := re.search(r"\((\d+) library versions?,", h))]
            assert sum(n >= 3 for n in counts) >= 3, counts
            assert _serious_violations(history) == []
            for name in ("glossary.html", "req/ERR-1.html"):
                history.goto((out / name).as_uri())
                assert _serious_violations(history) == [], name

            # On a phone: cards, and no page scrolls sideways.
            phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
            phone.on("pageerror", lambda e: errors.append(str(e)))
            for name in ("index.html", "lib/langchain.html", "req/ERR-1.html", "history.html",
                         "glossary.html"):
                phone.goto((out / name).as_uri())
                assert phone.evaluate("document.documentElement.scrollWidth") <= 390, name
            phone.goto(index)
            display = "getComputedStyle(document.querySelector('#scorecard tbody tr')).display"
            assert phone.evaluate(display) == "block"
            phone.screenshot(path=str(artifacts / "site-phone.png"))
            assert _serious_violations(phone) == []
            # A shared filtered link on a phone: the filter is shown, and one tap resets it.
            phone.goto(f"{index}#lang=TypeScript")
            assert phone.locator("#filters").is_visible()
            assert phone.eval_on_selector("select[name=lang]", "s => s.value") == "TypeScript"
            narrowed = phone.locator("#scorecard tr[data-lib]:visible").count()
            assert 0 < narrowed < len(PEERS)
            assert "Showing" in phone.locator("#filter-status").inner_text()
            assert not phone.locator("text=Each cell links to what happened").is_visible()
            phone.locator("#filters button[type=reset]").click()
            phone.wait_for_function(f"document.querySelectorAll('#scorecard tr[data-lib]:not([hidden])')"
                                    f".length === {len(PEERS)}")
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390

            # A report of one's own, opened from disk in view.html: its verdicts, as text.
            viewer = browser.new_page(viewport={"width": 1400, "height": 1000})
            viewer.on("pageerror", lambda e: errors.append(str(e)))
            viewer.goto((out / "view.html").as_uri())
            mine = json.loads((REPORTS / "ai.json").read_text(encoding="utf-8"))
            mine["reasons"] = {**mine.get("reasons", {}), "LOOP-1": "<img src=x onerror=alert(1)>"}
            own = tmp_path / "mine.json"
            own.write_text(json.dumps(mine), encoding="utf-8")
            viewer.set_input_files("#report-file", str(own))
            viewer.wait_for_selector("#report-view table")
            rows = viewer.locator("#report-view tbody tr")
            assert rows.count() == len(mine["requirements"])
            ai = reports[PEERS.index("ai")]
            must = must_score(ai, catalogue())
            summary = viewer.locator("#report-view p").first.inner_text()
            assert f": {must.passed} of {must.total} MUST requirements passed" in summary, summary
            assert viewer.locator("#report-view img").count() == 0  # a reason is text, never HTML
            assert "<img src=x onerror=alert(1)>" in viewer.locator("#report-view").inner_text()
            assert _serious_violations(viewer) == []
            (tmp_path / "not-a-report.json").write_text('{"scenarios": []}', encoding="utf-8")
            viewer.set_input_files("#report-file", str(tmp_path / "not-a-report.json"))
            viewer.wait_for_selector("#report-view .refused")
            assert 'it has no "requirements" object' in viewer.locator("#report-view").inner_text()

            # Without JavaScript the whole matrix shows and the filters, which need it, do not.
            plain = browser.new_context(java_script_enabled=False).new_page()
            plain.goto(index)
            assert plain.locator("#matrix tbody tr.req:visible").count() == len(catalogue())
            assert not plain.locator("#filters").is_visible()
        finally:
            browser.close()
    assert errors == []
    print(f"\nbrowser test: {time.monotonic() - started:.1f}s; screenshots in {artifacts}")


def test_the_browser_test_skips_with_a_reason_without_chromium(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setattr(f"{__name__}.CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        _browser_or_skip()


# ---------------------------------------------------------------------------------------------
# `--out` never harms what the suite did not write


def _site(reports: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["site", *map(str, reports), "--out", str(out)])
    return code, capsys.readouterr().err


def test_an_out_folder_holding_foreign_files_is_refused_and_left_alone(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "docs"  # `--out docs`, `--out .`: a folder of the user's own
    for rel in ("lib/mine.py", "req/notes.txt", "badges/logo.png", "README.md"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("the user's own", encoding="utf-8")
    code, err = _site(reports, out, capsys)
    assert code == 2
    assert "refusing to write the site into" in err and "lib/mine.py" in err and "new or empty folder" in err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md", "badges/logo.png", "lib/mine.py", "req/notes.txt"]
    assert not (out / "index.html").exists()


def test_a_site_replaces_its_own_previous_site_only(reports: list[Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert _site(reports, out, capsys)[0] == 0
    assert _site(reports[:1], out, capsys)[0] == 0  # its own: replaced, the dropped library's page gone
    assert (out / "lib" / "oldlib.html").is_file() and not (out / "lib" / "newlib.html").exists()
    (out / "lib" / "added-by-hand.html").write_text("mine", encoding="utf-8")
    code, err = _site(reports, out, capsys)
    assert code == 2 and "lib/added-by-hand.html" in err
    assert (out / "lib" / "added-by-hand.html").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("out", [".", "..", "docs/..", "{tmp}/link/docs"])
def test_the_current_folder_or_one_above_it_is_refused_as_out(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, out: str) -> None:
    # `--out .` once failed midway with a traceback (the current folder cannot be renamed away),
    # leaving a `..old-*` folder behind; an empty current folder passed the foreign-files check.
    top = tmp_path / "top"
    (top / "docs").mkdir(parents=True)
    (tmp_path / "link").symlink_to(top, target_is_directory=True)  # the same folder by another path
    monkeypatch.chdir(top / "docs")
    code, err = _site(reports, Path(out.format(tmp=tmp_path)), capsys)
    assert code == 2 and "the current folder" in err and "site/" in err, err
    assert sorted(p.relative_to(top).as_posix() for p in top.rglob("*")) == ["docs"]


def test_no_symlink_is_followed_out_of_the_site(reports: list[Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert _site(reports, out, capsys)[0] == 0
    outside = tmp_path / "precious.html"
    outside.write_text("precious", encoding="utf-8")
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(outside)
    code, err = _site(reports, out, capsys)
    assert code == 2 and "symbolic link" in err
    assert outside.read_text(encoding="utf-8") == "precious"
    linked = tmp_path / "linked-site"
    linked.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    code, err = _site(reports, linked, capsys)
    assert code == 2 and "symbolic link" in err and not (tmp_path / "elsewhere").exists()


def test_a_build_that_fails_midway_leaves_the_old_site_whole(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    assert _site(reports, out, capsys)[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = Path.write_text
    def failing(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        if self.name == "newlib.html":
            raise OSError(36, "File name too long")
        return real(self, text, *args, **kwargs)
    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(OSError):
        main(["site", *map(str, reports), "--out", str(out)])
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site")) == []


def test_a_300_character_name_gets_a_short_file_name(tmp_path: Path, features: Path) -> None:
    data = json.loads(json.dumps(V2))
    data["binding"]["name"] = "x" * 300
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert max(len(Path(name).name) for name in pages) <= 100


def test_two_ids_that_would_share_a_page_are_an_error_not_an_overwrite(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(json.dumps(V2))
    data["requirements"]["LOOP-1."] = "failed"  # would be written as req/LOOP-1.html too
    data["scenarios"].append(_scenario("LOOP-1.", "It clashes", "failed", "a dot"))
    path = tmp_path / "clash.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, err = _site([path], tmp_path / "site", capsys)
    assert code == 2 and "'LOOP-1' and 'LOOP-1.'" in err and "would share the page" in err
    assert not (tmp_path / "site").exists()
    twins = [path, tmp_path / "twin.json"]
    data["requirements"].pop("LOOP-1.")
    data["scenarios"].pop()
    data["binding"]["name"] = "new lib"
    twins[0].write_text(json.dumps(data), encoding="utf-8")
    data["binding"]["name"] = "new-lib"
    twins[1].write_text(json.dumps(data), encoding="utf-8")
    code, err = _site(twins, tmp_path / "site", capsys)
    assert code == 2 and "'new lib' and 'new-lib'" in err


def test_every_text_is_capped_in_the_pages(tmp_path: Path, features: Path) -> None:
    data = json.loads(json.dumps(V2))
    data["scenarios"][3]["message"] = "m" * 1_000_000
    data["reasons"]["EXH-1"] = "r" * 1_000_000
    data["binding"]["not_claimed"]["ask-user"] = "n" * 1_000_000
    data["binding"]["version"] = "v" * 1_000_000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert max(len(text) for text in pages.values()) < 200_000
    assert "more chars)" in pages["lib/newlib.html"]


def test_a_lone_surrogate_in_a_report_never_stops_the_site(tmp_path: Path, features: Path) -> None:
    data = json.loads(json.dumps(V2))
    data["scenarios"][3]["message"] = "cut inside an emoji: \ud83d"
    data["binding"]["version"] = "2.0\udc00"
    data["reasons"]["EXH-1"] = "\ud800 and a control \x1b[31mred"
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # json escapes them: valid UTF-8 on disk
    pages = _build([path], tmp_path / "site", features)
    assert "cut inside an emoji: \ufffd" in pages["lib/newlib.html"]
    assert "\x1b" not in pages["lib/newlib.html"]


def test_a_report_run_outside_ci_says_so_in_its_scorecard_row(tmp_path: Path,
                                                                          features: Path) -> None:
    outside = "run outside CI: the library's registry is not reachable here"
    path = tmp_path / "newlib.json"
    binding = {**V2["binding"], "run_outside_ci": outside}
    path.write_text(json.dumps({**V2, "binding": binding}), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    marked = outside.replace("'", "&#x27;")
    row = pages["index.html"].split('data-lib="newlib"', 1)[1].split("</tr>", 1)[0]
    assert f'2.0; <abbr title="{marked}">outside CI</abbr></span>' in row
    # A report that does not say so shows none of it.
    path.write_text(json.dumps(V2), encoding="utf-8")
    assert "outside CI" not in "".join(_build([path], tmp_path / "plain", features).values())
