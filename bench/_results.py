"""The benchmark's figures as data: what `docs/benchmarks.json` (or a `--quick` run's JSON) holds."""

from __future__ import annotations

import statistics

from pydantic import BaseModel

FORMAT_VERSION = 1
#: How the reports name each implementation.
LABELS = {"reference": "reference", "dspy": "dspy", "udspy": "udspy", "langchain": "langchain",
          "openai-agents": "openai-agents", "pydantic-ai": "pydantic-ai", "smolagents": "smolagents",
          "llama-index": "llama-index", "haystack": "haystack", "semantic-kernel": "semantic-kernel",
          "autogen": "autogen", "google-adk": "google-adk",
          "bare": "bare loop (floor)"}


class Spread(BaseModel):
    """Repeated measurements of one figure: their median, minimum and maximum, and the samples."""

    median: float
    min: float
    max: float
    samples: list[float]

    @classmethod
    def of(cls, samples: list[float]) -> Spread:
        """The spread of these samples."""
        return cls(median=statistics.median(samples), min=min(samples), max=max(samples), samples=samples)


class Target(BaseModel):
    """One of the issue's targets, checked on this run's figures: `value <= limit`."""

    name: str
    value: float
    limit: float
    met: bool


class Machine(BaseModel):
    """Where the figures were taken (no paths, no host names)."""

    platform: str
    cpu: str
    cores: int
    python: str
    load_average: list[float]


class SuiteOwn(BaseModel):
    """The suite's own time against the reference (bench._suite): seconds unless named `_ms`."""

    runs: int
    scenarios: int
    #: The whole process (tree), serial and with `-n 2`.
    serial_wall_s: Spread
    serial_cpu_s: Spread
    parallel_wall_s: Spread
    parallel_cpu_s: Spread
    #: Serial runs, on the wall clock: process start to the end of pytest's configure (interpreter,
    #: imports, plugins, loading the binding); then collection; both together and up to the first
    #: scenario (start-up); first scenario start to last scenario end; then to the process's exit.
    plugins_s: Spread
    collection_s: Spread
    startup_s: Spread
    scenarios_s: Spread
    teardown_s: Spread
    #: Per run, the median and the mean scenario (wall ms), and the median scenario's CPU ms.
    scenario_median_ms: Spread
    scenario_mean_ms: Spread
    scenario_cpu_median_ms: Spread
    #: The slowest scenarios (by median over the runs), wall ms.
    slowest_ms: dict[str, Spread]

    @property
    def speedup(self) -> float:
        """Serial wall time over `-n 2` wall time, medians: above 1, `-n 2` is faster."""
        return self.serial_wall_s.median / self.parallel_wall_s.median


class Results(BaseModel):
    """One benchmark run. Per-step figures are microseconds per step, keyed by implementation then N."""

    format_version: int = FORMAT_VERSION
    quick: bool
    machine: Machine
    versions: dict[str, str]
    steps: list[int]
    repetitions: int
    warmups: int
    #: implementation -> str(N) -> microseconds per step over the repetitions, in CPU time.
    per_step_us: dict[str, dict[str, Spread]]
    #: the same in wall time, which other work on the machine inflates.
    per_step_wall_us: dict[str, dict[str, Spread]]
    #: import -> CPU milliseconds to do it in a fresh interpreter.
    import_ms: dict[str, Spread]
    #: binding -> wall seconds of the whole conformance run against it (empty in a quick run).
    suite_s: dict[str, Spread]
    #: binding -> the session seconds pytest reports for that run: without start-up and plugin loading.
    session_s: dict[str, Spread]
    #: The suite's own start-up, per-scenario time and `-n 2` speed-up (None in runs without the reference).
    suite_own: SuiteOwn | None = None
    targets: list[Target]

    def median_us(self, impl: str, n: int) -> float:
        """The median CPU microseconds per step of `impl` at N = n."""
        return self.per_step_us[impl][str(n)].median
