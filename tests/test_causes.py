"""One cause, one verdict, in every committed report (REQUIREMENTS.md, "One cause, one verdict").

A declared reason that three or more failing requirements share is one defect counted several
times, unless each of those requirements fails on its own property. The first is mended by the
attribution (its owner fails, the rest are `blocked`); the second is listed here, with why each
requirement's own property fails, so that the list is read and kept true.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "conformance"
FAILING = ("failed", "known-failure")
#: Reasons that start alike are one cause: a binding words one defect with a suffix per scenario
#: ("... has no adapter parameter (...): the agents with an adapter of their own cannot be built").
SAME_CAUSE = 60

#: (report, the start of the shared declared reason) -> for each requirement failing with it, why
#: that requirement's own property fails.
OWN_PROPERTY: dict[tuple[str, str], dict[str, str]] = {}


def shared_reasons(report: dict[str, object]) -> dict[str, set[str]]:
    """Each declared reason (or failure message), by its first `SAME_CAUSE` characters, with the
    failing requirements that give it, where three or more do."""
    groups: dict[str, set[str]] = defaultdict(set)
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    for s in scenarios:
        if s["verdict"] in FAILING:
            groups[" ".join(str(s["message"]).split())[:SAME_CAUSE]].add(str(s["requirement"]))
    return {reason: rids for reason, rids in groups.items() if len(rids) >= 3}


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.json")), ids=lambda p: p.stem)
def test_no_cause_fails_three_requirements_unless_each_fails_on_its_own_property(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    unexplained = {}
    groups = shared_reasons(report)
    for reason, rids in groups.items():
        listed = next((own for (name, start), own in OWN_PROPERTY.items()
                       if name == path.stem.partition("+")[0] and start.startswith(reason)), None)
        if listed is None or set(listed) != rids:
            unexplained[reason[:160]] = sorted(rids)
    stale = [start for (name, start) in OWN_PROPERTY
             if name == path.stem.partition("+")[0] and not any(start.startswith(r) for r in groups)]
    assert not stale, f"{path.stem}: OWN_PROPERTY lists groups its report no longer has: {stale}"
    assert not unexplained, (
        f"{path.stem}: one declared reason fails several requirements: {unexplained}. Either the "
        "defect is one cause (recognise it in conformance/_attribution.py: its owner fails, the "
        "rest are blocked) or each requirement fails on its own property (give each its own "
        "reason in the binding, or list the group in OWN_PROPERTY with why)")
