"""The features against the requirement catalogue: coverage, tags, unique names."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from pytest_bdd.feature import get_features

from conformance._features import catalogue, features_dir
from conformance.binding import CAPABILITIES

FEATURES = get_features([str(features_dir())])
SCENARIOS = [(f, s) for f in FEATURES for s in f.scenarios.values()]


def _tags(scenario: object, prefix: str) -> list[str]:
    tags: set[str] = scenario.tags | scenario.feature.tags  # type: ignore[attr-defined]
    return sorted(t.removeprefix(prefix) for t in tags if t.startswith(prefix))


def test_the_features_are_found() -> None:
    assert len(FEATURES) >= 10 and len(SCENARIOS) >= 60


@pytest.mark.parametrize(("feature", "scenario"), SCENARIOS, ids=[s.name for _, s in SCENARIOS])
def test_every_scenario_has_exactly_one_known_requirement(feature: object, scenario: object) -> None:
    reqs = _tags(scenario, "req:")
    assert len(reqs) == 1, f"{scenario.name!r} has requirement tags {reqs}"  # type: ignore[attr-defined]
    assert reqs[0] in catalogue(), f"{scenario.name!r} names an unknown requirement {reqs[0]}"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("feature", "scenario"), SCENARIOS, ids=[s.name for _, s in SCENARIOS])
def test_scenarios_outside_the_core_carry_their_capability(feature: object, scenario: object) -> None:
    caps = _tags(scenario, "capability:")
    named = {c for tag in caps for c in tag.split("|")}
    assert named <= CAPABILITIES, f"unknown capabilities {named - CAPABILITIES}"
    profile = catalogue()[_tags(scenario, "req:")[0]].profile
    if profile != "core":
        assert profile in caps, f"{scenario.name!r} needs the tag @capability:{profile}"  # type: ignore[attr-defined]


def test_every_requirement_is_covered() -> None:
    covered = {_tags(s, "req:")[0] for _, s in SCENARIOS if _tags(s, "req:")}
    assert sorted(set(catalogue()) - covered) == []


def test_scenario_names_are_unique_across_features() -> None:
    names = Counter(s.name for _, s in SCENARIOS)
    assert [n for n, c in names.items() if c > 1] == []


def test_every_profile_is_core_or_capabilities() -> None:
    assert all(r.profile == "core" or set(r.profile.split("|")) <= CAPABILITIES
               for r in catalogue().values())


def test_the_catalogue_is_the_requirements_document_when_it_is_beside_the_checkout() -> None:
    """Every ID of REQUIREMENTS.md, and only those, in its order, with its level and its title word
    for word."""
    document = Path(__file__).resolve().parents[3] / "shared" / "REQUIREMENTS.md"
    if not document.is_file():
        pytest.skip("the requirements document is not beside this checkout")
    rows = re.findall(r"^\| ([A-Z]+-\d+) \| (MUST|SHOULD) \| (.+?) \|$",
                      document.read_text(encoding="utf-8"), re.M)
    assert [rid for rid, _, _ in rows] == list(catalogue())
    for rid, level, text in rows:
        # The document opens a capability's requirement with its name, "(`per-call-cap`) ..."
        named = re.match(r"\(`([^`]+)`\) ", text)
        requirement, title = catalogue()[rid], text[named.end():] if named else text
        assert (requirement.level, requirement.title) == (level.lower(), title), rid
        assert named is None or requirement.profile == named.group(1), rid
