"""The scripted model: answers each model request from a scenario's queue of neutral turns."""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Iterable

from pydantic import JsonValue

from conformance._guard import CheckFailed, RunawayRun
from conformance.binding import ExtractTurn, FaultTurn, FinalTurn, LMCall, StepTurn, Turn

#: The neutral standing answer to every auxiliary call: "go on, unchanged". A binding renders it
#: as its library's form of that (the observation passed through as it is, the plan kept).
AUXILIARY_ANSWER = "continue"

#: One clock for every scripted model, so the calls of concurrent runs can be put in one order.
_CLOCK = itertools.count()

#: How long (seconds) a model's first request waits at its `rendezvous` for the other runs' first
#: requests. A library that runs one call at a time never meets them: it goes on after this wait.
RENDEZVOUS_WAIT = 1.0


class UnexpectedModelCall(CheckFailed):
    """The implementation asked the model something the scenario did not script."""


class ScriptedModel:
    """A queue of turns, plus optional standing answers for every further step or extraction call.

    Bindings call `answer()` once per model request and render the turn in the library's format.
    A `FinalTurn` reaches only bindings that do not claim `signature`; for the others
    (`finish_then_extract`), it answers the step call with `finish` and the extraction call after
    it with its outputs, as a DSPy-shaped module expects.
    Every request is logged in `calls`, and stamped in `stamps` with its place in the order of all
    scripted models' requests (to tell whether concurrent runs were in flight at once). A request
    the script did not expect raises `UnexpectedModelCall` and is remembered in `violation`, so
    that a library which swallows the exception still fails the scenario.

    The model keeps its own clock, so that waits are measured without waiting (NET-1): a binding
    whose library lets it replace the retry client's sleep passes `sleep`, and a seam serving a
    `hang` fault calls `hang` with the request's own timeout. `times` holds the clock at each request.
    """

    def __init__(
        self,
        turns: Iterable[Turn] = (),
        *,
        every_step: StepTurn | FaultTurn | None = None,
        every_extract: ExtractTurn | None = None,
        finish_then_extract: bool = True,
        auxiliary_names: Iterable[str] | None = None,
    ) -> None:
        self._queue: deque[Turn] = deque(turns)
        #: The auxiliary calls the binding names (`Binding.auxiliary_calls`); None: any.
        self.auxiliary_names = None if auxiliary_names is None else frozenset(auxiliary_names)
        #: The first auxiliary call the binding made without naming it: a binding bug, as no report
        #: could say what that call is. It is answered all the same, so the run is not disturbed.
        self.unnamed_auxiliary: str | None = None
        #: Why the seam could not serve a request (a path it does not serve, say): the binding's
        #: fault, whatever the library then did with the refusal.
        self.binding_fault: str | None = None
        self.finish_then_extract = finish_then_extract
        #: The index in `calls` of each call that completed a final answer.
        self.finals: list[int] = []
        self._pending_final: ExtractTurn | None = None
        self.every_step: StepTurn | FaultTurn | None = every_step
        self.every_extract = every_extract
        self.calls: list[LMCall] = []
        #: The turn that answered each call, in the order of `calls` (None: the script had none).
        self.answers: list[Turn | None] = []
        self.stamps: list[int] = []
        self.violation: str | None = None
        #: The model's clock, in seconds: it moves only by `sleep` and `hang`.
        self.clock = 0.0
        #: The clock at each request, in the order of `calls`; and the real (monotonic) time.
        self.times: list[float] = []
        self.walls: list[float] = []
        #: Every wait the library asked for (`sleep`), and each hung request's timeout (`hang`).
        self.waits: list[float] = []
        self.hangs: list[float | None] = []
        #: The person's answers to approval callbacks (`approval_form = "callback"`), in order, and
        #: every approval the library asked for: `{"name", "args", "call_id"}`.
        self.approvals: deque[str] = deque()
        self.approval_requests: list[dict[str, JsonValue]] = []
        #: How many calls (in `calls`) the current run may make before it counts as a run that
        #: never stops (`RunawayRun`); None: no limit. Set by the suite before each run.
        self.call_limit: int | None = None
        #: Why the suite ended a run that never stopped (`RunawayRun`), or None.
        self.ran_away: str | None = None
        #: Shared by the models of concurrent runs: each answers its first request only once every
        #: run has made its first one (or after `RENDEZVOUS_WAIT`), so that all of them are in
        #: flight before any goes on, whatever the threads' timing.
        self.rendezvous: threading.Barrier | None = None
        self._lock = threading.Lock()

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` on the model's clock, at once: pass it as the library's retry sleep."""
        with self._lock:
            self.waits.append(seconds)
            self.clock += max(0.0, seconds)

    def hang(self, timeout: float | None) -> None:
        """A request the endpoint never answers (a `hang` fault): its timeout passes on the model's
        clock. Then the seam fails the request as that timeout would (`httpx.ReadTimeout`). A
        request without a timeout (None) would wait for ever: it is recorded, for the suite to fail."""
        with self._lock:
            self.hangs.append(timeout)
            self.clock += timeout if timeout is not None and timeout > 0 else 0.0

    def auxiliary(self, name: str, call: LMCall) -> str:
        """Log an auxiliary call (a kind the binding named in `Binding.auxiliary_calls`) and return
        the neutral standing answer, `AUXILIARY_ANSWER`; no scripted turn is consumed. A name the
        binding did not list is remembered in `unnamed_auxiliary` (a binding error)."""
        logged = call.model_copy(update={"kind": "auxiliary", "auxiliary": name})
        with self._lock:
            if self.auxiliary_names is not None and name not in self.auxiliary_names:
                self.unnamed_auxiliary = self.unnamed_auxiliary or name
            self.calls.append(logged)
            self.stamps.append(next(_CLOCK))
            self.times.append(self.clock)
            self.walls.append(time.monotonic())
            self.answers.append(None)
        return AUXILIARY_ANSWER

    def approve(self, name: str, args: JsonValue, call_id: str | None) -> str:
        """A person's answer to the library's approval callback for the call `name(args)`: `yes`,
        `no`, free text, or an edit as JSON text (as in `ResumeRequest.response`). A request with no
        scripted answer is refused (`no`) and remembered in `violation`."""
        with self._lock:
            self.approval_requests.append({"name": name, "args": args, "call_id": call_id})
            if self.approvals:
                return self.approvals.popleft()
            self.violation = self.violation or (
                f"the library asked a person to approve {name}({args}), but the scenario scripts "
                "no answer")
            return "no"

    def extend(self, turns: Iterable[Turn]) -> None:
        """Queue more turns."""
        with self._lock:
            self._queue.extend(turns)

    @property
    def unused(self) -> list[Turn]:
        """The queued turns no request has consumed yet (a final answer's pending extraction too)."""
        pending: list[Turn] = [self._pending_final] if self._pending_final is not None else []
        return pending + list(self._queue)

    def holds_a_fault(self) -> bool:
        """The script still holds a transport fault (`FaultTurn`): a seam that must choose the
        library's own HTTP client before the run, for its retries to meet the fault, reads this."""
        with self._lock:
            return any(isinstance(t, FaultTurn) for t in (*self.unused, self.every_step))

    def answer(self, call: LMCall) -> Turn:
        """Log `call` and return the turn that answers it."""
        with self._lock:
            rendezvous, self.rendezvous = self.rendezvous, None
        if rendezvous is not None:
            try:
                rendezvous.wait(RENDEZVOUS_WAIT)
            except threading.BrokenBarrierError:
                pass  # a run that never reached the model, or a library that runs one at a time
        with self._lock:
            if self.call_limit is not None and len(self.calls) >= self.call_limit:
                message = (
                    f"the run never stopped: it made {len(self.calls)} model calls, well past its "
                    "script and its step cap, and went on calling the model; the suite ended it "
                    f"there. The last request was:\n{_show(self.calls[-1]) if self.calls else ''}")
                self.violation = self.violation or message
                self.ran_away = message
                raise RunawayRun(message)
            self.calls.append(call)
            self.stamps.append(next(_CLOCK))
            self.times.append(self.clock)
            self.walls.append(time.monotonic())
            turn = self._next_for(call)
            self.answers.append(turn)
            if turn is not None:
                return turn
            expected = (
                f"the next scripted turn is a {self._queue[0].kind} turn"
                if self._queue
                else "the script has no turns left"
            )
            message = (
                f"model call #{len(self.calls)} was a {call.kind} call, but {expected}.\n"
                f"The request was:\n{_show(call)}"
            )
            # The first unexpected call is the one to fix; a library that retries it asks again.
            self.violation = self.violation or message
            raise UnexpectedModelCall(message)

    def _next_for(self, call: LMCall) -> Turn | None:
        if self._pending_final is not None:
            if call.kind != "extract":
                return None
            turn, self._pending_final = self._pending_final, None
            self.finals.append(len(self.calls) - 1)
            return turn
        if self._queue and isinstance(self._queue[0], FinalTurn) and call.kind == "step":
            final = self._queue.popleft()
            assert isinstance(final, FinalTurn)
            if self.finish_then_extract:
                self._pending_final = ExtractTurn(outputs=final.outputs)
                return StepTurn(thought=final.thought or "I have the answer", tool_name="finish")
            self.finals.append(len(self.calls) - 1)
            return final
        if self._queue:
            head = self._queue[0]
            if isinstance(head, FaultTurn) or head.kind == call.kind:
                return self._queue.popleft()
            return None
        if call.kind == "step":
            return self.every_step
        if call.kind == "extract":
            return self.every_extract
        return None

    def count(self, kind: str) -> int:
        """How many logged calls were of `kind` (`step`, `extract`, `auxiliary`, `other`)."""
        return sum(1 for c in self.calls if c.kind == kind)


def _show(call: LMCall, limit: int = 2000) -> str:
    text = "\n".join(f"  [{m.get('role')}] {m.get('content')}" for m in call.messages)
    if call.tools:
        text += f"\n  [tools] {call.tools}"
    return text if len(text) <= limit else text[:limit] + f"\n  ... ({len(text) - limit} more chars)"
