"""The report paths of a run, resolved once where the run started and checked before any scenario.

The reports are rewritten after every scenario (a killed run leaves a valid partial report); a
relative path read then would follow a binding that changes directory in `build` into the
library's folders, and a path that cannot be written would abort the run in its first scenario.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

#: The options naming a file the suite writes, by their `dest`, with an example file name.
OPTIONS = {"conformance_json": "report.json", "conformance_markdown": "report.md"}


def resolve(config: pytest.Config) -> None:
    """Make each report path absolute, against the directory pytest was started in, and refuse one
    that cannot be written with a usage error, before the first scenario."""
    for dest, example in OPTIONS.items():
        given = getattr(config.option, dest, None)
        if not given:
            continue
        path = Path(config.invocation_params.dir, os.path.expanduser(given))
        option = f"--{dest.replace('_', '-')} {given}"
        if path.is_dir():
            raise pytest.UsageError(
                f"{option}: that is a folder; give the path of a file, e.g. {Path(given, example)}."
            )
        _check_writable(option, path)
        setattr(config.option, dest, str(path))


def _check_writable(option: str, path: Path) -> None:
    """Create the report's folder and a file in it, as the report will be; a usage error if not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise pytest.UsageError(
            f"{option}: the report cannot be written there ({exc.strerror or exc}); give a path in "
            "a folder you can write to."
        ) from exc


def shown(config: pytest.Config, path: str) -> str:
    """`path` as a message shows it: relative to where the run started, when it is under it (a
    message names no absolute path of the machine it ran on)."""
    try:
        return str(Path(path).relative_to(config.invocation_params.dir))
    except ValueError:
        return path
