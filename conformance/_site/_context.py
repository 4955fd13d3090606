"""Everything a page needs, computed once: the reports in the order the site shows them (the
baseline apart, then libraries by score, each followed by its opt-in variants), their page names,
the catalogue, the library facts and the Gherkin."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance._features import Requirement
from conformance._site._gherkin import GherkinScenario
from conformance._site._history import Snapshot
from conformance._site._meta import Library, Meta
from conformance._site._model import SiteReport
from conformance._site._output import slug, unique_slugs
from conformance._site._score import Tally, tally


@dataclass
class Site:
    """The site's inputs, ordered and indexed."""

    reports: list[SiteReport]
    requirements: dict[str, Requirement]
    meta: Meta
    gherkin: dict[tuple[str, str], GherkinScenario]
    repository: str = ""
    base_url: str = ""
    history: list[Snapshot] = field(default_factory=list)
    slugs: dict[str, str] = field(init=False)
    ids: list[str] = field(init=False)

    def __post_init__(self) -> None:
        names = [r.binding.name for r in self.reports]
        self.slugs = dict(zip(names, unique_slugs(names, "library", "library"), strict=True))
        extra = sorted({rid for r in self.reports for rid in r.requirements} - set(self.requirements))
        self.ids = [*self.requirements, *extra]
        unique_slugs(self.ids, "requirement", "requirement")
        self.reports = self._ordered()

    def _ordered(self) -> list[SiteReport]:
        by_name = {r.binding.name: r for r in self.reports}
        def base(r: SiteReport) -> str:
            variant_of = self.library(r.binding.name).variant_of
            return variant_of if variant_of in by_name and variant_of != r.binding.name else ""
        roots = [r for r in self.reports if not base(r) and not self.is_baseline(r)]
        # By MUST requirements passed, a count, so that claiming less never ranks a library higher
        # (a share would: 5/5 over 30/31); then by fewer MUST requirements not passed.
        roots.sort(key=lambda r: (-self.must(r).passed, self.must(r).total - self.must(r).passed,
                                  r.binding.name))
        ordered = [r for r in self.reports if self.is_baseline(r)]
        for root in roots:
            ordered.append(root)
            ordered += sorted((r for r in self.reports if base(r) == root.binding.name),
                              key=lambda r: r.binding.name)
        return ordered + [r for r in self.reports if r not in ordered]

    def is_baseline(self, report: SiteReport) -> bool:
        """The suite's own reference: shown apart, never ranked."""
        return report.binding.name == self.meta.suite.baseline

    def library(self, name: str) -> Library:
        """The facts the data file holds for a library (empty where it has none)."""
        return self.meta.library(name)

    def must(self, report: SiteReport) -> Tally:
        """MUST requirements passed of those that apply."""
        return tally(report, self.ids, "must", self.requirements)

    def should(self, report: SiteReport) -> Tally:
        """SHOULD requirements passed of those that apply."""
        return tally(report, self.ids, "should", self.requirements)

    def catalogue(self) -> str:
        """The requirement catalogue the newest report was judged on: catalogue N is suite 0.N.x
        (README, Versions); "" when no report's suite version says."""
        minors = [int(parts[1]) for r in self.reports
                  if len(parts := r.suite_version.split(".")) > 1 and parts[0] == "0" and parts[1].isdigit()]
        return str(max(minors)) if minors else ""

    def req_slug(self, rid: str) -> str:
        """The file name of a requirement's page."""
        return slug(rid, "requirement")

    def topics(self) -> list[tuple[str, list[str]]]:
        """Each topic with its IDs present in the catalogue or the reports, in order; "Other" last."""
        placed = {rid for t in self.meta.topics for rid in t.requirements}
        found = [(t.name, [rid for rid in t.requirements if rid in self.ids]) for t in self.meta.topics]
        other = [rid for rid in self.ids if rid not in placed]
        return [(name, ids) for name, ids in [*found, ("Other", other)] if ids]
