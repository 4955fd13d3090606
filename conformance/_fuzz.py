"""Generated tool arguments (ARGS-1) and the `fuzz` hypothesis profile: everything here imports
hypothesis, so a run that does not fuzz never pays for it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import InvalidArgument

#: `--hypothesis-profile fuzz`: this many examples for each property (ARGS-1 included).
FUZZ_PROFILE = "fuzz"
FUZZ_EXAMPLES = 5000
#: How many ARGS-1 sends by default (tool_args.feature's count): a run sending more fuzzes at scale,
#: where a binding's `fuzz_known_failures` apply.
DEFAULT_EXAMPLES = 40


def register_fuzz_profile() -> None:
    """Register the `fuzz` profile on top of the current default, unless a profile of that name
    exists already (the project's own conftest, say, whose definition then wins)."""
    try:
        settings.get_profile(FUZZ_PROFILE)
    except InvalidArgument:
        # too_slow is flaky on busy CI machines; deadlines likewise.
        settings.register_profile(FUZZ_PROFILE, parent=settings.get_profile("default"),
                                  max_examples=FUZZ_EXAMPLES, deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow])


def example_count(config: pytest.Config, count: int) -> int:
    """How many arguments ARGS-1 generates: `--conformance-examples` exactly, else the feature's
    count, raised to the `--hypothesis-profile` loaded (never lowered: a profile made for quick
    runs of a project's own tests must not weaken the suite's verdict)."""
    given_count: int | None = config.getoption("conformance_examples", None)
    if given_count is not None:
        return given_count
    if config.getoption("hypothesis_profile", None):
        return max(count, int(settings().max_examples))  # the profile loaded
    return count


def check(send: Callable[[str, dict[str, Any]], None], examples: int, seed: int | None) -> None:
    """Call `send(text, data)` with `examples` generated arguments; raise the shrunk failure.

    Derandomised unless a seed is given, so every binding is fed the same objects and a failure
    reproduces. No example database: nothing is written to the user's working tree.
    """
    keep_hypothesis_out_of_the_working_tree()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              report_multiple_bugs=False, suppress_health_check=list(HealthCheck))
    @given(text=st.text(max_size=40), data=_json_objects)
    def run(text: str, data: dict[str, Any]) -> None:
        send(text, data)

    (run if seed is None else hypothesis_seed(seed)(run))()


#: How many of the innermost frames a fuzz failure's traceback keeps: where the library raised.
LAST_FRAMES = 6


def forget_earlier_output(config: pytest.Config) -> None:
    """Drop what the examples so far printed and logged, so a failure shows the output of the
    shrunk example (Hypothesis replays it last) alone, not thousands of lines of the library's
    warnings over every example it tried."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    try:
        if capture is not None and capture.is_globally_capturing():
            capture.read_global_capture()  # read and emptied
    except (AssertionError, AttributeError, ValueError):  # not capturing (-s), or another pytest
        pass
    handler = getattr(config.pluginmanager.get_plugin("logging-plugin"), "report_handler", None)
    if handler is not None and hasattr(handler, "reset"):
        handler.reset()


def trim_tracebacks(exc: BaseException) -> None:
    """Cut the traceback of `exc` and of each exception it was raised from (or during) to its
    innermost frames."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__traceback__ = last_frames(current.__traceback__)
        current = current.__cause__ or current.__context__


def last_frames(tb: TracebackType | None, keep: int = LAST_FRAMES) -> TracebackType | None:
    """The innermost `keep` frames of a traceback: the library's own, not the suite's and
    Hypothesis's between the test and the library."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    return frames[-keep] if len(frames) > keep else (frames[0] if frames else None)


def keep_hypothesis_out_of_the_working_tree() -> None:
    """Hypothesis keeps a cache (and, if enabled, its example database) under `.hypothesis/` in the
    working directory: put it in the user's cache directory instead, unless
    HYPOTHESIS_STORAGE_DIRECTORY says where."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    set_hypothesis_home_dir(cache / "react-conformance" / "hypothesis")


def _json_scalars() -> st.SearchStrategy[Any]:
    return (
        st.none()
        | st.booleans()
        # I-JSON (RFC 7493): integers every language holds exactly, so that a JavaScript library is
        # judged on what it does with them rather than on its number type.
        | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
    )


_json_objects = st.dictionaries(
    st.text(max_size=10),
    st.recursive(
        _json_scalars(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
        max_leaves=12,
    ),
    max_size=5,
)
