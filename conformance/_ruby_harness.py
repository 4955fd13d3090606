"""Start a bundled Ruby harness: Ruby runs it with the library on its load path, which the user
names (the library's gems are not in a registry CI reaches, so nothing here installs them)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

#: The environment variable of each Ruby harness that names its library's load path: directories
#: joined with the path separator, as RUBYLIB is (the library's lib/ and each gem's).
LOAD_PATH_VARIABLES = {"dspy-rb": "DSPY_RB_LOAD_PATH"}
#: The file each Ruby harness's library is loaded by (`require`).
LIBRARIES = {"dspy-rb": "dspy"}
#: How long loading the library may take before the check gives up (DSPy.rb takes about 1 s).
_LOAD_TIMEOUT = 60.0


def command(name: str, directory: Path) -> str:
    """The command line that runs the Ruby harness in `directory`, once Ruby has shown it can load
    the library: from the directories the harness's variable names, or else from Ruby's own load
    path (a `bundle exec` environment, an installed gem)."""
    ruby = shutil.which("ruby")
    if ruby is None:
        raise pytest.UsageError(f"--impl {name}: the harness needs Ruby on PATH (the library's own minimum).")
    variable = LOAD_PATH_VARIABLES[name]
    paths = [p for p in os.environ.get(variable, "").split(os.pathsep) if p]
    command = [ruby, *(f"-I{p}" for p in paths)]
    library = LIBRARIES[name]
    try:
        loaded = subprocess.run([*command, "-e", f"require {library!r}"], capture_output=True, text=True,
                                timeout=_LOAD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise pytest.UsageError(
            f"--impl {name}: loading {library!r} took over {_LOAD_TIMEOUT:g} s.") from None
    if loaded.returncode != 0:
        where = f"the directories {variable} names" if paths else f"Ruby's load path ({variable} is not set)"
        said = "\n  ".join(loaded.stderr.strip().splitlines()[-6:])
        here = f"harnesses/{directory.name}"  # as the checkout names it, not as this machine does
        raise pytest.UsageError(
            f"--impl {name}: Ruby cannot load {library!r} from {where}:\n  {said}\nSet {variable} to the "
            f"library's lib/ and its gems' lib/ directories ({os.pathsep}-separated, as RUBYLIB), or run "
            f"the harness under Bundler with --impl \"cmd:bundle exec ruby {here}/harness.rb\"; see "
            f"{here}/README.md.")
    return shlex.join([*command, str(directory / "harness.rb")])
