"""docs/benchmarks.png: the per-step figures as a plot (needs matplotlib: the bench extra)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display
import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator

from bench._results import LABELS, Results


def plot(results: Results, path: Path) -> None:
    """CPU microseconds per step against N, log scales, one line per implementation, min-max as bars."""
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for impl, by_n in results.per_step_us.items():
        ns = results.steps
        med = [by_n[str(n)].median for n in ns]
        low = [m - by_n[str(n)].min for m, n in zip(med, ns, strict=True)]
        high = [by_n[str(n)].max - m for m, n in zip(med, ns, strict=True)]
        ax.errorbar(ns, med, yerr=[low, high], marker="o", capsize=3, label=LABELS.get(impl, impl))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(results.steps, [str(n) for n in results.steps])
    ax.set_xlabel("N, steps in the episode (N-1 tool calls, then the end of the run)")
    ax.set_ylabel("CPU µs per step (median; bars: min-max)")
    ax.set_title("Per-step cost of a scripted ReAct episode (shared 2-core machine)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
