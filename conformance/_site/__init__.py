"""The compatibility site: static HTML pages and badges built from JSON reports (format 1 or 2)."""

from conformance._site._output import SiteOutputError
from conformance._site._pages import (
    SiteReport,
    badge_json,
    badge_svg,
    build_site,
    core_score,
    load_report,
    reason,
)

__all__ = ["SiteOutputError", "SiteReport", "badge_json", "badge_svg", "build_site", "core_score",
           "load_report", "reason"]
