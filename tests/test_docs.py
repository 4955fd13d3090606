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
    namespace: dict[str, object] = {"__name__": f"docs_block_{len(where)}"}
    exec(compiled, namespace)
    for value in namespace.values():
        for attribute in ("known_failures", "fuzz_known_failures"):
            for name in (getattr(value, attribute, None) or {}) if isinstance(value, type) else {}:
                assert _names_a_scenario(name), f"{where}: {attribute} names nothing: {name!r}"


def _names_a_scenario(name: str) -> bool:
    """Whether a known failure's name is a requirement ID, a scenario's name, or a scenario's test
    name (with an outline row's parameters in brackets), as the suite checks them."""
    from pytest_bdd.scenario import make_python_name

    from conformance._features import catalogue, features_dir

    scenarios = [line.split(":", 1)[1].strip()
                 for feature in features_dir().glob("*.feature")
                 for line in feature.read_text(encoding="utf-8").splitlines()
                 if line.strip().startswith(("Scenario:", "Scenario Outline:"))]
    test, _, row = name.partition("[")
    return (name in catalogue() or name in scenarios
            or (bool(row) and any(f"test_{make_python_name(s)}" == test for s in scenarios)))


def test_the_docs_have_python_blocks_of_each_kind() -> None:
    marks = [mark for _, mark, _ in BLOCKS]
    assert None in marks and "illustrative" in marks
    assert any(m and m.startswith("excerpt: ") for m in marks)
