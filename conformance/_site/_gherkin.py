"""The Gherkin text of every scenario, as the site shows it beside a verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GherkinScenario:
    feature: str
    name: str
    requirement: str
    text: str


def gherkin(folder: Path) -> dict[tuple[str, str], GherkinScenario]:
    """Every scenario of the feature files by (file name, scenario name), with its feature's
    Background and its tags."""
    found: dict[tuple[str, str], GherkinScenario] = {}
    for path in sorted(folder.glob("*.feature")):
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks: list[tuple[int, int]] = []  # [start, end) of each Background / tagged Scenario
        start: int | None = None
        for i, line in enumerate(lines):
            stripped = line.strip()
            opens = stripped.startswith(("@", "Scenario", "Background:", "Rule:"))
            continues = i > 0 and lines[i - 1].strip().startswith("@")  # tags, then their scenario
            if opens and start is not None and not continues:
                blocks.append((start, i))
                start = None
            if opens and start is None:
                start = i
        if start is not None:
            blocks.append((start, len(lines)))
        feature = path.name
        background = ""
        for first, last in blocks:
            block = "\n".join(_dedent(lines[first:last])).strip()
            head = next((ln.strip() for ln in lines[first:last] if ln.strip().startswith(
                ("Scenario", "Background:"))), "")
            if head.startswith("Background:"):
                background = block
                continue
            if not head:
                continue
            name = head.split(":", 1)[1].strip()
            req = re.search(r"@req:(\S+)", block)
            text = f"{background}\n\n{block}" if background else block
            found[(feature, name)] = GherkinScenario(feature, name, req.group(1) if req else "", text)
    return found


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    cut = min(indents, default=0)
    return [ln[cut:] for ln in lines]
