"""The process binding: a harness in another process gets the same verdicts, and a broken harness
is reported as errored with its stderr while the run goes on."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import _protocol as p
from tests.suite.conftest import ROOT, RunSuite, SuiteRun, suite_run
from tests.suite.test_protocol import SCHEMA

HARNESS = shlex.join([sys.executable, "-m", "tests.suite.harness"])
#: Only the scenarios of loop.feature whose call asks this break (the others must still pass).
MARKED = "1234 + 4321"
LOOP = "-k", "(chosen_tool_runs or did_not_choose or step_cap or choosing_finish) and not over_http"


def _verdicts(run: SuiteRun) -> dict[str, str]:
    assert run.report is not None, run.output[-3000:]
    return {s["name"]: s["verdict"] for s in run.report["scenarios"]}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("harness")


@pytest.fixture(scope="module")
def harness_run(workdir: Path) -> SuiteRun:
    """The whole suite through the Python harness, with the debug transcript on."""
    return suite_run(workdir, f"cmd:{HARNESS}", "--harness-debug", str(workdir / "transcript.jsonl"))


def test_a_correct_harness_gets_the_in_process_verdicts(harness_run: SuiteRun, tmp_path: Path) -> None:
    assert harness_run.returncode == 0, harness_run.output[-3000:]
    assert harness_run.report is not None
    assert harness_run.report["binding"]["name"] == "python-harness"
    in_process = suite_run(tmp_path, "reference")
    assert _verdicts(harness_run) == _verdicts(in_process)
    assert set(_verdicts(harness_run).values()) == {"passed", "not-claimed"}
    # The welcome's dependencies are reported as a binding's are.
    assert in_process.report is not None
    dependencies = harness_run.report["binding"]["dependencies"]
    assert set(dependencies) == {"pydantic", "httpx"}
    assert dependencies == in_process.report["binding"]["dependencies"]


def test_the_debug_transcript_holds_every_message_and_each_is_valid(
    harness_run: SuiteRun, workdir: Path
) -> None:
    assert harness_run.report is not None
    lines = (workdir / "transcript.jsonl").read_text(encoding="utf-8").removesuffix("\n").split("\n")
    kinds: set[str] = set()
    for line in lines:
        who, _, body = line.partition(" -> ")
        adapter = p.to_harness if who.strip() == "suite" else p.from_harness
        kinds.add(adapter.validate_json(body).type)
    assert lines[0].startswith("suite  -> ") and '"type":"hello"' in lines[0]
    assert {"hello", "welcome", "build", "built", "run", "ran", "model", "turn", "tool",
            "observation", "resume", "run_concurrently", "ran_all", "configure"} <= kinds


def test_every_message_of_a_real_session_obeys_the_committed_json_schema(
    harness_run: SuiteRun, workdir: Path
) -> None:
    # What harness authors validate against must accept everything the suite sends and reads.
    try:
        import jsonschema
    except ImportError:
        pytest.fail("jsonschema is not installed (it comes with the dev extra): pip install -e '.[dev]'")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validators = {
        side: jsonschema.Draft202012Validator({"$ref": f"#/$defs/{side}", "$defs": schema["$defs"]})
        for side in ("to_harness", "from_harness")
    }
    lines = (workdir / "transcript.jsonl").read_text(encoding="utf-8").removesuffix("\n").split("\n")
    for line in lines:
        who, _, body = line.partition(" -> ")
        validators["to_harness" if who.strip() == "suite" else "from_harness"].validate(json.loads(body))
    assert len(lines) > 1000
    with pytest.raises(jsonschema.ValidationError):
        validators["from_harness"].validate({"type": "ran", "id": 1, "outcome": {"trajectory": 5}})


@pytest.mark.parametrize(("broken", "says"), [
    ("invalid-json", "sent a line that is not a valid protocol message: 'this is not JSON'"),
    ("bad-message", "at ran.id: Input should be a valid integer"),
    ("crash", "exited with code 3.\nThe tail of its stderr:\n  harness: something went badly wrong"),
    ("stall", "did not reply to the 'run' command within 2.7 s"),
])
def test_a_broken_harness_is_errored_with_its_stderr_and_the_run_goes_on(
    run_suite: RunSuite, broken: str, says: str
) -> None:
    # Only the stall needs a short limit; the others keep the default, so a busy machine is no fault.
    limit = ("--conformance-timeout", "3") if broken == "stall" else ()
    run = run_suite(f"cmd:{HARNESS} --break {broken} --when '{MARKED}'", *limit, *LOOP)
    verdicts = _verdicts(run)
    assert run.report is not None
    broken_one = "The chosen tool runs with exactly the chosen args and its result becomes an observation"
    assert verdicts.pop(broken_one) == "errored"
    message = next(s["message"] for s in run.report["scenarios"] if s["name"] == broken_one)
    assert says in message
    if broken in ("crash", "stall"):
        assert "The tail of its stderr:\n  harness: " in message
    if broken == "crash":  # a published report names no folder of the machine it ran on
        assert 'File "tests/suite/harness.py", line 53' in message, message
        assert 'File "~/lib/mylib.py", line 9' in message, message
        assert str(Path.home()) not in message and str(Path(__file__).parents[2]) not in message
    # The harness was restarted: every scenario after the broken one still ran and passed.
    others = {s["name"]: s["message"] for s in run.report["scenarios"]
              if s["name"] != broken_one and s["verdict"] not in ("passed", "not-claimed")}
    assert len(verdicts) >= 6 and not others, others


def test_a_command_that_is_no_harness_is_a_usage_error(run_suite: RunSuite) -> None:
    run = run_suite("cmd:no-such-program --flag")
    assert run.returncode == 4, run.output[-2000:]
    assert "could not start the harness 'no-such-program --flag'" in run.output


def test_a_harness_that_speaks_another_protocol_version_is_a_usage_error(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    script = tmp_path / "old.py"
    script.write_text(
        "import json, sys\n"
        "hello = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'type': 'welcome', 'id': hello['id'], 'protocol': 0, 'name': 'old', "
        "'version': '0'}), flush=True)\n"
        "sys.stdin.readline()\n",
        encoding="utf-8",
    )
    run = run_suite(f"cmd:{shlex.join([sys.executable, str(script)])}")
    assert run.returncode == 4, run.output[-2000:]
    assert f"speaks protocol version 0; this suite speaks versions 1 to {p.PROTOCOL_VERSION}" in run.output


_BROKEN_ONE = "The chosen tool runs with exactly the chosen args and its result becomes an observation"


def _message_of(run: SuiteRun, name: str) -> str:
    assert run.report is not None, run.output[-3000:]
    found = [s for s in run.report["scenarios"] if s["name"] == name]
    assert found and found[0]["verdict"] == "errored", found
    return str(found[0]["message"])


def test_invalid_utf8_from_a_harness_is_a_protocol_error_named_as_such(run_suite: RunSuite) -> None:
    # It once killed the reader thread, and the harness was reported as having "did not reply".
    run = run_suite(f"cmd:{HARNESS} --break invalid-utf8 --when '{MARKED}'", *LOOP)
    message = _message_of(run, _BROKEN_ONE)
    assert "sent a line that is not valid UTF-8" in message and "a protocol error" in message, message
    assert "did not reply" not in message


def test_a_lone_surrogate_escape_from_a_harness_is_the_librarys_text_not_a_protocol_error(
    run_suite: RunSuite,
) -> None:
    # JSON.stringify writes a JavaScript string cut inside an emoji as `\\ud83d`, which the strict
    # JSON parser refused: the library's answer was reported as the harness's protocol error.
    # EXT-1's scenario reads the answer's text (ASYNC-1's now compares the async run with the sync
    # one, which the harness cuts alike).
    run = run_suite(f"cmd:{HARNESS} --break lone-surrogate --when '{MARKED}'",
                    "-k", "extraction_receives_the_inputs")
    assert run.report is not None, run.output[-3000:]
    [scenario] = run.report["scenarios"]
    assert scenario["verdict"] == "failed", scenario
    assert "the prediction's 'answer' is 'cut \ufffd', expected '5555'" in scenario["message"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to tell a process is gone")
def test_a_harness_is_ended_with_its_process_group_and_an_orphan_holding_its_pipe_hangs_nothing(
    run_suite: RunSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process the harness started once outlived the run, and, holding the harness's stdout,
    # made the suite wait out the command's time limit ("did not reply") instead of seeing the exit.
    pid_file = tmp_path / "orphan.pid"
    monkeypatch.setenv("ORPHAN_PID_FILE", str(pid_file))
    run = run_suite(f"cmd:{HARNESS} --break orphan-crash --when '{MARKED}'",
                    "--conformance-timeout", "20", *LOOP)
    message = _message_of(run, _BROKEN_ONE)
    assert "exited with code 3" in message and "did not reply" not in message, message
    assert "harness: leaving a process behind" in message
    assert not _alive(int(pid_file.read_text()))


_LEAVES_A_SLEEPER = """
import os, subprocess, sys
from conformance._isolate import protocol_stdout
from tests.suite.harness import Harness
sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)  # out of the harness's group: its reaper ends it
with open(os.environ["ORPHAN_PID_FILE"], "a", encoding="utf-8") as out:
    out.write(f"{sleeper.pid}\\n")
Harness(protocol_stdout(), None, "").serve_forever(sys.stdin)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to tell a process is gone")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL],
                         ids=["SIGTERM", "SIGHUP", "SIGKILL"])
def test_a_suite_terminated_by_a_signal_ends_its_harnesses_process_groups(
    tmp_path: Path, signum: signal.Signals
) -> None:
    # A CI job's cancel or time limit sends SIGTERM: the suite died without its atexit clean-up,
    # the harness left on the end of its stdin, and what it had started lived on. A SIGKILL leaves
    # the suite no clean-up at all: the harness's reaper sees the suite gone, and ends it all.
    script, pid_file = tmp_path / "harness.py", tmp_path / "sleeper.pid"
    script.write_text(_LEAVES_A_SLEEPER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORPHAN_PID_FILE": str(pid_file)}
    suite = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--impl", f"cmd:{shlex.join([sys.executable, str(script)])}",
         "-p", "no:cacheprovider", "-q", "--conformance-timeout", "20", "-k", "concurrent or async"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        # The signal as a CI runner sends it: a suite started with it ignored (under nohup, as this
        # test run may be) rightly keeps ignoring it (conformance._process), so it starts default.
        preexec_fn=None if signum == signal.SIGKILL else lambda: signal.signal(signum, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline and suite.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)  # the suite is running scenarios through the harness
        assert suite.poll() is None, "the run ended before it could be terminated"
        suite.send_signal(signum)
        assert suite.wait(30) == -signum  # it still ends as the signal asks
    finally:
        if suite.poll() is None:
            suite.kill()
    sleeper = int(pid_file.read_text().split()[0])
    deadline = time.monotonic() + 5
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(sleeper)
    if alive:
        os.kill(sleeper, signal.SIGKILL)
    assert not alive, "the harness's child outlived the suite"


_WELCOMES_ONCE = """
import os, runpy, sys, time
if os.path.exists(sys.argv[1]):
    print("harness: waiting for a lock the first process held", file=sys.stderr, flush=True)
    time.sleep(600)  # started again: never answers hello
open(sys.argv[1], "w").close()
sys.argv = ["harness", "--break", "crash", "--when", sys.argv[2]]
runpy.run_module("tests.suite.harness", run_name="__main__")
"""


def test_a_restarted_harness_that_never_welcomes_is_errored_not_the_library_hanging(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    # Its restart waited for `welcome` longer than the scenario's time limit: the suite's guard
    # reported every later scenario as the library hanging (`failed`), 9 in an adversarial run.
    script = tmp_path / "welcomes_once.py"
    script.write_text(_WELCOMES_ONCE, encoding="utf-8")
    command = shlex.join([sys.executable, str(script), str(tmp_path / "started"), MARKED])
    run = run_suite(f"cmd:{command}", "--conformance-timeout", "3", *LOOP)
    assert run.report is not None, run.output[-3000:]
    crashed = _message_of(run, _BROKEN_ONE)
    assert "exited with code 3" in crashed, crashed
    after = [s for s in run.report["scenarios"] if s["name"] != _BROKEN_ONE
             and s["verdict"] not in ("passed", "not-claimed")]
    assert len(after) >= 6 and {s["verdict"] for s in after} == {"errored"}, after
    messages = [s["message"] for s in after]
    assert "did not reply to the 'hello' command within 2.7 s: it was started again after it " \
           "failed, and sent no 'welcome'" in messages[0], messages[0]
    assert "every start must answer 'hello' with 'welcome'" in messages[0]
    assert "harness: waiting for a lock the first process held" in messages[0]
    assert all("gave up on the harness" in m for m in messages[1:]), messages


_ESCAPES = """
import os, subprocess, sys
from conformance._isolate import protocol_stdout
from tests.suite.harness import Harness
SLEEP = ("import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\\\n'); "
         "time.sleep(600)")
sleeper = [sys.executable, "-c", SLEEP, os.environ["ORPHAN_PID_FILE"]]
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
subprocess.Popen(sleeper, start_new_session=True, **quiet)  # a session and group of its own
subprocess.Popen(["nohup", *sleeper], **quiet)  # deaf to the hang-up
# A daemon: in a session of its own, and its parent gone at once (the shell), so orphaned.
subprocess.run(["sh", "-c", 'setsid "$@" </dev/null >/dev/null 2>&1 &', "sh", *sleeper], check=True)
Harness(protocol_stdout(), None, "").serve_forever(sys.stdin)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the reaper is Linux's; reads /proc")
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_every_process_a_harness_starts_ends_with_the_run_whatever_session_it_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    # A harness's grandchildren in a session of their own (setsid, a daemon) outlived the run:
    # ending the harness's process group does not reach them (4 orphans in an adversarial run).
    script, pid_file = tmp_path / "escapes.py", tmp_path / "sleepers.pid"
    script.write_text(_ESCAPES, encoding="utf-8")
    monkeypatch.setenv("ORPHAN_PID_FILE", str(pid_file))
    run = suite_run(tmp_path, f"cmd:{shlex.join([sys.executable, str(script)])}", *workers,
                    "-k", "chosen_tool_runs or choosing_finish")
    assert run.returncode == 0, run.output[-3000:]
    sleepers = [int(pid) for pid in pid_file.read_text(encoding="utf-8").split()]
    # Three per harness process: one per worker, and the controller's under -n.
    assert len(sleepers) % 3 == 0 and len(sleepers) >= (6 if workers else 3), sleepers
    deadline = time.monotonic() + 5
    while any(map(_alive, sleepers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = [pid for pid in sleepers if _alive(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "processes the harness started outlived the run"
