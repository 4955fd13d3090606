"""Build and start a bundled Java harness: its pinned Maven dependencies resolved, its sources and
the Java protocol module compiled, once per change of either, as the Node harnesses' packages are
installed on first use. A harness written in Kotlin (its sources `*.kt`) is compiled by Maven with
the kotlin-maven-plugin its pom.xml pins, the protocol module beside it."""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path

import pytest

#: The Java protocol module every Java harness compiles beside its own sources.
PROTOCOL = Path(__file__).resolve().parent.parent / "harnesses" / "lib" / "java" / "Protocol.java"
#: The helpers the bundled Java harnesses share (their tool classes, the scripted chat-completions
#: endpoint), compiled beside each one's sources too.
SHARED = PROTOCOL.parent / "shared"
_POM = "{http://maven.apache.org/POM/4.0.0}"
_DIAGNOSTIC = re.compile(r"\[(ERROR|WARNING)\] (file:|/)")


def command(name: str, directory: Path, arguments: Sequence[str] = ()) -> str:
    """The command line that runs the Java harness in `directory` (its pom.xml names the main class
    as the property `harness.main`) with `arguments`, built first if its sources changed since the
    last build."""
    tools = {tool: shutil.which(tool) for tool in ("java", "javac", "mvn")}
    missing = [tool for tool, path in tools.items() if path is None]
    if missing:
        raise pytest.UsageError(
            f"--impl {name}: the harness needs a JDK 17 or later and Maven on PATH; {', '.join(missing)} "
            "not found."
        )
    main = _main_class(name, directory / "pom.xml")
    target = directory / "target"
    _build(name, directory, target, str(tools["javac"]), str(tools["mvn"]))
    classpath = f"{target / 'classes'}:{(target / 'classpath.txt').read_text(encoding='utf-8').strip()}"
    return shlex.join([str(tools["java"]), "-cp", classpath, main, *arguments])


def _main_class(name: str, pom: Path) -> str:
    try:
        found = ElementTree.parse(pom).find(f"{_POM}properties/{_POM}harness.main")
    except ElementTree.ParseError as exc:
        raise pytest.UsageError(f"--impl {name}: {pom} is not well-formed XML ({exc}).") from exc
    if found is None or not (found.text or "").strip():
        raise pytest.UsageError(f"--impl {name}: {pom} names no main class (the property harness.main).")
    return (found.text or "").strip()


def _sources(directory: Path) -> list[Path]:
    return sorted((directory / "src").rglob("*.java"))


def _kotlin_sources(directory: Path) -> list[Path]:
    return sorted((directory / "src").rglob("*.kt"))


def _library() -> list[Path]:
    """The protocol module and the shared helpers."""
    return [PROTOCOL, *sorted(SHARED.glob("*.java"))]


def _fingerprint(directory: Path) -> str:
    """What the build depends on: the pom, the harness's sources, the protocol module and the
    shared helpers."""
    digest = hashlib.sha256()
    named = {**{f"<library>/{p.name}": p for p in _library()},
             **{str(p.relative_to(directory)): p
                for p in [directory / "pom.xml", *_sources(directory), *_kotlin_sources(directory)]}}
    for name, path in named.items():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _build(name: str, directory: Path, target: Path, javac: str, mvn: str) -> None:
    built = target / "built"  # written last: its fingerprint says which sources the classes are of
    fingerprint = _fingerprint(directory)
    if built.is_file() and built.read_text(encoding="utf-8") == fingerprint:
        return
    import fcntl  # here, not at the top: the plugin must still load where fcntl does not exist

    target.mkdir(exist_ok=True)
    # Two runs at once (xdist, parallel tests) must not build into the same directory together.
    with open(target / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if built.is_file() and built.read_text(encoding="utf-8") == fingerprint:
            return
        shutil.rmtree(target / "classes", ignore_errors=True)
        if _kotlin_sources(directory):
            # kotlinc is the Kotlin compiler Maven resolves: the pom compiles the harness and the
            # protocol module into target/classes, warnings as errors. Not quiet: -q would hide the
            # compilers' warnings, which are what a failed build must show.
            _step(name, [mvn, "-B", "--no-transfer-progress", "-f", str(directory / "pom.xml"), "compile",
                         "dependency:build-classpath", f"-Dmdep.outputFile={target / 'classpath.txt'}"])
            built.write_text(fingerprint, encoding="utf-8")
            return
        _step(name, [mvn, "-q", "-B", "-f", str(directory / "pom.xml"), "dependency:build-classpath",
                     f"-Dmdep.outputFile={target / 'classpath.txt'}"])
        classpath = (target / "classpath.txt").read_text(encoding="utf-8").strip()
        _step(name, [javac, "-parameters", "-encoding", "UTF-8", "-cp", classpath, "-d",
                     str(target / "classes"), *map(str, _library()), *map(str, _sources(directory))])
        built.write_text(fingerprint, encoding="utf-8")


def _step(name: str, command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).splitlines()
        # A compiler's own diagnostics under Maven (kotlinc's `[WARNING] file:///...`, javac's
        # `[ERROR] /...`) first: Maven's log around them is the same for every failure.
        diagnostics = [line for line in lines if _DIAGNOSTIC.match(line)]
        lines = diagnostics + [line for line in lines if line not in diagnostics] if diagnostics else lines
        raise pytest.UsageError(
            f"--impl {name}: building the Java harness failed ({shlex.join(command[:2])} ... exit "
            f"{done.returncode}):\n  " + "\n  ".join(lines[:12])
        )
