"""`python -m bench`: time every implementation, then write docs/benchmarks.{json,md,png}.

Per-step cost: each implementation runs in a process of its own (bench._worker), all started up
front. The parent checks every episode length in each, sizes a batch of episodes per (implementation,
N) to last about `batch` seconds of CPU, runs warm-up rounds, then the timed repetitions,
interleaved: in each repetition, for each N, every implementation takes its turn, in an order that
rotates, so that load from elsewhere on the machine falls on all of them alike. Reported:
microseconds per step (a batch's time / episodes / N), the median over repetitions and the min-max
spread, in CPU time of the worker process (all its threads; the loop is CPU-bound, and CPU time is
far less disturbed than wall time by other work on a shared machine) and in wall time.

Import time: CPU time of each import in a fresh interpreter, interleaved, median of the runs. Suite
time: `python -m pytest --impl NAME -q -p no:cacheprovider`, whole process, per bundled binding. The
suite's own time (bench._suite): start-up, per-scenario time and the `-n 2` speed-up, against the
reference.

`--quick PATH` does the same with fewer repetitions, one run of the suite's own time and no other
suite runs, in under a minute, and writes only the JSON, to PATH.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from bench import _report, _suite, _targets
from bench._episodes import IMPLS, OWN_ENVS
from bench._results import Machine, Results, Spread

ROOT = Path(__file__).resolve().parents[1]
# Every process measured here may cache bytecode, as after a normal install: with
# PYTHONDONTWRITEBYTECODE set, every import would compile from source and be timed doing so.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
STEPS = (1, 5, 10, 25, 50)
#: What the import-time table times: each package, and pydantic with one model defined: the floor of
#: a package (like the reference) whose data types are pydantic models, defined at import.
IMPORTS = {"reference": "import reference", "udspy": "import udspy", "dspy": "import dspy",
           "langchain": "from langchain.agents import create_agent", "openai-agents": "import agents",
           "pydantic-ai": "import pydantic_ai", "smolagents": "import smolagents",
           "llama-index": "from llama_index.core.agent.workflow import FunctionAgent",
           "haystack": "from haystack.components.agents import Agent",
           "semantic-kernel": "from semantic_kernel.agents import ChatCompletionAgent",
           "autogen": "from autogen_agentchat.agents import AssistantAgent",
           "google-adk": "from google.adk.agents import LlmAgent",
           "pydantic": "import pydantic; type('M', (pydantic.BaseModel,), {'__annotations__': {'x': int}})"}
BINDINGS = ("reference", "udspy", "dspy")
#: The distributions whose versions a run records, per implementation timed.
DISTRIBUTIONS = {"dspy": ("dspy",), "udspy": ("udspy",),
                 "langchain": ("langchain", "langchain-core", "langgraph"),
                 "openai-agents": ("openai-agents",), "pydantic-ai": ("pydantic-ai-slim",),
                 "smolagents": ("smolagents",), "llama-index": ("llama-index-core",),
                 "haystack": ("haystack-ai",), "agno": ("agno",), "strands-agents": ("strands-agents",),
                 "semantic-kernel": ("semantic-kernel", "openai"),
                 "autogen": ("autogen-agentchat", "autogen-ext", "openai"),
                 "google-adk": ("google-adk", "google-genai"), "crewai": ("crewai", "openai")}


def _python(impl: str) -> str:
    """The Python that times `impl`: this one, or the environment of its own (OWN_ENVS)."""
    if impl not in OWN_ENVS:
        return sys.executable
    from tests.peer_envs import python_of  # the checkout's: it builds or reuses the peer's venv

    return str(python_of(impl))


@dataclass(frozen=True)
class Plan:
    """How much to measure."""

    repetitions: int
    warmups: int
    batch: float  # seconds a timed batch of episodes should last, at least
    import_runs: int
    suite_runs: int
    own_runs: int  # serial and `-n 2` runs of the suite against the reference, for its own time


FULL = Plan(repetitions=15, warmups=2, batch=0.05, import_runs=15, suite_runs=3, own_runs=7)
QUICK = Plan(repetitions=5, warmups=1, batch=0.01, import_runs=2, suite_runs=0, own_runs=1)


class Worker:
    """The process timing one implementation (bench._worker), spoken to one JSON line at a time."""

    def __init__(self, impl: str, max_steps: int) -> None:
        self.impl = impl
        # A file, not a pipe: a library that logs a lot must never block on a full pipe.
        self.errors = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [_python(impl), "-m", "bench._worker", impl, str(max_steps)], cwd=ROOT, env=ENV, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors)

    def ask(self, **request: int) -> Any:
        """Send one request; its answer, or a RuntimeError with the worker's stderr if it died."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self.errors.seek(0)
            err = self.errors.read().decode(errors="replace")
            raise RuntimeError(f"the {self.impl} benchmark process died on {request}:\n{err[-3000:]}")
        return json.loads(line)

    def seconds(self, n: int, loops: int) -> tuple[float, float]:
        """CPU and wall seconds of `loops` episodes of `n` steps."""
        answer = self.ask(time=n, loops=loops)
        return float(answer["cpu"]), float(answer["wall"])

    def close(self) -> None:
        """End the worker (its loop ends when stdin closes)."""
        if self.process.poll() is None:
            self.process.communicate(timeout=30)
        self.errors.close()


PerStep = dict[str, dict[str, Spread]]


def per_step(impls: list[str], steps: list[int], plan: Plan) -> tuple[PerStep, PerStep]:
    """Microseconds per step for every implementation and N, from interleaved repetitions: in CPU
    time, then in wall time."""
    workers = [Worker(impl, max(steps)) for impl in impls]
    try:
        for worker, n in itertools.product(workers, steps):
            worker.ask(check=n)
        loops = {}
        for worker, n in itertools.product(workers, steps):
            worker.seconds(n, 1)  # first run after the check: still warming up
            loops[worker.impl, n] = max(1, round(plan.batch / max(worker.seconds(n, 1)[0], 1e-6)))
        cpu: dict[tuple[str, int], list[float]] = {key: [] for key in loops}
        wall: dict[tuple[str, int], list[float]] = {key: [] for key in loops}
        for rep in range(plan.warmups + plan.repetitions):
            turn = workers[rep % len(workers):] + workers[:rep % len(workers)]
            for n, worker in itertools.product(steps, turn):
                k = loops[worker.impl, n]
                cpu_s, wall_s = worker.seconds(n, k)
                if rep >= plan.warmups:
                    cpu[worker.impl, n].append(cpu_s / k / n * 1e6)
                    wall[worker.impl, n].append(wall_s / k / n * 1e6)
    finally:
        for worker in workers:
            worker.close()
    return ({impl: {str(n): Spread.of(cpu[impl, n]) for n in steps} for impl in impls},
            {impl: {str(n): Spread.of(wall[impl, n]) for n in steps} for impl in impls})


def import_ms(packages: list[str], runs: int) -> dict[str, Spread]:
    """CPU milliseconds to import each package in a fresh interpreter (of its own environment, for
    the OWN_ENVS), runs interleaved, after one untimed round that leaves the bytecode cached."""
    samples: dict[str, list[float]] = {p: [] for p in packages}
    for run in range(runs + 1):
        for package in packages:
            code = f"import time; t = time.process_time(); {IMPORTS[package]}; print(time.process_time() - t)"
            out = subprocess.run([_python(package), "-c", code], cwd=ROOT, env=ENV,
                                 check=True, capture_output=True, text=True).stdout
            if run:
                samples[package].append(float(out) * 1e3)
    return {p: Spread.of(s) for p, s in samples.items()}


def suite_s(bindings: list[str], runs: int) -> tuple[dict[str, Spread], dict[str, Spread]]:
    """Seconds of the whole conformance run against each binding, runs interleaved: the process's
    wall time, and the session time pytest reports (without interpreter start and plugin loading)."""
    samples: dict[str, list[float]] = {b: [] for b in bindings}
    sessions: dict[str, list[float]] = {b: [] for b in bindings}
    for binding in bindings if runs else []:  # collecting imports everything: bytecode gets cached
        subprocess.run([sys.executable, "-m", "pytest", "--impl", binding, "-q", "-p", "no:cacheprovider",
                        "--collect-only"], cwd=ROOT, env=ENV, capture_output=True, check=True)
    for _ in range(runs):
        for binding in bindings:
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pytest", "--impl", binding, "-q", "-p",
                                   "no:cacheprovider"], cwd=ROOT, env=ENV, capture_output=True, text=True)
            samples[binding].append(time.perf_counter() - start)
            last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
            reported = re.search(r" in ([0-9.]+)s", last)
            if done.returncode != 0 or reported is None:
                raise RuntimeError(f"the suite against {binding} failed (exit {done.returncode}):\n"
                                   f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
            sessions[binding].append(float(reported.group(1)))
    return ({b: Spread.of(s) for b, s in samples.items() if s},
            {b: Spread.of(s) for b, s in sessions.items() if s})


def machine() -> Machine:
    """This machine: platform, CPU model, cores, Python, load average now."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    return Machine(platform=platform.platform(terse=True), cpu=cpu, cores=os.cpu_count() or 0,
                   python=platform.python_version(), load_average=[round(x, 2) for x in os.getloadavg()])


def versions(impls: list[str]) -> dict[str, str]:
    """The installed versions of this project and of the peers timed."""
    found = {}
    here = [d for i in impls if i not in OWN_ENVS for d in DISTRIBUTIONS.get(i, ())]
    for name in ("react-conformance", *here):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    for impl in (i for i in impls if i in OWN_ENVS):  # read in the environment that times it
        code = f"from importlib.metadata import version; print(version({DISTRIBUTIONS[impl][0]!r}))"
        found[DISTRIBUTIONS[impl][0]] = subprocess.run([_python(impl), "-c", code], capture_output=True,
                                                        text=True, check=True).stdout.strip()
    return found


def main(argv: list[str] | None = None) -> int:
    """The command line: measure, then write the JSON (--quick) or docs/benchmarks.*."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", metavar="PATH", type=Path,
                        help="a run under a minute that writes only the JSON, to PATH")
    parser.add_argument("--impl", nargs="+", choices=IMPLS, default=list(IMPLS),
                        help="the implementations to time (default: all)")
    parser.add_argument("--steps", nargs="+", type=int, default=list(STEPS), metavar="N",
                        help=f"the episode lengths (default: {' '.join(map(str, STEPS))})")
    args = parser.parse_args(argv)
    if min(args.steps) < 1:
        parser.error(f"an episode has at least one step (the finish); got --steps {args.steps}")
    if not args.quick and importlib.util.find_spec("matplotlib") is None:
        parser.error("a full run draws docs/benchmarks.png with matplotlib, which is not installed: "
                     "pip install -e '.[bench,peers]', or run nox -s bench (or pass --quick PATH)")
    plan = QUICK if args.quick else FULL
    impls, steps = list(args.impl), sorted(set(args.steps))
    packages = [p for p in IMPORTS if p in impls or (p == "pydantic" and "reference" in impls)]
    results = Results(quick=bool(args.quick), machine=machine(), versions=versions(impls), steps=steps,
                      repetitions=plan.repetitions, warmups=plan.warmups,
                      per_step_us={}, per_step_wall_us={},
                      import_ms=import_ms(packages, plan.import_runs), suite_s={}, session_s={}, targets=[])
    results.per_step_us, results.per_step_wall_us = per_step(impls, steps, plan)
    results.suite_s, results.session_s = suite_s([b for b in BINDINGS if b in impls], plan.suite_runs)
    if "reference" in impls:
        results.suite_own = _suite.measure(ROOT, ENV, plan.own_runs)
    results.targets = _targets.check(results.per_step_us, results.import_ms, results.suite_s,
                                     results.suite_own)
    if args.quick:
        args.quick.write_text(results.model_dump_json(indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.quick}")
        return 0
    _report.write(results, ROOT / "docs")
    for target in results.targets:
        verdict = "met   " if target.met else "MISSED"
        print(f"{verdict} {target.name}: {target.value:.3g} (limit {target.limit:.3g})")
    return 0
