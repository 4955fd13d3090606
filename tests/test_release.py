"""The release is ready to cut: one version in pyproject.toml, the changelog and docs/ci.md, and a
publishing workflow that needs no secret."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def test_the_changelog_opens_with_the_packages_version_and_its_catalogue() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## (\d+)\.(\d+)\.(\d+)\b.*catalogue version (\d+)$", text, re.M)
    assert first is not None, "CHANGELOG.md has no `## X.Y.Z ...: catalogue version N` section"
    assert ".".join(first.group(1, 2, 3)) == _version()
    assert first.group(2) == first.group(4), "the minor version is the catalogue version"
    ci = ROOT / "docs" / "ci.md"
    minor = first.group(2)
    assert f"react-conformance>=0.{minor},<0.{int(minor) + 1}" in ci.read_text(encoding="utf-8")


def test_the_release_workflow_publishes_on_a_tag_with_trusted_publishing() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert re.search(r"tags:\s*\[\"v\*\"\]", text)
    assert "id-token: write" in text
    assert "pypa/gh-action-pypi-publish@" in text
    assert "--sdist --wheel" in text
    assert "secrets." not in text, "trusted publishing needs no secret"
