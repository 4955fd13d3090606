"""Verdicts per scenario and per requirement, and the JSON and Markdown reports."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from conformance._features import Requirement

Verdict = Literal["passed", "failed", "errored", "not-claimed", "known-failure"]

#: When scenarios of one requirement disagree, the first verdict of this list wins.
_PRECEDENCE: tuple[Verdict, ...] = ("errored", "failed", "known-failure", "passed", "not-claimed")


class ScenarioResult(BaseModel):
    """The verdict on one scenario."""

    model_config = ConfigDict(extra="forbid")
    id: str
    feature: str
    name: str
    requirement: str
    verdict: Verdict
    message: str = ""


class BindingInfo(BaseModel):
    """Which implementation the report is about."""

    name: str
    version: str
    capabilities: list[str]


class Report(BaseModel):
    """The whole run: `format_version` 1."""

    format_version: Literal[1] = 1
    binding: BindingInfo
    suite_version: str
    requirements: dict[str, Verdict]
    scenarios: list[ScenarioResult] = Field(default_factory=list)


def requirement_verdicts(
    results: Iterable[ScenarioResult], catalogue: dict[str, Requirement]
) -> dict[str, Verdict]:
    """A requirement passes only if all its claimed scenarios passed; catalogue order."""
    by_id: dict[str, list[Verdict]] = {}
    for result in results:
        by_id.setdefault(result.requirement, []).append(result.verdict)
    ordered = [rid for rid in catalogue if rid in by_id] + sorted(set(by_id) - set(catalogue))
    return {rid: next(v for v in _PRECEDENCE if v in by_id[rid]) for rid in ordered}


def write_json(report: Report, path: Path) -> None:
    """The report as JSON."""
    path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")


_ICONS = {"passed": "✅ passed", "failed": "❌ failed", "errored": "💥 errored",
          "not-claimed": "➖ not claimed", "known-failure": "⚠️ known failure"}


def markdown(report: Report, catalogue: dict[str, Requirement]) -> str:
    """A requirement-by-verdict matrix, fit for a CI step summary."""
    b = report.binding
    lines = [
        f"# Conformance of `{b.name}` {b.version}",
        "",
        f"Suite {report.suite_version}; capabilities claimed: "
        f"{', '.join(b.capabilities) or 'none'}.",
        "",
        "| Requirement | Profile | Verdict | What it asks |",
        "|---|---|---|---|",
    ]
    for rid, verdict in report.requirements.items():
        req = catalogue.get(rid)
        title = req.title.replace("|", "\\|") if req else ""
        lines.append(f"| {rid} | {req.profile if req else '?'} | {_ICONS[verdict]} | {title} |")
    failures = [s for s in report.scenarios if s.verdict in ("failed", "errored", "known-failure")]
    if failures:
        lines += ["", "## Scenarios that did not pass", ""]
        for s in failures:
            first = s.message.strip().splitlines()[0] if s.message.strip() else ""
            lines.append(f"- **{s.requirement}** {s.name} ({s.verdict}): {first}")
    return "\n".join(lines) + "\n"


def counts(report: Report) -> dict[str, int]:
    """How many requirements got each verdict."""
    tally: dict[str, int] = {}
    for verdict in report.requirements.values():
        tally[verdict] = tally.get(verdict, 0) + 1
    return tally


def dumps_property(result: ScenarioResult) -> str:
    """A scenario result as it travels in a report's user_properties (also across xdist)."""
    return json.dumps(result.model_dump())
