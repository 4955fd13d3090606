"""view.html: a report of one's own (`--conformance-json`), opened from disk in the browser and shown
as the site shows a bundled one's verdicts: nothing is uploaded, the page reads the file itself."""

from __future__ import annotations

import json

from conformance._site._context import Site
from conformance._site._html import VERDICTS, page, plain_title

#: Reads the chosen file, checks it is a report, and writes its verdicts with the DOM's text nodes
#: (never as HTML: a report's reasons are a library's words).
VIEW_JS = """
(function () {
  var input = document.getElementById('report-file');
  var out = document.getElementById('report-view');
  var catalogue = JSON.parse(document.getElementById('catalogue').textContent);
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function refuse(why) {
    out.replaceChildren(el('p', 'This file is not a conformance report: ' + why +
      '. Choose the file pytest --conformance-json=report.json wrote.', 'refused'));
  }
  function show(report) {
    var b = report.binding || {};
    var verdicts = report.requirements;
    var levels = report.levels || {};
    var ids = Object.keys(verdicts);
    var must = 0, passed = 0;
    ids.forEach(function (rid) {
      var level = levels[rid] || (catalogue.requirements[rid] || {}).level || 'must';
      if (level === 'must' && verdicts[rid] !== 'not-claimed') {
        must += 1;
        if (verdicts[rid] === 'passed') { passed += 1; }
      }
    });
    var ok = typeof report.conforms === 'boolean' ? report.conforms : (must > 0 && passed === must);
    var parts = [el('h2', String(b.name || '?') + ' ' + String(b.version || '')),
                 el('p', (ok ? 'Conforms' : 'Does not conform') + ': ' + passed + ' of ' + must +
                    ' MUST requirements passed (suite ' + String(report.suite_version || '?') + ').')];
    var table = el('table');
    var head = el('tr');
    ['Requirement', 'Level', 'Verdict', 'Reason'].forEach(function (h) {
      var th = el('th', h); th.scope = 'col'; head.appendChild(th);
    });
    table.appendChild(el('thead')).appendChild(head);
    var body = table.appendChild(el('tbody'));
    ids.forEach(function (rid) {
      var row = el('tr');
      var known = catalogue.requirements[rid];
      var name = el('th');
      name.scope = 'row';
      if (known) {
        var link = el('a', rid); link.href = 'req/' + known.page + '.html'; name.appendChild(link);
        name.appendChild(el('span', ' ' + known.title, 'muted'));
      } else { name.textContent = rid; }
      row.appendChild(name);
      row.appendChild(el('td', (levels[rid] || (known || {}).level || 'must').toUpperCase()));
      var verdict = String(verdicts[rid]);
      row.appendChild(el('td', catalogue.verdicts[verdict] || verdict, 'v-' + verdict));
      row.appendChild(el('td', String((report.reasons || {})[rid] || '')));
      body.appendChild(row);
    });
    parts.push(table);
    out.replaceChildren.apply(out, parts);
  }
  input.addEventListener('change', function () {
    var file = input.files[0];
    if (!file) { return; }
    file.text().then(function (text) {
      var report;
      try { report = JSON.parse(text); } catch (err) {
        refuse('it is not JSON (' + err.message + ')'); return;
      }
      if (!report || typeof report !== 'object' || !report.requirements ||
          typeof report.requirements !== 'object' || Array.isArray(report.requirements)) {
        refuse('it has no "requirements" object'); return;
      }
      show(report);
    }, function (err) { refuse('it could not be read (' + err.message + ')'); });
  });
})();
"""


def viewer(site: Site) -> str:
    """view.html."""
    data = {"requirements": {rid: {"title": plain_title(req.title), "level": req.level,
                                   "page": site.req_slug(rid)}
                             for rid, req in site.requirements.items() if rid in site.ids},
            "verdicts": {v: label for v, (_, label) in VERDICTS.items() if v}}
    # In a script element, `</` would end it early: JSON allows the escaped form.
    embedded = json.dumps(data, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    body = f"""<h1>View a report of your own</h1>
<p class="lead">Choose the JSON report a run wrote (<code>pytest --impl mypkg
--conformance-json=report.json</code>): this page reads it in your browser, sends it nowhere, and
shows its verdicts as the site shows a bundled library's, each requirement linked to what it asks.
For the whole site from it (scenarios, causes, badges):
<code>python -m conformance site report.json --out site</code>.</p>
<p><label for="report-file">Report (JSON)</label> <input type="file" id="report-file"
accept=".json,application/json"></p>
<section id="report-view" aria-live="polite"></section>
<script type="application/json" id="catalogue">{embedded}</script>"""
    return page("View a report of your own", body, script=VIEW_JS)
