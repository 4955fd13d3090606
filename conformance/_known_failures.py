"""The `known_failures` entries that would list exactly what a run failed, ready to paste."""

from __future__ import annotations

import json
from collections.abc import Iterable

from conformance._report import UNEXPECTED_PASS, ScenarioResult

#: The reason each suggested entry carries: the maintainer must replace it, and the loader refuses a
#: binding or harness that lists it, so no binding ships it.
PLACEHOLDER = "TODO: say what the library does here, and where in its source"


def entries(results: Iterable[ScenarioResult]) -> list[str]:
    """The entry naming each failed scenario: an Outline row by its test id (`test_x[row]`, the
    rows of one Outline share its name), any other scenario by its name. A stale entry's failure
    ("listed as a known failure but passed") is fixed by removing it, never by listing it."""
    names = (r.id if "[" in r.id else r.name for r in results
             if r.verdict == "failed" and not r.message.startswith(UNEXPECTED_PASS))
    return list(dict.fromkeys(names))


def as_python(names: list[str]) -> str:
    """`names` as a binding's class attribute (JSON strings are Python string literals)."""
    lines = [f"    {json.dumps(name, ensure_ascii=False)}: {json.dumps(PLACEHOLDER)}," for name in names]
    return "\n".join(["known_failures = {", *lines, "}"])


def as_json(names: list[str]) -> str:
    """`names` as a harness's welcome field."""
    body = json.dumps({name: PLACEHOLDER for name in names}, indent=2, ensure_ascii=False)
    return f'"known_failures": {body}'


def placeholders(reasons: dict[str, str]) -> list[str]:
    """The entries of `reasons` whose reason is still the placeholder."""
    return sorted(name for name, reason in reasons.items() if PLACEHOLDER in str(reason))
