"""Step definitions, one module per kind of step; registered by the plugin under `--impl`."""

from __future__ import annotations

import json
import re

from pydantic import JsonValue

from conformance.binding import Step

#: The step modules, in the order the plugin registers them.
MODULES = (
    "conformance._fixtures",
    "conformance._steps.setup",
    "conformance._steps.run",
    "conformance._steps.outcomes",
    "conformance._steps.tools",
    "conformance._steps.model_log",
    "conformance._steps.transport",
    "conformance._steps.observations",
    "conformance._steps.stopping",
    "conformance._steps.adapters",
    "conformance._steps.interrupts",
    "conformance._steps.streams",
    "conformance._steps.wire",
)


def parse_json(text: str) -> JsonValue:
    """A JSON value written in a feature file, with a message that points at the typo."""
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"the feature file has invalid JSON {text!r}: {exc}") from exc
    return value


#: What an observation that reports an error looks like, in any library's words (`unrecognized`:
#: zod's "Unrecognized key", which a TypeScript library shows the model as it is).
ERROR_WORDS = re.compile(
    r"error|invalid|unknown|unrecognized|not (?:a |an )?(?:valid|allowed|available|found|exist)|could not|"
    r"cannot|can't|failed|refused|reject|not in|not part of|missing required|unexpected argument|malformed|"
    # A limit the call broke, in a parser's words (Jackson: "... exceeds the maximum allowed (500)").
    r"exceed(?:s|ed)? the (?:maxim|limit)",
    re.IGNORECASE,
)



def marked_as_error(step: Step, exception_type: str | None = None) -> bool:
    """Whether the library marked `step`'s observation as an error: by its own flag
    (`Step.is_error`) where it has one; else by words of error in the text, or the name of the
    exception the tool raised (`KeyError: 'x'`, `DiskOnFire: ...`), which says as much."""
    if step.is_error is not None:
        return step.is_error
    text = str(step.observation)
    return bool(ERROR_WORDS.search(text)) or (exception_type is not None and exception_type in text)


def how_marked(step: Step) -> str:
    """How a step's observation was marked, for a failure message."""
    if step.is_error is None:
        return "the library has no error flag, and its text has no word of error"
    return f"the library flagged it is_error={step.is_error}"


_QUOTED = re.compile(r'"([^"]*)"')

def _show(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more chars)"
