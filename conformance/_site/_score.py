"""What a report's verdicts add up to: each requirement's level, whether it applies, the MUST and
SHOULD tallies per topic and overall, and whether the library conforms (catalogue v3: every MUST of
the core and of the capabilities it claims passed)."""

from __future__ import annotations

from dataclasses import dataclass

from conformance._features import Requirement
from conformance._site._model import Level, SiteReport

#: Verdicts that are a failure to show as one (a known failure is a failure with a reason).
FAILURES = ("failed", "known-failure")
NOT_PASSED = ("failed", "known-failure", "errored", "blocked")


def level(report: SiteReport | None, rid: str, requirements: dict[str, Requirement]) -> Level:
    """The report's level for `rid` where it gives one, else the catalogue's; MUST when neither
    knows the ID."""
    if report is not None and rid in report.levels:
        return report.levels[rid]
    req = requirements.get(rid)
    return req.level if req else "must"


def applies(report: SiteReport, rid: str) -> bool:
    """The requirement judged this library (it was run, and claimed)."""
    return report.requirements.get(rid, "not-claimed") != "not-claimed"


@dataclass(frozen=True)
class Tally:
    """k of n requirements passed (n: those that apply)."""

    passed: int = 0
    total: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.passed + other.passed, self.total + other.total)

    @property
    def text(self) -> str:
        return f"{self.passed}/{self.total}" if self.total else "–"

    @property
    def share(self) -> float:
        return self.passed / self.total if self.total else 0.0


def tally(report: SiteReport, ids: list[str], want: Level,
          requirements: dict[str, Requirement]) -> Tally:
    """Of `ids`, those of level `want` that apply to the library, and how many of them passed."""
    mine = [rid for rid in ids if applies(report, rid) and level(report, rid, requirements) == want]
    return Tally(sum(report.requirements[rid] == "passed" for rid in mine), len(mine))


def conforms(report: SiteReport, requirements: dict[str, Requirement]) -> bool:
    """The report's own word where it gives one; else every MUST it judged passed, in a complete
    run (a report older than the catalogue is judged on what it judged: `unjudged` says what)."""
    if report.conforms is not None:
        return report.conforms
    must = tally(report, list(report.requirements), "must", requirements)
    return report.complete and must.total > 0 and must.passed == must.total


def unjudged(report: SiteReport, requirements: dict[str, Requirement]) -> list[str]:
    """Catalogue requirements the report does not mention: it predates them."""
    return [rid for rid in requirements if rid not in report.requirements]


def reason(report: SiteReport, rid: str) -> str:
    """Why a requirement got its verdict, in one line ("" when nothing says, or it passed on all
    the scenarios the library can express)."""
    verdict = report.requirements.get(rid, "")
    if verdict == "":
        return ""
    if verdict == "passed":  # the report's reason of a pass: why the library cannot express the rest
        return first_line(report.reasons.get(rid, ""))
    if report.reasons.get(rid):
        return first_line(report.reasons[rid])
    if verdict == "blocked":
        blockers = [s.blocked_by for s in report.scenarios if s.requirement == rid and s.blocked_by]
        if blockers:
            return f"blocked by {blockers[0]}"
    for s in report.scenarios:
        if s.requirement == rid and s.verdict == verdict and s.message.strip():
            return first_line(s.message)
    return ""


def first_line(text: str) -> str:
    """The first line of `text`, stripped."""
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else ""
