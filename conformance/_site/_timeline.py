"""The history page: per library, its verdicts by library version and by suite version, oldest
first, with what changed from one run to the next."""

from __future__ import annotations

from conformance._site._context import Site
from conformance._site._history import Snapshot, changes, distinct
from conformance._site._html import VERDICTS, e, page
from conformance._site._output import slug
from conformance._site._score import conforms, tally


def _row(site: Site, s: Snapshot, before: Snapshot | None, current: bool) -> str:
    r = s.as_report()
    must = tally(r, list(r.requirements), "must", site.requirements)
    should = tally(r, list(r.requirements), "should", site.requirements)
    moved = changes(before, r) if before else []
    def label(verdict: str) -> str:
        return e(VERDICTS.get(verdict, VERDICTS[""])[1])
    what = "; ".join(f"{e(rid)}: {label(a)} → {label(b)}" for rid, a, b in moved[:12])
    what += f" and {len(moved) - 12} more" if len(moved) > 12 else ""
    if before and before.suite_version != s.suite_version:  # not the library's doing alone
        what = f"suite {e(before.suite_version)} → {e(s.suite_version)}: {what or 'no verdict changed'}"
    elif before and before.version == s.version and moved:
        # Same library release, same suite release: what moved is the binding's (or the suite's
        # unreleased code's) doing, never the library's; the binding's digest tells which.
        what = f"not a library change ({e(s.version)} both times): {_whose(before, s)} changed: {what}"
    source = e("this site's report") if current else (
        "a run against this release" if s.source == "run" else f"committed report ({_commit(site, s)})")
    if s.report is not None and not current:
        source += f' (<a href="{e(earlier_report(site, s))}" download>its report</a>)'
    return (f'<tr><th scope="row">{e(s.version)}</th><td data-label="Suite">{e(s.suite_version)}</td>'
            f'<td data-label="Date">{e(s.generated[:10] or "?")}</td>'
            f'<td data-label="MUST">{e(must.text)}</td><td data-label="SHOULD">{e(should.text)}</td>'
            f'<td data-label="Conforms">{"yes" if conforms(r, site.requirements) else "no"}</td>'
            f'<td data-label="Changed">{what or ("first run shown" if before is None else "nothing")}</td>'
            f'<td data-label="From">{source}</td></tr>')


def _whose(before: Snapshot, after: Snapshot) -> str:
    """Who changed a verdict of one library release under one suite release: the binding (its
    digest differs), the suite's code (the same binding), or either (a report without a digest)."""
    if not (before.binding_digest and after.binding_digest):
        return "the binding or the suite's code"
    if before.binding_digest != after.binding_digest:
        return "the binding"
    return "the suite's code (the same binding)"


def earlier_report(site: Site, s: Snapshot) -> str:
    """Where the site puts a run's report against an earlier release:
    history/<library>-<version>-suite-<suite version>.json."""
    return (f"history/{site.slugs.get(s.library) or slug(s.library, 'library')}-{slug(s.version, 'version')}"
            f"-suite-{slug(s.suite_version, 'version')}.json")


def _commit(site: Site, s: Snapshot) -> str:
    """`git <hash>`, linked to the commit when the site knows its repository (HTML-escaped)."""
    commit = s.source.removeprefix("git ")
    if not site.repository:
        return e(s.source)
    return f'git <a href="{e(site.repository)}/commit/{e(commit)}"><code>{e(commit)}</code></a>'


_LEAD = ("Verdicts by library version and by suite version: runs of the suite against earlier releases "
         "of a library, the committed reports' earlier versions, and this site's reports, ordered by "
         "suite version, then library version. Only runs that differ from the one before (a version or "
         "a verdict) are listed.")
_READING = ("Counts use today's catalogue levels; a run of an older suite judged fewer requirements. In a "
            "run against an earlier release, a failure the binding declares for the current release that "
            "the earlier one does not have counts as passed.")


def timeline(site: Site) -> str:
    """history.html."""
    current = {r.binding.name: Snapshot.of(r, "current") for r in site.reports}
    sections = []
    names = [r.binding.name for r in site.reports]
    names += sorted({s.library for s in site.history} - set(names))
    for name in names:
        runs = [s for s in site.history if s.library == name]
        if name in current:
            runs.append(current[name])
        runs = distinct(runs)
        if len(runs) < 2:  # still listed, so that no library is missing without a word
            sections.append(f'<h2 id="h-{e(site.slugs.get(name, name))}">{e(name)}</h2>'
                            '<p class="muted">One run so far: nothing to compare yet.</p>')
            continue
        # By suite version first: a row then differs from the one above by the library's version
        # under the same suite, and a suite's change shows once, where the suite changes.
        runs.sort(key=lambda s: (_version_key(s.suite_version), _version_key(s.version), s.generated))
        rows, before = [], None
        for s in runs:
            rows.append(_row(site, s, before, s.source == "current"))
            before = s
        versions = len({s.version for s in runs})
        grid = _grid(runs)
        sections.append(
            f'<h2 id="h-{e(site.slugs.get(name, name))}">{e(name)} <span class="muted">({versions} '
            f'library version{"s" if versions != 1 else ""}, {len(runs)} runs)</span></h2>'
            f'<table class="cards"><thead><tr><th scope="col">Library version</th><th scope="col">Suite</th>'
            f'<th scope="col">Date</th><th scope="col">MUST passed</th><th scope="col">SHOULD</th>'
            f'<th scope="col">Conforms</th><th scope="col">Changed from the row above</th>'
            f'<th scope="col">From</th></tr></thead><tbody>{"".join(rows)}</tbody></table>{grid}')
    body = f"""<h1>History</h1>
<p class="lead">{_LEAD}</p>
<p>{_READING}</p>
{"".join(sections) or "<p>No history was given to this build (<code>--history</code>).</p>"}"""
    return page("History: conformance by library and suite version", body)


def _grid(runs: list[Snapshot]) -> str:
    """The requirements whose verdict differs between the runs, one column per run: verdicts by
    library version and by suite version at a glance."""
    ids = [rid for rid in dict.fromkeys(r for s in runs for r in s.requirements)
           if len({s.requirements.get(rid, "") for s in runs}) > 1]
    if not ids:
        return ""
    head = "".join(f'<th scope="col">{e(s.version)}<br>'
                   f'<span class="muted">suite {e(s.suite_version)}</span></th>' for s in runs)
    rows = []
    for rid in ids:
        cells = []
        for s in runs:
            verdict = s.requirements.get(rid, "")
            icon, label = VERDICTS.get(verdict, VERDICTS[""])
            cells.append(f'<td class="v-{e(verdict)}"><span aria-hidden="true">{icon}</span>'
                         f'<span class="sr">{e(label)}</span></td>')
        rows.append(f'<tr><th scope="row">{e(rid)}</th>{"".join(cells)}</tr>')
    return (f'<div class="scroll" role="region" tabindex="0" aria-label="Requirements whose verdict changed">'
            f'<table class="grid"><caption class="muted">Requirements whose verdict differs between these '
            f'runs</caption><thead><tr><th scope="col">Requirement</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _version_key(version: str) -> tuple[tuple[int, str], ...]:
    parts = version.replace("-", ".").split(".")
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in parts)
