"""The compatibility site: static HTML pages and badges built from JSON reports (format 1 or 2)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance._features import Requirement, catalogue, features_dir
from conformance._report import capped
from conformance._site._output import slug as file_slug
from conformance._site._output import unique_slugs, write_site

SiteVerdict = Literal["passed", "failed", "errored", "not-claimed", "known-failure", "blocked"]

# The site reads reports of either format and ignores fields it does not know, so a report written
# by a newer suite still renders: these models are the site's own, not the writer's.


class SiteBinding(BaseModel):
    """The implementation a report is about; `not_claimed` and `contract_version` are format 2."""

    model_config = ConfigDict(extra="ignore")
    name: str
    version: str
    capabilities: list[str] = Field(default_factory=list)
    not_claimed: dict[str, str] = Field(default_factory=dict)
    contract_version: int | None = None
    dependencies: dict[str, str] = Field(default_factory=dict)


class SiteScenario(BaseModel):
    """One scenario's verdict; `blocked_by` is format 2."""

    model_config = ConfigDict(extra="ignore")
    id: str
    feature: str
    name: str
    requirement: str
    verdict: SiteVerdict
    message: str = ""
    blocked_by: str | None = None


class SiteReport(BaseModel):
    """A JSON report as the site reads it; `generated` and `reasons` are format 2."""

    model_config = ConfigDict(extra="ignore")
    format_version: Literal[1, 2] = 1
    binding: SiteBinding
    suite_version: str
    generated: str | None = None
    requirements: dict[str, SiteVerdict]
    reasons: dict[str, str] = Field(default_factory=dict)
    scenarios: list[SiteScenario] = Field(default_factory=list)


def capped_report(report: SiteReport) -> SiteReport:
    """The report with every text a binding wrote cut to the reports' own limit: a page is never
    bigger than the report that made it."""
    b = report.binding
    return report.model_copy(update={
        "binding": b.model_copy(update={
            "name": capped(b.name, 200), "version": capped(b.version, 200),
            "capabilities": [capped(c, 200) for c in b.capabilities],
            "not_claimed": {capped(k, 200): capped(v) for k, v in b.not_claimed.items()}}),
        "suite_version": capped(report.suite_version, 200),
        "requirements": {capped(k, 200): v for k, v in report.requirements.items()},
        "reasons": {capped(k, 200): capped(v) for k, v in report.reasons.items()},
        "scenarios": [s.model_copy(update={
            "id": capped(s.id, 500), "feature": capped(s.feature, 200), "name": capped(s.name, 500),
            "requirement": capped(s.requirement, 200), "message": capped(s.message),
            "blocked_by": capped(s.blocked_by, 200) if s.blocked_by else s.blocked_by})
            for s in report.scenarios]})


def load_report(path: Path) -> SiteReport:
    """Read one JSON report of format 1 or 2."""
    return SiteReport.model_validate_json(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# What the pages say about a verdict

#: verdict -> (icon, label); the icon is decoration, the label is what a screen reader says.
_VERDICTS: dict[str, tuple[str, str]] = {
    "passed": ("✓", "passed"),
    "failed": ("✗", "failed"),
    "known-failure": ("⚠", "known failure"),
    "errored": ("!", "errored"),
    "blocked": ("⊘", "blocked"),
    "not-claimed": ("–", "not claimed"),
    "": ("?", "not run"),
}
#: The verdicts that count as failures (a known failure is a failure with a reason).
_FAILURES = ("failed", "known-failure")
_NOT_PASSED = ("failed", "known-failure", "errored", "blocked")


def _profiles(profile: str) -> list[str]:
    """`core`, one capability, or alternatives joined by `|`."""
    return [p.strip() for p in profile.split("|") if p.strip()]


def reason(report: SiteReport, rid: str) -> str:
    """Why a requirement got its verdict, in one line ("" when it passed or nothing says)."""
    verdict = report.requirements.get(rid, "")
    if verdict in ("passed", ""):
        return ""
    if report.reasons.get(rid):
        return _first_line(report.reasons[rid])
    if verdict == "blocked":
        blockers = [s.blocked_by for s in report.scenarios if s.requirement == rid and s.blocked_by]
        if blockers:
            return f"blocked by {blockers[0]}"
    for s in report.scenarios:
        if s.requirement == rid and s.verdict == verdict and s.message.strip():
            return _first_line(s.message)
    return ""


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else ""


# ---------------------------------------------------------------------------------------------
# Badges


def core_score(report: SiteReport, requirements: dict[str, Requirement]) -> tuple[int, int]:
    """(passed, total) over the catalogue's core requirements."""
    core = [rid for rid, req in requirements.items() if req.profile == "core"]
    return sum(report.requirements.get(rid) == "passed" for rid in core), len(core)


#: (at least this share passed, shields colour name, the SVG's fill): the fills are darker than
#: shields' own so the white text reads at 4.5:1.
_COLOURS = (
    (1.0, "brightgreen", "#1a7f37"), (0.8, "green", "#4b7a0c"), (0.6, "yellow", "#8a6100"),
    (0.4, "orange", "#bc4c00"), (0.0, "red", "#cf222e"))


def _colour(passed: int, total: int) -> tuple[str, str]:
    share = passed / total if total else 0.0
    return next((name, hexa) for floor, name, hexa in _COLOURS if share >= floor)


def badge_json(report: SiteReport, requirements: dict[str, Requirement]) -> dict[str, object]:
    """A shields.io endpoint badge: passed / total core requirements."""
    passed, total = core_score(report, requirements)
    return {"schemaVersion": 1, "label": "conformance",
            "message": f"{passed}/{total} core", "color": _colour(passed, total)[0]}


def _text_width(text: str) -> int:
    return 10 + round(6.5 * len(text))  # Verdana 11px averages ~6.5px a character


def badge_svg(report: SiteReport, requirements: dict[str, Requirement]) -> str:
    """The same badge as a standalone SVG image, with a <title> for screen readers."""
    data = badge_json(report, requirements)
    label, message = str(data["label"]), str(data["message"])
    left, right = _text_width(label), _text_width(message)
    fill = _colour(*core_score(report, requirements))[1]
    e = html.escape
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + right}" height="20" role="img" '
        f'aria-label="{e(label)}: {e(message)}">'
        f"<title>{e(label)}: {e(message)}</title>"
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{fill}"/>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" '
        'font-size="11">'
        f'<text x="{left / 2}" y="14">{e(label)}</text>'
        f'<text x="{left + right / 2}" y="14">{e(message)}</text>'
        "</g></svg>\n"
    )


# ---------------------------------------------------------------------------------------------
# Gherkin text of the scenarios


@dataclass(frozen=True)
class _Scenario:
    feature: str
    name: str
    requirement: str
    text: str


def _gherkin(folder: Path) -> dict[tuple[str, str], _Scenario]:
    """Every scenario of the feature files by (file name, scenario name), with its feature's
    Background and its tags."""
    found: dict[tuple[str, str], _Scenario] = {}
    for path in sorted(folder.glob("*.feature")):
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks: list[tuple[int, int]] = []  # [start, end) of each Background / tagged Scenario
        start: int | None = None
        for i, line in enumerate(lines):
            stripped = line.strip()
            opens = stripped.startswith(("@", "Scenario", "Background:", "Rule:"))
            continues = i > 0 and lines[i - 1].strip().startswith("@")  # tags, then their scenario
            if opens and start is not None and not continues:
                blocks.append((start, i))
                start = None
            if opens and start is None:
                start = i
        if start is not None:
            blocks.append((start, len(lines)))
        feature = path.name
        background = ""
        for first, last in blocks:
            block = "\n".join(_dedent(lines[first:last])).strip()
            head = next((ln.strip() for ln in lines[first:last] if ln.strip().startswith(
                ("Scenario", "Background:"))), "")
            if head.startswith("Background:"):
                background = block
                continue
            if not head:
                continue
            name = head.split(":", 1)[1].strip()
            req = re.search(r"@req:(\S+)", block)
            text = f"{background}\n\n{block}" if background else block
            found[(feature, name)] = _Scenario(feature, name, req.group(1) if req else "", text)
    return found


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    cut = min(indents, default=0)
    return [ln[cut:] for ln in lines]


# ---------------------------------------------------------------------------------------------
# HTML


_CSS = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --link: #0550ae; --focus: #0969da; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  background: #fff; margin: 0 auto; padding: 1rem; max-width: 80rem; }
a { color: var(--link); }
a:focus-visible, select:focus-visible, button:focus-visible, summary:focus-visible,
[tabindex]:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 3; }
h1 { font-size: 1.6rem; margin: .5rem 0; }
h2 { font-size: 1.3rem; margin-top: 2rem; }
h3 { font-size: 1.1rem; }
.muted { color: var(--muted); }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); }
.scroll:focus-visible { outline: 3px solid var(--focus); }
#matrix { font-size: .9rem; }
caption { text-align: left; padding: .3rem .5rem; }
code { font-size: .9em; background: #f6f8fa; padding: 0 .2em; border-radius: 3px; }
#matrix th[scope=row] { position: sticky; left: 0; background: #fff; z-index: 1; min-width: 7rem;
  width: 28rem; }
#matrix thead th { position: sticky; top: 0; z-index: 2; white-space: nowrap; }
#matrix thead th:first-child { left: 0; z-index: 3; }
#matrix .title { display: block; font-weight: normal; color: var(--muted); font-size: .8rem; }
.v { white-space: nowrap; font-weight: 600; }
.v-passed { background: #dafbe1; color: #0f5323; }
.v-failed { background: #ffebe9; color: #a40e26; }
.v-known-failure { background: #fff1d6; color: #6f3b00; }
.v-errored { background: #fbefff; color: #6e2b9a; }
.v-blocked { background: #eaeef2; color: #32383f; }
.v-not-claimed, .v- { background: #ffffff; color: #57606a; font-weight: normal; }
.r { display: block; font-weight: normal; font-size: .8rem; white-space: normal; max-width: 18rem; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: end; margin: 1rem 0; }
form.filters label { display: flex; flex-direction: column; font-weight: 600; font-size: .9rem; }
select, button { font: inherit; padding: .3rem; min-height: 2.2rem; }
.legend { display: flex; flex-wrap: wrap; gap: .5rem; padding: 0; list-style: none; }
.legend li { padding: .1rem .5rem; border: 1px solid var(--line); }
pre { background: #f6f8fa; padding: .75rem; overflow-x: auto; white-space: pre; font-size: .85rem; }
pre.message { white-space: pre-wrap; word-break: break-word; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
[hidden] { display: none !important; }
@media (max-width: 40rem) {
  body { padding: .5rem; font-size: 15px; }
  #matrix .title { display: none; }
  h1 { font-size: 1.3rem; }
}
"""

_JS = """
(function () {
  var form = document.getElementById('filters');
  var table = document.getElementById('matrix');
  if (!form || !table) { return; }
  form.hidden = false;
  var status = document.getElementById('filter-status');
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var matches = { failed: ['failed', 'known-failure'] };
  function apply() {
    var profile = form.profile.value, verdict = form.verdict.value, lib = form.library.value;
    Array.prototype.forEach.call(table.querySelectorAll('[data-lib]'), function (cell) {
      cell.hidden = lib !== '' && cell.getAttribute('data-lib') !== lib;
    });
    var wanted = matches[verdict] || [verdict];
    var shown = 0;
    rows.forEach(function (row) {
      var ok = profile === '' || row.getAttribute('data-profiles').split(' ').indexOf(profile) >= 0;
      if (ok && verdict !== '') {
        ok = Array.prototype.some.call(row.querySelectorAll('td[data-lib]'), function (cell) {
          return !cell.hidden && wanted.indexOf(cell.getAttribute('data-verdict')) >= 0;
        });
      }
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    status.textContent = 'Showing ' + shown + ' of ' + rows.length + ' requirements' +
      (lib ? ' for one library.' : '.');
  }
  form.addEventListener('change', apply);
  form.addEventListener('reset', function () { setTimeout(apply, 0); });
  apply();
})();
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _inline(text: str) -> str:
    """Escaped text whose `backticked` spans (as in the catalogue's titles) become <code>."""
    parts = _e(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: leave the text as it is
        return _e(text)
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def _page(title: str, body: str, *, script: str = "", up: str = "") -> str:
    nav = (f'<nav aria-label="Site"><a href="{up}index.html">← All libraries and requirements</a></nav>'
           if up else "")
    js = f"<script>{script}</script>" if script else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        '<a class="skip" href="#main">Skip to content</a>\n'
        f'{nav}<main id="main">\n{body}\n</main>\n'
        '<footer><p class="muted">Generated by <code>python -m conformance site</code> from the '
        "suite's JSON reports.</p></footer>\n"
        f"{js}\n</body>\n</html>\n"
    )


def _verdict_html(verdict: str, why: str = "", *, short: bool = False) -> str:
    icon, label = _VERDICTS.get(verdict, _VERDICTS[""])
    detail = f'<span class="r">{_e(why)}</span>' if why and not short else ""
    return f'<span aria-hidden="true">{icon}</span> {_e(label)}{detail}'


def _cell(verdict: str, why: str, aria: str, lib: str | None = None) -> str:
    data = f' data-lib="{_e(lib)}"' if lib is not None else ""
    return (f'<td class="v v-{_e(verdict)}" data-verdict="{_e(verdict)}"{data} '
            f'aria-label="{_e(aria)}" title="{_e(why)}">{_verdict_html(verdict, why, short=True)}</td>')


def _aria(lib: str, rid: str, verdict: str, why: str) -> str:
    label = _VERDICTS.get(verdict, _VERDICTS[""])[1]
    return f"{lib}, {rid}: {label}" + (f": {why}" if why else "")


def _tally(report: SiteReport) -> dict[str, int]:
    tally = {v: 0 for v in ("passed", "failed", "known-failure", "errored", "blocked", "not-claimed")}
    for verdict in report.requirements.values():
        tally[verdict] += 1
    return tally


def _tally_text(report: SiteReport) -> str:
    t = _tally(report)
    return (f"{t['passed']} passed, {t['failed'] + t['known-failure']} failed "
            f"({t['known-failure']} known), {t['errored']} errored, {t['blocked']} blocked, "
            f"{t['not-claimed']} not claimed")


def _slugs(reports: list[SiteReport]) -> list[str]:
    return unique_slugs([r.binding.name for r in reports], "library", "library")


def _req_slug(rid: str) -> str:
    return file_slug(rid, "requirement")


def _all_ids(reports: list[SiteReport], requirements: dict[str, Requirement]) -> list[str]:
    extra = sorted({rid for r in reports for rid in r.requirements} - set(requirements))
    return [*requirements, *extra]


def _date(report: SiteReport) -> str:
    return report.generated or "unknown"


def _index(reports: list[SiteReport], slugs: list[str], requirements: dict[str, Requirement]) -> str:
    ids = _all_ids(reports, requirements)
    names = [r.binding.name for r in reports]
    caps = sorted({p for req in requirements.values() for p in _profiles(req.profile)} - {"core"})
    summary = []
    for r, slug in zip(reports, slugs, strict=True):
        b = r.binding
        passed, total = core_score(r, requirements)
        summary.append(
            f'<tr><th scope="row"><a href="lib/{_e(slug)}.html">{_e(b.name)}</a></th>'
            f"<td>{_e(b.version)}</td><td>{_e(r.suite_version)}</td><td>{_e(_date(r))}</td>"
            f"<td>{_e(', '.join(b.capabilities) or 'none')}</td>"
            f'<td><img src="badges/{_e(slug)}.svg" alt="{_e(b.name)}: {passed} of {total} core '
            f'requirements passed"></td><td>{_e(_tally_text(r))}</td></tr>')
    head = "".join(
        f'<th scope="col" data-lib="{_e(r.binding.name)}"><a href="lib/{_e(s)}.html">'
        f'{_e(r.binding.name)}</a><br><span class="muted">{_e(r.binding.version)}</span></th>'
        for r, s in zip(reports, slugs, strict=True))
    rows = []
    for rid in ids:
        req = requirements.get(rid)
        profile = req.profile if req else "?"
        title = req.title if req else "(not in this suite's catalogue)"
        cells = "".join(
            _cell(r.requirements.get(rid, ""), reason(r, rid),
                  _aria(r.binding.name, rid, r.requirements.get(rid, ""), reason(r, rid)),
                  r.binding.name) for r in reports)
        rows.append(
            f'<tr id="row-{_e(_req_slug(rid))}" data-profiles="{_e(" ".join(_profiles(profile)))}">'
            f'<th scope="row"><a href="req/{_e(_req_slug(rid))}.html">{_e(rid)}</a> '
            f'<span class="muted">{_e(profile)}</span><span class="title">{_inline(title)}</span></th>'
            f"{cells}</tr>")
    options = "".join(f'<option value="{_e(c)}">{_e(c)}</option>' for c in caps)
    verdict_options = "".join(
        f'<option value="{v}">{label}</option>' for v, label in (
            ("passed", "passed"), ("failed", "failed (with known failures)"),
            ("known-failure", "known failure only"), ("errored", "errored"),
            ("blocked", "blocked"), ("not-claimed", "not claimed")))
    lib_options = "".join(f'<option value="{_e(n)}">{_e(n)}</option>' for n in names)
    legend = "".join(
        f'<li class="v v-{v}">{_verdict_html(v)}</li>'
        for v in ("passed", "failed", "known-failure", "errored", "blocked", "not-claimed"))
    body = f"""<h1>Conformance of ReAct implementations</h1>
<p>{len(reports)} libraries against {len(ids)} requirements. A library passes a requirement only
if every scenario of it passed. A <strong>known failure</strong> is a failure the binding declares
with a reason: it counts as a failure. <strong>Not claimed</strong> means the library does not
claim the capability the requirement needs.</p>
<h2 id="matrix-h">Requirement × library</h2>
<ul class="legend" aria-label="Legend">{legend}</ul>
<form id="filters" class="filters" hidden aria-label="Filter the matrix">
<label>Profile or capability<select name="profile"><option value="">all</option>
<option value="core">core</option>{options}</select></label>
<label>Verdict<select name="verdict"><option value="">any</option>{verdict_options}</select></label>
<label>Library<select name="library"><option value="">all</option>{lib_options}</select></label>
<button type="reset">Show all</button>
</form>
<p id="filter-status" role="status" aria-live="polite" class="muted"></p>
<div class="scroll" role="region" aria-labelledby="matrix-h" tabindex="0">
<table id="matrix">
<caption class="muted">Rows: requirements (profile, title). Columns: libraries.</caption>
<thead><tr><th scope="col">Requirement</th>{head}</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody>
</table>
</div>
<h2 id="reports-h">Reports</h2>
<div class="scroll" role="region" aria-labelledby="reports-h" tabindex="0">
<table>
<thead><tr><th scope="col">Library</th><th scope="col">Version</th><th scope="col">Suite</th>
<th scope="col">Generated</th><th scope="col">Capabilities claimed</th><th scope="col">Core</th>
<th scope="col">Verdicts</th></tr></thead>
<tbody>{"".join(summary)}</tbody>
</table>
</div>"""
    return _page("Conformance of ReAct implementations", body, script=_JS)


def _scenario_groups(scenarios: Iterable[SiteScenario]) -> dict[tuple[str, str], list[SiteScenario]]:
    groups: dict[tuple[str, str], list[SiteScenario]] = {}
    for s in scenarios:
        groups.setdefault((s.feature, s.name), []).append(s)
    return groups


def _example(s: SiteScenario) -> str:
    return s.id[s.id.index("["):] if s.id.endswith("]") and "[" in s.id else ""


def _scenario_html(key: tuple[str, str], results: list[SiteScenario],
                   gherkin: dict[tuple[str, str], _Scenario], level: int) -> str:
    feature, name = key
    items = []
    for s in results:
        example = _example(s)
        blocked = f" (blocked by {_e(s.blocked_by)})" if s.blocked_by else ""
        message = (f'<pre class="message" aria-label="Message">{_e(s.message.strip())}</pre>'
                   if s.message.strip() else "")
        items.append(f'<li><span class="v v-{_e(s.verdict)}">{_verdict_html(s.verdict)}</span>'
                     f'{f" <code>{_e(example)}</code>" if example else ""}{blocked}{message}</li>')
    found = gherkin.get(key)
    text = (f"<details><summary>Gherkin of the scenario ({_e(feature)})</summary>"
            f"<pre>{_e(found.text)}</pre></details>") if found else (
            f'<p class="muted">No scenario of this name in {_e(feature)} in this suite.</p>')
    return (f"<h{level}>{_e(name)} <span class=\"muted\">({_e(feature)})</span></h{level}>"
            f"<ul>{''.join(items)}</ul>{text}")


def _library(report: SiteReport, slug: str, requirements: dict[str, Requirement],
             gherkin: dict[tuple[str, str], _Scenario]) -> str:
    b = report.binding
    passed, total = core_score(report, requirements)
    rows = []
    for rid, verdict in report.requirements.items():
        req = requirements.get(rid)
        why = reason(report, rid)
        rows.append(f'<tr><th scope="row"><a href="../req/{_e(_req_slug(rid))}.html">{_e(rid)}</a></th>'
                    f"<td>{_e(req.profile if req else '?')}</td>"
                    f"{_cell(verdict, why, _aria(b.name, rid, verdict, why))}"
                    f"<td>{_e(why)}</td><td>{_inline(req.title if req else '')}</td></tr>")
    failures = []
    for rid, verdict in report.requirements.items():
        if verdict not in _NOT_PASSED:
            continue
        req = requirements.get(rid)
        mine = [s for s in report.scenarios if s.requirement == rid and s.verdict != "passed"]
        groups = "".join(_scenario_html(k, v, gherkin, 4) for k, v in _scenario_groups(mine).items())
        failures.append(
            f'<section aria-labelledby="f-{_e(_req_slug(rid))}"><h3 id="f-{_e(_req_slug(rid))}">'
            f'<a href="../req/{_e(_req_slug(rid))}.html">{_e(rid)}</a>: '
            f'<span class="v v-{_e(verdict)}">{_verdict_html(verdict)}</span></h3>'
            f"<p>{_inline(req.title if req else '')}</p>"
            f'<p><strong>Reason:</strong> <span class="reason">{_e(reason(report, rid) or "none given")}'
            f"</span></p>{groups}</section>")
    not_claimed = "".join(f"<li><code>{_e(c)}</code>: {_e(why)}</li>" for c, why in b.not_claimed.items())
    contract = f"<dt>Contract version</dt><dd>{_e(b.contract_version)}</dd>" if b.contract_version else ""
    deps = ", ".join(f"{name} {version}" for name, version in b.dependencies.items())
    contract += f"<dt>Dependencies</dt><dd>{_e(deps)}</dd>" if deps else ""
    body = f"""<h1>{_e(b.name)} {_e(b.version)}</h1>
<p><img src="../badges/{_e(slug)}.svg" alt="{_e(b.name)}: {passed} of {total} core
requirements passed"> {_e(_tally_text(report))}.</p>
<dl class="facts"><dt>Library version</dt><dd>{_e(b.version)}</dd>
<dt>Suite version</dt><dd>{_e(report.suite_version)}</dd>
<dt>Report generated</dt><dd>{_e(_date(report))}</dd><dt>Report format</dt><dd>{report.format_version}</dd>
{contract}<dt>Capabilities claimed</dt><dd>{_e(", ".join(b.capabilities) or "none")}</dd></dl>
{f"<h2>Capabilities not claimed</h2><ul>{not_claimed}</ul>" if not_claimed else ""}
<h2>Requirements that did not pass</h2>
{"".join(failures) or "<p>None: every claimed requirement passed.</p>"}
<h2 id="all-h">Every requirement</h2>
<div class="scroll" role="region" aria-labelledby="all-h" tabindex="0">
<table><thead><tr><th scope="col">Requirement</th><th scope="col">Profile</th><th scope="col">Verdict</th>
<th scope="col">Reason</th><th scope="col">What it asks</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>"""
    return _page(f"{b.name} {b.version}: conformance", body, up="../")


def _requirement(rid: str, reports: list[SiteReport], slugs: list[str],
                 requirements: dict[str, Requirement], gherkin: dict[tuple[str, str], _Scenario]) -> str:
    req = requirements.get(rid)
    rows, details = [], []
    for r, slug in zip(reports, slugs, strict=True):
        verdict = r.requirements.get(rid, "")
        why = reason(r, rid)
        cell = _cell(verdict, why, _aria(r.binding.name, rid, verdict, why))
        rows.append(f'<tr><th scope="row"><a href="../lib/{_e(slug)}.html">{_e(r.binding.name)}</a></th>'
                    f"<td>{_e(r.binding.version)}</td>{cell}"
                    f"<td>{_e(why)}</td></tr>")
        mine = [s for s in r.scenarios if s.requirement == rid and s.verdict in _NOT_PASSED]
        groups = []
        for (feature, name), results in _scenario_groups(mine).items():
            items = "".join(
                f'<li><span class="v v-{_e(s.verdict)}">{_verdict_html(s.verdict)}</span>'
                f'{f" <code>{_e(_example(s))}</code>" if _example(s) else ""}'
                f'{f" (blocked by {_e(s.blocked_by)})" if s.blocked_by else ""}'
                f'{f"<pre class=message>{_e(s.message.strip())}</pre>" if s.message.strip() else ""}</li>'
                for s in results)
            groups.append(f'<h4>{_e(name)} <span class="muted">({_e(feature)})</span></h4><ul>{items}</ul>')
        if groups:
            details.append(f'<h3><a href="../lib/{_e(slug)}.html">{_e(r.binding.name)}</a></h3>'
                           + "".join(groups))
    scenarios = [s for s in gherkin.values() if s.requirement == rid]
    texts = "".join(f"<h3>{_e(s.name)} <span class=\"muted\">({_e(s.feature)})</span></h3>"
                    f"<pre>{_e(s.text)}</pre>" for s in scenarios)
    body = f"""<h1>{_e(rid)}</h1>
<p>{_inline(req.title if req else "Not in this suite's catalogue.")}</p>
<p>Profile: <code>{_e(req.profile if req else "?")}</code></p>
<h2 id="libs-h">Across libraries</h2>
<div class="scroll" role="region" aria-labelledby="libs-h" tabindex="0">
<table><thead><tr><th scope="col">Library</th><th scope="col">Version</th><th scope="col">Verdict</th>
<th scope="col">Reason</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>
{f"<h2>Scenarios that did not pass</h2>{''.join(details)}" if details else ""}
<h2>The scenarios (Gherkin)</h2>
{texts or "<p>No scenario in this suite's feature files.</p>"}"""
    return _page(f"{rid}: conformance across libraries", body, up="../")


def build_site(reports: list[SiteReport], out: Path, *, requirements: dict[str, Requirement] | None = None,
               features: Path | None = None) -> list[Path]:
    """Write the site (index.html, lib/, req/, badges/) into `out`; returns the files written."""
    requirements = catalogue() if requirements is None else requirements
    gherkin = _gherkin(features_dir() if features is None else features)
    reports = [capped_report(r) for r in reports]
    slugs = _slugs(reports)
    ids = _all_ids(reports, requirements)
    unique_slugs(ids, "requirement", "requirement")
    pages: dict[str, str] = {"index.html": _index(reports, slugs, requirements)}
    for report, lib in zip(reports, slugs, strict=True):
        pages[f"lib/{lib}.html"] = _library(report, lib, requirements, gherkin)
        pages[f"badges/{lib}.json"] = json.dumps(badge_json(report, requirements), indent=2) + "\n"
        pages[f"badges/{lib}.svg"] = badge_svg(report, requirements)
    for rid in ids:
        pages[f"req/{_req_slug(rid)}.html"] = _requirement(rid, reports, slugs, requirements, gherkin)
    return write_site(out, pages)
