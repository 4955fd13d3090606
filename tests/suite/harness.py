"""A harness in Python for the protocol tests: `python -m tests.suite.harness [--break HOW]`.

It drives the reference ReAct through the reference binding, but every model answer and every tool
call crosses the process boundary to the suite, as in any other language: the verdicts must equal
the in-process reference binding's. `--break` makes it misbehave the ways a real harness can:
`invalid-json` (a line that is not JSON), `bad-message` (JSON that is not a protocol message),
`crash` (exits in the middle of a call), `stall` (never replies to a call).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from conformance import _protocol as p
from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance._tools import SuiteTool
from conformance.binding import ErrorInfo, LMCall, Outcome, Turn
from conformance.bindings.reference import ReferenceBinding

_write_lock = threading.Lock()
_waiting: dict[str, tuple[threading.Event, list[BaseModel]]] = {}
_ids = iter(range(1, 1 << 62))


def send(message: BaseModel) -> None:
    with _write_lock:
        sys.stdout.write(p.encode(message))
        sys.stdout.flush()


def ask(make: Callable[[str], p.ModelRequest | p.ToolRequest]) -> BaseModel:
    """Send a request to the suite and wait for its answer (read by the main loop)."""
    request_id = f"h{next(_ids)}"
    done, box = threading.Event(), []
    _waiting[request_id] = (done, box)
    send(make(request_id))
    done.wait()
    return box[0]


class RemoteModel(ScriptedModel):
    """Every model request goes to the suite, which answers from the scenario's script."""

    def __init__(self, run: str) -> None:
        super().__init__()
        self.run = run

    def sleep(self, seconds: float) -> None:
        send(p.Sleep(run=self.run, seconds=seconds))

    def hang(self, timeout: float | None) -> None:
        send(p.Hang(run=self.run, timeout=timeout))

    def answer(self, call: LMCall) -> Turn:
        answer = ask(lambda i: p.ModelRequest(id=i, run=self.run, call=call))
        assert isinstance(answer, p.TurnAnswer)
        if answer.error is not None or answer.turn is None:
            raise UnexpectedModelCall(answer.error or "no turn")
        return answer.turn


def _error(info: ErrorInfo) -> Exception:
    """The tool's error as an exception of the same name whose text is the same message."""
    cls = type(info.type, (Exception,), {"__str__": lambda self: info.message})
    return cls(info.message)


#: Which run a tool call belongs to (set in each worker thread, inherited by its tasks).
current_run: ContextVar[str] = ContextVar("current_run")


def remote_tool(spec: Any) -> SuiteTool:
    def behaviour(args: dict[str, Any]) -> Any:
        answer = ask(lambda i: p.ToolRequest(id=i, run=current_run.get(), name=spec.name, args=args))
        assert isinstance(answer, p.ToolAnswer)
        if answer.error is not None:
            raise _error(answer.error)
        return answer.result

    return SuiteTool(spec, behaviour)


class Harness:
    def __init__(self, broken: str | None, when: str) -> None:
        self.binding = ReferenceBinding()
        self.agents: dict[str, object] = {}
        self.broken, self.when = broken, when

    def handle(self, command: p.Command) -> None:
        if isinstance(command, p.Run | p.Resume | p.RunConcurrently):
            threading.Thread(target=self.call, args=(command,), daemon=True).start()
            return
        send(self.reply(command))
        if isinstance(command, p.Stop):
            os._exit(0)

    def reply(self, c: p.Command) -> p.Reply:
        b = self.binding
        if isinstance(c, p.Hello):
            return p.Welcome(id=c.id, protocol=b.contract_version, name="python-harness",
                             version=b.version, capabilities=sorted(b.capabilities),
                             not_claimed=dict(b.not_claimed))
        if isinstance(c, p.Configure):
            b.configure(adapter=c.adapter)
            return p.Done(id=c.id)
        if isinstance(c, p.GetGlobalAdapter):
            return p.Adapter(id=c.id, adapter=b.global_adapter())
        if isinstance(c, p.Build):
            built = b.build(c.spec, [remote_tool(t) for t in c.spec.tools])
            if isinstance(built, ErrorInfo):
                return p.Built(id=c.id, error=built)
            self.agents[c.agent] = built
            return p.Built(id=c.id)
        if isinstance(c, p.GetStepToolNames):
            return p.Names(id=c.id, names=b.step_tool_names(self.agents[c.agent]))
        if isinstance(c, p.MutateLastResult):
            b.mutate_last_result(self.agents[c.agent], c.marker)
            return p.Done(id=c.id)
        return p.Done(id=c.id)

    def call(self, c: p.Run | p.Resume | p.RunConcurrently) -> None:
        if self.when not in c.model_dump_json():
            self.serve(c)
        elif self.broken == "crash":
            RemoteModel(c.runs[0].run if isinstance(c, p.RunConcurrently) else c.run).answer(
                LMCall(kind="step", adapter="chat", messages=[]))
            print("harness: something went badly wrong mid-run", file=sys.stderr, flush=True)
            os._exit(3)
        elif self.broken == "stall":
            print("harness: waiting forever", file=sys.stderr, flush=True)
            threading.Event().wait()
        elif self.broken == "invalid-json":
            with _write_lock:
                sys.stdout.write("this is not JSON\n")
                sys.stdout.flush()
        elif self.broken == "bad-message":
            with _write_lock:
                sys.stdout.write('{"type": "ran", "id": "not a number", "outcome": 5}\n')
                sys.stdout.flush()
        else:
            self.serve(c)

    def serve(self, c: p.Run | p.Resume | p.RunConcurrently) -> None:
        if isinstance(c, p.RunConcurrently):
            outcomes: list[Outcome] = [Outcome()] * len(c.runs)

            def one(index: int) -> None:
                entry = c.runs[index]
                current_run.set(entry.run)
                outcomes[index] = self.binding.run(self.agents[entry.agent], entry.call,
                                                   RemoteModel(entry.run))

            threads = [threading.Thread(target=one, args=(i,)) for i in range(len(c.runs))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            send(p.RanAll(id=c.id, outcomes=outcomes))
            return
        current_run.set(c.run)
        agent, model = self.agents[c.agent], RemoteModel(c.run)
        if isinstance(c, p.Run):
            outcome = self.binding.run(agent, c.call, model)
        else:
            outcome = self.binding.resume(agent, c.request, model)
        send(p.Ran(id=c.id, outcome=outcome))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="broken",
                        choices=["invalid-json", "bad-message", "crash", "stall"])
    parser.add_argument("--when", default="", help="break only calls whose command holds this text")
    args = parser.parse_args()
    harness = Harness(args.broken, args.when)
    for line in sys.stdin:
        message = p.to_harness.validate_json(line)
        if isinstance(message, p.TurnAnswer | p.ToolAnswer):
            done, box = _waiting.pop(str(message.id))
            box.append(message)
            done.set()
        else:
            harness.handle(message)


if __name__ == "__main__":
    main()
