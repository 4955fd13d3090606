"""Verdicts per scenario and per requirement, and the JSON and Markdown reports."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance._features import Requirement

Verdict = Literal["passed", "failed", "errored", "not-claimed", "known-failure", "blocked"]

#: When scenarios of one requirement disagree, the first verdict of this list wins.
_PRECEDENCE: tuple[Verdict, ...] = ("errored", "failed", "known-failure", "blocked", "passed",
                                   "not-claimed")
#: How long a requirement's reason may be in a report (a failure message can be megabytes).
REASON_LIMIT = 300
#: How long one scenario's message may be anywhere it is shown: terminal, JSON, Markdown, JUnit.
MESSAGE_LIMIT = 2000


class ScenarioResult(BaseModel):
    """The verdict on one scenario."""

    model_config = ConfigDict(extra="forbid")
    id: str
    feature: str
    name: str
    requirement: str
    verdict: Verdict
    message: str = ""
    #: For a `blocked` scenario, the requirement whose failure blocked it.
    blocked_by: str | None = None


class BindingInfo(BaseModel):
    """Which implementation the report is about."""

    name: str
    version: str
    capabilities: list[str]
    #: Each capability the binding does not claim, with its one-line reason.
    not_claimed: dict[str, str] = Field(default_factory=dict)
    contract_version: int = 1
    #: The installed version of each distribution the binding names in `Binding.dependencies`
    #: ("not installed" for one that is missing).
    dependencies: dict[str, str] = Field(default_factory=dict)


class Report(BaseModel):
    """The whole run: `format_version` 2 (1 lacks `generated`, `reasons`, `not_claimed`,
    `blocked_by` and the `blocked` verdict)."""

    format_version: Literal[1, 2] = 2
    binding: BindingInfo
    suite_version: str
    #: When the run ended, ISO 8601 in UTC.
    generated: str | None = None
    requirements: dict[str, Verdict]
    #: For every requirement not passed, one line saying why: the known failure's reason, the
    #: unclaimed capability's reason, the requirement that blocked it, or the first failure.
    reasons: dict[str, str] = Field(default_factory=dict)
    scenarios: list[ScenarioResult] = Field(default_factory=list)
    #: False while the run is going on (the report is rewritten after every scenario, so a process
    #: that ends early leaves this) and when it stopped early (interrupted, `-x`): then
    #: `requirements` holds only those whose every selected scenario ran, and `stopped_by` says why.
    complete: bool = True
    stopped_by: str | None = None


def requirement_verdicts(
    results: Iterable[ScenarioResult], catalogue: dict[str, Requirement]
) -> dict[str, Verdict]:
    """A requirement passes only if all its claimed scenarios passed; catalogue order."""
    by_id: dict[str, list[Verdict]] = {}
    for result in results:
        by_id.setdefault(result.requirement, []).append(result.verdict)
    ordered = [rid for rid in catalogue if rid in by_id] + sorted(set(by_id) - set(catalogue))
    return {rid: next(v for v in _PRECEDENCE if v in by_id[rid]) for rid in ordered}


def requirement_reasons(
    results: Iterable[ScenarioResult], verdicts: dict[str, Verdict]
) -> dict[str, str]:
    """For each requirement not passed, the first message of a scenario with its verdict."""
    reasons: dict[str, str] = {}
    for result in results:
        verdict = verdicts.get(result.requirement)
        if verdict in (None, "passed") or result.verdict != verdict or result.requirement in reasons:
            continue
        reasons[result.requirement] = one_line(result.message) or verdict
    return {rid: reasons[rid] for rid in verdicts if rid in reasons}


def one_line(message: str, limit: int = REASON_LIMIT) -> str:
    """A message's first line, cut to `limit` characters."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def capped(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text`, cut to `limit` characters with how many more there were: a failure message can hold
    a multi-megabyte argument."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more chars)"


def write_json(report: Report, path: Path) -> None:
    """The report as JSON."""
    write_atomically(path, report.model_dump_json(indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` at once: a reader, or a process killed midway, never sees half."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


_ICONS = {"passed": "✅ passed", "failed": "❌ failed", "errored": "💥 errored",
          "not-claimed": "➖ not claimed", "known-failure": "❌ failed (known)",
          "blocked": "⛔ blocked"}


def markdown(report: Report, catalogue: dict[str, Requirement]) -> str:
    """A requirement-by-verdict matrix, fit for a CI step summary."""
    b = report.binding
    lines = [
        f"# Conformance of `{b.name}` {b.version}",
        "",
        f"Suite {report.suite_version}; capabilities claimed: "
        f"{', '.join(b.capabilities) or 'none'}.",
        *(["", "Installed: " + ", ".join(f"{d} {v}" for d, v in b.dependencies.items()) + "."]
          if b.dependencies else []),
        *(["", f"**This is a partial report**: {report.stopped_by or 'the run did not finish'}. "
               "Only requirements whose every scenario ran have a verdict."]
          if not report.complete else []),
        *(["", "Not claimed:", "", *(f"- `{c}`: {r}" for c, r in b.not_claimed.items())]
          if b.not_claimed else []),
        "",
        "| Requirement | Profile | Verdict | Why | What it asks |",
        "|---|---|---|---|---|",
    ]
    for rid, verdict in report.requirements.items():
        req = catalogue.get(rid)
        title = req.title.replace("|", "\\|") if req else ""
        why = _cell(report.reasons.get(rid, "")) if verdict != "failed" else ""
        lines.append(f"| {rid} | {_cell(req.profile) if req else '?'} | {_ICONS[verdict]} | {why} "
                     f"| {title} |")
    failures = [s for s in report.scenarios
                if s.verdict in ("failed", "errored", "known-failure", "blocked")]
    if failures:
        lines += ["", "## Scenarios that did not pass", ""]
        for s in failures:
            first = s.message.strip().splitlines()[0] if s.message.strip() else ""
            example = s.id[s.id.index("["):] if s.id.endswith("]") and "[" in s.id else ""
            lines.append(f"- **{s.requirement}** {s.name}{f' `{example}`' if example else ''} "
                         f"({s.verdict}): {first}")
    return "\n".join(lines) + "\n"


def comparison(reports: list[Report], catalogue: dict[str, Requirement]) -> str:
    """One table: a row per requirement, a column per implementation; every verdict that is not a
    pass carries a numbered note with its reason (a known failure reads as a failure)."""
    names = [f"{r.binding.name} {r.binding.version}" for r in reports]
    links = [f"[{r.binding.name}]({r.binding.name}.md) {r.binding.version}" for r in reports]
    lines = [
        "# Conformance of agent libraries",
        "",
        "Generated by `nox -s peers` (`python -m conformance compare <reports>`) from the JSON "
        "reports beside this file; do not edit by hand. Each library's own page (linked in the "
        "header) explains every failure; the notes below the table say why each requirement was "
        "not passed.",
        "",
        "Legend: " + "; ".join(f"{icon}: {meaning}" for icon, meaning in _LEGEND) + ".",
        "",
        "| Requirement | What it asks | Profile | " + " | ".join(links) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    notes: list[str] = []
    for rid, req in catalogue.items():
        cells = []
        for report, name in zip(reports, names, strict=True):
            verdict = report.requirements.get(rid)
            if verdict is None:
                cells.append("not run")
                continue
            cell = _ICONS[verdict]
            reason = report.reasons.get(rid)
            if verdict != "passed" and reason:
                notes.append(f"{len(notes) + 1}. **{name}**, {rid}: {reason}")
                cell += f" [{len(notes)}]"
            cells.append(cell)
        lines.append(f"| {rid} | {_cell(req.title)} | {_cell(req.profile)} | " + " | ".join(cells) + " |")
    totals = [", ".join(f"{n} {v}" for v, n in sorted(counts(r).items())) for r in reports]
    lines += ["", "Totals, and when each report was generated:", "",
              *(f"- **{name}** ({r.generated or 'date unknown'}, suite {r.suite_version}): {total}"
                for name, r, total in zip(names, reports, totals, strict=True))]
    for report, name in zip(reports, names, strict=True):
        if report.binding.not_claimed:
            lines += ["", f"Not claimed by **{name}**:", "",
                      *(f"- `{c}`: {r}" for c, r in report.binding.not_claimed.items())]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


_LEGEND = (
    ("✅ passed", "the library did what the requirement asks"),
    ("❌ failed", "it did not; the note says what it did"),
    ("❌ failed (known)", "a failure the binding lists, with its reason"),
    ("⛔ blocked", "a requirement it depends on failed, so it could not be judged"),
    ("➖ not claimed", "it needs a capability the library lacks, for the reason given"),
    ("💥 errored", "the binding broke: no verdict on the library"),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def counts(report: Report) -> dict[str, int]:
    """How many requirements got each verdict."""
    tally: dict[str, int] = {}
    for verdict in report.requirements.values():
        tally[verdict] = tally.get(verdict, 0) + 1
    return tally


def dumps_property(result: ScenarioResult) -> str:
    """A scenario result as it travels in a report's user_properties (also across xdist)."""
    return json.dumps(result.model_dump())
