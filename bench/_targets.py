"""The issue's targets, as ratios within one run (never as assertions in tests)."""

from __future__ import annotations

from bench._results import Spread, SuiteOwn, Target

PEERS = ("dspy", "udspy")


def check(per_step_us: dict[str, dict[str, Spread]], import_ms: dict[str, Spread],
          suite_s: dict[str, Spread], own: SuiteOwn | None = None) -> list[Target]:
    """Each target whose figures this run has, with its value and limit (medians throughout)."""

    def us(impl: str, n: int) -> float | None:
        spread = per_step_us.get(impl, {}).get(str(n))
        return None if spread is None else spread.median

    found: list[Target] = []

    def target(name: str, value: float | None, limit: float | None) -> None:
        if value is not None and limit is not None:
            found.append(Target(name=name, value=value, limit=limit, met=value <= limit))

    for n, share in ((50, 15), (5, 10)):
        peers = [t for t in (us(p, n) for p in PEERS) if t is not None]
        target(f"reference per step at N={n}, in µs: at most 1/{share} of the faster peer",
               us("reference", n), min(peers) / share if peers else None)
    ref10, ref50 = us("reference", 10), us("reference", 50)
    target("reference episode time T(50)/T(10): at most 5.5 (linear)",
           ref50 * 50 / (ref10 * 10) if ref10 and ref50 else None, 5.5)
    bare50 = us("bare", 50)
    target("reference per step at N=50, in µs: at most 5x the bare loop",
           ref50, bare50 * 5 if bare50 else None)
    ref_import, udspy_import = import_ms.get("reference"), import_ms.get("udspy")
    target("import reference, in ms: at most 1/3 of import udspy",
           ref_import.median if ref_import else None, udspy_import.median / 3 if udspy_import else None)
    suite = suite_s.get("reference")
    target("full suite against the reference, wall s: under 5", suite.median if suite else None, 5.0)
    if own is not None:  # issue 18
        target("the suite against the reference, serial, wall s: at most 3", own.serial_wall_s.median, 3.0)
        target("the suite with -n 2 over serial, wall time: under 1 (-n 2 faster)",
               own.parallel_wall_s.median / own.serial_wall_s.median, 1.0)
    return found
