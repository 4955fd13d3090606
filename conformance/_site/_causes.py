"""Each failure's cause, shown once: a cause is a requirement that failed (or is a known failure)
on its own; the requirements blocked by it are its consequences, not failures of their own."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance._features import Requirement
from conformance._site._model import SiteReport
from conformance._site._score import FAILURES, level, reason

#: What the page's glossary says a cause is.
DEFINITION = ("A cause is a requirement that failed (or is a known failure) on its own, not blocked "
              "by another; the requirements blocked by it are counted apart, never as failures.")


@dataclass(frozen=True)
class Cause:
    """A requirement that did not pass on its own, its one-line reason, and those it blocked."""

    rid: str
    verdict: str
    reason: str
    blocked: list[str] = field(default_factory=list)


def causes(report: SiteReport) -> list[Cause]:
    """Every requirement failed, known-failure or errored on its own (in the report's order), each
    with the blocked requirements whose scenarios name it."""
    blocked: dict[str, list[str]] = {}
    for s in report.scenarios:
        if s.blocked_by and report.requirements.get(s.requirement) == "blocked":
            mine = blocked.setdefault(s.blocked_by, [])
            if s.requirement not in mine:
                mine.append(s.requirement)
    return [Cause(rid, verdict, reason(report, rid), blocked.get(rid, []))
            for rid, verdict in report.requirements.items()
            if verdict in (*FAILURES, "errored")]


def unattributed(report: SiteReport) -> list[str]:
    """Blocked requirements no cause of the report names (a blocker that passed, or a report
    without `blocked_by`)."""
    named = {rid for c in causes(report) for rid in c.blocked}
    return [rid for rid, v in report.requirements.items() if v == "blocked" and rid not in named]


def must_causes(report: SiteReport, requirements: dict[str, Requirement]) -> list[Cause]:
    """The causes that are MUST failures (failed or known-failure, not errored)."""
    return [c for c in causes(report) if c.verdict in FAILURES
            and level(report, c.rid, requirements) == "must"]


def must_failures(report: SiteReport, requirements: dict[str, Requirement]) -> str:
    """"n MUST failures, n causes; k requirements blocked by them" ("" when no MUST failed)."""
    failed = must_causes(report, requirements)
    if not failed:
        return ""
    blocked = {rid for c in failed for rid in c.blocked}
    def n(k: int, word: str) -> str:
        return f"{k} {word}{'' if k == 1 else 's'}"
    text = f"{n(len(failed), 'MUST failure')}, {n(len(failed), 'cause')}"
    return text + (f"; {n(len(blocked), 'requirement')} blocked by them" if blocked else "")
