"""A Python binding in a worker process: `python -m conformance._isolate NAME`.

`--conformance-isolate` runs the binding `--impl NAME` (an entry point or `module:attr`) here, in a
child process that speaks the harness protocol (`conformance._protocol`) on its stdin and stdout:
the suite drives it through the process binding, the path the Node harnesses take, so a crash or
an `os._exit` in the binding costs the scenario it happened in, not the run (the process binding
reports that scenario errored and starts a fresh worker for the next one).

Every model answer and every tool call crosses back to the suite, whose scripts and tool recorders
stay on its side. The binding's operations run one at a time on one thread (as `_guard` runs them
in process: libraries whose global settings belong to the thread that set them see one thread),
while the main thread reads the suite's lines. Anything the binding writes to stdout, from Python
or from native code, goes to stderr: stdout carries protocol messages only.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TextIO

from pydantic import BaseModel, JsonValue

from conformance import _guard
from conformance import _protocol as p
from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance._report import dependency_versions
from conformance._tools import SuiteTool
from conformance.binding import Binding, CallRequest, ErrorInfo, LMCall, Outcome, ToolSpec, Turn

#: What a binding that ran out of a resource leaves: already in a process of its own, one whose
#: next scenarios may fail the same way.
WORKER_SHORT = "Its worker process may be short of it too, for the scenarios that follow."


class RemoteModel(ScriptedModel):
    """The suite's model of a run and its resumes: every request goes to the suite, which answers
    from its script. Each call is logged here too, as the suite's model logs it, so a seam that
    reads the log (`len(model.calls)` numbers the endpoint's replies and their tool-call ids, a
    stream's events count the calls) sees what it sees in process."""

    def __init__(self, worker: Worker, run: str) -> None:
        super().__init__()
        self.worker, self.run = worker, run
        #: Whether the call's script holds a transport fault (`p.Run.scripted_fault`).
        self.scripted_fault = False

    def holds_a_fault(self) -> bool:
        return self.scripted_fault

    @property
    def binding_fault(self) -> str | None:
        return self._binding_fault

    @binding_fault.setter
    def binding_fault(self, fault: str | None) -> None:
        """Set by the seam (`server.handler`) on a request it refuses: the suite's model of the run
        is told, as the one that judges the scenario."""
        changed = fault is not None and fault != getattr(self, "_binding_fault", None)
        self._binding_fault = fault
        if changed:
            assert fault is not None
            self.worker.send(p.BindingFault(run=self.run, message=fault))

    def _log(self, call: LMCall, turn: Turn | None) -> None:
        with self._lock:
            self.calls.append(call)
            self.answers.append(turn)

    def sleep(self, seconds: float) -> None:
        self.worker.send(p.Sleep(run=self.run, seconds=seconds))

    def hang(self, timeout: float | None) -> None:
        self.worker.send(p.Hang(run=self.run, timeout=timeout))

    def answer(self, call: LMCall) -> Turn:
        answer = self.worker.ask(lambda i: p.ModelRequest(id=i, run=self.run, call=call))
        assert isinstance(answer, p.TurnAnswer)
        self._log(call, answer.turn)
        if answer.error is not None or answer.turn is None:
            raise UnexpectedModelCall(answer.error or "no turn")
        return answer.turn

    def auxiliary(self, name: str, call: LMCall) -> str:
        logged = call.model_copy(update={"kind": "auxiliary", "auxiliary": name})
        answer = self.worker.ask(lambda i: p.ModelRequest(id=i, run=self.run, call=logged))
        assert isinstance(answer, p.TurnAnswer)
        if answer.error is not None or answer.auxiliary is None:
            raise UnexpectedModelCall(answer.error or "no answer to the auxiliary call")
        self._log(logged, None)
        return answer.auxiliary

    def approve(self, name: str, args: JsonValue, call_id: str | None) -> str:
        answer = self.worker.ask(lambda i: p.ApprovalRequest(id=i, run=self.run, name=name,
                                                             args=args, call_id=call_id))
        assert isinstance(answer, p.ApprovalAnswer)
        return answer.response


def _error(info: ErrorInfo) -> Exception:
    """The tool's error as an exception of the same name whose text is the same message."""
    cls: type[Exception] = type(info.type, (Exception,), {"__str__": lambda self: info.message})
    return cls(info.message)


class Worker:
    """Serves `binding` over the protocol: `serve_forever` reads commands until `stop` or EOF."""

    def __init__(self, binding: Binding, out: TextIO, *, name: str | None = None,
                 timeout: float | None = None) -> None:
        self.binding = binding
        #: How long one operation may take (the suite's --conformance-timeout), as in process: one
        #: that hangs is left on its thread, and the next runs on a fresh one (`_guard.call`).
        self.timeout = timeout
        self.name = name or binding.name
        self.agents: dict[str, object] = {}
        self._out = out
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._waiting: dict[str, tuple[threading.Event, list[BaseModel]]] = {}
        self._ids = iter(range(1, 1 << 62))
        #: The run each agent is in: a tool call of that agent's tools belongs to it.
        self._run_of: dict[str, str] = {}
        #: The suite's models by id (`p.Run.model`): a resume goes on with its run's.
        self._models: dict[str, RemoteModel] = {}
        self._jobs: queue.SimpleQueue[p.Command] = queue.SimpleQueue()
        threading.Thread(target=self._binding_thread, name="isolated binding", daemon=True).start()

    # -- the wire ---------------------------------------------------------------------------

    def send(self, message: BaseModel) -> None:
        self.write(p.encode(message))

    def write(self, line: str) -> None:
        with self._write_lock:
            self._out.write(line)
            self._out.flush()

    def ask(self, make: Callable[[str], p.ModelRequest | p.ToolRequest | p.ApprovalRequest]
            ) -> BaseModel:
        """Send a request to the suite and wait for its answer (read by the main loop)."""
        done, box = threading.Event(), list[BaseModel]()
        with self._state_lock:
            request_id = f"h{next(self._ids)}"
            self._waiting[request_id] = (done, box)
        self.send(make(request_id))
        done.wait()
        return box[0]

    def serve_forever(self, lines: Any) -> None:
        """Read the suite's lines (an iterable of str) until `stop` or the end of input."""
        for line in lines:
            message = p.decode(p.to_harness, line)
            if isinstance(message, p.TurnAnswer | p.ToolAnswer | p.ApprovalAnswer):
                with self._state_lock:
                    done, box = self._waiting.pop(str(message.id))
                box.append(message)
                done.set()
            elif isinstance(message, p.Hello):
                self.send(self.welcome(message))
            elif isinstance(message, p.Stop):
                self.send(p.Done(id=message.id))
                os._exit(0)  # the binding's threads (daemons or not) end with the process
            else:
                self._jobs.put(message)
        os._exit(0)

    # -- the binding ------------------------------------------------------------------------

    def welcome(self, hello: p.Hello) -> p.Welcome:
        b = self.binding
        return p.Welcome(id=hello.id, protocol=b.contract_version, name=self.name,
                         version=b.version, capabilities=sorted(b.capabilities),
                         not_claimed=dict(b.not_claimed), known_failures=dict(b.known_failures),
                         cannot_express=dict(b.cannot_express),
                         fuzz_known_failures=dict(b.fuzz_known_failures),
                         auxiliary_calls=dict(b.auxiliary_calls), approval_form=b.approval_form,
                         parity=dict(b.parity), dependencies=dependency_versions(b))

    def _binding_thread(self) -> None:
        while True:
            command = self._jobs.get()
            if self.timeout is None:
                self._carry_out(command)
                continue
            try:
                _guard.call(command.type, partial(self._carry_out, command), self.timeout)
            except _guard.ImplementationHung as exc:
                # Hung as in process, whichever comes first: this reply or the suite's own guard.
                self.send(p.Failed(id=command.id, message=str(exc), hung=True))

    def _carry_out(self, command: p.Command) -> None:
        try:
            if isinstance(command, p.Run | p.Resume | p.RunConcurrently):
                self.call(command)
            else:
                self.send(self.reply(command))
        except BaseException as exc:  # every escape is reported; none ends us
            escaped = f"{type(exc).__name__}: {exc}" if isinstance(exc, Exception) \
                else f"{type(exc).__name__}({exc})"
            exhausted = _guard.ran_out(f"binding.{command.type}", exc, advice=WORKER_SHORT)
            self.send(p.Failed(id=command.id,
                               message=exhausted or f"binding.{command.type} raised {escaped}"))

    def remote_tool(self, agent: str, spec: ToolSpec) -> SuiteTool:
        """The suite's tool `spec`, run on the suite's side, for the agent `agent`."""

        def behaviour(args: dict[str, Any]) -> Any:
            with self._state_lock:
                run = self._run_of.get(agent, "")
            answer = self.ask(lambda i: p.ToolRequest(id=i, run=run, name=spec.name,
                                                      args=args))
            assert isinstance(answer, p.ToolAnswer)
            if answer.error is not None:
                raise _error(answer.error)
            return answer.result

        return SuiteTool(spec, behaviour)

    def reply(self, c: p.Command) -> p.Reply:
        b = self.binding
        if isinstance(c, p.Configure):
            b.configure(adapter=c.adapter)
            return p.Done(id=c.id)
        if isinstance(c, p.GetGlobalAdapter):
            return p.Adapter(id=c.id, adapter=b.global_adapter())
        if isinstance(c, p.Build):
            built = b.build(c.spec, [self.remote_tool(c.agent, t) for t in c.spec.tools])
            if isinstance(built, ErrorInfo):
                return p.Built(id=c.id, error=built)
            self.agents[c.agent] = built
            return p.Built(id=c.id)
        if isinstance(c, p.GetStepToolNames):
            return p.Names(id=c.id, names=b.step_tool_names(self.agents[c.agent]))
        if isinstance(c, p.MutateLastResult):
            return p.Done(id=c.id, changed=b.mutate_last_result(self.agents[c.agent], c.marker))
        return p.Failed(id=c.id, message=f"the worker does not know the command {c.type!r}")

    def call(self, c: p.Run | p.Resume | p.RunConcurrently) -> None:
        """Carry out a run, resume or concurrent runs (a harness may override it to misbehave)."""
        self.serve(c)

    def serve(self, c: p.Run | p.Resume | p.RunConcurrently) -> None:
        b = self.binding
        if isinstance(c, p.RunConcurrently):
            calls: list[tuple[object, CallRequest, ScriptedModel]] = []
            for entry in c.runs:
                self._enter(entry.agent, entry.run)
                calls.append((self.agents[entry.agent], entry.call, self._model(entry)))
            outcomes: Sequence[Outcome] = b.run_concurrently(calls)
            self.send(p.RanAll(id=c.id, outcomes=list(outcomes)))
            return
        self._enter(c.agent, c.run)
        agent, model = self.agents[c.agent], self._model(c)
        if isinstance(c, p.Run):
            outcome = b.run(agent, c.call, model)
        else:
            outcome = b.resume(agent, c.request, model)
        self.send(p.Ran(id=c.id, outcome=outcome))

    def _model(self, c: p.Run | p.Resume | p.RunEntry) -> RemoteModel:
        """The suite's model of the call: its run's, on a resume (a suite that names no model
        gets a fresh one per call)."""
        model = self._models.get(c.model) if c.model is not None else None
        if model is None:
            model = RemoteModel(self, c.run)
            if c.model is not None:
                self._models[c.model] = model
        model.run, model.scripted_fault = c.run, c.scripted_fault
        return model

    def _enter(self, agent: str, run: str) -> None:
        with self._state_lock:
            self._run_of[agent] = run


def protocol_stdout() -> TextIO:
    """A private handle on stdout for the protocol; file descriptor 1 and `sys.stdout` then go to
    stderr, so a stray print (Python's or a native library's) cannot corrupt a message."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance._isolate")
    parser.add_argument("impl", help="the binding: an entry-point name or module:attr")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds one binding operation may take (the suite's own limit)")
    args = parser.parse_args(argv)
    out = protocol_stdout()
    from conformance._loader import load_binding

    try:
        binding = load_binding(args.impl)
    except Exception as exc:  # a usage error: the suite shows our stderr in its message
        print(f"conformance._isolate: {exc}", file=sys.stderr, flush=True)
        sys.exit(2)
    Worker(binding, out, timeout=args.timeout).serve_forever(sys.stdin)


if __name__ == "__main__":
    main()
