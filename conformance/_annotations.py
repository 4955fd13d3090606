"""GitHub Actions `::error` annotations for failed scenarios, pointing where the library's
repository has a file: its binding's module, or its harness's script."""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path

from conformance._report import ScenarioResult
from conformance.binding import Binding

#: The entry-point group `--impl NAME` looks bindings up in.
_GROUP = "react_conformance.bindings"


def error_lines(results: Iterable[tuple[ScenarioResult, str]], binding: Binding,
                cwd: Path | None = None) -> list[str]:
    """An `::error` line for each failed or errored scenario, given with its feature location
    (`tool_args.feature:116`). The file is the binding's where it is under `cwd` (the library's
    checkout); elsewhere there is no file GitHub could show, so the line names none, and the
    message says which scenario of react-conformance's features it was."""
    where = binding_location(binding, cwd or Path.cwd())
    file = f"file={_escape_property(where[0])},line={where[1]}," if where else ""
    lines = []
    for result, location in results:
        if result.verdict not in ("failed", "errored"):
            continue
        title = f"{result.requirement} {result.verdict}: {result.name}"
        text = f"{result.message or result.verdict}\n(react-conformance scenario {location})"
        lines.append(f"::error {file}title={_escape_property(title)}::{_escape_data(text)}")
    return lines


def binding_location(binding: Binding, cwd: Path) -> tuple[str, int] | None:
    """The binding's file relative to `cwd` and the line it starts at, if it is under `cwd`."""
    for path, line in _candidates(binding):
        path = cwd / path  # a harness's relative paths are from where the run started
        try:
            relative = path.resolve().relative_to(cwd.resolve())
        except (ValueError, OSError):
            continue
        if path.is_file():
            return relative.as_posix(), line
    return None


def _candidates(binding: Binding) -> list[tuple[Path, int]]:
    argv: list[str] | None = getattr(binding, "_argv", None)
    if argv is None:
        cls = type(binding)
        try:
            source = inspect.getsourcefile(cls)
            line = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            return []
        return _module_candidates(cls.__module__, Path(source) if source else None, line)
    if "conformance._isolate" in argv:  # a Python binding in a worker: its module
        name = argv[argv.index("conformance._isolate") + 1]  # options (`--timeout`) follow it
        module = name.partition(":")[0] if ":" in name else _entry_point_module(name)
        origin = _module_file(module) if module else None
        return _module_candidates(module, Path(origin) if origin else None, 1) if module else []
    # A harness: the script its command runs (`ruby harness.rb`, `node dist/harness.mjs`).
    return [(Path(arg), 1) for arg in argv[1:] if not arg.startswith("-")] + [(Path(argv[0]), 1)]


def _module_candidates(module: str, source: Path | None, line: int) -> list[tuple[Path, int]]:
    """The module's file where it was imported from, unless that is an installed copy (nox and CI
    install the library into a virtualenv, which may be inside its repository); then where the
    module lives in a repository's layout: `mypkg/conformance.py`, or under `src/`."""
    found = []
    if source is not None and not {"site-packages", "dist-packages"} & set(source.parts):
        found.append((source, line))
    relative = Path(*module.split("."))
    for base in (Path(), Path("src")):
        found += [(base / relative.with_suffix(".py"), line), (base / relative / "__init__.py", line)]
    return found


def _entry_point_module(name: str) -> str | None:
    found = [ep for ep in entry_points(group=_GROUP) if ep.name == name]
    return found[0].module if found else None


def _module_file(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
