"""The compatibility site: static HTML pages and badges built from JSON reports alone."""

from __future__ import annotations

import json
from pathlib import Path

from conformance._features import Requirement, catalogue, features_dir
from conformance._site._badges import badge_json, badge_svg
from conformance._site._context import Site
from conformance._site._gherkin import gherkin
from conformance._site._glossary import glossary
from conformance._site._history import Snapshot, from_git, load_history, write_history
from conformance._site._index import index
from conformance._site._inputs import InputRefused, load_report, read_report
from conformance._site._library import capabilities_of, library, markdown
from conformance._site._meta import meta
from conformance._site._model import SiteReport, capped_report
from conformance._site._output import SiteOutputError, write_site
from conformance._site._requirement import requirement
from conformance._site._score import reason
from conformance._site._timeline import earlier_report, timeline
from conformance._site._viewer import viewer

__all__ = ["InputRefused", "SiteOutputError", "SiteReport", "Snapshot", "badge_json", "badge_svg",
           "build_site", "from_git", "load_history", "load_report", "read_report", "reason",
           "write_history"]


def build_site(reports: list[SiteReport], out: Path, *, requirements: dict[str, Requirement] | None = None,
               features: Path | None = None, history: list[Snapshot] | None = None,
               repository: str | None = None, base_url: str | None = None) -> list[Path]:
    """Write the whole site into `out` (replacing a site written there before); returns the files.

    `repository` and `base_url` default to `libraries.toml`'s `[suite]`: the one place that names
    them, for the committed build and the Pages workflow alike."""
    data = meta()
    site = Site(reports=[capped_report(r) for r in reports],
                requirements=catalogue() if requirements is None else requirements, meta=data,
                gherkin=gherkin(features_dir() if features is None else features),
                repository=(data.suite.repository if repository is None else repository).rstrip("/"),
                base_url=data.suite.base_url if base_url is None else base_url, history=history or [])
    pages: dict[str, str] = {"index.html": index(site), "glossary.html": glossary(site),
                             "history.html": timeline(site), "view.html": viewer(site)}
    for report in site.reports:
        slug = site.slugs[report.binding.name]
        pages[f"lib/{slug}.html"] = library(site, report)
        pages[f"lib/{slug}.json"] = report.model_dump_json(indent=1, exclude_defaults=True) + "\n"
        pages[f"lib/{slug}.md"] = markdown(site, report)
        for cap in [None, *capabilities_of(report, site)]:
            stem = f"badges/{slug}" if cap is None else f"badges/{slug}/{cap}"
            pages[f"{stem}.json"] = json.dumps(badge_json(report, site.requirements, cap), indent=2) + "\n"
            pages[f"{stem}.svg"] = badge_svg(report, site.requirements, cap)
    for rid in site.ids:
        pages[f"req/{site.req_slug(rid)}.html"] = requirement(site, rid)
    for snapshot in site.history:  # runs against earlier releases, downloadable as they were
        if snapshot.report is not None:
            pages[earlier_report(site, snapshot)] = snapshot.report.model_dump_json(
                indent=1, exclude_defaults=True) + "\n"
    return write_site(out, pages)
