"""The pages' shared frame: styles, the filters' script, the page shell and the verdict marks.
Every page is static and self-contained (no request at view time) and reads without JavaScript."""

from __future__ import annotations

import re

from conformance import _text

#: verdict -> (symbol, label); the symbol is decoration, the label is what a screen reader says.
VERDICTS: dict[str, tuple[str, str]] = {
    "passed": ("✓", "passed"),
    "failed": ("✗", "failed"),
    "known-failure": ("✗", "failed (known)"),
    "errored": ("!", "errored"),
    "blocked": ("⊘", "blocked"),
    "not-claimed": ("–", "not claimed"),
    "": ("?", "not run"),
}
ORDER = ("passed", "failed", "known-failure", "errored", "blocked", "not-claimed")

CSS = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --link: #0550ae; --focus: #0969da;
  --head: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  background: #fff; margin: 0 auto; padding: .5rem 1rem; max-width: 96rem; }
a { color: var(--link); }
a:focus-visible, select:focus-visible, button:focus-visible, input:focus-visible,
summary:focus-visible, [tabindex]:focus-visible { outline: 3px solid var(--focus); outline-offset: 1px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 9; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
nav.top { display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: .9rem; padding: .25rem 0; }
h1 { font-size: 1.4rem; margin: .25rem 0; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1.05rem; }
.muted { color: var(--muted); }
p.lead { margin: .25rem 0 .5rem; max-width: 60rem; }
table { border-collapse: separate; border-spacing: 0; }
th, td { border-right: 1px solid var(--line); border-bottom: 1px solid var(--line);
  padding: .2rem .4rem; text-align: left; vertical-align: top; }
thead th { background: var(--head); }
code { font-size: .9em; background: var(--head); padding: 0 .2em; border-radius: 3px; }
pre { background: var(--head); padding: .6rem; overflow-x: auto; white-space: pre; font-size: .85rem;
  max-width: 100%; }
pre.message, pre.wrap { white-space: pre-wrap; word-break: break-word; }
.scroll { overflow-x: auto; max-width: 100%; position: relative; }
.tag { display: inline-block; font-size: .7rem; font-weight: 700; padding: 0 .25rem;
  border: 1px solid currentColor; border-radius: 3px; line-height: 1.2; vertical-align: middle; }
.lvl-must { color: #1f2328; }
.lvl-should { color: #57606a; border-style: dashed; }
.lang { color: #57606a; font-size: .75rem; }
.v-passed { background: #dafbe1; color: #0f5323; }
.v-failed { background: #ffcecb; color: #82071e; }
.v-known-failure { background: #ffcecb; color: #82071e; }
.v-errored { background: #fbefff; color: #6e2b9a; }
.v-blocked { background: #eaeef2; color: #32383f; }
.v-not-claimed, .v- { background: #ffffff; color: #57606a; }
/* The scorecard: one screen. */
/* A tight line: every library, one row each, still fits the first screen as peers are added. */
#scorecard { font-size: .85rem; line-height: 1.2; margin-bottom: .5rem; }
#scorecard td, #scorecard th { white-space: nowrap; padding-top: .05rem; padding-bottom: .05rem; }
#scorecard caption { font-size: .8rem; text-align: left; }
#scorecard td.n { text-align: center; font-variant-numeric: tabular-nums; }
#scorecard thead th { vertical-align: bottom; font-size: .8rem; white-space: normal; max-width: 6.5rem; }
#scorecard tbody.base th, #scorecard tbody.base td { background: var(--head); }
#scorecard tr.variant th[scope=row] { padding-left: 1.2rem; font-weight: normal; }
#scorecard .yes { color: #0f5323; font-weight: 700; }
#scorecard .no { color: #82071e; font-weight: 700; }
#scorecard details.causes[open] { white-space: normal; max-width: 16rem; }
.s-full { background: #dafbe1; }
.s-part { background: #fff8c5; }
.s-low { background: #ffcecb; }
/* The matrix: one box scrolling both ways, both headers sticky inside it. */
.matrix-wrap { overflow: auto; max-height: calc(100vh - 3rem); border: 1px solid var(--line);
  position: relative; }
#matrix { font-size: .82rem; }
#matrix thead th { position: sticky; top: 0; z-index: 2; vertical-align: bottom; text-align: center;
  padding: .2rem .15rem; }
#matrix thead th.corner { left: 0; z-index: 4; text-align: left; vertical-align: bottom; }
#matrix th.lib .name { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
  display: inline-block; font-weight: 600; }
#matrix th.lib .score { display: block; font-weight: normal; font-size: .72rem; }
#matrix th.variant .name { font-weight: normal; }
#matrix th.baseline .name { font-style: italic; font-weight: normal; }
#matrix th.baseline, #matrix td.base { border-right: 3px double var(--line); }
#matrix tbody th { position: sticky; left: 0; z-index: 1; background: #fff; white-space: nowrap;
  font-weight: normal; min-width: 15rem; max-width: 22rem; }
#matrix tbody th .title { display: block; overflow: hidden; text-overflow: ellipsis; max-width: 21rem;
  color: var(--muted); font-size: .75rem; }
#matrix tr.topic th { background: var(--head); font-weight: 700; }
#matrix tr.topic td { background: var(--head); }
#matrix td.v { text-align: center; padding: 0; min-width: 2.1rem; }
#matrix td.v a { display: block; padding: .3rem .1rem; text-decoration: none; color: inherit;
  font-weight: 700; min-height: 2rem; }
#matrix td.v a:hover { text-decoration: underline; }
#matrix td.v .tag { font-size: .6rem; padding: 0 .1rem; margin-left: .1rem; }
.legend { display: flex; flex-wrap: wrap; gap: .4rem; padding: 0; margin: .4rem 0; list-style: none;
  font-size: .85rem; }
.legend li { padding: .05rem .4rem; border: 1px solid var(--line); }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .5rem 0;
  font-size: .88rem; }
form.filters label { display: flex; flex-direction: column; font-weight: 600; }
form.filters fieldset { border: 1px solid var(--line); padding: .2rem .5rem; margin: 0;
  display: flex; flex-wrap: wrap; gap: .1rem .6rem; max-width: 52rem; }
form.filters fieldset label { flex-direction: row; gap: .2rem; font-weight: normal; }
select, button, input { font: inherit; padding: .2rem; min-height: 2rem; }
input[type=checkbox] { min-height: auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
section.req { border-top: 1px solid var(--line); padding-top: .25rem; }
section.req:target { outline: 3px solid var(--focus); }
ul.scen { padding-left: 1.2rem; }
.changed { border: 1px solid var(--line); background: #fff8c5; padding: .3rem .6rem; font-size: .9rem; }
.changed ul { margin: .2rem 0; }
table.grid { font-size: .8rem; margin-top: .4rem; }
table.grid td { text-align: center; font-weight: 700; min-width: 3.5rem; }
textarea { width: 100%; font: .85rem monospace; }
[hidden] { display: none !important; }
.phone-note { display: none; }
@media (max-width: 40rem) {
  body { padding: .5rem; font-size: 15px; overflow-wrap: anywhere; }
  h1 { font-size: 1.25rem; }
  table.cards, table.cards tbody, table.cards tr, table.cards th, table.cards td { display: block; }
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards tr { border: 1px solid var(--line); margin: .5rem 0; padding: .3rem .5rem; }
  table.cards th, table.cards td { border: 0; padding: .1rem 0; white-space: normal; }
  table.cards td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  #scorecard th, #scorecard td { white-space: normal; }
  #scorecard td.n { text-align: left; }
  code, a { overflow-wrap: anywhere; }
  /* The filters stay: a shared link's filter also hides scorecard rows, and must be seen and reset. */
  .matrix-wrap, #matrix-legend, .wide-only { display: none; }
  form.filters { flex-direction: column; align-items: stretch; }
  .phone-note { display: block; }
  pre { white-space: pre-wrap; word-break: break-word; }
}
"""

JS = """
(function () {
  var form = document.getElementById('filters');
  var table = document.getElementById('matrix');
  if (!form || !table) { return; }
  form.hidden = false;
  var status = document.getElementById('filter-status');
  var rows = Array.prototype.slice.call(table.querySelectorAll('tbody tr.req'));
  var groups = Array.prototype.slice.call(table.querySelectorAll('tbody tr.topic'));
  var libs = Array.prototype.slice.call(table.querySelectorAll('thead th[data-lib]'));
  var boxes = Array.prototype.slice.call(form.querySelectorAll('input[name=lib]'));
  function has(list, word) { return (' ' + list + ' ').indexOf(' ' + word + ' ') >= 0; }
  function read() {
    var raw = (location.hash || '').replace(/^#/, '');
    var params = new URLSearchParams(raw.indexOf('=') >= 0 ? raw : location.search);
    form.topic.value = params.get('topic') || '';
    form.cap.value = params.get('cap') || '';
    form.lang.value = params.get('lang') || '';
    form.q.value = params.get('q') || '';
    var chosen = (params.get('lib') || '').split(',');
    boxes.forEach(function (b) { b.checked = chosen.indexOf(b.value) >= 0; });
  }
  function write() {
    var params = new URLSearchParams();
    ['topic', 'cap', 'lang', 'q'].forEach(function (k) {
      if (form[k].value) { params.set(k, form[k].value); }
    });
    var chosen = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    if (chosen.length) { params.set('lib', chosen.join(',')); }
    var hash = params.toString();
    try { history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search); }
    catch (e) { location.hash = hash; }
  }
  function apply() {
    var topic = form.topic.value, cap = form.cap.value, lang = form.lang.value;
    var q = form.q.value.trim().toLowerCase();
    var chosen = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var hiddenLibs = {};
    var shownLibs = 0;
    libs.forEach(function (th) {
      var name = th.getAttribute('data-lib');
      var hide = (lang && th.getAttribute('data-lang') !== lang) ||
        (cap && !has(th.getAttribute('data-caps'), cap)) ||
        (chosen.length && chosen.indexOf(name) < 0);
      if (hide) { hiddenLibs[name] = true; } else { shownLibs += 1; }
    });
    var shown = 0;
    rows.forEach(function (row) {
      var ok = (!topic || row.getAttribute('data-topic') === topic) &&
        (!cap || has(row.getAttribute('data-profiles'), cap)) &&
        (!q || row.getAttribute('data-text').indexOf(q) >= 0);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    // A library that claims none of the requirements left (a topic, a search) is hidden too,
    // unless it was chosen by name: a column of "not claimed" answers nothing.
    libs.forEach(function (th, i) {
      var name = th.getAttribute('data-lib');
      if (hiddenLibs[name] || chosen.indexOf(name) >= 0 || !(topic || q) || !shown) { return; }
      var claims = rows.some(function (row) {
        var verdict = row.hidden ? '' : row.cells[i + 1].getAttribute('data-verdict');
        return verdict !== '' && verdict !== 'not-claimed';
      });
      if (!claims) { hiddenLibs[name] = true; shownLibs -= 1; }
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-lib]'), function (el) {
      if (el.tagName === 'INPUT') { return; }
      el.hidden = !!hiddenLibs[el.getAttribute('data-lib')];
    });
    // "passed by k of n" counts the libraries shown (the baseline apart), as the filters left them.
    var filtered = Object.keys(hiddenLibs).length > 0;
    rows.forEach(function (row) {
      var out = row.querySelector('.counted');
      if (!out) { return; }
      var judged = 0, passed = 0;
      Array.prototype.forEach.call(row.querySelectorAll('td[data-verdict]'), function (td) {
        var v = td.getAttribute('data-verdict');
        if (td.classList.contains('base') || hiddenLibs[td.getAttribute('data-lib')] ||
            v === '' || v === 'not-claimed') { return; }
        judged += 1;
        if (v === 'passed') { passed += 1; }
      });
      out.textContent = judged ? 'passed by ' + passed + ' of ' + judged + (filtered ? ' shown' : '')
        : 'claimed by no library' + (filtered ? ' shown' : '');
    });
    groups.forEach(function (g) {
      var name = g.getAttribute('data-topic');
      g.hidden = !rows.some(function (r) { return !r.hidden && r.getAttribute('data-topic') === name; });
    });
    status.textContent = 'Showing ' + shown + ' of ' + rows.length + ' requirements and ' + shownLibs +
      ' of ' + libs.length + ' libraries.';
    rescore(cap);
  }
  // A chosen capability re-scores the scorecard on the core and that capability (MUST passed of
  // MUST judged) and re-sorts it as the page sorts: by MUST passed, then fewer not passed; a
  // library that does not claim the capability goes last.
  var card = document.getElementById('scorecard');
  var ranked = card ? Array.prototype.slice.call(card.tBodies[0].rows) : [];
  function rescore(cap) {
    if (!card) { return; }
    var head = card.querySelector('thead th.chosen');
    head.hidden = !cap;
    head.textContent = cap ? 'MUST passed: core + ' + cap : '';
    var keyed = ranked.map(function (row, i) {
      var s = JSON.parse(row.getAttribute('data-scores') || '{}');
      var core = s.core || [0, 0], c = s[cap] || null;
      var td = row.querySelector('td.chosen');
      td.hidden = !cap;
      td.textContent = '';
      if (!cap) { return [0, 0, i, row]; }
      if (!c) { td.textContent = '– (' + cap + ' not claimed)'; return [-1, 0, i, row]; }
      var a = document.createElement('a');
      a.href = '#' + new URLSearchParams({cap: cap, lib: row.getAttribute('data-lib')}).toString();
      a.textContent = (core[0] + c[0]) + '/' + (core[1] + c[1]);
      a.title = cap + ': ' + c[0] + ' of ' + c[1] + ' MUST passed; core: ' + core[0] + ' of ' + core[1];
      td.appendChild(a);
      return [core[0] + c[0], (core[1] + c[1]) - (core[0] + c[0]), i, row];
    });
    keyed.sort(function (x, y) { return (y[0] - x[0]) || (x[1] - y[1]) || (x[2] - y[2]); });
    keyed.forEach(function (k) { card.tBodies[0].appendChild(k[3]); });
  }
  form.addEventListener('change', function () { apply(); write(); });
  form.addEventListener('input', function () { apply(); write(); });
  form.addEventListener('reset', function () { setTimeout(function () { apply(); write(); }, 0); });
  window.addEventListener('hashchange', function () { read(); apply(); });
  read();
  apply();
})();
"""


def e(text: object) -> str:
    """Escaped for HTML text and attribute values, commanding no CI runner (`_text.html`)."""
    return _text.html(str(text))


def inline(text: str) -> str:
    """A catalogue title: escaped, with `code` spans."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", e(text))


def plain_title(title: str) -> str:
    """A catalogue title without its notes on the seed documents it came from ("(seed 004 ...)"),
    which mean nothing to a reader choosing a library; the requirement's page keeps them. A
    sentence about a seed document ("Seed 000's fields ... are one conforming shape.") goes whole."""
    title = re.sub(r"\s*\([^()]*\bseed \d{3}\b[^()]*\)", "", title)
    return re.sub(r"\s*\bSeed \d{3}\b[^.]*(?:\([^()]*\)[^.]*)*\.", "", title)


def page(title: str, body: str, *, script: str = "", up: str = "") -> str:
    """A whole page: the shell, the navigation, the body."""
    nav = (f'<nav class="top" aria-label="Site"><a href="{up}index.html">Scorecard and matrix</a>'
           f'<a href="{up}history.html">History</a><a href="{up}glossary.html">Glossary</a>'
           f'<a href="{up}view.html">View a report</a></nav>\n')
    js = f"<script>{script}</script>" if script else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        '<a class="skip" href="#main">Skip to content</a>\n'
        f'{nav}<main id="main">\n{body}\n</main>\n'
        '<footer><p class="muted">Generated by <code>python -m conformance site</code> from the '
        "suite's JSON reports.</p></footer>\n"
        f"{js}\n</body>\n</html>\n"
    )


def verdict_mark(verdict: str) -> str:
    """A verdict as symbol and words (the symbol hidden from screen readers)."""
    icon, label = VERDICTS.get(verdict, VERDICTS[""])
    tag = ' <span class="tag">known</span>' if verdict == "known-failure" else ""
    return f'<span aria-hidden="true">{icon}</span> {e(label)}{tag}'


def level_tag(level: str) -> str:
    """MUST or SHOULD, as a tag."""
    return f'<span class="tag lvl-{e(level)}">{e(level.upper())}</span>'
