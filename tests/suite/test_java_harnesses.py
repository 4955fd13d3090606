"""The bundled Java harnesses (`--impl langchain4j`): their committed reports name the artifacts their
pom.xml pins, and their first-use build says clearly what went wrong (a fresh run's comparison with
the committed report is tests/suite/test_node_harnesses.py's, for every bundled harness).

The first run resolves each harness's pinned Maven dependencies and compiles it
(conformance/_java_harness.py), as `--impl` does for a user; a JDK 17 and Maven must be on PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from conformance import _java_harness, _loader
from conformance._loader import JAVA_HARNESSES
from tests.test_peers import DOCS

_POM = "{http://maven.apache.org/POM/4.0.0}"


def _directory(name: str) -> Path:
    """The folder of the Java harness `name` (a variant's is its library's harness's)."""
    return _loader.HARNESS_DIR / _loader.HARNESS_DIRS.get(name, (name,))[0]


def _resolved(name: str) -> dict[str, str]:
    """The version Maven resolved of each artifact on the harness's class path."""
    _loader.harness_command(name)  # builds the harness if no run has yet
    classpath = (_directory(name) / "target" / "classpath.txt").read_text(encoding="utf-8")
    found = {}
    for jar in classpath.strip().split(":"):
        # a local repository's layout: <group path>/<artifact>/<version>/<artifact>-<version>.jar
        parts = Path(jar).parts
        found[parts[-3]] = parts[-2]
    return found


@pytest.mark.parametrize("name", JAVA_HARNESSES)
def test_the_committed_report_of_a_java_harness_names_its_pinned_artifacts(name: str) -> None:
    committed = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))["binding"]
    pom = ElementTree.parse(_directory(name) / "pom.xml")
    pinned = {f"{d.findtext(f'{_POM}groupId')}:{d.findtext(f'{_POM}artifactId')}":
              d.findtext(f"{_POM}version") for d in pom.iter(f"{_POM}dependency")}
    resolved = _resolved(name)
    assert pinned and all(committed["dependencies"][artifact] == version
                          for artifact, version in pinned.items())
    assert {artifact: resolved[artifact.partition(":")[2]] for artifact in committed["dependencies"]} == (
        committed["dependencies"])
    assert committed["version"] in pinned.values()  # the library's own artifact among them


@pytest.mark.parametrize("name", JAVA_HARNESSES)
def test_a_java_harness_claims_only_what_it_can_back_with_known_failures(name: str) -> None:
    report = json.loads((DOCS / f"{name}.json").read_text(encoding="utf-8"))
    assert [s for s in report["scenarios"] if s["verdict"] in ("failed", "errored")] == []
    reasons = [s["message"] for s in report["scenarios"] if s["verdict"] == "known-failure"]
    # Each reason says where in the library's source: a class of it, by name.
    assert reasons and all(len(r) > 20 and "\n" not in r and re.search(r"[A-Z][a-z]+[A-Z]\w+", r)
                           for r in reasons)


def test_a_java_harness_without_maven_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_java_harness.shutil, "which", lambda program: None if program == "mvn" else program)
    with pytest.raises(pytest.UsageError, match=r"needs a JDK 17 or later and Maven on PATH; mvn not found"):
        _loader.harness_command("langchain4j")


def _copy(tmp_path: Path) -> Path:
    """The langchain4j harness's pom and sources, without its build."""
    directory = tmp_path / "langchain4j"
    shutil.copytree(_loader.HARNESS_DIR / "langchain4j", directory, ignore=shutil.ignore_patterns("target"))
    return directory


def test_a_failed_build_shows_javac_s_own_reason(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    (directory / "src" / "lc4jharness" / "Broken.java").write_text(
        "package lc4jharness;\nclass Broken { int x = ; }\n", encoding="utf-8")
    with pytest.raises(pytest.UsageError) as raised:
        _java_harness.command("langchain4j", directory)
    message = str(raised.value)
    assert "building the Java harness failed" in message and "javac" in message
    assert "Broken.java:2: error" in message, message


def test_a_java_harness_is_rebuilt_when_its_sources_change_and_only_then(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    _java_harness.command("langchain4j", directory)
    built = directory / "target" / "classes" / "lc4jharness" / "Harness.class"
    first = built.stat().st_mtime_ns
    _java_harness.command("langchain4j", directory)
    assert built.stat().st_mtime_ns == first  # unchanged sources: no rebuild
    source = directory / "src" / "lc4jharness" / "Harness.java"
    source.write_text(source.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    _java_harness.command("langchain4j", directory)
    assert built.stat().st_mtime_ns != first


def test_a_pom_that_names_no_main_class_is_a_usage_error(tmp_path: Path) -> None:
    directory = _copy(tmp_path)
    pom = directory / "pom.xml"
    pom.write_text(re.sub(r"\s*<harness.main>.*</harness.main>", "", pom.read_text(encoding="utf-8")),
                   encoding="utf-8")
    with pytest.raises(pytest.UsageError, match=r"names no main class \(the property harness.main\)"):
        _java_harness.command("langchain4j", directory)


@pytest.mark.parametrize("name", [name for name in JAVA_HARNESSES if name not in _loader.HARNESS_DIRS])
def test_a_java_harness_compiles_with_every_lint_an_error(name: str, tmp_path: Path) -> None:
    # -path is off: it warns of a dependency jar's own manifest Class-Path entries (opennlp-tools
    # names a jar it does not ship), which no source of ours can fix.
    _loader.harness_command(name)  # resolves its class path
    directory = _loader.HARNESS_DIR / name
    classpath = (directory / "target" / "classpath.txt").read_text(encoding="utf-8").strip()
    sources = [*_java_harness._library(), *_java_harness._sources(directory)]
    built = subprocess.run(["javac", "-Xlint:all,-path", "-Werror", "-parameters", "-cp", classpath, "-d",
                            str(tmp_path), *map(str, sources)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr


def _copy_kotlin(tmp_path: Path) -> Path:
    """The koog harness (Kotlin), without its build, beside the protocol module its pom compiles
    from ../lib/java."""
    harnesses = tmp_path / "harnesses"
    shutil.copytree(_loader.HARNESS_DIR / "koog", harnesses / "koog", ignore=shutil.ignore_patterns("target"))
    shutil.copytree(_loader.HARNESS_DIR / "lib" / "java", harnesses / "lib" / "java")
    return harnesses / "koog"


def test_a_kotlin_harness_is_built_by_maven_and_a_kotlinc_warning_fails_its_build(tmp_path: Path) -> None:
    directory = _copy_kotlin(tmp_path)
    command = _java_harness.command("koog", directory)
    assert (directory / "target" / "classes" / "koogharness" / "Harness.class").is_file()
    assert (directory / "target" / "classes" / "reactconformance" / "Protocol.class").is_file()
    assert command.endswith(" koogharness.HarnessKt")
    (directory / "src" / "koogharness" / "Warned.kt").write_text(
        "package koogharness\n\nfun warned(x: String): Int = x!!.length\n", encoding="utf-8")
    with pytest.raises(pytest.UsageError) as raised:
        _java_harness.command("koog", directory)  # its sources changed: built again, and refused
    message = str(raised.value)
    assert "building the Java harness failed" in message
    assert "Warned.kt:3:31 Unnecessary non-null assertion" in message, message
