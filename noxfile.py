"""Every workflow of the project: `nox -l` lists them."""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["tests", "conformance", "lint", "typecheck", "package"]

DEV = ".[dev]"


@nox.session
def tests(session: nox.Session) -> None:
    """Unit and property tests of the reference and of the suite itself."""
    session.install("-e", DEV)
    session.run("pytest", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The suite against a binding: `nox -s conformance -- --impl mypkg` (default: reference)."""
    session.install("-e", DEV)
    args = session.posargs or ["--impl", "reference"]
    session.run("pytest", *args)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over everything."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the two packages."""
    session.install("-e", DEV)
    session.run("mypy")


@nox.session
def fuzz(session: nox.Session) -> None:
    """The hypothesis property tests with many more examples."""
    session.install("-e", DEV)
    session.run("pytest", "tests", "-k", "property", "--hypothesis-profile", "fuzz", *session.posargs)


@nox.session
def package(session: nox.Session) -> None:
    """Build the wheel, install it alone in this fresh virtualenv, run the suite from an empty dir."""
    tmp = session.create_tmp()
    session.run("uv", "build", "--wheel", "--out-dir", f"{tmp}/dist", external=True)
    wheels = sorted(Path(tmp, "dist").glob("react_conformance-*.whl"))
    session.install(str(wheels[-1]))
    empty = Path(tmp, "empty")
    empty.mkdir(exist_ok=True)
    with session.chdir(empty):
        session.run("python", "-m", "pytest", "--impl", "reference", "-q", "-p", "no:cacheprovider")


# dspy-ts and ax are Node harnesses: `--impl NAME` installs their locked packages when missing.
PEERS = ("reference", "dspy", "udspy", "dspy-ts", "ax")
#: The bundled bindings that claim `http`, whose cassettes ship in cassettes/.
HTTP_BINDINGS = ("reference", "udspy")


@nox.session
def cassettes(session: nox.Session) -> None:
    """Re-record cassettes/ against the loopback server: `nox -s cassettes` (or `-- udspy`)."""
    session.install("-e", ".[dev,peers]")
    for name in session.posargs or HTTP_BINDINGS:
        shutil.rmtree(Path("cassettes", name), ignore_errors=True)  # drop cassettes of renamed scenarios
        # Only the http scenarios use cassettes; their names all start with "Over HTTP".
        session.run("python", "-m", "pytest", "--impl", name, "-q", "-p", "no:cacheprovider",
                    "-k", "over_http", "--conformance-cassettes=record",
                    "--conformance-cassette-dir=cassettes",
                    success_codes=[0, 1])


@nox.session
def peers(session: nox.Session) -> None:
    """Run the suite against every bundled binding; regenerate docs/conformance/ from the runs."""
    session.install("-e", ".[dev,peers]")
    out = Path("docs/conformance")
    out.mkdir(parents=True, exist_ok=True)
    for name in PEERS:
        # Known failures are expected; the run's exit code is checked by tests/test_peers.py.
        session.run("python", "-m", "pytest", "--impl", name, "-q", "-p", "no:cacheprovider",
                    f"--conformance-json={out}/{name}.json", f"--conformance-markdown={out}/{name}.md",
                    success_codes=[0, 1])
    with open(out / "README.md", "w", encoding="utf-8") as table:
        session.run("python", "-m", "conformance", "compare", *(f"{out}/{n}.json" for n in PEERS),
                    stdout=table)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: writes docs/benchmarks.{md,json,png}; `-- --quick PATH` writes only the JSON, to PATH."""
    session.install("-e", ".[bench,peers]")
    session.run("python", "-m", "bench", *session.posargs)
