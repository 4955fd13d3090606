"""Every Python block of the docs is kept true: run, quoted verbatim from a tested file, or (marked
illustrative) at least valid Python; every TOML, YAML, shell and Ruby block parses; the contract's
tables name every field of its models, and every shared helper the docs name is exported."""

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


def _table(doc: str, heading: str) -> list[str]:
    """The first column of the first table after `heading` in docs/`doc`, without backticks."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    after = text[text.index(heading):]
    rows = re.search(r"^\|.*\n\|[-| ]+\|\n((?:\|.*\n)+)", after, re.M)
    assert rows is not None, f"no table after {heading!r} in {doc}"
    return [row.split("|")[1].strip().strip("`") for row in rows.group(1).splitlines()]


def test_the_contract_tables_name_every_field_of_the_models() -> None:
    from typing import get_args

    from conformance.binding import CallRequest, Outcome, Step

    assert _table("writing-a-binding.md", "### What `run` reports") == list(Outcome.model_fields)
    assert _table("writing-a-harness.md", "Each **normalised step**") == list(Step.model_fields)
    binding = (ROOT / "docs" / "writing-a-binding.md").read_text(encoding="utf-8")
    assert all(f"`{field}`" in binding for field in Step.model_fields)
    assert _table("writing-a-harness.md", "## The call: `call.mode`") == list(
        get_args(CallRequest.model_fields["mode"].annotation))
    call = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8").split("## The call")[1]
    assert all(f"`{field}`" in call for field in CallRequest.model_fields)


def test_the_shared_helpers_the_docs_name_are_exported() -> None:
    from conformance import render, server, translate

    modules = {"render": render, "server": server, "translate": translate}
    named = {(module, name) for doc in DOCS
             for module, name in re.findall(r"\b(render|server|translate)\.([A-Za-z_]\w*)\b",
                                            doc.read_text(encoding="utf-8"))
             if name not in ("py", "mjs")}  # render.mjs is the Node module
    helpers = _table("writing-a-binding.md", "### The shared translation")
    named |= {("translate", row.split("(")[0]) for cell in helpers for row in cell.split("`, `")
              if "." not in row.split("(")[0]}
    assert len(named) > 30
    missing = sorted(f"{m}.{n}" for m, n in named if n not in modules[m].__all__)
    assert missing == [], "named in the docs but not exported"


def _other_blocks() -> list[tuple[str, str, str]]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in re.finditer(r"```(toml|yaml|sh|ruby)\n(.*?)```", text, re.S):
            line = text.count("\n", 0, match.start(2))
            found.append((f"{doc.relative_to(ROOT)}:{line}", match[1], match[2]))
    return found


OTHER_BLOCKS = _other_blocks()


@pytest.mark.parametrize(("where", "language", "code"), OTHER_BLOCKS, ids=[b[0] for b in OTHER_BLOCKS])
def test_each_toml_yaml_shell_and_ruby_block_of_the_docs_parses(where: str, language: str, code: str) -> None:
    import shutil
    import subprocess
    import tomllib

    import yaml  # PyYAML: vcrpy's dependency, so always installed with the suite

    if language == "toml":
        tomllib.loads(code)
    elif language == "yaml":
        assert isinstance(yaml.safe_load(code), dict), where
    else:
        checker = ["bash", "-n"] if language == "sh" else ["ruby", "-c"]
        if shutil.which(checker[0]) is None:
            pytest.skip(f"needs {checker[0]} (.ci/run installs Debian's ruby)")
        checked = subprocess.run(checker, input=code, capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, f"{where}: {checked.stderr}"


def test_the_docs_have_blocks_of_every_other_language() -> None:
    assert {language for _, language, _ in OTHER_BLOCKS} == {"toml", "yaml", "sh", "ruby"}


def test_the_harness_tables_name_every_command_request_and_answer_of_the_protocol() -> None:
    from typing import get_args

    from conformance import _protocol as p

    def types(union: object) -> set[str]:
        [members, _] = get_args(union)
        return {m.model_fields["type"].default for m in get_args(members)}

    answers = {"turn", "observation", "approval"}  # the suite's answers to the harness's requests
    commands = _table("writing-a-harness.md", "## Commands (suite to harness)")
    assert set(commands) == types(p.ToHarness) - answers
    requests = _table("writing-a-harness.md", "## Requests (harness to suite)")
    notices = {"hang", "sleep", "binding_fault"}  # described beside the turns they stand for
    replies = {"welcome", "done", "adapter", "built", "ran", "ran_all", "names", "failed"}
    assert set(requests) == types(p.FromHarness) - replies - notices
    text = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8")
    named = [f"`{name}`" in text or f'"type": "{name}"' in text for name in answers | notices | replies]
    assert all(named)
    assert all(f"`{field}`" in text for field in p.Welcome.model_fields if field not in ("type", "id"))


def test_the_documented_smoke_command_runs_the_smoke_tier_alone() -> None:
    # `-m smoke` once selected nothing: the `@smoke` tag is the `conformance_smoke` marker.
    import subprocess
    import sys

    text = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"^pytest --impl mypkg (-m \S+)", text, re.M)
    marker = command.split()[1]
    run = subprocess.run([sys.executable, "-m", "pytest", "--impl", "reference", "-m", marker, "-q",
                          "-p", "no:cacheprovider", "--collect-only"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    smoke = {line.split("::")[-1] for line in run.stdout.splitlines() if "::" in line}
    assert smoke == {"test_choosing_finish_stops_the_loop_at_once",
                     "test_an_arrowstring_signature_takes_its_input_and_returns_its_output"
                     }, run.stdout[-2000:]
    assert f"--impl mypkg.conformance:MyBinding {command}" in (ROOT / "README.md").read_text(
        encoding="utf-8")
