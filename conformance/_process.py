"""The process binding: the binding contract, spoken to a harness process in any language.

`--impl cmd:"node harness.mjs"` starts the command, greets it (`hello`), and from its `welcome`
learns the library's name, version, capabilities and known failures. Every binding operation is
then a command line on the harness's stdin and a reply line on its stdout. While a call runs, the
harness asks the suite for every model answer and every tool call, so the suite's scripts and tool
recorders stay on this side and the harness holds no scenario logic. The harness may write its
lines on a pipe of its own instead (`_protocol.PROTOCOL_FD`): its stdout is then a log.

A harness that sends a line that is not a valid message (or one longer than `MAX_LINE_CHARS`),
exits, or does not reply in time is reported as errored with the tail of its stderr (the last
`STDERR_TAIL_CHARS` of it); it is stopped, and the next operation starts a fresh one (the agents
built by the old process are lost with it). After `MAX_START_FAILURES` failed starts in a row the
binding gives up: every later operation fails at once, with the same error. Every process a
harness starts ends with it (on Linux through `_reaper.py`, whatever session it makes).
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import io
import itertools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any, ClassVar, TextIO, TypedDict, TypeVar, cast

from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from conformance import _protocol as p
from conformance._guard import BindingError, ImplementationHung, RunawayRun, ran_out
from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance._tools import SuiteTool
from conformance._values import loads_deep
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Outcome,
    ResumeRequest,
)

R = TypeVar("R", bound=p.Reply)

#: Seconds a harness may take to answer `hello`, however short the suite's timeout.
STARTUP_TIMEOUT = 30.0
#: Lines of the harness's stderr shown in an error message.
_STDERR_TAIL = 30
#: Characters of the harness's stderr kept for error messages: the end of it, newlines or not.
STDERR_TAIL_CHARS = 64 * 1024
#: The longest line the harness may send on stdout, newline aside; a longer one is a harness error.
MAX_LINE_CHARS = 32 * 1024 * 1024
#: Failed starts in a row (no process, or no `welcome` to `hello`) after which the binding gives up.
MAX_START_FAILURES = 2


class HarnessError(BindingError):
    """The harness process misbehaved: an invalid message, an exit, a stall, or a failed command."""


class _Agent:
    """An agent a harness process built: its id there, and the suite's tools it was given."""

    def __init__(self, process: _Harness, agent_id: str, tools: Sequence[SuiteTool]) -> None:
        self.process = process
        self.id = agent_id
        self.tools = {t.name: t for t in tools}


class _Pending:
    """A command waiting for its reply."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.done = threading.Event()
        self.reply: p.Reply | None = None


#: The checkout of react-conformance: its bundled harnesses are named relative to it.
_CHECKOUT = Path(__file__).resolve().parent.parent


def shown(argv: Sequence[str]) -> str:
    """`argv` as a message or report quotes it: the suite's own interpreter (an isolated worker's)
    as `python`, a path inside the checkout relative to it, a program found on PATH by its name (a
    published report names no folder of the machine it ran on)."""
    words = []
    for arg in argv:
        path = Path(arg)
        if sys.executable and arg == sys.executable:
            arg = "python"
        elif path.is_absolute() and path.is_relative_to(_CHECKOUT):
            arg = str(path.relative_to(_CHECKOUT))
        elif path.is_absolute() and shutil.which(path.name) == arg:
            arg = path.name
        words.append(arg)
    return shlex.join(words)


class _Harness:
    """One running harness process, and the threads that read its stdout and stderr."""

    def __init__(self, argv: list[str], timeout: float, transcript: Path | None) -> None:
        self.argv = argv
        self.timeout = timeout
        self.transcript = transcript
        if transcript is not None:  # made if missing, as the reports' folders are
            transcript.parent.mkdir(parents=True, exist_ok=True)
        self.failure: str | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._runs: dict[str, tuple[ScriptedModel, _Agent]] = {}
        self._stderr: deque[str] = deque()  # chunks; together at most about STDERR_TAIL_CHARS
        self._stderr_size = 0
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._log_lock = threading.Lock()
        self._stderr_lock = threading.Lock()
        self.proc, pipe = _start(argv)
        _RUNNING.add(self)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._stderr_reader = threading.Thread(target=self._read_stderr, args=(self.proc.stderr,),
                                               daemon=True, name="harness stderr")
        self._stderr_reader.start()
        # Where the harness's messages come: its stdout, or the protocol pipe the suite gives it
        # (p.PROTOCOL_FD) once a message came there, and then its stdout is one more log. None
        # until its first message; meanwhile, a line on stdout that is no message is kept aside.
        self._channel: str | None = None
        self._stray: tuple[str, ValidationError] | None = None
        self._channel_lock = threading.Lock()
        self._done = {"stdout": threading.Event(), "pipe": threading.Event()}
        self._readers: dict[str, threading.Thread] = {}
        for channel, stream in (("stdout", self.proc.stdout), ("pipe", pipe)):
            if stream is not None:
                self._readers[channel] = threading.Thread(
                    target=self._read_stdout, args=(stream, channel), daemon=True,
                    name=f"harness {channel}")
                self._readers[channel].start()
        threading.Thread(target=self._watch, daemon=True, name="harness exit").start()

    # -- commands ---------------------------------------------------------------------------

    def request(self, command: p.Command, expect: type[R], *, limit: float | None = None,
                stalled: str = "") -> R:
        """Send `command`, wait for its reply (answering the harness's requests meanwhile) at most
        `limit` seconds (by default the harness's timeout, or STARTUP_TIMEOUT for `hello` if longer);
        `stalled` says more of a reply that never came."""
        command_id = command.id
        pending = _Pending(command.type)
        with self._state_lock:
            if self.failure is not None:
                raise HarnessError(self.failure)
            self._pending[command_id] = pending
        self._send(command)
        if limit is None:
            # Starting up (a runtime, the library's imports) may take longer than any one call.
            limit = max(self.timeout, STARTUP_TIMEOUT) if isinstance(command, p.Hello) else self.timeout
        if not pending.done.wait(limit):
            self.fail(f"did not reply to the {pending.command!r} command within {limit:g} s"
                      f"{stalled or ' (raise --conformance-timeout if it is only slow)'}")
        with self._state_lock:
            self._pending.pop(command_id, None)
        reply = pending.reply
        if reply is None:
            raise HarnessError(self.failure or "the harness stopped")
        if isinstance(reply, p.Failed) and reply.hung:
            raise ImplementationHung(reply.message)
        if isinstance(reply, p.Failed):
            raise HarnessError(f"the harness could not carry out {pending.command!r}: {reply.message}"
                               f"{self._tail()}")
        if not isinstance(reply, expect):
            self.fail(f"replied to the {pending.command!r} command with a {reply.type!r} message "
                      f"instead of {expect.model_fields['type'].default!r}")
            raise HarnessError(self.failure or "")
        return reply

    def next_id(self) -> int:
        """A fresh command id."""
        return next(self._ids)

    def start_run(self, run: str, model: ScriptedModel, agent: _Agent) -> None:
        """Route the model and tool requests naming `run` to `model` and `agent`'s tools."""
        with self._state_lock:
            self._runs[run] = (model, agent)

    def end_run(self, run: str) -> None:
        """Forget `run`."""
        with self._state_lock:
            self._runs.pop(run, None)

    def stop(self) -> None:
        """Ask the harness to exit; kill it if it does not."""
        if self.failure is None and self.proc.poll() is None:
            try:
                self._send(p.Stop(id=self.next_id()))
                self.proc.wait(2)
            except (OSError, subprocess.TimeoutExpired, HarnessError):
                pass
        self._kill()

    def fail(self, reason: str) -> None:
        """Mark the harness broken for `reason`, stop it, and wake every waiting command."""
        with self._state_lock:
            if self.failure is not None:
                return
            self._kill()
            self._stderr_reader.join(1.0)  # its last words explain the failure
            log = self._readers["stdout"] if self._channel == "pipe" else None
            if log is not None and log is not threading.current_thread():
                log.join(1.0)  # and so may its stdout, a log
            self.failure = f"the harness {shown(self.argv)!r} {reason}.{self._tail()}"
            waiting = list(self._pending.values())
        for pending in waiting:
            pending.done.set()

    # -- the wire ---------------------------------------------------------------------------

    def _send(self, message: BaseModel) -> None:
        line = p.encode(message)
        if self.transcript is not None:
            p.to_harness.validate_json(line)  # the suite's own messages obey the schema too
            self._log("suite  ->", line)
        assert self.proc.stdin is not None
        with self._write_lock:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (OSError, ValueError) as exc:
                self.fail(f"closed its stdin ({exc})")
                raise HarnessError(self.failure or "") from exc

    def _read_stdout(self, stream: IO[str], channel: str) -> None:
        try:
            self._read_messages(stream, channel)
        except UnicodeDecodeError as exc:
            if self._speaks_on(channel):
                self.fail(f"sent a line that is not valid UTF-8 ({exc.reason} at byte {exc.start}: "
                          f"{exc.object[max(0, exc.start - 20):exc.end + 20]!r}), a protocol error: "
                          "every line on stdout must be one JSON message in UTF-8; write logs to "
                          "stderr")
            else:  # a log: the rest of it, read as it comes
                self._read_stderr(stream)
        except Exception as exc:
            # The suite short of a resource (a line it could not decode, a reply it could not
            # build): this reader would end, and the waiting command be reported hung.
            exhausted = ran_out("could not be read: the suite", exc)
            if exhausted is None:
                raise
            self.fail(exhausted.removesuffix("."))
        finally:
            self._done[channel].set()
            stream.close()

    def _watch(self) -> None:
        """Fail the harness when it exits, even if its stdout stays open (a process it started
        holds it): the suite then never waits out a command's time limit for a reply."""
        code = self.proc.wait()
        if not self._done[self._channel or "stdout"].wait(1.0):
            self.fail(f"exited with code {code}, but its stdout stayed open: a process it started "
                      "still held it (that process group was ended)")

    def _speaks_on(self, channel: str) -> bool:
        """Whether `channel` carries the harness's messages (stdout, until a message came on the
        protocol pipe)."""
        return self._channel == channel or (self._channel is None and channel == "stdout")

    def _message_on(self, channel: str, line: str) -> bool:
        """Whether `line`, read on `channel`, is for the protocol; a line that is not is the
        harness's log (kept with its stderr), or its error once stdout proves its channel."""
        with self._channel_lock:
            if self._channel is not None or channel == "pipe":
                self._channel = self._channel or channel
                if self._channel == channel:
                    return True
                self._keep(line)
                return False
            try:
                p.decode(p.from_harness, line)
            except ValidationError as exc:
                # A message may yet come on the pipe, which makes this line a log: set it aside.
                self._stray = self._stray or (line, exc)
                self._keep(line)
                return False
            self._channel = channel
            stray, self._stray = self._stray, None
        if stray is not None:
            self._not_a_message(*stray)
            return False
        return True

    def _not_a_message(self, line: str, exc: ValidationError) -> None:
        shown = line if len(line) <= 500 else line[:500] + "..."
        self.fail(f"sent a line that is not a valid protocol message: {shown.strip()!r}\n"
                  f"{_errors(exc)}\nEvery line on stdout must be one message "
                  "(see harnesses/protocol.schema.json); write logs to stderr")

    def _read_messages(self, stream: IO[str], channel: str) -> None:
        while line := stream.readline(MAX_LINE_CHARS + 1):  # bounded: a line cannot fill memory
            if self.failure is not None:
                return
            if len(line) > MAX_LINE_CHARS and not line.endswith("\n") and self._speaks_on(channel):
                self.fail(f"sent a line longer than {MAX_LINE_CHARS} characters (MAX_LINE_CHARS), "
                          f"starting {line[:200]!r}; one protocol message must fit on one line")
                return
            if not self._message_on(channel, line):
                continue
            if self.transcript is not None:
                self._log("harness ->", line)
            try:
                message = p.decode(p.from_harness, line)
            except ValidationError as exc:
                self._not_a_message(line, exc)
                return
            if isinstance(message, p.ModelRequest | p.ToolRequest | p.ApprovalRequest):
                self._answer(message)
            elif isinstance(message, p.Sleep | p.Hang):
                self._clock(message)
            elif isinstance(message, p.BindingFault):
                self._binding_fault(message)
            else:
                self._deliver(message)
        if self._speaks_on(channel):
            code = self.proc.wait()
            closed = "closed its stdout" if channel == "stdout" else "closed its protocol pipe"
            self.fail(f"exited with code {code}" if code else closed)

    def _read_stderr(self, stream: IO[str]) -> None:
        """Keep the last STDERR_TAIL_CHARS of stderr, read as it comes, with or without newlines."""
        raw = cast(io.BufferedReader, cast(TextIO, stream).buffer)  # read as it comes, unbuffered
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := raw.read1(65536):
            self._keep(decoder.decode(chunk))

    def _keep(self, text: str) -> None:
        """Keep `text` of the harness's log, within the last STDERR_TAIL_CHARS."""
        with self._stderr_lock:
            self._stderr.append(text)
            self._stderr_size += len(text)
            while self._stderr_size - len(self._stderr[0]) >= STDERR_TAIL_CHARS:
                self._stderr_size -= len(self._stderr.popleft())

    def _deliver(self, reply: p.Reply) -> None:
        with self._state_lock:
            pending = self._pending.get(reply.id)
        if pending is None:
            self.fail(f"sent a {reply.type!r} reply to id {reply.id}, "
                      "which names no command waiting for a reply")
            return
        pending.reply = reply
        pending.done.set()

    def _clock(self, notice: p.Sleep | p.Hang) -> None:
        """A wait the library asked for, or a hung request's timeout, on the run's model clock."""
        model = self._notified(notice)
        if model is None:
            return
        if isinstance(notice, p.Sleep):
            model.sleep(notice.seconds)
        else:
            model.hang(notice.timeout)

    def _binding_fault(self, notice: p.BindingFault) -> None:
        """The binding's fault its seam saw during a run: the run's model holds it, as in process,
        and the scenario is errored (the first fault a model saw is the one it reports)."""
        model = self._notified(notice)
        if model is not None:
            model.binding_fault = model.binding_fault or notice.message

    def _notified(self, notice: p.Sleep | p.Hang | p.BindingFault) -> ScriptedModel | None:
        """The model of the run `notice` names, or None (the harness fails: no such run)."""
        with self._state_lock:
            route = self._runs.get(notice.run)
        if route is None:
            self.fail(f"sent a {notice.type!r} notice for run {notice.run!r}, which is not running")
            return None
        return route[0]

    def _answer(self, request: p.ModelRequest | p.ToolRequest | p.ApprovalRequest) -> None:
        with self._state_lock:
            route = self._runs.get(request.run)
        if route is None:
            self.fail(f"sent a {request.type!r} request for run {request.run!r}, which is not running")
            return
        model, agent = route
        answer: BaseModel
        if isinstance(request, p.ApprovalRequest):
            answer = p.ApprovalAnswer(id=request.id, response=model.approve(
                request.name, request.args, request.call_id))
        elif isinstance(request, p.ModelRequest):
            try:
                if request.call.kind == "auxiliary":
                    text = model.auxiliary(request.call.auxiliary or "", request.call)
                    answer = p.TurnAnswer(id=request.id, auxiliary=text)
                else:
                    answer = p.TurnAnswer(id=request.id, turn=model.answer(request.call))
            except (UnexpectedModelCall, RunawayRun) as exc:
                answer = p.TurnAnswer(id=request.id, error=str(exc))
        else:
            try:
                args = request.args if request.args_json is None else loads_deep(request.args_json)
            except ValueError as exc:
                self.fail(f"sent tool args as JSON text (args_json) that is not JSON: {exc}")
                return
            answer = p.ToolAnswer(id=request.id, **_run_tool(agent, request.name, args))
        try:
            self._send(answer)
        except HarnessError:
            pass

    def _log(self, who: str, line: str) -> None:
        assert self.transcript is not None
        with self._log_lock, self.transcript.open("a", encoding="utf-8") as log:
            log.write(f"{who} {line.rstrip()}\n")

    def _kill(self) -> None:
        """End the harness and every process it started (also once the harness itself has exited:
        what it started may live on)."""
        if self._end_descendants():
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)
        self._kill_group()
        _RUNNING.discard(self)
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass

    def _end_descendants(self) -> bool:
        """Ask the harness's reaper (Linux) to end every process below it; whether it was asked."""
        if not _REAPER or self.proc.poll() is not None:
            return False
        with contextlib.suppress(OSError):
            self.proc.send_signal(signal.SIGTERM)
        return True

    def _kill_group(self) -> None:
        if os.name == "posix":
            with contextlib.suppress(OSError):  # the group is gone already
                os.killpg(self.proc.pid, signal.SIGKILL)

    def _tail(self) -> str:
        with self._stderr_lock:
            text = "".join(self._stderr)[-STDERR_TAIL_CHARS:]
        lines = text.rstrip("\n").split("\n")[-_STDERR_TAIL:] if text.strip() else []
        if not lines:
            return " Its stderr was empty."
        return "\nThe tail of its stderr:\n  " + "\n  ".join(unplaced(line) for line in lines)


def unplaced(text: str) -> str:
    """`text` with the machine's folders named relatively: a path in the checkout relative to it, one
    in the home folder from `~`, as a traceback in a harness's stderr would name them (a published
    report names no folder of the machine it ran on)."""
    for folder, shown_as in ((_CHECKOUT, ""), (Path.home(), "~" + os.sep)):
        if str(folder) not in ("", os.sep):
            text = text.replace(str(folder) + os.sep, shown_as)
    return text


#: On Linux, each harness runs under `_reaper.py`, which adopts and ends every process the harness
#: starts, whatever session or group it makes (a daemon's double fork too). Elsewhere the harness's
#: process group is ended, and a process that leaves it (`setsid`) may outlive the run.
_REAPER: Path | None = Path(__file__).with_name("_reaper.py") if sys.platform == "linux" else None


def _start(argv: list[str]) -> tuple[subprocess.Popen[str], IO[str] | None]:
    """Start the harness `argv` (under its reaper where there is one), in a session of its own,
    and the read end of the protocol pipe it is given (POSIX)."""
    pipe_read, pipe_write = os.pipe() if os.name == "posix" else (-1, -1)
    status_read, status_write = os.pipe() if _REAPER else (-1, -1)
    command = argv if not _REAPER else [sys.executable, "-I", "-S", str(_REAPER),
                                        str(status_write), *argv]
    given = tuple(fd for fd in (pipe_write, status_write) if fd >= 0)
    env = {**os.environ, p.PROTOCOL_FD: str(pipe_write)} if pipe_write >= 0 else None
    try:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1, pass_fds=given, env=env,
            # Its own process group, ended whole: what it starts (a runtime's workers, a shell's
            # children) never outlives it, nor holds its pipes open after it is gone.
            start_new_session=os.name == "posix",
        )
    except OSError as exc:
        for fd in (pipe_read, status_read):
            if fd >= 0:
                os.close(fd)
        raise HarnessError(f"could not start the harness {shown(argv)!r}: {exc}") from exc
    finally:
        for fd in given:
            os.close(fd)
    if _REAPER:
        with os.fdopen(status_read, "rb") as status:  # empty: the reaper started the harness
            refused = status.read().decode("utf-8", "replace")
        if refused:
            proc.wait()
            os.close(pipe_read)
            raise HarnessError(f"could not start the harness {shown(argv)!r}: {refused}")
    pipe = open(pipe_read, encoding="utf-8") if pipe_read >= 0 else None
    return proc, pipe


def _run_tool(agent: _Agent, name: str, args: JsonValue) -> dict[str, Any]:
    """Run the suite's tool `name` as the library called it: its result, or the error it raised."""
    tool = agent.tools.get(name)
    if tool is None:
        return {"error": ErrorInfo(type="KeyError", message=(
            f"the agent was built with no tool {name!r}; its tools are {sorted(agent.tools)}"))}
    if not isinstance(args, dict):
        # The library handed the tool something that is not an object: it did reach the tool.
        tool.calls.append({"(arguments that are not an object)": args})
        return {"error": ErrorInfo(type="TypeError", message=(
            f"{name}() takes keyword arguments (a JSON object), not {type(args).__name__}"))}
    try:
        result = tool(**args)
    except Exception as exc:
        return {"error": ErrorInfo.from_exception(exc)}
    return {"result": _jsonable(result)}


_JSON: TypeAdapter[JsonValue] = TypeAdapter(JsonValue)


def _jsonable(value: Any) -> JsonValue:
    try:
        return _JSON.validate_python(value)
    except ValidationError:
        return str(value)


def _errors(exc: ValidationError) -> str:
    return "\n".join(
        f"  at {'.'.join(str(x) for x in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()[:5]
    )


class _Budget(TypedDict, total=False):
    """What one command of an operation may take (`_Harness.request`'s keywords)."""

    limit: float
    stalled: str


class _Script(TypedDict):
    """What a call's command says of the scripted model answering it (`p.Run.model`)."""

    model: str
    scripted_fault: bool


class ProcessBinding(Binding):
    """A binding that speaks the harness protocol to a child process. See `process_binding`."""

    name: ClassVar[str] = "cmd"

    def __init__(self, argv: list[str], timeout: float, transcript: Path | None,
                 first: _Harness, welcome: p.Welcome) -> None:
        self._argv, self._timeout, self._transcript = argv, timeout, transcript
        self._process = first
        self._welcome = welcome
        self._lock = threading.Lock()
        self._agents = itertools.count(1)
        self._runs = itertools.count(1)
        # Each scripted model's id (p.Run.model): a run and its resumes share one, so a worker that
        # numbers the model's requests numbers them on, as the model in this process does.
        self._models: weakref.WeakKeyDictionary[ScriptedModel, str] = weakref.WeakKeyDictionary()
        self._model_ids = itertools.count(1)
        self._models_lock = threading.Lock()
        self._start_failures = 0  # in a row
        self._given_up: str | None = None  # why every operation now fails at once
        atexit.register(lambda: self._process.stop())

    @property
    def version(self) -> str:
        return self._welcome.version

    # -- the process --------------------------------------------------------------------------

    def _live(self) -> tuple[_Harness, _Budget]:
        """The running harness, started afresh if the last one failed, and the time its command
        may take: the operation's time limit, less what a restart took. After MAX_START_FAILURES
        failed starts in a row, none: every operation fails at once with the same error."""
        start = time.monotonic()
        restarted = False
        with self._lock:
            if self._given_up is not None:
                raise HarnessError(self._given_up)
            if self._process.failure is not None:
                try:
                    self._process = self._restart()
                except HarnessError as exc:
                    self._start_failures += 1
                    if self._start_failures < MAX_START_FAILURES:
                        raise
                    self._given_up = (
                        f"gave up on the harness: it failed to start {self._start_failures} times in "
                        f"a row, so every later operation fails at once. The last failure: {exc}")
                    raise HarnessError(self._given_up) from exc
                self._start_failures = 0
                restarted = True
            spent = time.monotonic() - start
            if not restarted:
                return self._process, {"limit": self._timeout - spent}
            return self._process, {"limit": max(0.0, self._timeout - spent), "stalled": (
                f" (the rest of the operation's {self._timeout:g} s, after restarting the failed "
                f"harness took {spent:.1f} s; raise --conformance-timeout if it is only slow)")}

    def _restart(self) -> _Harness:
        # The restart and the command after it share one operation's time limit, which the
        # suite's guard would otherwise report as the library hanging: a restarted harness that
        # never welcomes the suite is the harness's fault, and said to be.
        process = _Harness(self._argv, self._timeout, self._transcript)
        welcome = _greet(process, limit=self._timeout, stalled=(
            ": it was started again after it failed, and sent no 'welcome'. The suite starts a "
            "failed harness again and greets it as at its first start; every start must answer "
            "'hello' with 'welcome' (something the first process left behind, a lock file, a port, "
            "a socket, may block the new one). Make its start-up repeatable, or raise "
            "--conformance-timeout if it only starts slowly"))
        if welcome != self._welcome:
            process.fail("greeted the suite differently after a restart")
            raise HarnessError(process.failure or "")
        return process

    def _of(self, agent: object) -> tuple[_Harness, _Agent]:
        assert isinstance(agent, _Agent), f"not an agent this binding built: {agent!r}"
        if agent.process is not self._process or agent.process.failure is not None:
            raise HarnessError(
                "this agent was built by a harness process that has since failed"
                + (f": {agent.process.failure}" if agent.process.failure else "")
            )
        return agent.process, agent

    # -- the contract ---------------------------------------------------------------------------

    def configure(self, *, adapter: AdapterName | None) -> None:
        process, budget = self._live()
        process.request(p.Configure(id=process.next_id(), adapter=adapter), p.Done, **budget)

    def global_adapter(self) -> AdapterName | None:
        process, budget = self._live()
        return process.request(p.GetGlobalAdapter(id=process.next_id()), p.Adapter,
                               **budget).adapter

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        process, budget = self._live()
        agent = _Agent(process, f"agent-{next(self._agents)}", tools)
        built = process.request(p.Build(id=process.next_id(), agent=agent.id, spec=spec), p.Built,
                                **budget)
        return built.error if built.error is not None else agent

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return self._call(agent, model, lambda i, a, r: p.Run(
            id=i, agent=a, run=r, call=call, **self._script_of(model)))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        return self._call(agent, model, lambda i, a, r: p.Resume(
            id=i, agent=a, run=r, request=request, **self._script_of(model)))

    def _script_of(self, model: ScriptedModel) -> _Script:
        """What a call's command says of its model: its id, and whether its script holds a fault."""
        with self._models_lock:
            name = self._models.get(model) or self._models.setdefault(
                model, f"model-{next(self._model_ids)}")
        return {"model": name, "scripted_fault": model.holds_a_fault()}

    def _call(self, agent: object, model: ScriptedModel,
              command: Callable[[int, str, str], p.Run | p.Resume]) -> Outcome:
        process, remote = self._of(agent)
        run = f"run-{next(self._runs)}"
        process.start_run(run, model, remote)
        try:
            return process.request(command(process.next_id(), remote.id, run), p.Ran).outcome
        finally:
            process.end_run(run)

    def run_concurrently(
        self, calls: Sequence[tuple[object, CallRequest, ScriptedModel]]
    ) -> list[Outcome]:
        entries: list[p.RunEntry] = []
        process, budget = self._live()
        for agent, call, model in calls:
            owner, remote = self._of(agent)
            run = f"run-{next(self._runs)}"
            owner.start_run(run, model, remote)
            entries.append(p.RunEntry(agent=remote.id, run=run, call=call,
                                      **self._script_of(model)))
        try:
            command = p.RunConcurrently(id=process.next_id(), runs=entries)
            outcomes = process.request(command, p.RanAll, **budget).outcomes
        finally:
            for entry in entries:
                process.end_run(entry.run)
        if len(outcomes) != len(entries):
            raise HarnessError(f"the harness answered run_concurrently with {len(outcomes)} "
                               f"outcomes for {len(entries)} calls")
        return outcomes

    def step_tool_names(self, agent: object) -> list[str] | None:
        process, remote = self._of(agent)
        return process.request(p.GetStepToolNames(id=process.next_id(), agent=remote.id),
                               p.Names).names

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        process, remote = self._of(agent)
        return process.request(
            p.MutateLastResult(id=process.next_id(), agent=remote.id, marker=marker), p.Done
        ).changed


def _greet(process: _Harness, *, limit: float | None = None, stalled: str = "") -> p.Welcome:
    welcome = process.request(p.Hello(id=process.next_id()), p.Welcome, limit=limit, stalled=stalled)
    if welcome.protocol not in p.SUPPORTED_VERSIONS:
        process.fail(f"speaks protocol version {welcome.protocol}; this suite speaks versions "
                     f"{p.SUPPORTED_VERSIONS.start} to {p.PROTOCOL_VERSION}")
        raise HarnessError(process.failure or "")
    return welcome


#: The harnesses started and not yet ended: a signal that ends the suite ends their process groups.
_RUNNING: set[_Harness] = set()
#: The signals that end a run from outside (a CI job's cancel or time limit, a closed terminal),
#: with the handler each had before the suite's.
_ENDING = ("SIGTERM", "SIGHUP")
_PREVIOUS: dict[int, Any] = {}


def _end_harnesses(signum: int, frame: FrameType | None) -> None:
    """End every harness's process group, then end the suite as the signal would have: atexit's
    clean-up never runs on a signal's default action, and what the harnesses started lived on."""
    for harness in list(_RUNNING):
        if not harness._end_descendants():  # its reaper ends its group too, after the rest
            harness._kill_group()
    previous = _PREVIOUS.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@atexit.register
def _end_every_harness() -> None:
    """At exit, end every harness still running (one being started again too) and all it started."""
    for harness in list(_RUNNING):
        harness._kill()


def _end_harnesses_on_signals() -> None:
    """Install `_end_harnesses` for `_ENDING`'s signals, once, from the main thread: a signal the
    program ignores stays ignored; a handler of its own still runs, after the harnesses end."""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set a handler
    for name in _ENDING:
        signum = getattr(signal, name, None)
        if signum is None or signum in _PREVIOUS:
            continue
        previous = signal.getsignal(signum)
        if previous is signal.SIG_IGN:
            continue  # nohup: the run goes on, and so do its harnesses
        _PREVIOUS[signum] = previous
        signal.signal(signum, _end_harnesses)


def process_binding(command: str, *, timeout: float, transcript: Path | None = None) -> Binding:
    """Start `command` (a shell-style command line), greet it, and bind the suite to it.

    `timeout` is how long one command may go without its reply. With `transcript`, every message
    in both directions is validated against the protocol and appended to that file.
    """
    argv = shlex.split(command)
    if not argv:
        raise HarnessError("the command line is empty: give one, e.g. cmd:'node harness.mjs'")
    _end_harnesses_on_signals()
    first = _Harness(argv, timeout, transcript)
    welcome = _greet(first)
    declared = type(
        "ProcessBinding",
        (ProcessBinding,),
        {"name": welcome.name, "capabilities": frozenset(welcome.capabilities),
         "contract_version": welcome.protocol, "not_claimed": dict(welcome.not_claimed),
         "known_failures": dict(welcome.known_failures), "cannot_express": dict(welcome.cannot_express),
         "fuzz_known_failures": dict(welcome.fuzz_known_failures),
         "auxiliary_calls": dict(welcome.auxiliary_calls), "approval_form": welcome.approval_form,
         "parity": dict(welcome.parity), "dependency_versions": dict(welcome.dependencies),
         "__doc__": ProcessBinding.__doc__},
    )
    binding: ProcessBinding = declared(argv, timeout, transcript, first, welcome)
    return binding
