"""`nox -s mutation` is set up to judge mutants by the conformance suite alone, and its report
counts and explains them as docs/mutation.md says (the mutation run itself is never part of pytest)."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from functools import cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


@cache  # nox registers each session once per process
def _noxfile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_mutmut_runs_only_the_conformance_suite_against_the_reference() -> None:
    project = _pyproject()
    config = project["tool"]["mutmut"]  # type: ignore[index]
    assert config["source_paths"] == ["reference/"]
    # the only test: the feature files through the plugin, never tests/
    selection = config["pytest_add_cli_args_test_selection"]
    assert selection == ["conformance/_suite/test_conformance.py"]
    assert (ROOT / selection[0]).is_file()
    args = config["pytest_add_cli_args"]
    assert args[args.index("--impl") + 1] == "reference"
    # a cassette replay would kill every prompt-wording mutant for no requirement
    assert "--conformance-cassettes=off" in args
    # the suite and its features are copied beside the mutated reference
    assert {"conformance/", "features/"} <= set(config["also_copy"])
    extras = project["project"]["optional-dependencies"]  # type: ignore[index]
    assert any(dep.startswith("mutmut") for dep in extras["mutation"])


def test_the_mutation_session_exists_and_targets_real_modules() -> None:
    nox = _noxfile()
    assert callable(nox.mutation)
    assert "mutation" not in nox.nox.options.sessions, "the long mutation run is never a default session"
    for module in nox.MUTATION_TARGETS:
        assert (ROOT / module).is_file(), module


def test_every_note_names_mutants_and_says_why() -> None:
    notes = tomllib.loads((ROOT / "docs" / "mutation-notes.toml").read_text(encoding="utf-8"))
    assert set(notes) <= {"equivalent", "killed_by", "open"}
    for verdict, entries in notes.items():
        for entry in entries:
            assert entry["why"].strip() and entry["mutants"], f"{verdict} entry without a reason: {entry}"


def _diff(old: str, new: str) -> str:
    return f"--- a.py\n+++ a.py\n@@ -1,1 +1,1 @@\n def f():\n-    {old}\n+    {new}"


def test_the_report_scores_explains_and_flags_survivors() -> None:
    nox = _noxfile()
    results = [
        {"module": "reference/_args.py", "name": "reference._args.x_f__mutmut_1", "status": "killed",
         "diff": _diff("return 1", "return 2")},
        {"module": "reference/_args.py", "name": "reference._args.x_f__mutmut_2", "status": "survived",
         "diff": _diff('return "a"', 'return "XXaXX"')},
        {"module": "reference/_args.py", "name": "reference._args.x_f__mutmut_3", "status": "survived",
         "diff": _diff("return 3", "return 4")},
        {"module": "reference/_args.py", "name": "reference._args.x_f__mutmut_4", "status": "survived",
         "diff": _diff("return 5", "return 6")},
        {"module": "reference/_args.py", "name": "reference._args.x_f__mutmut_5", "status": "survived",
         "diff": _diff("return 7", "return 8")},
        {"module": "reference/_args.py", "name": "reference._args.x_f__mutmut_6", "status": "not checked",
         "diff": ""},
    ]
    f = "reference._args.x_f"
    notes = {
        "equivalent": [{"why": "wording only", "mutants": [f'{f}: return "a" => return "XXaXX"']}],
        "killed_by": [{"why": "the scenario X",
                       "mutants": [f"{f}: return 1 => return 2", f"{f}: return 5 => return 6"]}],
        "open": [{"why": "a known gap", "mutants": [f"{f}: return 7 => return 8"]}],
    }
    report, unexplained = nox.mutation_report(results, notes)
    # 1 killed of 5 run; one equivalent, so the score is 1 of 4; one mutant was never run
    assert "| `reference/_args.py` | yes | 5 | 1 | 1 | 3 | 20.0% | 25.0% | 1 |" in report
    assert "| **all of `reference/`** |  | 5 | 1 | 1 | 3 | 20.0% | 25.0% | 1 |" in report
    assert "Over all of `reference/`: 1 of 5 mutants killed (20.0% of all), 25.0% of the 4" in report
    assert unexplained == 2
    assert "wording only" in report
    assert "no scenario kills it yet" in report  # mutant 3: nothing explains it
    assert "stale note: the scenario X should kill it, but it survived" in report  # mutant 4
    assert "Killed by the scenario X" in report  # mutant 1, killed as its note says
    assert "Not killed yet: a known gap" in report  # mutant 5: open, and the notes say why
