"""Badges: shields.io endpoint JSON and a standalone SVG, overall (does the library conform; MUST
requirements passed) and per capability it claims."""

from __future__ import annotations

import html

from conformance._features import Requirement
from conformance._site._model import SiteReport
from conformance._site._score import Tally, conforms, tally

#: (at least this share passed, shields colour name, the SVG's fill): the fills are darker than
#: shields' own so the white text reads at 4.5:1.
COLOURS = (
    (1.0, "brightgreen", "#1a7f37"), (0.8, "green", "#4b7a0c"), (0.6, "yellow", "#8a6100"),
    (0.4, "orange", "#bc4c00"), (0.0, "red", "#cf222e"))


def _colour(score: Tally) -> tuple[str, str]:
    return next((name, fill) for floor, name, fill in COLOURS if score.share >= floor)


def profiles(profile: str) -> list[str]:
    """`core`, one capability, or alternatives joined by `|`."""
    return [p.strip() for p in profile.split("|") if p.strip()]


def must_score(report: SiteReport, requirements: dict[str, Requirement],
               capability: str | None = None) -> Tally:
    """MUST requirements passed of those that apply: all, or those of one capability."""
    ids = [rid for rid in report.requirements
           if capability is None or capability in profiles(requirements[rid].profile
                                                            if rid in requirements else "")]
    return tally(report, ids, "must", requirements)


def badge_json(report: SiteReport, requirements: dict[str, Requirement],
               capability: str | None = None) -> dict[str, object]:
    """A shields.io endpoint badge: "conforms", or MUST requirements passed; for one capability,
    that capability's."""
    score = must_score(report, requirements, capability)
    ok = score.total > 0 and score.passed == score.total
    if capability is None:
        ok = conforms(report, requirements)
    message = "conforms" if ok and capability is None else f"{score.text} MUST"
    colour = "brightgreen" if ok else _colour(score)[0]
    return {"schemaVersion": 1, "label": capability or "conformance", "message": message,
            "color": "red" if colour == "brightgreen" and not ok else colour}


def _text_width(text: str) -> int:
    return 10 + round(6.5 * len(text))  # Verdana 11px averages ~6.5px a character


def badge_svg(report: SiteReport, requirements: dict[str, Requirement],
              capability: str | None = None) -> str:
    """The same badge as a standalone SVG image, with a <title> for screen readers."""
    data = badge_json(report, requirements, capability)
    label, message = str(data["label"]), str(data["message"])
    left, right = _text_width(label), _text_width(message)
    fill = dict((name, hexa) for _, name, hexa in COLOURS)[str(data["color"])]
    e = html.escape
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + right}" height="20" role="img" '
        f'aria-label="{e(label)}: {e(message)}">'
        f"<title>{e(label)}: {e(message)}</title>"
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{fill}"/>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" '
        'font-size="11">'
        f'<text x="{left / 2}" y="14">{e(label)}</text>'
        f'<text x="{left + right / 2}" y="14">{e(message)}</text>'
        "</g></svg>\n"
    )
