"""Verdicts over time: a snapshot per library per run, from reports of runs against earlier
releases (docs/history/*.json) and from the committed reports' git history, exported once into a
file of snapshots (`python -m conformance history`) so that the site is built from files alone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conformance._report import UNEXPECTED_PASS
from conformance._site._model import Level, SiteReport, SiteVerdict, parse_report


class Snapshot(BaseModel):
    """One run's verdicts for one library: enough to compare runs, not the whole report."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    library: str
    version: str
    suite_version: str
    generated: str = ""
    #: Where it comes from: `git <commit>` for a committed report, `run` for a report file.
    source: str = "run"
    requirements: dict[str, SiteVerdict]
    levels: dict[str, Level] = Field(default_factory=dict)

    @classmethod
    def of(cls, report: SiteReport, source: str = "run") -> Snapshot:
        """A report's snapshot."""
        return cls(library=report.binding.name, version=report.binding.version,
                   suite_version=report.suite_version, generated=report.generated or "",
                   source=source, requirements=report.requirements, levels=report.levels)

    def as_report(self) -> SiteReport:
        """The snapshot as a report without scenarios, for scoring."""
        return SiteReport.model_validate({
            "binding": {"name": self.library, "version": self.version},
            "suite_version": self.suite_version, "generated": self.generated or None,
            "requirements": self.requirements, "levels": self.levels})


class HistoryFile(BaseModel):
    """The file `python -m conformance history` writes."""

    model_config = ConfigDict(extra="ignore")
    snapshots: list[Snapshot]


def _key(s: Snapshot) -> tuple[str, str, str, str]:
    return (s.library, s.version, s.suite_version, json.dumps(s.requirements, sort_keys=True))


def distinct(snapshots: list[Snapshot]) -> list[Snapshot]:
    """Per library, oldest first, only the snapshots whose library version, suite version or
    verdicts differ from the one before: a run that changed nothing is not history."""
    kept: list[Snapshot] = []
    last: dict[str, tuple[str, str, str, str]] = {}
    for s in sorted(snapshots, key=lambda s: (s.library, s.generated, s.source)):
        if last.get(s.library) != _key(s):
            kept.append(s)
            last[s.library] = _key(s)
    return kept


def from_git(paths: list[Path]) -> list[Snapshot]:
    """Every committed version of each report file, from `git log` (oldest first per library)."""
    found: list[Snapshot] = []
    for path in paths:
        folder = path.resolve().parent
        log = subprocess.run(["git", "log", "--format=%H", "--", path.name], cwd=folder,
                             capture_output=True, text=True, check=True).stdout.split()
        for commit in log:
            shown = subprocess.run(["git", "show", f"{commit}:./{path.name}"], cwd=folder,
                                   capture_output=True, text=True)
            if shown.returncode != 0:
                continue
            try:
                report = parse_report(shown.stdout)
            except (ValidationError, ValueError):
                continue  # a report of a format the site cannot read is not history it can show
            found.append(Snapshot.of(report, f"git {commit[:10]}"))
    return distinct(found)


def as_earlier_release(report: SiteReport) -> SiteReport:
    """A run against an earlier release, read for history: a binding's known failures are the
    current release's, so a requirement whose only failures are scenarios listed as known that
    passed was met by this release (the run fails them to keep the list true, not the library)."""
    met = {}
    for rid, verdict in report.requirements.items():
        mine = [s for s in report.scenarios if s.requirement == rid]
        if verdict == "failed" and mine and all(
                s.verdict == "passed" or (s.verdict == "failed" and s.message.startswith(UNEXPECTED_PASS))
                for s in mine):
            met[rid] = "passed"
    return report.model_copy(update={"requirements": {**report.requirements, **met}}) if met else report


def load_history(paths: list[Path]) -> list[Snapshot]:
    """Snapshots from files or folders: reports (`--conformance-json`) and history files."""
    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    found: list[Snapshot] = []
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "snapshots" in data:
            found += HistoryFile.model_validate(data).snapshots
        else:
            found.append(Snapshot.of(as_earlier_release(SiteReport.model_validate(data)), "run"))
    return found


def write_history(snapshots: list[Snapshot], out: Path) -> None:
    """A history file, stable for the same snapshots."""
    data = {"snapshots": [s.model_dump() for s in distinct(snapshots)]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def previous(report: SiteReport, snapshots: list[Snapshot]) -> Snapshot | None:
    """The last earlier run of the same library (same name) whose verdicts or versions differ
    from this one, or that ran before it: what "changed since the last run" compares with."""
    mine = Snapshot.of(report)
    earlier = [s for s in snapshots if s.library == mine.library and s.generated < mine.generated
               and s.source != "run"]
    return max(earlier, key=lambda s: s.generated, default=None)


def changes(old: Snapshot, new: SiteReport) -> list[tuple[str, str, str]]:
    """(ID, verdict before, verdict now) for every requirement whose verdict moved."""
    ids = [*new.requirements, *(rid for rid in old.requirements if rid not in new.requirements)]
    return [(rid, old.requirements.get(rid, ""), new.requirements.get(rid, "")) for rid in ids
            if old.requirements.get(rid, "") != new.requirements.get(rid, "")]
