"""Verdicts per scenario and per requirement, and the JSON and Markdown reports."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Annotated, Literal, Protocol
from urllib.parse import quote

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from conformance import _text
from conformance._features import Requirement
from conformance._text import MESSAGE_LIMIT, capped

__all__ = ["MESSAGE_LIMIT", "capped"]  # where they were first defined

Verdict = Literal["passed", "failed", "errored", "not-claimed", "known-failure", "blocked"]
Level = Literal["must", "should"]

#: When scenarios of one requirement disagree, the first verdict of this list wins.
_PRECEDENCE: tuple[Verdict, ...] = ("errored", "failed", "known-failure", "blocked", "passed",
                                   "not-claimed")
#: How a report words a scenario its binding lists as a known failure but that passed (the site
#: reads it so in a run against an earlier release).
UNEXPECTED_PASS = "listed as a known failure but passed"
#: How a scenario the binding lists in `cannot_express` is worded ("not claimed: ...: <reason>"), so
#: that a requirement passed on the others shows the reason beside its "k of n".
CANNOT_EXPRESS = "the library cannot express this"
#: How long a requirement's reason may be in a report (a failure message can be megabytes).
REASON_LIMIT = 300
#: Text a binding, a harness or a library wrote: capped and safe for every writer as the report is
#: made, not where it is written (`_text`).
Message = Annotated[str, AfterValidator(_text.safe)]
Name = Annotated[str, AfterValidator(_text.name)]


class ScenarioResult(BaseModel):
    """The verdict on one scenario."""

    model_config = ConfigDict(extra="forbid")
    id: Message
    feature: Message
    name: Message
    requirement: Message
    verdict: Verdict
    message: Message = ""
    #: For a `blocked` scenario, the requirement whose failure blocked it.
    blocked_by: Name | None = None
    #: For a known failure, what the library did (the failure the scenario observed); `message` is
    #: the binding's declared reason. Both are shown, so a reason that no longer matches is seen.
    observed: str = ""
    #: How many auxiliary model calls of each kind the scenario's runs made (answered with the
    #: neutral standing answer, never from the script).
    auxiliary_calls: dict[str, int] = Field(default_factory=dict)


class BindingInfo(BaseModel):
    """Which implementation the report is about."""

    name: Name
    version: Name
    capabilities: list[Name]
    #: Each capability the binding does not claim, with its one-line reason.
    not_claimed: dict[Name, Message] = Field(default_factory=dict)
    #: Each scenario or requirement whose setup the library's API cannot express, with its reason.
    cannot_express: dict[Name, Message] = Field(default_factory=dict)
    contract_version: int = 1
    #: The installed version of each distribution the binding names in `Binding.dependencies`
    #: ("not installed" for one that is missing).
    dependencies: dict[Name, Name] = Field(default_factory=dict)
    #: The auxiliary model calls the binding named, each with its description (contract 3).
    auxiliary_calls: dict[str, str] = Field(default_factory=dict)
    #: How the binding fills each derivable contract field (`conformance.binding.PARITY`).
    parity: dict[str, str] = Field(default_factory=dict)
    #: A digest of the binding's source (`sha256:` and 16 hex digits): its Python module, or a
    #: harness's files and protocol modules. Two runs of one library release with different digests
    #: ran different bindings; "" when the source could not be read.
    digest: Name = ""
    #: Set when the run was made outside CI, saying why (`--conformance-run-outside-ci`): a library
    #: CI cannot install, whose committed report CI does not regenerate.
    run_outside_ci: Message | None = None


class Report(BaseModel):
    """The whole run: `format_version` 3 (2 lacks `levels`, `conforms`, `judged`, `observed` and
    `auxiliary_calls`; 1 also lacks `generated`, `reasons`, `not_claimed`, `blocked_by` and the
    `blocked` verdict)."""

    format_version: Literal[1, 2, 3] = 3
    binding: BindingInfo
    suite_version: Name
    #: When the run ended, ISO 8601 in UTC.
    generated: str | None = None
    requirements: dict[Name, Verdict]
    #: The level of every requirement in `requirements`: `must` or `should`.
    levels: dict[str, Level] = Field(default_factory=dict)
    #: Whether the library conforms: every MUST requirement of the core and of the capabilities
    #: it claims passed. None in a partial report, or when a run judged none of them.
    conforms: bool | None = None
    #: For a requirement that passed on only some of its scenarios (the others not claimed):
    #: `[k, n]`, k of its n scenarios judged; for a known failure listed by requirement ID whose
    #: other scenarios passed: `[k, n]`, k of its n scenarios known failures.
    judged: dict[str, list[int]] = Field(default_factory=dict)
    #: For every requirement not passed, one line saying why: the known failure's reason, the
    #: unclaimed capability's reason, the requirement that blocked it, or the first failure; for
    #: one passed on part of its scenarios, why the library cannot express the others, if so.
    reasons: dict[Name, Message] = Field(default_factory=dict)
    scenarios: list[ScenarioResult] = Field(default_factory=list)
    #: False while the run is going on (the report is rewritten after every scenario, so a process
    #: that ends early leaves this) and when it stopped early (interrupted, `-x`): then
    #: `requirements` holds only those whose every selected scenario ran, and `stopped_by` says why.
    complete: bool = True
    stopped_by: Message | None = None


class Judged(Protocol):
    """What a requirement's verdict is derived from: a scenario's requirement and verdict (a
    `ScenarioResult`, or a scenario of a report read back)."""

    @property
    def requirement(self) -> str: ...

    @property
    def verdict(self) -> Verdict: ...


def requirement_verdicts(
    results: Iterable[Judged], catalogue: dict[str, Requirement]
) -> dict[str, Verdict]:
    """A requirement passes only if all its claimed scenarios passed; catalogue order."""
    by_id: dict[str, list[Verdict]] = {}
    for result in results:
        by_id.setdefault(result.requirement, []).append(result.verdict)
    ordered = [rid for rid in catalogue if rid in by_id] + sorted(set(by_id) - set(catalogue))
    return {rid: next(v for v in _PRECEDENCE if v in by_id[rid]) for rid in ordered}


def levels(verdicts: dict[str, Verdict], catalogue: dict[str, Requirement]) -> dict[str, Level]:
    """The level of each judged requirement (`must` for one the catalogue does not know)."""
    return {rid: catalogue[rid].level if rid in catalogue else "must" for rid in verdicts}


def conforms(verdicts: dict[str, Verdict], catalogue: dict[str, Requirement]) -> bool | None:
    """Every MUST requirement that applies (core, or of a claimed capability) passed; None when
    no MUST requirement was judged."""
    must = [v for rid, v in verdicts.items()
            if (catalogue[rid].level if rid in catalogue else "must") == "must" and v != "not-claimed"]
    return all(v == "passed" for v in must) if must else None


def not_judged(verdicts: dict[str, Verdict], capabilities: Iterable[str],
               catalogue: dict[str, Requirement]) -> list[str]:
    """The MUST requirements of the core and of the claimed `capabilities` that a run did not
    judge (narrowed with `-k` or node ids)."""
    claimed = {"core", *capabilities}
    return [rid for rid, r in catalogue.items()
            if r.level == "must" and set(r.profile.split("|")) & claimed and rid not in verdicts]


def conforms_if_judged(verdicts: dict[str, Verdict], capabilities: Iterable[str],
                       catalogue: dict[str, Requirement]) -> bool | None:
    """`conforms`, except that a run which left a MUST requirement of the core or of the claims
    unjudged never says the library conforms (None): a MUST that failed still says it does not."""
    verdict = conforms(verdicts, catalogue)
    return None if verdict and not_judged(verdicts, capabilities, catalogue) else verdict


def judged(results: Iterable[ScenarioResult], verdicts: dict[str, Verdict],
           listed: Iterable[str] = ()) -> dict[str, list[int]]:
    """For each requirement passed on part of its scenarios, `[judged, selected]`; for each
    requirement `listed` by ID as a known failure whose entry covers only part of its scenarios
    (the others passed), `[known failures, selected]`."""
    results = list(results)
    tally: dict[str, list[int]] = {}
    for r in results:
        k_n = tally.setdefault(r.requirement, [0, 0])
        k_n[0] += r.verdict != "not-claimed"
        k_n[1] += 1
    partly = {}
    for rid in set(listed):
        verdicts_of = [r.verdict for r in results if r.requirement == rid]
        if verdicts.get(rid) == "known-failure" and "passed" in verdicts_of:
            partly[rid] = [verdicts_of.count("known-failure"), len(verdicts_of)]
    return {rid: partly.get(rid, k_n) for rid, k_n in tally.items()
            if (verdicts.get(rid) == "passed" and k_n[0] < k_n[1]) or rid in partly}


def verdict_text(report: Report, rid: str) -> str:
    """A requirement's verdict in words: `passed (2 of 3)` where it passed on part of its
    scenarios."""
    verdict = report.requirements[rid]
    k_n = report.judged.get(rid)
    return f"{verdict} ({k_n[0]} of {k_n[1]})" if k_n else verdict


def level_counts(report: Report) -> dict[Level, dict[str, int]]:
    """How many requirements of each level got each verdict."""
    tally: dict[Level, dict[str, int]] = {"must": {}, "should": {}}
    for rid, verdict in report.requirements.items():
        per = tally[report.levels.get(rid, "must")]
        per[verdict] = per.get(verdict, 0) + 1
    return tally


def conformance_line(report: Report, catalogue: dict[str, Requirement]) -> str:
    """One line: whether the library conforms, and the MUST and SHOULD tallies (an older report,
    which says neither, is read with the catalogue's levels)."""
    if not report.levels:
        report = report.model_copy(update={"levels": levels(report.requirements, catalogue)})
    if report.conforms is None and report.complete:
        report = report.model_copy(update={"conforms": conforms_if_judged(
            report.requirements, report.binding.capabilities, catalogue)})
    unjudged = not_judged(report.requirements, report.binding.capabilities, catalogue)
    parts = []
    for level, per in level_counts(report).items():
        if per:
            parts.append(f"{level.upper()}: " + ", ".join(f"{n} {v}" for v, n in sorted(per.items())))
    verdict = {True: "conforms", False: "does not conform", None: "conformance not judged"}[
        report.conforms]
    if report.conforms is None and report.complete and unjudged:
        verdict += (f": {len(unjudged)} MUST requirement(s) of the core and of its claims were not "
                    "judged (a run narrowed with -k or node ids); run the whole suite to judge it")
    return f"{report.binding.name} {verdict} ({'; '.join(parts) or 'nothing judged'})"


def requirement_reasons(
    results: Iterable[ScenarioResult], verdicts: dict[str, Verdict]
) -> dict[str, str]:
    """For each requirement not passed, the first message of a scenario with its verdict; for one
    passed beside scenarios the library cannot express, the first of those."""
    reasons: dict[str, str] = {}
    for result in results:
        verdict = verdicts.get(result.requirement)
        if verdict == "passed" and result.verdict == "not-claimed" and CANNOT_EXPRESS in result.message:
            verdict = "not-claimed"
        if verdict in (None, "passed") or result.verdict != verdict or result.requirement in reasons:
            continue
        reasons[result.requirement] = one_line(result.message) or verdict
    return {rid: reasons[rid] for rid in verdicts if rid in reasons}


def one_line(message: str, limit: int = REASON_LIMIT) -> str:
    """A message's first line, cut to `limit` characters."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def write_json(report: Report, path: Path) -> None:
    """The report as JSON."""
    write_atomically(path, report.model_dump_json(indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` at once: a reader, or a process killed midway, never sees half.
    Its folder is made if missing, as pytest does for `--junitxml`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


_ICONS = {"passed": "✅ passed", "failed": "❌ failed", "errored": "💥 errored",
          "not-claimed": "➖ not claimed", "known-failure": "❌ failed (known)",
          "blocked": "⛔ blocked"}


def _per_run(parity: dict[str, str]) -> str:
    """Where the library documents an agent is not safe to share, when the binding builds one per
    run; empty when runs share one agent."""
    concurrency = parity.get("concurrency", "")
    return concurrency.removeprefix("per-run:").strip() if concurrency.startswith("per-run:") else ""


def markdown(report: Report, catalogue: dict[str, Requirement]) -> str:
    """A requirement-by-verdict matrix, fit for a CI step summary."""
    b, md = report.binding, _text.markdown  # every text of the report escaped: it may be a binding's
    lines = [
        f"# Conformance of {_text.code(b.name)} {md(b.version)}",
        "",
        f"**{md(conformance_line(report, catalogue))}**: a library conforms when every MUST "
        "requirement of the core and of the capabilities it claims passes.",
        "",
        f"Suite {md(report.suite_version)}; capabilities claimed: "
        f"{md(', '.join(b.capabilities)) or 'none'}.",
        *(["", "Installed: " + md(", ".join(f"{d} {v}" for d, v in b.dependencies.items())) + "."]
          if b.dependencies else []),
        *(["", f"**{md(b.run_outside_ci)}**."] if b.run_outside_ci else []),
        *(["", f"**This is a partial report**: {md(report.stopped_by or 'the run did not finish')}. "
               "Only requirements whose every scenario ran have a verdict."]
          if not report.complete else []),
        *(["", "Not claimed:", "", *(f"- {_text.code(c)}: {md(r)}" for c, r in b.not_claimed.items())]
          if b.not_claimed else []),
        *(["", "The library's API cannot express (reported as not claimed):", "",
           *(f"- {_text.code(c)}: {md(r)}" for c, r in b.cannot_express.items())]
          if b.cannot_express else []),
        *(["", "Auxiliary model calls (answered with a neutral standing answer, never scripted):",
           "", *(f"- `{n}`: {d}" for n, d in b.auxiliary_calls.items())]
          if b.auxiliary_calls else []),
        *(["", f"Concurrent runs (ASYNC-2) use an agent built per run: {md(_per_run(b.parity))}."]
          if _per_run(b.parity) else []),
        "",
        "| Requirement | Level | Profile | Verdict | Why | What it asks |",
        "|---|---|---|---|---|---|",
    ]
    for rid, verdict in report.requirements.items():
        req = catalogue.get(rid)
        title = req.title.replace("|", "\\|") if req else ""
        why = md(report.reasons.get(rid, "")) if verdict != "failed" else ""
        k_n = report.judged.get(rid)
        shown = _ICONS[verdict] + (f" ({k_n[0]} of {k_n[1]})" if k_n else "")
        lines.append(f"| {md(rid)} | {report.levels.get(rid, 'must').upper()} "
                     f"| {_cell(req.profile) if req else '?'} | {shown} | {why} | {title} |")
    failures = [s for s in report.scenarios
                if s.verdict in ("failed", "errored", "known-failure", "blocked")]
    if failures:
        lines += ["", "## Scenarios that did not pass", ""]
        for s in failures:
            first = s.message.strip().splitlines()[0] if s.message.strip() else ""
            example = s.id[s.id.index("["):] if s.id.endswith("]") and "[" in s.id else ""
            observed = s.observed.strip().splitlines()[0] if s.observed.strip() else ""
            seen = f" Observed: {md(observed)}" if observed else ""
            lines.append(f"- **{md(s.requirement)}** {md(s.name)}"
                         f"{f' {_text.code(example)}' if example else ''} ({s.verdict}): {md(first)}"
                         f"{seen}")
    return "\n".join(lines) + "\n"


def _sentence(text: str) -> str:
    """`text` starting with a capital, as the first words of a line."""
    return text[:1].upper() + text[1:]


def comparison(reports: list[Report], catalogue: dict[str, Requirement]) -> str:
    """One table: a row per requirement, a column per implementation; every verdict that is not a
    pass carries a numbered note with its reason (a known failure reads as a failure)."""
    md = _text.markdown  # every text of a report escaped: it may be a binding's
    names = [md(f"{r.binding.name} {r.binding.version}") for r in reports]
    links = [f"[{md(r.binding.name)}]({quote(r.binding.name)}.md) {md(r.binding.version)}"
             for r in reports]
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
        "| Requirement | Level | What it asks | Profile | " + " | ".join(links) + " |",
        "|---|---|---|---|" + "---|" * len(names),
    ]
    notes: list[str] = []
    for rid, req in catalogue.items():
        cells = []
        for report, name in zip(reports, names, strict=True):
            verdict = report.requirements.get(rid)
            if verdict is None:
                cells.append("not run")
                continue
            k_n = report.judged.get(rid)
            cell = _ICONS[verdict] + (f" ({k_n[0]} of {k_n[1]})" if k_n else "")
            reason = report.reasons.get(rid)
            if verdict != "passed" and reason:
                notes.append(f"{len(notes) + 1}. **{name}**, {rid}: {md(reason)}")
                cell += f" [{len(notes)}]"
            cells.append(cell)
        lines.append(f"| {rid} | {req.level.upper()} | {_cell(req.title)} | {_cell(req.profile)} | "
                     + " | ".join(cells) + " |")
    lines += ["", "Whether each library conforms (every MUST requirement of the core and of its "
              "claims passed), its MUST and SHOULD tallies, and when its report was generated:", "",
              *(f"- {md(conformance_line(r, catalogue))} ({md(r.generated or 'date unknown')}, "
                f"suite {md(r.suite_version)})" for r in reports)]
    outside = [(name, r.binding.run_outside_ci) for r, name in zip(reports, names, strict=True)
               if r.binding.run_outside_ci]
    if outside:
        lines += ["", "Reports made outside CI (CI cannot install the library, so it does not regenerate "
                  "them):", "", *(f"- **{name}**: {md(why)}" for name, why in outside)]
    for report, name in zip(reports, names, strict=True):
        if report.binding.not_claimed:
            lines += ["", f"Not claimed by **{name}**:", "",
                      *(f"- {_text.code(c)}: {md(r)}" for c, r in report.binding.not_claimed.items())]
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


def dependency_versions(binding: object) -> dict[str, str]:
    """The installed version of each distribution the binding names, as the report records them;
    a harness's, as its welcome gives them (`dependency_versions`)."""
    declared = getattr(binding, "dependency_versions", None)
    if declared is not None:
        return dict(declared)
    found: dict[str, str] = {}
    for name in getattr(binding, "dependencies", ()):  # absent on a duck-typed binding
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found
