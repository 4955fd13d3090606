"""The process binding's limits, with small fake harnesses: a harness that never comes back after
a crash is given up on, and neither its stderr nor its reply lines can grow the suite's memory."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from conformance import _process
from conformance import _protocol as p
from conformance._guard import BindingError
from conformance._process import HarnessError, process_binding

#: The start of every fake harness: answers `hello`, then reads commands with `command()`.
PRELUDE = f"""
import json, os, sys, time
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n"); sys.stdout.flush()
def command():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)
def welcome():
    hello = command()
    send({{"type": "welcome", "id": hello["id"], "protocol": {p.PROTOCOL_VERSION}, "name": "fake",
          "version": "0"}})
"""


def harness(tmp_path: Path, body: str) -> str:
    """A command line running PRELUDE + `body` as a harness."""
    script = tmp_path / "harness.py"
    script.write_text(PRELUDE + body, encoding="utf-8")
    return shlex.join([sys.executable, str(script)])


def test_a_harness_that_never_answers_hello_after_a_crash_is_given_up_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Once, every later scenario waited the full hello time (30 s) for a harness that never came back.
    monkeypatch.setattr(_process, "STARTUP_TIMEOUT", 0.2)
    command = harness(tmp_path, f"""
marker = {str(tmp_path / "started")!r}
if os.path.exists(marker):
    time.sleep(60)  # restarted: never answers hello
open(marker, "w").close()
welcome()
command()
print("harness: crashing", file=sys.stderr, flush=True)
sys.exit(3)
""")
    binding = process_binding(command, timeout=0.3)
    with pytest.raises(HarnessError, match="exited with code 3"):
        binding.configure(adapter=None)
    with pytest.raises(HarnessError, match="did not reply to the 'hello' command"):
        binding.configure(adapter=None)
    with pytest.raises(HarnessError, match="gave up") as info:
        binding.configure(adapter=None)
    given_up = str(info.value)
    assert f"failed to start {_process.MAX_START_FAILURES} times in a row" in given_up
    assert "did not reply to the 'hello' command" in given_up  # the last failure's reason
    start = time.perf_counter()
    for operation in (lambda: binding.configure(adapter=None), binding.global_adapter,
                      lambda: binding.run_concurrently([])):
        with pytest.raises(HarnessError) as again:
            operation()
        assert str(again.value) == given_up
    assert time.perf_counter() - start < 0.2, "a given-up harness must fail at once"
    assert isinstance(info.value, BindingError)  # reported as errored, a binding fault


def test_a_harness_that_comes_back_is_not_given_up_on(tmp_path: Path) -> None:
    command = harness(tmp_path, """
welcome()
message = command()
if message["type"] == "configure" and message["adapter"] == "json":
    sys.exit(3)
send({"type": "done", "id": message["id"]})
command()
""")
    binding = process_binding(command, timeout=5)
    for _ in range(2 * _process.MAX_START_FAILURES):
        with pytest.raises(HarnessError, match="exited with code 3"):
            binding.configure(adapter="json")
    binding.configure(adapter=None)  # restarted every time, and still served


def test_stderr_without_newlines_is_kept_as_a_bounded_tail(tmp_path: Path) -> None:
    # Once, stderr written without newlines grew the suite's memory without bound.
    command = harness(tmp_path, """
welcome()
command()
for _ in range(80):
    sys.stderr.write("x" * 65536)
sys.stderr.write("harness: the last words")
sys.stderr.flush()
sys.exit(3)
""")
    binding = process_binding(command, timeout=10)
    with pytest.raises(HarnessError, match="exited with code 3") as info:
        binding.configure(adapter=None)
    message = str(info.value)
    assert message.endswith("harness: the last words")
    assert len(message) < _process.STDERR_TAIL_CHARS + 1000


def test_a_reply_line_over_the_cap_is_a_harness_error_naming_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Once, a reply line had no cap: a valid 100 MB reply took 650 MB.
    assert _process.MAX_LINE_CHARS == 32 * 1024 * 1024
    monkeypatch.setattr(_process, "MAX_LINE_CHARS", 10_000)
    command = harness(tmp_path, """
welcome()
message = command()
sys.stdout.write('{"type": "done", "id": %d, "padding": "%s"}' % (message["id"], "x" * 20_000))
sys.stdout.flush()
time.sleep(60)
""")
    binding = process_binding(command, timeout=10)
    start = time.perf_counter()
    with pytest.raises(HarnessError, match="sent a line longer than 10000 characters") as info:
        binding.configure(adapter=None)
    assert time.perf_counter() - start < 5, "the over-long line must fail the command at once"
    assert "MAX_LINE_CHARS" in str(info.value)


def test_a_line_at_the_cap_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "MAX_LINE_CHARS", 200)
    command = harness(tmp_path, """
welcome()
message = command()
line = json.dumps({"type": "done", "id": message["id"]})
sys.stdout.write(line + " " * (200 - len(line)) + "\\n")
sys.stdout.flush()
command()
""")
    binding = process_binding(command, timeout=10)
    binding.configure(adapter=None)


def test_a_harness_killed_by_a_signal_is_reported_so_through_its_reaper(tmp_path: Path) -> None:
    # The reaper between the suite and the harness (Linux) once failed to pass on a SIGKILL.
    command = harness(tmp_path, """
import signal
welcome()
command()
print("harness: killing myself", file=sys.stderr, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
""")
    binding = process_binding(command, timeout=10)
    with pytest.raises(HarnessError, match="exited with code -9") as info:
        binding.configure(adapter=None)
    assert str(info.value).endswith("harness: killing myself"), str(info.value)


def test_a_harness_on_stdout_that_prints_before_its_welcome_is_a_protocol_error(tmp_path: Path) -> None:
    # Whether a line that is no message is a log waits for the first message: on stdout, it is not.
    command = harness(tmp_path, """
print("the library says hello at import", flush=True)
welcome()
command()
""")
    with pytest.raises(HarnessError, match="not a valid protocol message: 'the library says hello"):
        process_binding(command, timeout=10)


def test_a_harness_on_the_protocol_pipe_keeps_its_stdout_as_a_log(tmp_path: Path) -> None:
    command = harness(tmp_path, f"""
print("the library says hello at import", flush=True)
pipe = os.fdopen(int(os.environ[{p.PROTOCOL_FD!r}]), "w")
def send(message):
    pipe.write(json.dumps(message) + "\\n"); pipe.flush()
welcome()
message = command()
print("the library prints mid-run", flush=True)
os.system("echo a child prints too")
send({{"type": "done", "id": message["id"]}})
message = command()
sys.exit(3)
""")
    binding = process_binding(command, timeout=10)
    binding.configure(adapter=None)
    with pytest.raises(HarnessError, match="exited with code 3") as info:
        binding.configure(adapter=None)
    for printed in ("the library says hello at import", "the library prints mid-run",
                    "a child prints too"):
        assert printed in str(info.value), info.value
