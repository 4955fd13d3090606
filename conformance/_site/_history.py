"""Verdicts over time: a snapshot per library per run, from reports of runs against earlier
releases (docs/history/*.json) and from the committed reports' git history, exported once into a
file of snapshots (`python -m conformance history`) so that the site is built from files alone."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from conformance._report import UNEXPECTED_PASS
from conformance._site._inputs import (
    MAX_BYTES,
    InputRefused,
    check_verdicts,
    parse_json,
    read_json,
    read_report,
    report_of,
    rows,
    validated,
)
from conformance._site._model import Level, SiteReport, SiteVerdict

#: Where a history file's snapshot comes from, as `history` writes it.
_SOURCE = re.compile(r"run|git [0-9a-f]{7,40}")


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
    #: The digest of the binding that ran ("" for a report from before reports recorded it).
    binding_digest: str = ""
    #: The whole report of a run against an earlier release, for the site to offer for download;
    #: never written into a history file (the report file itself is the record).
    report: SiteReport | None = Field(default=None, exclude=True, repr=False)

    @classmethod
    def of(cls, report: SiteReport, source: str = "run") -> Snapshot:
        """A report's snapshot."""
        return cls(library=report.binding.name, version=report.binding.version,
                   suite_version=report.suite_version, generated=report.generated or "",
                   source=source, requirements=report.requirements, levels=report.levels,
                   binding_digest=report.binding.digest)

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

    @field_validator("snapshots")
    @classmethod
    def _sources(cls, snapshots: list[Snapshot]) -> list[Snapshot]:
        """Each snapshot comes from a run or a commit (`git` and its hash), as `history` writes."""
        for s in snapshots:
            if not _SOURCE.fullmatch(s.source):
                raise ValueError(f"source {s.source[:60]!r} of {s.library[:60]!r} is neither 'run' "
                                 "nor 'git' and a commit's hash")
        return snapshots


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


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=folder, capture_output=True)
    except OSError as e:  # no git on PATH
        raise InputRefused(folder, f"git cannot run ({e.strerror})", "install git") from None


def _committed(path: Path) -> list[str]:
    """The commits that changed `path`, newest first; refused when git does not track it."""
    read_report(path)  # the file itself is an input, and checked as one
    folder = path.resolve().parent
    if _git(folder, "rev-parse", "--show-toplevel").returncode != 0:
        raise InputRefused(path, "not in a git repository (history reads the file's committed versions)",
                           "give a report tracked by git, or pass the report itself to site --history")
    log = _git(folder, "log", "--format=%H", "--", path.name)
    commits = log.stdout.decode("ascii", "replace").split() if log.returncode == 0 else []
    if not commits:
        raise InputRefused(path, "has no committed version", "commit it first (git add, git commit)")
    return commits


def from_git(paths: list[Path]) -> list[Snapshot]:
    """Every committed version of each report file, from `git log` (oldest first per library). A
    version the suite cannot read, or whose verdicts its scenarios contradict, is not history."""
    found: list[Snapshot] = []
    for path in paths:
        folder = path.resolve().parent
        for commit in _committed(path):
            size = _git(folder, "cat-file", "-s", f"{commit}:./{path.name}")
            if size.returncode != 0 or int(size.stdout or b"0") > MAX_BYTES:
                continue
            shown = _git(folder, "show", f"{commit}:./{path.name}")
            where = f"{path} at {commit[:10]}"
            try:
                report = check_verdicts(report_of(parse_json(shown.stdout, where), where), where)
            except InputRefused:
                continue
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
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise InputRefused(missing[0], "no such file or folder", "check the --history path")
    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    found: list[Snapshot] = []
    for f in files:
        data = read_json(f)
        if isinstance(data, dict) and "snapshots" in data:
            todo = "give a file written by python -m conformance history"
            rows(data, "snapshots", f, todo)
            found += validated(HistoryFile, data, f, todo).snapshots
        else:
            report = check_verdicts(report_of(data, f), f)
            found.append(Snapshot.of(as_earlier_release(report), "run").model_copy(update={"report": report}))
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
