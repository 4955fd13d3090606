"""The benchmark's figures as data: what `docs/benchmarks.json` (or a `--quick` run's JSON) holds."""

from __future__ import annotations

import statistics

from pydantic import BaseModel

FORMAT_VERSION = 1
#: How the reports name each implementation.
LABELS = {"reference": "reference", "dspy": "dspy", "udspy": "udspy", "langchain": "langchain",
          "openai-agents": "openai-agents", "pydantic-ai": "pydantic-ai", "smolagents": "smolagents",
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
    targets: list[Target]

    def median_us(self, impl: str, n: int) -> float:
        """The median CPU microseconds per step of `impl` at N = n."""
        return self.per_step_us[impl][str(n)].median
