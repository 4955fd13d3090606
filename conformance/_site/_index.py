"""The first page: what changed since the last run, the scorecard (libraries × topics, MUST
requirements passed), the matrix (requirements × libraries, every cell a link to its details),
the filters, and a line per library."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from conformance._site._badges import must_score, profiles
from conformance._site._causes import causes, must_causes, must_failures
from conformance._site._context import Site
from conformance._site._history import changes, previous
from conformance._site._html import JS, ORDER, VERDICTS, e, inline, level_tag, page, plain_title, verdict_mark
from conformance._site._model import SiteReport
from conformance._site._score import FAILURES, Tally, applies, conforms, level, tally

#: How a scorecard row marks a report run outside CI: a short word, its reason as the title.
_OUTSIDE_CI_MARK = '; <abbr title="{0}">outside CI</abbr>'


def _share_class(t: Tally) -> str:
    if not t.total:
        return ""
    return "s-full" if t.passed == t.total else "s-part" if t.share >= 0.5 else "s-low"


def _lib_cell_attrs(site: Site, r: SiteReport) -> str:
    info = site.library(r.binding.name)
    return (f' data-lib="{e(r.binding.name)}" data-lang="{e(info.language)}"'
            f' data-caps="{e(" ".join(r.binding.capabilities))}"')


def _scorecard_row(site: Site, r: SiteReport) -> str:
    b = r.binding
    info = site.library(b.name)
    must, should = site.must(r), site.should(r)
    ok = conforms(r, site.requirements)
    variant = bool(info.variant_of) and info.variant_of != b.name
    lang = f' <span class="lang">{e(info.language)}</span>' if info.language else ""
    if not r.complete:  # a run that stopped early judged only part of the catalogue
        lang += ' <span class="tag" title="the run stopped early: see its page">partial run</span>'
    cells = []
    for name, ids in site.topics():
        t = tally(r, ids, "must", site.requirements)
        s = tally(r, ids, "should", site.requirements)
        extra = f' <span class="muted">+{s.passed}/{s.total}</span>' if s.total else ""
        label = (f"{name}: {t.passed} of {t.total} MUST passed" if t.total else f"{name}: not claimed")
        # Each cell opens the matrix on that library and topic: the scenarios behind the number.
        where = e(urlencode({"topic": name, "lib": b.name}))
        cells.append(f'<td class="n {_share_class(t)}" data-label="{e(name)}" title="{e(label)}">'
                     f'<a href="#{where}"><span aria-hidden="true">{e(t.text)}</span>'
                     f'<span class="sr">{e(label)}</span></a>{extra}</td>')
    lib_page = f"lib/{e(site.slugs[b.name])}.html"
    verdict = (f'<a href="{lib_page}"><span class="yes"><span aria-hidden="true">✓</span> yes</span></a>'
               if ok else
               f'<a href="{lib_page}"><span class="no"><span aria-hidden="true">✗</span> no</span></a>')
    counted = must_failures(r, site.requirements)
    if not ok and counted:  # each cause once, linked to its place on the library's page
        named = ", ".join(f'<a href="{lib_page}#r-{e(site.req_slug(c.rid))}">{e(c.rid)}</a>'
                        + ("" if level(r, c.rid, site.requirements) == "must" else " (SHOULD)")
                        for c in causes(r) if c.verdict in FAILURES)
        # Folded to its number of causes: the scorecard must stay on the first screen.
        n = len(must_causes(r, site.requirements))
        verdict = (f'<details class="causes"><summary><span class="no"><span aria-hidden="true">✗</span> '
                   f'<span class="sr">no: </span>{n} cause{"" if n == 1 else "s"}</span></summary>'
                   f'<a href="{lib_page}#causes-h">{e(counted)}</a>: {named}</details>')
    # Each capability's MUST score (core included), for the filter to re-score and re-sort on.
    scores = {c: [t.passed, t.total] for c in _capabilities(site, core=True)
              if (c == "core" or c in b.capabilities) and (t := must_score(r, site.requirements, c)).total}
    return (f'<tr class="{"variant" if variant else "lib"}"{_lib_cell_attrs(site, r)} '
            f'data-scores="{e(json.dumps(scores, separators=(",", ":")))}">'
            f'<th scope="row"><a href="lib/{e(site.slugs[b.name])}.html">{e(b.name)}</a>{lang}'
            f' <span class="muted">{e(b.version)}'
            # The mark stays short beside the name (the card must fit a screen's width); the
            # whole sentence is its title and on the library's page.
            f'{_OUTSIDE_CI_MARK.format(e(b.run_outside_ci)) if b.run_outside_ci else ""}</span></th>'
            f'<td data-label="Conforms">{verdict}</td>'
            f'<td class="n {_share_class(must)}" data-label="MUST">'
            f'<a href="#{e(urlencode({"lib": b.name}))}">'
            f'{e(must.text)}</a></td><td class="n chosen" data-label="Chosen" hidden></td>'
            f'<td class="n" data-label="SHOULD"><a href="{lib_page}">{e(should.text)}</a></td>'
            f'{"".join(cells)}</tr>')


def _scorecard(site: Site) -> str:
    topics = "".join(f'<th scope="col">{e(name)}</th>' for name, _ in site.topics())
    base = [r for r in site.reports if site.is_baseline(r)]
    libs = [r for r in site.reports if not site.is_baseline(r)]
    number = site.catalogue()
    catalogue = f'<br><span class="muted">catalogue&nbsp;{e(number)}</span>' if number else ""
    head = (f'<thead><tr><th scope="col">Library, language, version</th>'
            f'<th scope="col">Conforms{catalogue}</th>'
            f'<th scope="col">MUST passed</th><th scope="col" class="chosen" hidden></th>'
            f'<th scope="col">SHOULD</th>{topics}</tr></thead>')
    rows = "".join(_scorecard_row(site, r) for r in libs)
    baseline = ""
    if base:
        n = 5 + len(site.topics())
        baseline = (f'<tbody class="base"><tr><th scope="colgroup" colspan="{n}">Baseline: the suite\'s own '
                    "reference implementation, not a library to choose</th></tr>"
                    + "".join(_scorecard_row(site, r) for r in base) + "</tbody>")
    return (f'<table id="scorecard" class="cards"><caption>Sorted by MUST requirements passed, a count '
            "(claiming less never ranks a library higher), then by fewer not passed; a capability "
            "chosen below re-scores and re-sorts it. Each number opens the matrix.</caption>"
            f"{head}<tbody>{rows}</tbody>{baseline}</table>")


def _changed(site: Site) -> str:
    items = []
    for r in site.reports:
        old = previous(r, site.history)
        if old is None:
            continue
        moved = changes(old, r)
        versions = []
        if old.version != r.binding.version:
            versions.append(f"{e(old.version)} → {e(r.binding.version)}")
        if old.suite_version != r.suite_version:
            versions.append(f"suite {e(old.suite_version)} → {e(r.suite_version)}")
        if not moved and not versions:
            continue
        what = "; ".join(
            f'<a href="lib/{e(site.slugs[r.binding.name])}.html#r-{e(site.req_slug(rid))}">{e(rid)}</a> '
            f"{e(VERDICTS.get(a, VERDICTS[''])[1])} → {e(VERDICTS.get(b, VERDICTS[''])[1])}"
            for rid, a, b in moved[:8])
        more = f" and {len(moved) - 8} more" if len(moved) > 8 else ""
        items.append(f"<li><strong>{e(r.binding.name)}</strong>"
                     f"{' (' + ', '.join(versions) + ')' if versions else ''}: "
                     f"{what or 'no verdict changed'}{more}</li>")
    if not any(previous(r, site.history) for r in site.reports):
        return ""
    if not items:
        return ('<section class="changed"><strong>Changed since the last run:</strong> no verdict '
                'changed. <a href="history.html">(history)</a></section>')
    # Folded: a catalogue change moves many verdicts, and the scorecard must stay on the first screen.
    return (f'<details class="changed"><summary><strong>Changed since the last run:</strong> '
            f'{len(items)} of {len(site.reports)} reports</summary><ul>{"".join(items)}</ul>'
            f'<a href="history.html">History</a></details>')


def _matrix(site: Site) -> str:
    scorable = [r for r in site.reports if not site.is_baseline(r)]
    head = []
    for r in site.reports:
        b = r.binding
        info = site.library(b.name)
        variant = info.variant_of and info.variant_of != b.name
        shown = b.name[len(info.variant_of):] if variant and b.name.startswith(info.variant_of) else b.name
        must = site.must(r)
        kind = "variant" if variant else "baseline" if site.is_baseline(r) else ""
        note = " (the baseline, not a contender)" if kind == "baseline" else ""
        head.append(
            f'<th scope="col" class="lib {kind}"{_lib_cell_attrs(site, r)}>'
            f'<a class="name" href="lib/{e(site.slugs[b.name])}.html"><span aria-hidden="true">{e(shown)}'
            f'</span><span class="sr">{e(b.name)}{note}</span></a>'
            f'<span class="score" title="MUST requirements passed">{e(must.text)}</span></th>')
    body = []
    width = len(site.reports)
    for topic, ids in site.topics():
        body.append(f'<tr class="topic" data-topic="{e(topic)}"><th scope="colgroup">{e(topic)}</th>'
                    f'<td colspan="{width}"></td></tr>')
        for rid in ids:
            req = site.requirements.get(rid)
            lvl = level(None, rid, site.requirements)
            judged = [r for r in scorable if applies(r, rid)]
            passed = sum(r.requirements.get(rid) == "passed" for r in judged)
            title = plain_title(req.title) if req else "(not in this suite's catalogue)"
            cells = []
            for r in site.reports:
                base = " base" if site.is_baseline(r) else ""
                verdict = r.requirements.get(rid, "")
                icon, label = VERDICTS.get(verdict, VERDICTS[""])
                tag = '<span class="tag" aria-hidden="true">K</span>' if verdict == "known-failure" else ""
                cells.append(
                    f'<td class="v v-{e(verdict)}{base}" data-verdict="{e(verdict)}" '
                    f'data-lib="{e(r.binding.name)}">'
                    f'<a href="lib/{e(site.slugs[r.binding.name])}.html#r-{e(site.req_slug(rid))}">'
                    f'<span aria-hidden="true">{icon}</span>{tag}'
                    f'<span class="sr">{e(r.binding.name)}, {e(rid)}: {e(label)}</span></a></td>')
            text = f"{rid} {title}".lower()
            counted = f"passed by {passed} of {len(judged)}" if judged else "claimed by no library"
            body.append(
                f'<tr class="req" data-topic="{e(topic)}" data-text="{e(text)}" '
                f'data-profiles="{e(" ".join(profiles(req.profile if req else "")))}">'
                f'<th scope="row"><a href="req/{e(site.req_slug(rid))}.html">{e(rid)}</a> {level_tag(lvl)} '
                f'<span class="muted counted">{counted}</span>'
                f'<span class="title">{inline(title)}</span></th>{"".join(cells)}</tr>')
    return (f'<div class="matrix-wrap" role="region" aria-labelledby="matrix-h" tabindex="0">'
            f'<table id="matrix"><caption class="sr">Rows: requirements by topic, with their level and '
            f"how many libraries passed each. Columns: libraries, with MUST requirements passed. Each "
            f"cell links to its details.</caption>"
            f'<thead><tr><th scope="col" class="corner">Requirement</th>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _capabilities(site: Site, core: bool = False) -> list[str]:
    """The catalogue's capabilities (its profiles), sorted; `core` among them only if asked."""
    found = {p for req in site.requirements.values() for p in profiles(req.profile)}
    return sorted(found if core else found - {"core"})


def _filters(site: Site) -> str:
    topics = "".join(f'<option value="{e(t)}">{e(t)}</option>' for t, _ in site.topics())
    caps = _capabilities(site)
    cap_options = "".join(f'<option value="{e(c)}">{e(c)}</option>' for c in caps)
    langs = sorted({site.library(r.binding.name).language for r in site.reports} - {""})
    lang_options = "".join(f'<option value="{e(x)}">{e(x)}</option>' for x in langs)
    boxes = "".join(f'<label><input type="checkbox" name="lib" value="{e(r.binding.name)}">'
                    f"{e(r.binding.name)}</label>" for r in site.reports)
    return f"""<form id="filters" class="filters" hidden aria-label="Filter the matrix">
<label>Topic<select name="topic"><option value="">all</option>{topics}</select></label>
<label>Capability<select name="cap"><option value="">all (core included)</option>{cap_options}
</select></label>
<label>Language<select name="lang"><option value="">all</option>{lang_options}</select></label>
<label>Search requirements<input type="search" name="q" placeholder="ID or words"></label>
<fieldset><legend>Libraries side by side (none ticked: all)</legend>{boxes}</fieldset>
<button type="reset">Show all</button>
</form>
<p id="filter-status" role="status" aria-live="polite" class="muted"></p>"""


def _libraries(site: Site) -> str:
    rows = []
    for r in site.reports:
        b = r.binding
        info = site.library(b.name)
        what = info.what or "(no description in the site's data file)"
        if info.variant_of and info.variant_of != b.name:
            what = f"{info.variant_of} with an opt-in: {info.turns_on}"
        package = info.package or b.name
        home = f' (<a href="{e(info.home)}">home</a>)' if info.home else ""
        if b.run_outside_ci:
            home += f'<br><span class="muted">{e(b.run_outside_ci)}</span>'
        rows.append(f'<tr{_lib_cell_attrs(site, r)}><th scope="row">'
                    f'<a href="lib/{e(site.slugs[b.name])}.html">'
                    f"{e(b.name)}</a></th><td data-label=\"What it is\">{inline(what)}</td>"
                    f'<td data-label="Language">{e(info.language or "?")}</td>'
                    f'<td data-label="Package tested"><code>{e(package)}</code> {e(b.version)}{home}'
                    "</td></tr>")
    return (f'<table class="cards" id="libraries"><thead><tr><th scope="col">Library</th>'
            f'<th scope="col">What it is</th><th scope="col">Language</th><th scope="col">Package and '
            f'version tested</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def index(site: Site) -> str:
    """index.html."""
    legend = "".join(
        f'<li class="v-{v}">{verdict_mark(v)}</li>' for v in ORDER)
    n_libs = sum(not site.is_baseline(r) and not site.library(r.binding.name).variant_of
                 for r in site.reports)
    body = f"""<h1>Which agent library handles tool calls correctly?</h1>
<p class="lead">{n_libs} agent libraries (and their opt-in variants) run against the same
{len(site.ids)} requirements, on the library's own defaults. Each cell:
<strong>MUST requirements passed / those that apply</strong>
(<span class="muted">+SHOULD</span> apart; "–": the library does not claim that capability). A library
<strong>conforms</strong> when every MUST that applies passed; else its MUST failures are counted
by cause. <a href="glossary.html">What the words mean</a>.</p>
{_changed(site)}
{_scorecard(site)}
<h2 id="matrix-h">Requirement by library</h2>
<p class="lead wide-only">Each cell links to what happened: the scenarios, the failure observed beside the
reason the binding declares, the Gherkin and the command that reproduces it.</p>
<ul class="legend" id="matrix-legend" aria-label="Legend">{legend}<li><span class="tag">K</span> known: a
failure the binding declares, with its reason: still a failure</li></ul>
<p class="phone-note">The full matrix needs a wider screen: open a library above for every verdict.
The filters below also narrow the scorecard and the list of libraries.</p>
{_filters(site)}
{_matrix(site)}
<h2 id="libraries-h">The libraries</h2>
{_libraries(site)}"""
    return page("Agent library conformance: scorecard and matrix", body, script=JS)
