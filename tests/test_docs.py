"""Every Python block of the docs is kept true: run, quoted verbatim from a tested file, or (marked
illustrative) at least valid Python."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])
#: A block, and the HTML comment on the line before it, if any: `<!-- illustrative -->` (compiled
#: only) or `<!-- excerpt: path -->` (must appear verbatim in that file of the repository).
_BLOCK = re.compile(r"(?:<!-- (?P<mark>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


def _blocks() -> list[tuple[str, str | None, str]]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            found.append((f"{doc.relative_to(ROOT)}:{line}", match["mark"], match["code"]))
    return found


BLOCKS = _blocks()


@pytest.mark.parametrize(("where", "mark", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_each_python_block_of_the_docs_runs_or_is_quoted_or_marked(
    where: str, mark: str | None, code: str
) -> None:
    if mark is not None and mark.startswith("excerpt: "):
        source = ROOT / mark.removeprefix("excerpt: ")
        assert code in source.read_text(encoding="utf-8"), f"{where}: not verbatim in {source}"
        return
    compiled = compile(code, where, "exec")
    if mark == "illustrative":
        return
    assert mark is None, f"{where}: unknown mark {mark!r} (illustrative, or excerpt: <path>)"
    exec(compiled, {"__name__": f"docs_block_{len(where)}"})


def test_the_docs_have_python_blocks_of_each_kind() -> None:
    marks = [mark for _, mark, _ in BLOCKS]
    assert None in marks and "illustrative" in marks
    assert any(m and m.startswith("excerpt: ") for m in marks)
