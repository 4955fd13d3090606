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
        loaded = subprocess.run([*command, "-e", f"puts RUBY_VERSION; require {library!r}"],
                                capture_output=True, text=True, timeout=_LOAD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise pytest.UsageError(
            f"--impl {name}: loading {library!r} took over {_LOAD_TIMEOUT:g} s.") from None
    if loaded.returncode != 0:
        where = f"the directories {variable} names" if paths else f"Ruby's load path ({variable} is not set)"
        # Ruby's error comes first, then its backtrace (`\tfrom ...` lines): the error is the news.
        said = "\n  ".join([line for line in loaded.stderr.strip().splitlines()
                            if not line.lstrip().startswith("from ")][:4])
        version = loaded.stdout.strip() or "?"
        here = f"harnesses/{directory.name}"  # as the checkout names it, not as this machine does
        raise pytest.UsageError(
            f"--impl {name}: Ruby {version} cannot load {library!r} from {where}:\n  {said}\nUse a Ruby the "
            f"library supports, and set {variable} to the library's lib/ and its gems' lib/ directories "
            f"({os.pathsep}-separated, as RUBYLIB), or run the harness under the library's bundle, "
            f"BUNDLE_GEMFILE naming its Gemfile, with --impl \"cmd:bundle exec ruby {here}/harness.rb\"; "
            f"see {here}/README.md.")
    return shlex.join([*command, str(directory / "harness.rb")])
