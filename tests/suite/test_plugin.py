"""The plugin's behaviour as a user sees it: inert without --impl, clear usage errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.suite.conftest import ROOT, RunSuite


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _untimed(output: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in Ns", output)


def test_without_impl_an_unrelated_run_is_unchanged(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    with_plugin = _pytest(tmp_path, "-q", "--fixtures")
    without = _pytest(tmp_path, "-q", "--fixtures", "-p", "no:react_conformance")
    assert with_plugin.returncode == without.returncode == 0
    assert _untimed(with_plugin.stdout) == _untimed(without.stdout)
    run = _pytest(tmp_path, "-q")
    assert run.returncode == 0 and "1 passed" in run.stdout


def test_an_unknown_impl_is_a_usage_error_naming_the_available_ones(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--impl", "does-not-exist")
    assert result.returncode == 4
    assert "does-not-exist" in result.stderr and "Available bindings: " in result.stderr
    assert "reference" in result.stderr


def test_a_bad_module_attr_impl_is_a_usage_error(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--impl", "no_such_module:Binding")
    assert result.returncode == 4
    assert "could not load 'Binding' from module 'no_such_module'" in result.stderr


def test_an_object_that_is_not_a_binding_is_refused(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--impl", "json:dumps")
    assert result.returncode == 4 and "is not a conformance.Binding" in result.stderr


def test_stale_known_failures_are_a_usage_error(run_suite: RunSuite) -> None:
    run = run_suite("tests.suite.bindings:StaleKnownFailure")
    assert run.returncode == 4
    assert "no-such-scenario" in run.output


def test_a_narrowed_run_does_not_say_the_library_conforms(run_suite: RunSuite) -> None:
    run = run_suite("reference", "-k", "step_cap")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["complete"] is True
    assert run.report["conforms"] is None
    assert "reference conforms" not in run.output
    assert re.search(r"reference conformance not judged: \d+ MUST requirement\(s\) of the core and "
                     r"of its claims were not judged \(a run narrowed with -k or node ids\); run the "
                     r"whole suite to judge it", run.output), run.output[-2000:]


def test_a_not_claimed_scenario_is_placed_in_its_feature_not_in_the_machine_s_python(
    run_suite: RunSuite,
) -> None:
    # pytest placed the skip at pytest-bdd's scenario.py in the Python installation, so `-ra`
    # named a folder of the machine.
    run = run_suite("reference", "-ra", "-k", "parallel")
    skipped = [line for line in run.output.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all(" features/loop.feature:" in line for line in skipped), skipped
    assert "site-packages" not in run.output and "pytest_bdd" not in run.output


def test_a_run_made_outside_ci_is_marked_in_its_report_and_only_then(run_suite: RunSuite) -> None:
    why = "run outside CI: the library's registry is not reachable here"
    marked = run_suite("reference", "-k", "choosing_finish_stops", f"--conformance-run-outside-ci={why}")
    assert marked.report is not None and marked.report["binding"]["run_outside_ci"] == why, marked.output
    plain = run_suite("reference", "-k", "choosing_finish_stops")
    assert plain.report is not None and plain.report["binding"]["run_outside_ci"] is None, plain.output
