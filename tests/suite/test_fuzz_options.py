"""Fuzzing any binding: more ARGS-1 examples, a seed, the shrunk example and how to reproduce it,
and nothing written to the working tree."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.suite.conftest import suite_run

ARGS_1 = "-k", "any_json_object"


def _message(run_dir: Path, impl: str, *args: str) -> tuple[str, str]:
    run = suite_run(run_dir, impl, *ARGS_1, *args)
    assert run.report is not None, run.output[-3000:]
    [scenario] = run.report["scenarios"]
    return scenario["verdict"], scenario["message"]


def test_by_default_the_examples_are_derandomised_and_the_shrunk_one_is_shown(tmp_path: Path) -> None:
    verdict, message = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys")
    assert verdict == "failed"
    assert 'shrunk example: {"data": {"": null}, "text": ""}' in message
    assert "40 examples, derandomised" in message
    assert not (tmp_path / ".hypothesis").exists()  # hypothesis's cache is kept elsewhere


def test_a_seed_and_a_count_are_used_and_printed(tmp_path: Path) -> None:
    verdict, message = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys",
                                "--conformance-examples", "300", "--conformance-seed", "1234")
    assert verdict == "failed"
    assert "300 examples, --conformance-seed 1234: rerun with it to reproduce" in message
    assert "shrunk example: " in message


def test_a_random_seed_is_printed_so_the_failure_reproduces(tmp_path: Path) -> None:
    _, message = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys", "--conformance-seed",
                          "random")
    [seed] = re.findall(r"--conformance-seed (\d+): rerun", message)
    _, again = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys", "--conformance-seed", seed)
    assert again.splitlines()[:2] == message.splitlines()[:2]


def test_more_examples_run_against_a_passing_binding(tmp_path: Path) -> None:
    run = suite_run(tmp_path, "reference", *ARGS_1, "--conformance-examples", "150")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["requirements"] == {"ARGS-1": "passed"}


@pytest.mark.parametrize("args", [("--conformance-seed", "soon"), ("--conformance-examples", "0")])
def test_a_bad_seed_or_count_is_a_usage_error(tmp_path: Path, args: tuple[str, str]) -> None:
    run = suite_run(tmp_path, "reference", *args)
    assert run.returncode == 4 and args[0] in run.output


def test_the_hypothesis_cache_goes_where_hypothesis_storage_directory_says(tmp_path: Path) -> None:
    storage = tmp_path / "store"
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(storage)
    try:
        run = suite_run(tmp_path, "reference", *ARGS_1)
    finally:
        del os.environ["HYPOTHESIS_STORAGE_DIRECTORY"]
    assert run.returncode == 0, run.output[-3000:]
    assert not (tmp_path / ".hypothesis").exists() and storage.is_dir()


def test_the_fuzz_profile_exists_outside_the_checkout_and_raises_the_example_count(tmp_path: Path) -> None:
    verdict, message = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys",
                                "--hypothesis-profile", "fuzz")
    assert verdict == "failed"
    assert "5000 examples, derandomised" in message


def test_a_profile_never_lowers_the_example_count_and_the_option_sets_it(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from hypothesis import settings\nsettings.register_profile('quick', max_examples=5)\n"
    )
    _, message = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys", "--hypothesis-profile",
                          "quick")
    assert "40 examples, derandomised" in message
    _, message = _message(tmp_path, "tests.suite.ci_bindings:DropsEmptyKeys", "--hypothesis-profile",
                          "fuzz", "--conformance-examples", "60")
    assert "60 examples, derandomised" in message


def test_a_fuzz_failure_shows_the_last_examples_output_and_the_innermost_frames(tmp_path: Path) -> None:
    run = suite_run(tmp_path, "tests.suite.ci_bindings:NoisyAndFailsAtScale", *ARGS_1,
                    "--conformance-examples", "300")
    assert run.returncode == 1, run.output[-3000:]
    assert "shrunk example: " in run.output
    # Printed and logged on each of the 100-odd calls; shown for the shrunk example's alone.
    assert run.output.count("noisylib-stderr") == 1, run.output[-5000:]
    assert run.output.count("noisylib recovered") == 1
    # 30 frames of the library's recursion, cut to the innermost few.
    assert 1 <= run.output.count("in _deep") <= 6, run.output[-5000:]
    assert "KeyError: 'the library lost its place'" in run.output
