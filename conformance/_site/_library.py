"""A library's page: who it is, its score, a section per requirement (every matrix cell links to
one) with each scenario's verdict, the failure observed beside the declared reason, the Gherkin
and the command that reproduces it; and the maintainer's kit (badges, downloads, a way to report
a wrong verdict). Also its Markdown download."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from conformance._site._badges import badge_json, must_score, profiles
from conformance._site._causes import DEFINITION, causes, must_failures, unattributed
from conformance._site._context import Site
from conformance._site._html import VERDICTS, e, inline, level_tag, page, plain_title, verdict_mark
from conformance._site._model import SiteReport, SiteScenario
from conformance._site._score import NOT_PASSED, conforms, level, reason, unjudged


def _test_name(s: SiteScenario) -> str:
    return s.id.split("[", 1)[0]


def reproduce(report: SiteReport, s: SiteScenario) -> str:
    """The command that reruns one scenario against this library; a known failure's with pytest's
    `--runxfail`, which shows the failure the run observed instead of a bare "xfailed"."""
    runxfail = " --runxfail" if s.verdict == "known-failure" else ""
    return f"pytest --impl {report.binding.name} -k {_test_name(s)}{runxfail}"


def _setup(site: Site, report: SiteReport) -> str:
    """What to install, in a clone of the suite, before the Reproduce commands run: a Python
    library's own extra (named after the library, as every bundled one is), the suite alone for a
    Node.js harness (which installs its locked packages on its first run), with a JDK and Maven for
    a Java or Kotlin harness (built on its first run), with Rust's cargo for a Rust harness (built
    on its first run), with Ruby and the library for a Ruby harness, and for the baseline; nothing
    for a library the data file does not know."""
    info = site.library(report.binding.name)
    if site.is_baseline(report):
        command = "<code>pip install -e .</code>"
    elif info.language == "TypeScript":
        command = ("<code>pip install -e .</code> and Node.js (the harness installs its locked npm "
                   "packages on its first run)")
    elif info.language == "Go":
        command = ("<code>pip install -e .</code> and Go 1.24 or later (the harness builds with "
                   "<code>go build</code> from its pinned go.mod on its first run)")
    elif info.language in ("Java", "Kotlin"):
        command = ("<code>pip install -e .</code>, a JDK 17 and Maven (the harness resolves its pinned "
                   "artifacts and compiles on its first run)")
    elif info.language == "Ruby":
        command = ("<code>pip install -e .</code> and Ruby with the library on its load path (the "
                   "harness's README.md says how)")
    elif info.language == "Rust":
        command = ("<code>pip install -e .</code> and Rust's cargo 1.95 or later (the harness builds with "
                   "<code>cargo build --locked</code> from its pinned Cargo.lock on its first run)")
    elif info.language == "Python":
        extra = info.variant_of or report.binding.name.partition("+")[0]
        install = f"pip install -e '.[{extra}]'"
        command = f"<code>{e(install)}</code>"
    else:
        return ""
    return (f"<p>To run a Reproduce command below: in a clone of the suite's repository, {command}; "
            "each command reruns one scenario against this library.</p>")


def _binding_link(site: Site, report: SiteReport) -> str:
    path = site.library(report.binding.name).binding
    if not path:
        return "the binding registered as " + f"<code>{e(report.binding.name)}</code>"
    if site.repository:
        return f'<a href="{e(site.repository)}/blob/HEAD/{e(path)}"><code>{e(path)}</code></a>'
    return f"<code>{e(path)}</code> in the suite's repository"


def _scenario(site: Site, report: SiteReport, s: SiteScenario, rid_slug: str) -> str:
    key = (s.feature, s.name)
    example = s.id[s.id.index("["):] if s.id.endswith("]") and "[" in s.id else ""
    parts = [f'<span class="v-{e(s.verdict)}">{verdict_mark(s.verdict)}</span> '
             f'<a href="../req/{rid_slug}.html#{e(_anchor(s.feature, s.name))}">{e(s.name)}</a>'
             f'{f" <code>{e(example)}</code>" if example else ""}']
    if s.blocked_by:
        parts.append(f" (blocked by <strong>{e(s.blocked_by)}</strong>, which failed)")
    if s.verdict == "known-failure":
        observed = (s.observed or "").strip()
        parts.append(f'<p><strong>Declared reason:</strong> {e(s.message.strip() or "none given")}</p>')
        parts.append(f'<p><strong>Observed:</strong></p><pre class="message">{e(observed)}</pre>' if observed
                     else '<p class="muted">Observed: this report does not carry what the run saw.</p>')
    elif s.message.strip() and s.verdict != "passed":
        parts.append(f'<pre class="message">{e(s.message.strip())}</pre>')
    if s.verdict in NOT_PASSED:
        found = site.gherkin.get(key)
        if found:
            parts.append(f"<details><summary>Gherkin of the scenario ({e(s.feature)})</summary>"
                         f"<pre>{e(found.text)}</pre></details>")
        parts.append(f"<p>Reproduce: <code>{e(reproduce(report, s))}</code></p>")
    return f"<li>{''.join(parts)}</li>"


def _anchor(feature: str, name: str) -> str:
    return "s-" + "".join(c if c.isalnum() else "-" for c in f"{feature}-{name}").lower()[:120]


def _requirement_section(site: Site, report: SiteReport, rid: str) -> str:
    verdict = report.requirements.get(rid, "")
    req = site.requirements.get(rid)
    rs = e(site.req_slug(rid))
    mine = [s for s in report.scenarios if s.requirement == rid]
    counts = {v: sum(s.verdict == v for s in mine) for v in ("passed", "failed", "known-failure",
                                                           "blocked", "errored", "not-claimed")}
    summary = (", ".join(f"{n} {VERDICTS[v][1]}" for v, n in counts.items() if n)
               or "no scenario in the report")
    why = reason(report, rid)
    declared = verdict == "known-failure" or any(s.verdict == "known-failure" for s in mine)
    by = f'<br><span class="muted">Declared by {_binding_link(site, report)}.</span>' if declared else ""
    items = "".join(_scenario(site, report, s, rs) for s in mine)
    return (f'<section class="req" id="r-{rs}" aria-labelledby="h-{rs}" tabindex="-1">'
            f'<h3 id="h-{rs}"><a href="../req/{rs}.html">{e(rid)}</a> '
            f"{level_tag(level(report, rid, site.requirements))} "
            f'<span class="v-{e(verdict)}">{verdict_mark(verdict)}</span></h3>'
            f"<p>{inline(plain_title(req.title) if req else '')}</p>"
            f'<p class="muted">Scenarios: {e(summary)}.</p>'
            f'{f"<p><strong>Reason:</strong> <span class=reason>{e(why)}</span>{by}</p>" if why else ""}'
            f'<ul class="scen">{items}</ul></section>')


def _page_link(site: Site, name: str) -> str:
    """A library's name, linked to its page when the site has one."""
    if name in site.slugs:
        return f'<a href="{e(site.slugs[name])}.html"><strong>{e(name)}</strong></a>'
    return f"<strong>{e(name)}</strong>"


def _causes(site: Site, report: SiteReport) -> str:
    """Failures first: every requirement that did not pass on its own, with its reason, and under
    it the requirements it blocked; each linked to its section below."""
    def link(rid: str) -> str:
        return f'<a href="#r-{e(site.req_slug(rid))}">{e(rid)}</a>'
    items = []
    for c in causes(report):
        under = (f'<br><span class="muted">Blocks {len(c.blocked)}:</span> '
                 + ", ".join(link(rid) for rid in c.blocked)) if c.blocked else ""
        items.append(f'<li>{link(c.rid)} {level_tag(level(report, c.rid, site.requirements))} '
                     f'<span class="v-{e(c.verdict)}">{verdict_mark(c.verdict)}</span>: '
                     f'<span class="reason">{e(c.reason or "no reason given")}</span>{under}</li>')
    loose = unattributed(report)
    if loose:
        items.append("<li>Blocked, by a requirement not shown as a cause: "
                     + ", ".join(link(rid) for rid in loose) + "</li>")
    if not items:
        return ""
    counted = must_failures(report, site.requirements)
    return (f'<h2 id="causes-h">What did not pass, by cause</h2>'
            f'<p>{e(counted + ". " if counted else "")}Each cause once, with the requirements it blocks; '
            f'the sections below give every scenario.</p><ul class="causes">{"".join(items)}</ul>')


def snippets(img: str, link: str, alt: str) -> dict[str, str]:
    """A badge's snippet in each markup a README is written in, and its bare URL."""
    return {"Markdown": f"[![{alt}]({img})]({link})",
            "HTML": f'<a href="{link}"><img src="{img}" alt="{alt}"></a>',
            "reStructuredText": f".. image:: {img}\n   :target: {link}\n   :alt: {alt}",
            "AsciiDoc": f'image:{img}["{alt.replace(chr(34), "")}",link={link}]',
            "URL": img}


#: The kit's Copy buttons: the clipboard API where the page may use it, else the selection, and a
#: status line that says what was copied (for a screen reader too).
KIT_JS = """
(function () {
  var status = document.getElementById('kit-status');
  Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (button) {
    button.addEventListener('click', function () {
      var box = document.getElementById(button.getAttribute('data-copy'));
      var said = function () { status.textContent = 'Copied: ' + box.getAttribute('aria-label'); };
      box.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(box.value).then(said, function () {
          document.execCommand('copy'); said(); });
      } else { document.execCommand('copy'); said(); }
    });
  });
})();
"""


def _kit(site: Site, report: SiteReport) -> str:
    b = report.binding
    slug = site.slugs[b.name]
    # Without the address the site is published at, the snippets stay relative to the site (and
    # say so) rather than carry a placeholder host that a maintainer might paste as it is.
    base = site.base_url.rstrip("/")
    prefix = f"{base}/" if base else ""
    rows = []
    for cap, path in [("overall", f"badges/{slug}.svg"),
                      *((c, f"badges/{slug}/{c}.svg") for c in b.capabilities if must_score(
                          report, site.requirements, c).total)]:
        message = badge_json(report, site.requirements, None if cap == "overall" else cap)["message"]
        found = snippets(f"{prefix}{path}", f"{prefix}lib/{slug}.html", f"{b.name} {cap}: {message}")
        def box(fmt: str, cap: str = cap, found: dict[str, str] = found) -> str:
            ident = f"kit-{_anchor(cap, fmt)}"
            return (f'<textarea readonly rows="2" id="{e(ident)}" aria-label="{e(fmt)} for the {e(cap)} '
                    f'badge">{e(found[fmt])}</textarea><button type="button" class="copy" '
                    f'data-copy="{e(ident)}">Copy<span class="sr"> the {e(fmt)} for the {e(cap)} badge'
                    '</span></button>')
        more = "".join(f"<p>{e(fmt)}</p>{box(fmt)}" for fmt in found if fmt not in ("Markdown", "HTML"))
        rows.append(f'<tr><th scope="row"><img src="../{e(path)}" alt="{e(cap)}: {e(message)}"></th>'
                    f'<td data-label="Markdown">{box("Markdown")}</td><td data-label="HTML">{box("HTML")}'
                    f'</td><td data-label="Other formats"><details><summary>reStructuredText, AsciiDoc, '
                    f'URL</summary>{more}</details></td></tr>')
    issue = ""
    if site.repository:
        query = urlencode({"title": f"Wrong verdict for {b.name} {b.version}: <requirement>",
                           "body": f"Library: {b.name} {b.version}\nSuite: {report.suite_version}\n"
                                   "Requirement:\nWhat the library does (with a source link):\n"},
                          quote_via=quote)
        issue = f'<a href="{e(site.repository)}/issues/new?{e(query)}">Report a wrong verdict</a>: '
    else:
        issue = "Report a wrong verdict as an issue of the suite's repository: "
    return f"""<h2 id="kit-h">Maintainer kit</h2>
<p>Badges are published with the site: <code>{e(prefix)}badges/{e(slug)}.svg</code> (an image) and
<code>{e(prefix)}badges/{e(slug)}.json</code> (a shields.io endpoint), one per capability under
<code>badges/{e(slug)}/</code>. The scheduled workflow <code>.github/workflows/site.yml</code> publishes
the site to the repository's GitHub Pages{", at " + e(base) if base else (
"; this build was made without that address (<code>base_url</code> in the suite's "
"<code>conformance/_site/libraries.toml</code>), so the paths here are "
"relative to the site: put its address before each")}.</p>
<table class="cards"><thead><tr><th scope="col">Badge</th><th scope="col">Markdown</th>
<th scope="col">HTML</th><th scope="col">Other formats</th>
</tr></thead><tbody>{"".join(rows)}</tbody></table><p class="sr" role="status" id="kit-status"></p>
<p>Downloads: <a href="{e(slug)}.json" download>the JSON report</a>, <a href="{e(slug)}.md" download>a
Markdown summary</a>. To see a report of your own (<code>--conformance-json</code>) as the site
shows a bundled one: open it in <a href="../view.html">View a report</a>, or build the whole site
from it with <code>python -m conformance site your-report.json --out site</code>.</p>
<p>{issue}name the requirement, what the library does and where in its source. Each failure's reason is
declared by {_binding_link(site, report)}.</p>"""


def library(site: Site, report: SiteReport) -> str:
    """lib/<slug>.html."""
    b = report.binding
    info = site.library(b.name)
    must, should = site.must(report), site.should(report)
    ok = conforms(report, site.requirements)
    variant = (f"<p>An opt-in variant of {_page_link(site, info.variant_of)}: {inline(info.turns_on)}</p>"
               if info.variant_of and info.variant_of != b.name else "")
    variants = [r.binding.name for r in site.reports
                if r.binding.name != b.name and site.library(r.binding.name).variant_of == b.name]
    if variants:
        variant += ("<p>Judged also with an opt-in turned on: "
                    + ", ".join(_page_link(site, name) for name in variants) + ".</p>")
    baseline = ("<p><strong>Baseline.</strong> The suite's own reference implementation: it shows that "
                "every scenario can pass; it is not a library to choose.</p>"
                if site.is_baseline(report) else "")
    missing = unjudged(report, site.requirements)
    why_missing = "the run stopped before them" if not report.complete else "it predates them"
    older = (f"<p class=muted>Not judged by this report ({why_missing}): {e(', '.join(missing))}.</p>"
             if missing else "")
    if not report.complete:
        older += (f"<p><strong>Partial run:</strong> {e(report.stopped_by or 'the run stopped early')}; "
                  "only the requirements whose every scenario ran are judged.</p>")
    not_claimed = "".join(f"<li><code>{e(c)}</code>: {e(why)}</li>" for c, why in b.not_claimed.items())
    cannot = "".join(f"<li><code>{e(c)}</code>: {e(why)}</li>" for c, why in b.cannot_express.items())
    installed = ", ".join(f"{name} {version}" for name, version in b.dependencies.items())
    deps = f"<dt>Dependencies installed</dt><dd>{e(installed)}</dd>" if installed else ""
    if b.run_outside_ci:
        deps += f"<dt>Where it ran</dt><dd>{e(b.run_outside_ci)}</dd>"
    counted = must_failures(report, site.requirements)
    failures = f' <a href="#causes-h">{e(counted)}</a>.' if counted and not ok else ""
    sections = []
    for topic, ids in site.topics():
        inner = "".join(_requirement_section(site, report, rid) for rid in ids if rid in report.requirements)
        if inner:
            sections.append(f"<h2>{e(topic)}</h2>{inner}")
    body = f"""<h1>{e(b.name)} <span class="muted">{e(b.version)}</span></h1>
<p>{inline(info.what) if info.what else ""}</p>{variant}{baseline}
<p><img src="../badges/{e(site.slugs[b.name])}.svg"
alt="{e(b.name)}: {e(badge_json(report, site.requirements)["message"])}">
<strong>{"Conforms" if ok else "Does not conform"}</strong>: {must.passed} of {must.total} MUST
requirements passed; SHOULD {should.text}.{failures}</p>
<p><a href="#kit-h">Maintainer kit</a>: badges to copy, the JSON and Markdown downloads, and how to
report a wrong verdict.</p>
<dl class="facts"><dt>Language</dt><dd>{e(info.language or "?")}</dd>
<dt>Package tested</dt><dd><code>{e(info.package or b.name)}</code> {e(b.version)}</dd>
{deps}<dt>Suite version</dt><dd>{e(report.suite_version)}</dd>
<dt>Report generated</dt><dd>{e(report.generated or "unknown")} (<a
href="../history.html#h-{e(site.slugs[b.name])}">its history</a>)</dd>
<dt>Capabilities claimed</dt><dd>{e(", ".join(b.capabilities) or "none")}</dd></dl>
{older}{_setup(site, report)}
{_causes(site, report)}
{f"<h2>Capabilities not claimed</h2><ul>{not_claimed}</ul>" if not_claimed else ""}{
    f"<h2>Scenarios the library cannot express</h2><ul>{cannot}</ul>" if cannot else ""}
{"".join(sections)}
{_kit(site, report)}"""
    return page(f"{b.name} {b.version}: conformance", body, script=KIT_JS, up="../")


def markdown(site: Site, report: SiteReport) -> str:
    """lib/<slug>.md: the verdicts as a Markdown table (every text escaped for a table cell)."""
    b = report.binding
    def cell(text: str) -> str:
        return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").split())
    must = site.must(report)
    ok = conforms(report, site.requirements)
    counted = must_failures(report, site.requirements)
    # A bare "does not conform" tells a reader nothing: say how many distinct causes take it down.
    lines = [f"# {cell(b.name)} {cell(b.version)}", "",
             f"{'Conforms' if ok else 'Does not conform'}: "
             f"{must.passed} of {must.total} MUST requirements passed"
             f"{'' if ok or not counted else '; ' + counted} (suite {cell(report.suite_version)}).", "",
             *([f"{cell(b.run_outside_ci)}.", ""] if b.run_outside_ci else [])]
    found = causes(report)
    if found:
        lines += ["## Causes", "", DEFINITION, ""]
        for c in found:
            blocks = f" Blocks {len(c.blocked)}: {', '.join(c.blocked)}." if c.blocked else ""
            lines.append(f"- **{cell(c.rid)}** ({level(report, c.rid, site.requirements).upper()}, "
                         f"{VERDICTS.get(c.verdict, VERDICTS[''])[1]}): {cell(c.reason)}{blocks}")
        lines += ["", "## Every requirement", ""]
    lines += ["| requirement | level | verdict | reason |", "|---|---|---|---|"]
    for rid, verdict in report.requirements.items():
        lines.append(f"| {cell(rid)} | {level(report, rid, site.requirements).upper()} | "
                     f"{VERDICTS.get(verdict, VERDICTS[''])[1]} | {cell(reason(report, rid))} |")
    return "\n".join(lines) + "\n"


def capabilities_of(report: SiteReport, site: Site) -> list[str]:
    """The claimed capabilities that have a MUST requirement in the catalogue: one badge each."""
    return [c for c in report.binding.capabilities
            if any(c in profiles(r.profile) for r in site.requirements.values())]


anchor = _anchor
