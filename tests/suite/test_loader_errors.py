"""Every bad `--impl` is a usage error (exit 4) that says what is wrong, never an INTERNALERROR."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import _loader, _ruby_harness
from tests.suite.conftest import ROOT


def _pytest(cwd: Path, *args: str, path: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _usage_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 4, result.stdout + result.stderr
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return result.stderr


def test_an_abstract_binding_names_the_methods_it_lacks(tmp_path: Path) -> None:
    err = _usage_error(_pytest(tmp_path, "--impl", "tests.suite.ci_bindings:Abstract"))
    assert "is abstract" in err
    for method in ("build", "mutate_last_result", "run", "version"):
        assert method in err


def test_a_binding_whose_constructor_raises_says_what_it_raised(tmp_path: Path) -> None:
    err = _usage_error(_pytest(tmp_path, "--impl", "tests.suite.ci_bindings:RaisesOnCreation"))
    assert "could not be created" in err
    assert "RuntimeError: the library needs OPENAI_API_KEY" in err


def test_an_empty_impl_is_a_usage_error(tmp_path: Path) -> None:
    for empty in ("", " "):
        err = _usage_error(_pytest(tmp_path, "--impl", empty))
        assert "empty name" in err


def _dist(site: Path, name: str, target: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[react_conformance.bindings]\ntwin = {target}\n")


def test_two_packages_registering_one_name_are_both_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _dist(site, "alpha_binding", "conformance.bindings.reference:ReferenceBinding")
    _dist(site, "beta_binding", "tests.suite.bindings:Raising")
    err = _usage_error(_pytest(tmp_path, "--impl", "twin", path=str(site)))
    assert "2 installed packages register a binding of that name" in err
    assert "alpha_binding 1.0 registers conformance.bindings.reference:ReferenceBinding" in err
    assert "beta_binding 1.0 registers tests.suite.bindings:Raising" in err


def test_a_binding_module_that_exits_or_raises_at_import_is_named(tmp_path: Path) -> None:
    (tmp_path / "exits_at_import.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "raises_at_import.py").write_text("raise ValueError('no OPENAI_API_KEY')\n")
    err = _usage_error(_pytest(tmp_path, "--impl", "exits_at_import:Binding", path=str(tmp_path)))
    assert "module 'exits_at_import' called sys.exit(3) while it was imported" in err
    err = _usage_error(_pytest(tmp_path, "--impl", "raises_at_import:Binding", path=str(tmp_path)))
    assert "module 'raises_at_import' raised ValueError: no OPENAI_API_KEY while it was imported" in err


def test_a_known_failure_without_a_reason_is_refused(tmp_path: Path) -> None:
    for binding in ("NoneKnownFailureReason", "BlankKnownFailureReason"):
        err = _usage_error(_pytest(tmp_path, "--impl", f"tests.suite.ci_bindings:{binding}"))
        assert "known_failures gives no reason for ['LOOP-1']" in err


def test_a_harness_message_names_no_folder_of_the_machine(tmp_path: Path) -> None:
    harness = ROOT / "harnesses" / "no-such-harness.py"
    err = _usage_error(_pytest(tmp_path, "--impl", f"cmd:{sys.executable} {harness}"))
    quoted = err.partition("the harness '")[2].partition("'")[0]  # the command the message quotes
    assert quoted.endswith(" harnesses/no-such-harness.py") and str(ROOT) not in quoted, err


@pytest.mark.skipif(shutil.which("ruby") is None, reason="needs Debian's ruby (.ci/run installs it)")
def test_the_dspy_rb_harness_without_dspy_rb_on_the_load_path_is_a_usage_error(tmp_path: Path) -> None:
    # DSPy.rb is not in a registry CI reaches: `--impl dspy-rb` says how to put it on Ruby's load path.
    missing = tmp_path / "no-dspy-here"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--impl", "dspy-rb"], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "DSPY_RB_LOAD_PATH": str(missing)},
        capture_output=True, text=True, timeout=300)
    err = _usage_error(result)
    said = r"Ruby \d+\.\d+\.\d+ cannot load 'dspy' from the directories DSPY_RB_LOAD_PATH names"
    assert re.search(said, err), err
    assert "\tfrom " not in err, err  # Ruby's error, not its backtrace
    assert "cannot load such file -- dspy" in err and "harnesses/dspy-rb/README.md" in err, err
    assert "cmd:bundle exec ruby harnesses/dspy-rb/harness.rb" in err, err
    assert "BUNDLE_GEMFILE naming its Gemfile" in err, err  # run from this checkout, not the library's


def test_the_dspy_rb_harness_without_ruby_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ruby_harness.shutil, "which", lambda program: None)
    with pytest.raises(pytest.UsageError, match=r"--impl dspy-rb: the harness needs Ruby on PATH"):
        _loader.harness_command("dspy-rb")
