"""Which binding a report came from: a digest of its source, so that a history can tell a change of
the binding from a change of the library (the same library release, another digest) or of the
suite's code (the same release and the same digest)."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import shlex
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path

from conformance import _loader

#: The files of a harness that are its source, by suffix; lock files count (they pin what it runs).
_SOURCE_SUFFIXES = frozenset({".mjs", ".cjs", ".js", ".ts", ".go", ".mod", ".sum", ".java", ".kt",
                              ".xml", ".rs", ".toml", ".lock", ".rb", ".ex", ".exs", ".json", ".py"})
#: What a harness's directory holds that it did not write: installed packages and build output.
_NOT_SOURCE = frozenset({"node_modules", "target", "build", "_build", "deps", ".gradle"})
#: How many hex digits a report keeps: enough to tell two versions of one binding apart.
DIGITS = 16


def digest_of(files: Iterable[Path]) -> str:
    """`sha256:` and the first `DIGITS` hex digits of the files' names and contents, in name order
    (so the same sources give the same digest in any checkout); "" when no file is readable."""
    sha, found = hashlib.sha256(), False
    for path in sorted(set(files), key=lambda p: p.as_posix()):
        try:
            content = path.read_bytes()
        except OSError:  # gone or unreadable: not part of what ran
            continue
        found = True
        sha.update(path.name.encode() + b"\0" + content + b"\0")
    return f"sha256:{sha.hexdigest()[:DIGITS]}" if found else ""


def harness_files(directory: Path, shared: Path | None = None) -> list[Path]:
    """A harness directory's source files (not its installed packages or build output), and those
    of the shared protocol modules it runs on, `shared`."""
    files: list[Path] = []
    for root in (directory, shared):
        if root is None or not root.is_dir():
            continue
        files += [p for p in root.rglob("*") if p.is_file() and p.suffix in _SOURCE_SUFFIXES
                  and not _NOT_SOURCE.intersection(p.relative_to(root).parts)
                  and not p.name.startswith(".")]
    return files


def command_files(command: str) -> list[Path]:
    """The source files a `cmd:` command line names (its program's interpreter is not one)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [Path(w) for w in words[1:] if Path(w).suffix in _SOURCE_SUFFIXES and Path(w).is_file()]


def python_files(name: str, binding: object | None) -> list[Path]:
    """The module that defines a Python binding: its class's file, or, for a binding in another
    process (`binding` None, `--conformance-isolate`), the module its entry point or `module:attr`
    names, found without importing it here."""
    if binding is not None:
        try:
            source = inspect.getsourcefile(type(binding))
        except TypeError:  # a class without a file
            source = None
        return [Path(source)] if source else []
    module = name.partition(":")[0] if ":" in name else next(
        (ep.module for ep in entry_points(group="react_conformance.bindings") if ep.name == name), None)
    try:
        spec = importlib.util.find_spec(module) if module else None
    except (ImportError, ValueError):
        return []
    return [Path(spec.origin)] if spec is not None and spec.origin else []


def binding_digest(name: str, binding: object, in_process: bool) -> str:
    """The digest of what `--impl name` ran: a bundled harness's directory and the protocol modules
    it runs on, a `cmd:` command's source files, or a Python binding's module."""
    if name in _loader.HARNESSES:
        directory = _loader.HARNESS_DIR / _loader.HARNESS_DIRS.get(name, (name,))[0]
        return digest_of(harness_files(directory, _loader.HARNESS_DIR / "lib"))
    if name.startswith(_loader.CMD):
        return digest_of(command_files(name.removeprefix(_loader.CMD)))
    return digest_of(python_files(name, binding if in_process else None))
