"""Every workflow of the project: `nox -l` lists them."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

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


#: What `nox -s fuzz -- --impl NAME` sends a binding: this many generated tool arguments (ARGS-1),
#: with a fresh seed each run (printed with the shrunk example when one fails).
FUZZ_EXAMPLES = "2000"


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz at scale: `nox -s fuzz` runs the property tests with many more examples; `nox -s fuzz --
    --impl NAME` sends the binding NAME 2000 generated tool arguments with a random seed (override
    with --conformance-examples N / --conformance-seed S)."""
    impl = any(arg.startswith("--impl") for arg in session.posargs)
    session.install("-e", ".[dev,peers]" if impl else DEV)  # peers: the bundled bindings' libraries
    if impl:
        session.run("pytest", "-k", "any_json_object", "--conformance-examples", FUZZ_EXAMPLES,
                    "--conformance-seed", "random", *session.posargs)
        return
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


# dspy-ts, ax, ai, openai-agents-js, langgraph-js, mastra, openai-runtools, strands-ts, anthropic-ts,
# llamaindex-ts, genkit and adk-ts are Node harnesses: `--impl NAME` installs their locked packages
# when missing; langchaingo, eino, genkit-go, anthropic-go and adk-go (with adk-go+database) are Go
# harnesses, built on first use; langchain4j, spring-ai and google-adk-java (and
# google-adk-java+resumable) are Java harnesses, which `--impl` builds with Maven and javac when their
# sources changed, and koog a Kotlin one, which it builds with Maven's kotlinc; rig is a Rust
# harness, which `--impl` builds with cargo; dspy-rb is a Ruby harness, run with DSPy.rb on Ruby's
# load path, and dspy-ex a Mix harness, run in a Mix project that has dspy.ex (DSPY_EX_PROJECT).
PEERS = ("reference", "dspy", "udspy", "dspy-ts", "dspy-rb", "dspy-ex", "dspy-ex+chat-adapter", "ax",
         "ai", "openai-agents-js", "openai-agents-js+tool-not-found", "langgraph-js", "mastra",
         "mastra+retries", "openai-runtools", "strands-ts", "anthropic-ts", "llamaindex-ts", "genkit",
         "adk-ts", "langchaingo", "eino", "genkit-go", "anthropic-go", "adk-go", "adk-go+database",
         "langchain4j", "spring-ai", "google-adk-java", "google-adk-java+resumable", "koog", "rig",
         "smolagents", "pydantic-ai", "pydantic-ai+tool-errors", "openai-agents",
         "openai-agents+tool-not-found", "langchain", "langchain+tool-errors", "llama-index", "haystack",
         "semantic-kernel", "autogen", "google-adk", "google-adk+reflect-retry", "agno", "strands-agents",
         "crewai", "agent-framework", "agent-framework+detailed-errors", "beeai-framework",
         "anthropic-tool-runner")
#: The peers whose library CI cannot install (its registry is not reachable from CI's machines):
#: `nox -s peers` leaves their committed reports as they are, and `nox -s peer-<library>`, run where
#: the library is on hand (harnesses/dspy-rb/README.md, harnesses/dspy-ex/README.md), writes one
#: marked as run outside CI.
OUTSIDE_CI = ("dspy-rb", "dspy-ex", "dspy-ex+chat-adapter")
RUN_OUTSIDE_CI = "run outside CI: the library's registry is not reachable here"
#: The bundled bindings whose `http` cassettes ship in cassettes/ (dspy and the Node harnesses claim
#: `http` too, and run those scenarios live on loopback: vcrpy cannot record them).
HTTP_BINDINGS = ("reference", "udspy", "pydantic-ai", "pydantic-ai+tool-errors", "openai-agents",
                 "openai-agents+tool-not-found", "haystack", "smolagents", "anthropic-tool-runner")


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


def _library(name: str) -> str:
    """The library a bundled binding judges: its name before any `+<opt-in>` (its extra's name)."""
    return name.partition("+")[0]


#: The libraries of PEERS, each with the bindings that judge it (its defaults, then its opt-ins).
LIBRARIES: dict[str, list[str]] = {}
for _name in PEERS:
    LIBRARIES.setdefault(_library(_name), []).append(_name)
_EXTRAS = tomllib.loads(Path(__file__).with_name("pyproject.toml").read_text(encoding="utf-8"))[
    "project"]["optional-dependencies"]


def _peer_session(library: str, names: list[str]) -> None:
    def run(session: nox.Session) -> None:
        # The suite and this library's extra alone, as the library's own CI would install them (the
        # reference is the suite's own; a Node harness installs its locked packages on first use).
        session.install("-e", f".[{library}]" if library in _EXTRAS else ".")
        out = Path("docs/conformance")
        out.mkdir(parents=True, exist_ok=True)
        for name in names:
            # Known failures are expected; the run's exit code is checked by tests/test_peers.py.
            outside = [f"--conformance-run-outside-ci={RUN_OUTSIDE_CI}"] if name in OUTSIDE_CI else []
            session.run("python", "-m", "pytest", "--impl", name, "-q", "-p", "no:cacheprovider",
                        f"--conformance-json={out}/{name}.json", f"--conformance-markdown={out}/{name}.md",
                        *outside, *session.posargs, success_codes=[0, 1])

    run.__doc__ = f"Regenerate docs/conformance/ for {', '.join(names)}, in {library}'s own environment."
    nox.session(name=f"peer-{library}")(run)


for _library_name, _names in LIBRARIES.items():
    _peer_session(_library_name, _names)


@nox.session(python=False)
def peers(session: nox.Session) -> None:
    """Every peer in its own environment (the peer-* sessions), then the comparison and the site;
    the committed reports of the peers CI cannot install (OUTSIDE_CI) are kept as they are."""
    for library in LIBRARIES:
        if library not in OUTSIDE_CI:
            session.notify(f"peer-{library}")
    session.notify("compare")


@nox.session
def compare(session: nox.Session) -> None:
    """docs/conformance/README.md and docs/site/ from the committed reports of every peer."""
    session.install("-e", ".")
    out = Path("docs/conformance")
    with open(out / "README.md", "w", encoding="utf-8") as table:
        session.run("python", "-m", "conformance", "compare", *(f"{out}/{n}.json" for n in PEERS),
                    stdout=table)
    _build_site(session)


#: The compatibility site, built from the peers' reports.
SITE = Path("docs/site")


#: Verdicts over time: runs against earlier releases, and the committed reports' git history.
HISTORY = Path("docs/history")


def _build_site(session: nox.Session) -> None:
    reports = [f"docs/conformance/{n}.json" for n in PEERS]
    session.run("python", "-m", "conformance", "history", *reports, "--out", str(HISTORY / "git.json"))
    session.run("python", "-m", "conformance", "site", *reports, "--out", str(SITE),
                "--history", str(HISTORY))


@nox.session
def site(session: nox.Session) -> None:
    """The static compatibility site (docs/site/) from the committed reports in docs/conformance/."""
    session.install("-e", ".")
    _build_site(session)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: writes docs/benchmarks.{md,json,png}; `-- --quick PATH` writes only the JSON, to PATH."""
    session.install("-e", ".[bench,peers]")
    session.run("python", "-m", "bench", *session.posargs)


#: The modules the suite must cover best (issue: at least 90% of their mutants killed).
MUTATION_TARGETS = ("reference/react.py", "reference/_tool.py", "reference/_args.py",
                    "reference/_adapters.py")
MUTATION_NOTES = Path("docs/mutation-notes.toml")
MUTATION_REPORT = Path("docs/mutation.md")
_MUTANTS = Path("mutants")

# Runs in the session's virtualenv, where mutmut is installed: every mutant's status, and the diff
# of each one the suite did not kill.
_DUMP_RESULTS = """
import json
from pathlib import Path
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files
found = []
for path in walk_mutatable_files():
    data = SourceFileMutationData(path=path)
    data.load()
    for name, code in data.exit_code_by_key.items():
        status = status_by_exit_code[code]
        diff = get_diff_for_mutant(name, path=path) if status != "not checked" else ""
        found.append({"module": str(path), "name": name, "status": status, "diff": diff})
Path("mutants/results.json").write_text(json.dumps(found), encoding="utf-8")
"""


@nox.session
def mutation(session: nox.Session) -> None:
    """Mutation testing of reference/ with `pytest --impl reference` as the only test; writes
    docs/mutation.md. `nox -s mutation` is the full run (from scratch); `nox -s mutation --
    'reference._args*'` reruns only the mutants those names match, keeping the other results;
    `nox -s mutation -- report` only rewrites the report (after editing docs/mutation-notes.toml)."""
    session.install("-e", ".[dev,mutation]")
    if session.posargs != ["report"]:
        if not session.posargs and _MUTANTS.exists():
            # mutmut tracks changes to reference/, not to the suite: a full run starts clean.
            shutil.rmtree(_MUTANTS)
        # nice: the run takes both cores for a long time; interactive work should still get them.
        session.run("nice", "-n", "15", "mutmut", "run", "--max-children", "2", *session.posargs,
                    external=True)
    session.run("python", "-c", _DUMP_RESULTS)
    results = json.loads((_MUTANTS / "results.json").read_text(encoding="utf-8"))
    notes = tomllib.loads(MUTATION_NOTES.read_text(encoding="utf-8"))
    report, unexplained = mutation_report(results, notes)
    MUTATION_REPORT.write_text(report, encoding="utf-8")
    if unexplained:
        session.warn(f"{unexplained} surviving mutant(s) have no entry in {MUTATION_NOTES}: "
                     f"see {MUTATION_REPORT}")


def mutant_key(function: str, diff: str) -> str:
    """How docs/mutation-notes.toml names a mutant: its function, the lines the mutation replaced
    and the lines it wrote, so an entry survives mutmut renumbering the mutants of a changed
    function."""
    def lines(sign: str) -> str:
        return " / ".join(line[1:].strip() for line in diff.splitlines()
                          if line.startswith(sign) and not line.startswith(sign * 3))
    return f"{function}: {lines('-')} => {lines('+')}"


def mutation_report(results: list[dict[str, str]], notes: dict[str, Any]) -> tuple[str, int]:
    """docs/mutation.md from mutmut's results and the notes; also how many survivors no note explains."""
    reasons: dict[str, tuple[str, str]] = {}  # mutant key -> (verdict, why)
    for verdict in ("killed_by", "equivalent", "open"):
        for entry in notes.get(verdict, []):
            for key in entry["mutants"]:
                reasons[key] = (verdict, entry["why"])
    rows, survivors, sharpened, timeouts, unexplained = [], [], [], [], 0
    totals = [0, 0, 0, 0]  # mutants, killed, equivalent, not run: over every module
    modules = sorted({r["module"] for r in results}, key=lambda m: (m not in MUTATION_TARGETS, m))
    for module in modules:
        mine = [r for r in results if r["module"] == module and r["status"] != "not checked"]
        unrun = sum(r["module"] == module and r["status"] == "not checked" for r in results)
        killed = sum(r["status"] in ("killed", "timeout") for r in mine)
        timeouts += [r["name"] for r in mine if r["status"] == "timeout"]
        equivalent = 0
        for r in mine:
            function = r["name"].rsplit("__mutmut_", 1)[0]
            verdict, why = reasons.get(mutant_key(function, r["diff"]), ("", ""))
            if r["status"] in ("killed", "timeout"):
                if verdict == "killed_by":
                    sharpened.append((r["name"], why, r["diff"]))
                continue
            if verdict == "equivalent":
                equivalent += 1
            elif verdict == "open":  # a known gap: counted as not killed, with what is missing
                why = f"Not killed yet: {why}"
            else:
                unexplained += 1
                why = (f"stale note: {why} should kill it, but it {r['status']}" if verdict
                       else "no scenario kills it yet, and no note says why it is equivalent")
                verdict = "open"
            survivors.append((r["name"], r["status"], verdict, why, r["diff"]))
        rows.append(_mutation_row(f"`{module}`", "yes" if module in MUTATION_TARGETS else "",
                                  len(mine), killed, equivalent, unrun))
        totals = [t + n for t, n in zip(totals, (len(mine), killed, equivalent, unrun), strict=True)]
    everything, killed_all, equivalent_all, _ = totals
    rows.append(_mutation_row("**all of `reference/`**", "", *totals))
    lines = [
        "# Mutation testing of the reference",
        "",
        "Generated by `nox -s mutation`; do not edit by hand (the explanations live in "
        "`docs/mutation-notes.toml`).",
        "",
        "mutmut changes `reference/` one small edit at a time; a mutant is killed when the "
        "conformance run `pytest --impl reference` fails on it. `tests/` never decides.",
        "`score` is killed / (mutants - equivalent ones): the share of the mutants that could "
        "be caught that the suite does catch. A timeout (the suite hung on the mutant) counts "
        "as killed; `no tests` means no scenario reaches the mutated function; `not run` "
        "mutants (an interrupted run) are left out of every other column.",
        "",
        f"**Over all of `reference/`: {killed_all} of {everything} mutants killed "
        f"({_percent(killed_all, everything)} of all), "
        f"{_percent(killed_all, everything - equivalent_all)} of the {everything - equivalent_all} "
        "that are not equivalent.**",
        "",
        "Running it: `nox -s mutation` is the full run from scratch (about 1,650 mutants: about ten "
        "minutes on two quiet cores, inside CI's time, though CI runs only `pytest`). "
        "`nox -s mutation -- 'reference.react.*'` reruns the mutants whose names "
        "match, keeping the other results: the CI-sized check of one module after a change. "
        "`nox -s mutation -- report` only rewrites this page, after editing the notes.",
        "",
        "| module | target | mutants | killed | equivalent | open | killed of all | score | not run |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "## Surviving mutants",
        "",
        "Each with why it is equivalent (no behaviour any requirement speaks of changes), or "
        "`open` when no scenario kills it yet (with what is missing, where the notes say).",
    ]
    for name, status, verdict, why, diff in survivors:
        lines += ["", f"### `{name}` ({status}, {verdict})", "", why, "", "```diff", diff, "```"]
    if timeouts:
        lines += ["", "## Mutants counted as killed because the suite timed out on them", "",
                  *(f"- `{name}`" for name in timeouts)]
    if sharpened:
        lines += ["", "## Mutants a sharpened scenario now kills", ""]
        for name, why, diff in sharpened:
            lines += ["", f"### `{name}`", "", f"Killed by {why}", "", "```diff", diff, "```"]
    return "\n".join(lines) + "\n", unexplained


def _mutation_row(name: str, target: str, mutants: int, killed: int, equivalent: int,
                  unrun: int) -> str:
    return (f"| {name} | {target} | {mutants} | {killed} | {equivalent} | "
            f"{mutants - killed - equivalent} | {_percent(killed, mutants)} | "
            f"{_percent(killed, mutants - equivalent)} | {unrun} |")


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"
