"""The binding's digest in a report: what ran, so that history can tell the binding's change from
the library's and from the suite's code's."""

from __future__ import annotations

from pathlib import Path

from conformance import _identity, _loader
from conformance.bindings.reference import ReferenceBinding
from tests.suite.conftest import suite_run

REFERENCE = Path(_identity.__file__).parent / "bindings" / "reference.py"


def test_a_digest_depends_on_the_files_content_and_names_not_on_where_they_are(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "harness.mjs").write_text("run()\n", encoding="utf-8")
    same = _identity.digest_of([tmp_path / "a" / "harness.mjs"])
    assert same.startswith("sha256:") and len(same) == len("sha256:") + _identity.DIGITS
    assert same == _identity.digest_of([tmp_path / "b" / "harness.mjs"])
    (tmp_path / "b" / "harness.mjs").write_text("run() // changed\n", encoding="utf-8")
    assert same != _identity.digest_of([tmp_path / "b" / "harness.mjs"])
    (tmp_path / "a" / "other.mjs").write_text("run()\n", encoding="utf-8")  # same content, new name
    assert same != _identity.digest_of([tmp_path / "a" / "other.mjs"])
    assert _identity.digest_of([tmp_path / "missing.mjs"]) == ""


def test_a_harness_s_source_excludes_what_it_installed_or_built(tmp_path: Path) -> None:
    for name in ("harness.mjs", "package-lock.json", "node_modules/x/index.js", "target/debug/a.rs",
                 "src/Main.java", ".npm-ci.lock", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name, encoding="utf-8")
    found = sorted(p.relative_to(tmp_path).as_posix() for p in _identity.harness_files(tmp_path))
    assert found == ["harness.mjs", "package-lock.json", "src/Main.java"]


def test_a_bundled_harness_s_digest_covers_its_directory_and_the_protocol_modules() -> None:
    directory = _loader.HARNESS_DIR / "openai-agents"
    expected = _identity.digest_of(_identity.harness_files(directory, _loader.HARNESS_DIR / "lib"))
    assert expected and _identity.binding_digest("openai-agents-js", object(), in_process=False) == expected
    assert _identity.binding_digest("openai-agents-js", object(), in_process=False) != (
        _identity.binding_digest("ax", object(), in_process=False))


def test_a_python_binding_s_digest_is_its_module_s_in_process_or_isolated() -> None:
    expected = _identity.digest_of([REFERENCE])
    assert _identity.binding_digest("reference", ReferenceBinding(), in_process=True) == expected
    assert _identity.binding_digest("reference", None, in_process=False) == expected
    assert _identity.binding_digest("conformance.bindings.reference:ReferenceBinding", None,
                                    in_process=False) == expected
    assert _identity.binding_digest("no-such-binding", None, in_process=False) == ""


def test_the_report_records_the_binding_s_digest_in_process_and_isolated(tmp_path: Path) -> None:
    for isolated in ((), ("--conformance-isolate",)):
        run = suite_run(tmp_path, "reference", "-k", "choosing_finish_stops_the_loop", *isolated)
        assert run.report is not None and run.report["requirements"], run.output
        assert run.report["binding"]["digest"] == _identity.digest_of([REFERENCE]), isolated
