"""The reports as the site reads them: its own tolerant models, so that a report of any format (1,
2, or a newer one with fields the site does not know) renders, and every text a binding wrote is
cut to the reports' own limit before it reaches a page."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from conformance._text import name, safe

SiteVerdict = Literal["passed", "failed", "errored", "not-claimed", "known-failure", "blocked"]
Level = Literal["must", "should"]


class SiteBinding(BaseModel):
    """The implementation a report is about; `not_claimed` and `contract_version` are format 2."""

    model_config = ConfigDict(extra="ignore")
    name: str
    version: str
    capabilities: list[str] = Field(default_factory=list)
    not_claimed: dict[str, str] = Field(default_factory=dict)
    #: The scenarios or requirements whose setup the library's API cannot express (newer reports).
    cannot_express: dict[str, str] = Field(default_factory=dict)
    contract_version: int | None = None
    #: The installed versions of the distributions the binding names (newer reports).
    dependencies: dict[str, str] = Field(default_factory=dict)
    #: Why the report was run by hand, outside the suite's CI (newer reports; None: CI checks it).
    run_outside_ci: str | None = None


class SiteScenario(BaseModel):
    """One scenario's verdict; `blocked_by` is format 2, `observed` (what a known failure did, beside
    its declared reason) newer."""

    model_config = ConfigDict(extra="ignore")
    id: str
    feature: str
    name: str
    requirement: str
    verdict: SiteVerdict
    message: str = ""
    blocked_by: str | None = None
    observed: str | None = None


class SiteReport(BaseModel):
    """A JSON report as the site reads it. `generated` and `reasons` are format 2; `levels` (ID to
    `must`/`should`) and `conforms` newer: a report without them is judged by the catalogue."""

    model_config = ConfigDict(extra="ignore")
    format_version: int = 1
    binding: SiteBinding
    suite_version: str
    generated: str | None = None
    requirements: dict[str, SiteVerdict]
    reasons: dict[str, str] = Field(default_factory=dict)
    scenarios: list[SiteScenario] = Field(default_factory=list)
    levels: dict[str, Level] = Field(default_factory=dict)
    conforms: bool | None = None
    complete: bool = True
    stopped_by: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _per_requirement_objects(cls, data: Any) -> Any:
        """A requirement given as an object (`{"verdict": ..., "level": ...}`) rather than a bare
        verdict, or a level given on each scenario: the level joins `levels`."""
        if not isinstance(data, dict) or not isinstance(data.get("requirements"), dict):
            return data
        verdicts, levels = {}, dict(data.get("levels") or {})
        for scenario in data.get("scenarios") or []:  # a level carried by each scenario instead
            if isinstance(scenario, dict) and isinstance(scenario.get("level"), str):
                levels.setdefault(scenario.get("requirement"), scenario["level"].lower())
        for rid, entry in data["requirements"].items():
            if isinstance(entry, dict):
                verdicts[rid] = entry.get("verdict")
                if isinstance(entry.get("level"), str):
                    levels[rid] = entry["level"].lower()
            else:
                verdicts[rid] = entry
        return {**data, "requirements": verdicts, "levels": levels}


def _short(text: str) -> str:
    return name(text)


def capped(text: str) -> str:
    """A message: capped, UTF-8-encodable, without control characters (the reports' own rule)."""
    return safe(text)


def capped_report(report: SiteReport) -> SiteReport:
    """The report with every text a binding wrote cut to the reports' own limit: a page is never
    bigger than the report that made it."""
    b = report.binding
    binding = b.model_copy(update={
        "name": _short(b.name), "version": _short(b.version),
        "capabilities": [_short(c) for c in b.capabilities],
        "not_claimed": {_short(k): capped(v) for k, v in b.not_claimed.items()},
        "cannot_express": {_short(k): capped(v) for k, v in b.cannot_express.items()},
        "dependencies": {_short(k): _short(v) for k, v in b.dependencies.items()},
        "run_outside_ci": capped(b.run_outside_ci) if b.run_outside_ci else b.run_outside_ci})
    scenarios = [s.model_copy(update={
        "id": _short(s.id), "feature": _short(s.feature), "name": _short(s.name),
        "requirement": _short(s.requirement), "message": capped(s.message),
        "blocked_by": _short(s.blocked_by) if s.blocked_by else s.blocked_by,
        "observed": capped(s.observed) if s.observed else s.observed}) for s in report.scenarios]
    return report.model_copy(update={
        "binding": binding, "suite_version": _short(report.suite_version),
        "generated": _short(report.generated) if report.generated else report.generated,
        "requirements": {_short(k): v for k, v in report.requirements.items()},
        "reasons": {_short(k): capped(v) for k, v in report.reasons.items()},
        "levels": {_short(k): v for k, v in report.levels.items()},
        "stopped_by": capped(report.stopped_by) if report.stopped_by else report.stopped_by,
        "scenarios": scenarios})
