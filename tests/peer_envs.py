"""One virtualenv per bound library, as that library's own CI would have it: the suite and that
library's extra alone, so no two peers' dependencies ever need to agree.

The environments live under a cache directory (`REACT_CONFORMANCE_PEER_ENVS`, else
`$XDG_CACHE_HOME/react-conformance/peers`) and are reused while nothing they were built from
changes: the key covers the Python version, this checkout (the suite is installed editable), the
suite's own requirements, the extra's pinned ranges and the bindings' entry points. `uv` builds
them when it is on PATH (seconds with its cache warm); `venv` and pip otherwise.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: Written last, so a half-built environment (an interrupted install) is rebuilt, never used.
_COMPLETE = ".peer-env-complete"


def peers() -> tuple[str, ...]:
    """Every bundled binding and harness, in the order of noxfile.PEERS (the comparison's columns)."""
    text = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    found = re.search(r"^PEERS = (\(.*?\))", text, re.S | re.M)
    assert found, "noxfile.py lost its PEERS tuple"
    peers: tuple[str, ...] = ast.literal_eval(found.group(1))
    return peers


def outside_ci() -> tuple[str, ...]:
    """The peers whose library CI cannot install (noxfile.OUTSIDE_CI): their committed reports come
    from runs made outside CI."""
    text = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    found = re.search(r"^OUTSIDE_CI = (\(.*?\))", text, re.S | re.M)
    assert found, "noxfile.py lost its OUTSIDE_CI tuple"
    names: tuple[str, ...] = ast.literal_eval(found.group(1))
    return names


class PeerEnvError(RuntimeError):
    """The environment of a peer could not be built (no network, a pin that does not resolve)."""


def extra_of(binding: str) -> str:
    """The pyproject extra that installs `binding`'s library: the name before any `+<opt-in>`."""
    extra = binding.partition("+")[0]
    extras = _project()["optional-dependencies"]
    if extra not in extras:
        raise PeerEnvError(f"binding {binding!r} has no extra {extra!r} in pyproject.toml: add one that "
                           "pins its library (see docs/writing-a-binding.md, 'Adding a bundled peer')")
    return extra


def cache_dir() -> Path:
    configured = os.environ.get("REACT_CONFORMANCE_PEER_ENVS")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "react-conformance" / "peers"


def python_of(binding: str) -> Path:
    """The Python of `binding`'s own environment, built (or rebuilt after a change) on first use."""
    extra = extra_of(binding)
    venv = cache_dir() / f"{extra}-{_key(extra)}"
    python = venv / "bin" / "python"
    if (venv / _COMPLETE).exists():
        return python
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run may be building the same one
        if not (venv / _COMPLETE).exists():
            _build(venv, extra)
    return python


def _build(venv: Path, extra: str) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    python = venv / "bin" / "python"
    uv = shutil.which("uv")
    if uv:
        steps = [[uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
                 [uv, "pip", "install", "--quiet", "--python", str(python), "-e", f"{ROOT}[{extra}]"]]
    else:
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [str(python), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[{extra}]"]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            raise PeerEnvError(
                f"could not build the environment of the {extra!r} extra: `{' '.join(step[:3])} ...` "
                f"exited {done.returncode}. It needs the package index (or a warm installer cache); "
                f"its output ends:\n{(done.stdout + done.stderr)[-3000:]}")
    (venv / _COMPLETE).write_text(" ".join(sys.argv[:1]), encoding="utf-8")


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]
    return project


def _key(extra: str) -> str:
    """What the environment was built from: a change to any of it builds a new one."""
    project = _project()
    facts = [sys.version, str(ROOT), project.get("dependencies"),
             project["optional-dependencies"][extra],
             project.get("entry-points")]
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:12]
