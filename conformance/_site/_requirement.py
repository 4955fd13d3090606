"""A requirement's page: its level and title, every library's verdict with its reason and a link
to the details, and the Gherkin of its scenarios (each with an anchor the details link to)."""

from __future__ import annotations

from conformance._site._context import Site
from conformance._site._html import e, inline, level_tag, page, verdict_mark
from conformance._site._library import anchor
from conformance._site._score import level, reason


def requirement(site: Site, rid: str) -> str:
    """req/<slug>.html."""
    req = site.requirements.get(rid)
    rs = e(site.req_slug(rid))
    rows = []
    for r in site.reports:
        verdict = r.requirements.get(rid, "")
        slug = e(site.slugs[r.binding.name])
        rows.append(f'<tr><th scope="row"><a href="../lib/{slug}.html">{e(r.binding.name)}</a></th>'
                    f'<td data-label="Version">{e(r.binding.version)}</td>'
                    f'<td data-label="Verdict" class="v-{e(verdict)}"><a href="../lib/{slug}.html#r-{rs}">'
                    f"{verdict_mark(verdict)}</a></td>"
                    f'<td data-label="Reason">{e(reason(r, rid))}</td></tr>')
    scenarios = [s for s in site.gherkin.values() if s.requirement == rid]
    texts = "".join(f'<h3 id="{e(anchor(s.feature, s.name))}">{e(s.name)} <span class="muted">'
                    f"({e(s.feature)})</span></h3><pre>{e(s.text)}</pre>" for s in scenarios)
    body = f"""<h1>{e(rid)} {level_tag(level(None, rid, site.requirements))}</h1>
<p>{inline(req.title if req else "Not in this suite's catalogue.")}</p>
<p>Topic: {e(site.meta.topic_of(rid))}. Profile: <code>{e(req.profile if req else "?")}</code>
({"every library" if req and req.profile == "core" else "libraries that claim it"}).</p>
<h2 id="libs-h">Across libraries</h2>
<table class="cards"><thead><tr><th scope="col">Library</th><th scope="col">Version</th>
<th scope="col">Verdict</th><th scope="col">Reason</th></tr></thead><tbody>{"".join(rows)}</tbody></table>
<h2>The scenarios (Gherkin)</h2>
{texts or "<p>No scenario in this suite's feature files.</p>"}"""
    return page(f"{rid}: conformance across libraries", body, up="../")
