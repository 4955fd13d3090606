"""What `site`, `compare` and `history` accept: every malformed or contradictory input is refused
with one line naming the file, exit 2, no traceback, and nothing written; every committed report
and history file is accepted."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.__main__ import main
from conformance._site import load_history, read_report
from conformance._site._inputs import MAX_BYTES, MAX_ROWS
from tests.peer_envs import peers

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "conformance"
HISTORY = ROOT / "docs" / "history"
REFERENCE: dict[str, Any] = json.loads((REPORTS / "reference.json").read_text(encoding="utf-8"))


def _copy() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(REFERENCE))
    return data


def _refused(capsys: pytest.CaptureFixture[str], args: list[str], *needles: str) -> str:
    """Run the command; assert it refused in one line that holds every needle."""
    code = main(args)
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, (code, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and captured.out == ""
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def _site(path: Path, out: Path) -> list[str]:
    return ["site", str(path), "--out", str(out)]


def _compare(path: Path, out: Path) -> list[str]:
    return ["compare", str(path)]


def _history_run(path: Path, out: Path) -> list[str]:
    """The report as a run against an earlier release (`site --history`)."""
    return ["site", str(REPORTS / "reference.json"), "--out", str(out), "--history", str(path)]


COMMANDS: list[Callable[[Path, Path], list[str]]] = [_site, _compare, _history_run]


def _write(tmp_path: Path, content: bytes | str | dict[str, Any], name: str = "lib.json") -> Path:
    path = tmp_path / name
    if isinstance(content, dict):
        content = json.dumps(content)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def _lying() -> dict[str, Any]:
    """LOOP-1 said passed while every one of its scenarios failed."""
    data = _copy()
    for s in data["scenarios"]:
        if s["requirement"] == "LOOP-1":
            s["verdict"], s["message"] = "failed", "the tool never ran"
    assert data["requirements"]["LOOP-1"] == "passed"
    return data


def _without_scenarios_of(rid: str) -> dict[str, Any]:
    data = _copy()
    data["scenarios"] = [s for s in data["scenarios"] if s["requirement"] != rid]
    return data


def _without_verdict_of(rid: str) -> dict[str, Any]:
    data = _copy()
    del data["requirements"][rid]
    return data


def _with(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


_TEXT = json.dumps(REFERENCE, indent=2)
CASES: dict[str, tuple[bytes | str | dict[str, Any], tuple[str, ...]]] = {
    "a verdict its scenarios contradict": (
        _lying(), ("it says LOOP-1 passed", "failed) make it failed", "run the suite again")),
    "a verdict without scenarios": (
        _without_scenarios_of("ERR-1"), ("it says ERR-1 passed but holds no scenario of ERR-1",)),
    "scenarios without a verdict": (
        _without_verdict_of("ERR-1"), ("holds scenarios of ERR-1 but no verdict for it",)),
    "NaN": (_with(_TEXT, '"contract_version": 3', '"contract_version": NaN'), ("holds NaN",)),
    "Infinity": (_with(_TEXT, '"contract_version": 3', '"contract_version": -Infinity'),
                 ("holds -Infinity",)),
    "deep nesting": ("[" * 100_000 + "]" * 100_000, ("nested too deeply",)),
    "Latin-1 bytes": (_with(_TEXT, '"message": ""', '"message": "caf\u00e9"').encode("latin-1"),
                      ("not UTF-8 text (byte 0xe9 at offset", "write reports as UTF-8")),
    "a truncated file": (_TEXT[: len(_TEXT) // 2], ("not valid JSON", "truncated?")),
    "an empty file": ("", ("not valid JSON",)),
    "a JSON list": ("[1, 2]", ("not a conformance report",)),
    "another JSON file": ('{"name": "lib", "version": "1.0"}', ("not a conformance report",)),
    "a history file": ('{"snapshots": []}', ("it is a history file: give it to --history",)),
    "format 0": ({**REFERENCE, "format_version": 0}, ("format_version 0 is not a report format",)),
    "a format given as text": ({**REFERENCE, "format_version": "3"}, ("format_version '3'",)),
    "a field of the wrong type": ({**REFERENCE, "binding": {**REFERENCE["binding"], "version": [1]}},
                                  ("binding.version: Input should be a valid string",)),
    "an unknown verdict": ({**REFERENCE, "requirements": {**REFERENCE["requirements"], "LOOP-1": "ok"}},
                           ("requirements.LOOP-1: Input should be",)),
    "too many scenarios": ({**REFERENCE, "requirements": {"LOOP-1": "passed"}, "scenarios": [
        {"id": "t", "feature": "f", "name": "n", "requirement": "LOOP-1", "verdict": "passed"}
    ] * (MAX_ROWS + 1)}, (f"{MAX_ROWS + 1} scenarios, more than the {MAX_ROWS}",)),
}


@pytest.mark.parametrize(("case", "command"), [
    pytest.param(case, command, id=f"{case}-{command.__name__.strip('_')}")
    for case in CASES for command in COMMANDS
    if not (case == "a history file" and command is _history_run)])  # --history takes one
def test_a_malformed_or_contradictory_report_is_refused_in_one_line(
        case: str, command: Callable[[Path, Path], list[str]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    content, needles = CASES[case]
    path = _write(tmp_path, content)
    out = tmp_path / "site"
    _refused(capsys, command(path, out), str(path), *needles)
    assert not out.exists()  # nothing written


def test_a_refused_report_leaves_a_site_written_before_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(_site(REPORTS / "reference.json", out)) == 0
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    capsys.readouterr()
    _refused(capsys, _site(_write(tmp_path, _lying()), out), "it says LOOP-1 passed")
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.json", "site"]


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as f:  # sparse: a million rows' worth of bytes without writing them
        f.truncate(MAX_BYTES + 1)
    for command in COMMANDS:
        _refused(capsys, command(path, tmp_path / "site"), str(path), "larger than 32 MiB")


def test_a_missing_path_or_a_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(capsys, _site(tmp_path / "nowhere.json", tmp_path / "site"), "nowhere.json: no such file")
    _refused(capsys, _compare(tmp_path, tmp_path), f"{tmp_path}: not a file")
    _refused(capsys, _history_run(tmp_path / "gone", tmp_path / "site"),
             "gone: no such file or folder", "--history")


def test_a_partial_report_may_leave_out_the_requirements_it_did_not_finish(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = {**_without_verdict_of("ERR-1"), "complete": False, "stopped_by": "interrupted"}
    assert main(_site(_write(tmp_path, data), tmp_path / "site")) == 0
    capsys.readouterr()
    lying = {**_lying(), "complete": False}
    _refused(capsys, _site(_write(tmp_path, lying), tmp_path / "site"), "it says LOOP-1 passed")


def test_compare_refuses_a_format_newer_than_it_reads_and_site_renders_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, {**REFERENCE, "format_version": 4})
    _refused(capsys, _compare(path, tmp_path), "format_version: Input should be 1, 2 or 3",
             "compare reads report formats 1 to 3")
    assert main(_site(path, tmp_path / "site")) == 0


def test_a_history_file_is_checked_as_history_writes_it(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = json.loads((HISTORY / "git.json").read_text(encoding="utf-8"))["snapshots"][0]
    for bad, needles in [
        ({"snapshots": [{**snapshot, "source": "git not-a-commit"}]},
         ("source 'git not-a-commit'", "neither 'run' nor 'git'", "conformance history")),
        ({"snapshots": [{**snapshot, "requirements": {"LOOP-1": "fine"}}]},
         ("snapshots.0.requirements.LOOP-1",)),
        ({"snapshots": {"a": 1}}, ("snapshots: Input should be a valid list",)),
        ({"snapshots": [{"library": "l", "version": "1", "suite_version": "1", "requirements": {}}]
          * (MAX_ROWS + 1)}, (f"{MAX_ROWS + 1} snapshots, more than the {MAX_ROWS}",)),
    ]:
        path = _write(tmp_path, bad, "history.json")
        _refused(capsys, _history_run(path, tmp_path / "site"), str(path), *needles)
    assert not (tmp_path / "site").exists()


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


def test_history_refuses_a_report_outside_git_or_never_committed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".git").write_text("gitdir: nowhere\n", encoding="utf-8")  # no repository above it
    path = _write(outside, REFERENCE)
    out = tmp_path / "h" / "git.json"
    _refused(capsys, ["history", str(path), "--out", str(out)], str(path),
             "not in a git repository", "tracked by git")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    path = _write(repo, REFERENCE)
    _refused(capsys, ["history", str(path), "--out", str(out)], str(path),
             "has no committed version", "commit it first")
    _refused(capsys, ["history", str(repo / "gone.json"), "--out", str(out)], "no such file")
    assert not out.parent.exists()


def test_history_refuses_a_contradictory_report_and_skips_such_committed_versions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    versions: list[bytes | str | dict[str, Any]] = [
        _lying(), "{", b"\xff", {**REFERENCE, "generated": "2020-01-01T00:00:00+00:00"}]
    for i, content in enumerate(versions):
        _write(repo, content)
        _git(repo, "add", "lib.json")
        _git(repo, "commit", "-q", "-m", f"version {i}")
    out = tmp_path / "git.json"
    assert main(["history", str(repo / "lib.json"), "--out", str(out)]) == 0
    [snapshot] = json.loads(out.read_text(encoding="utf-8"))["snapshots"]
    assert snapshot["generated"] == "2020-01-01T00:00:00+00:00"
    capsys.readouterr()
    _write(repo, _lying())
    out.unlink()
    _refused(capsys, ["history", str(repo / "lib.json"), "--out", str(out)], "it says LOOP-1 passed")
    assert not out.exists()


def test_every_committed_report_and_history_file_passes() -> None:
    for path in sorted(REPORTS.glob("*.json")):
        read_report(path)
    assert len(load_history([HISTORY])) == len(list(HISTORY.glob("*.json"))) - 1 + len(
        json.loads((HISTORY / "git.json").read_text(encoding="utf-8"))["snapshots"])
    assert main(["compare", *(str(REPORTS / f"{name}.json") for name in peers())]) == 0
