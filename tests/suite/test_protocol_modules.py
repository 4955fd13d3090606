"""The Ruby, Elixir, Go and Rust protocol modules (harnesses/lib/protocol.rb, protocol.ex, go/,
rust/) drive the suite to verdicts: a tiny loop in each language (tests/ruby/loop.rb,
tests/elixir/loop.ex, tests/go/tinyloop, tests/rust/src/tinyloop.rs) bound by a harness that writes
only its translation (tests/ruby/harness.rb, tests/elixir/harness.exs, tests/go/harness.go,
tests/rust/src/main.rs), every message checked against the protocol; Ruby under Debian's ruby
(standard library only), Elixir under Debian's elixir with its erlang-jiffy for JSON, Go under its
standard library, Rust with serde_json (pinned by tests/rust/Cargo.lock).

The Rust loop's first build fetches its three crates and compiles them in about 16 s on 2 cores
(then offline, from cargo's own cache); each small harness built here against the module after
it takes about 2 s, as they share one target directory."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.suite.conftest import ROOT, suite_run

RUBY = ROOT / "tests" / "ruby" / "harness.rb"
ELIXIR = ROOT / "tests" / "elixir" / "harness.exs"


def _elixir_with_a_json_library() -> bool:
    if shutil.which("elixir") is None:
        return False
    probe = "unless Enum.any?([JSON, Jason, :jiffy], &Code.ensure_loaded?/1), do: System.halt(1)"
    return subprocess.run(["elixir", "-e", probe], capture_output=True, timeout=60).returncode == 0


needs_ruby = pytest.mark.skipif(shutil.which("ruby") is None,
                                reason="needs Debian's ruby (.ci/run installs it)")
needs_elixir = pytest.mark.skipif(not _elixir_with_a_json_library(),
                                  reason="needs Debian's elixir and erlang-jiffy (.ci/run installs them)")
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="needs Go (the CI machine has it)")
GO = ROOT / "tests" / "go"
# The Go harness's binary, built once per run (Go's own build cache keeps later runs warm).
GO_HARNESS = Path(tempfile.gettempdir()) / f"react-conformance-{os.getuid()}" / "go-loop"


@pytest.fixture(scope="module", autouse=True)
def _go_harness_built() -> None:
    """Builds tests/go into GO_HARNESS, where the Go loop's tests run it."""
    if shutil.which("go") is None:
        return
    built = subprocess.run(["go", "build", "-o", str(GO_HARNESS), "."], cwd=GO, capture_output=True,
                           text=True, timeout=600)
    assert built.returncode == 0, built.stderr


needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None,
                                 reason="needs Rust's cargo (the CI machine has it)")
RUST = ROOT / "tests" / "rust"
RUST_MODULE = ROOT / "harnesses" / "lib" / "rust"
# One target directory for every Rust build here: serde_json is compiled once per run.
RUST_TARGET = GO_HARNESS.parent / "rust-target"
RUST_HARNESS = RUST_TARGET / "debug" / "rust-loop"


def _cargo(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CARGO_TARGET_DIR": str(RUST_TARGET)}
    return subprocess.run(["cargo", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module", autouse=True)
def _rust_harness_built() -> None:
    """Builds tests/rust into RUST_HARNESS, where the Rust loop's tests run it."""
    if shutil.which("cargo") is None:
        return
    built = _cargo(RUST, "build", "--locked")
    assert built.returncode == 0, built.stderr


LOOPS = [pytest.param("ruby-loop", f"ruby {RUBY}", marks=needs_ruby, id="ruby"),
         pytest.param("elixir-loop", f"elixir {ELIXIR}", marks=needs_elixir, id="elixir"),
         pytest.param("go-loop", str(GO_HARNESS), marks=needs_go, id="go"),
         pytest.param("rust-loop", str(RUST_HARNESS), marks=needs_cargo, id="rust")]


@pytest.mark.parametrize(("name", "command"), LOOPS)
def test_a_harness_reaches_the_verdicts_of_its_loop(tmp_path: Path, name: str, command: str) -> None:
    transcript = tmp_path / "transcript.jsonl"
    run = suite_run(tmp_path, f"cmd:{command}", "--harness-debug", str(transcript), "-n", "2")
    assert run.returncode == 0, run.output[-3000:]
    report = run.report
    assert report is not None and report["complete"], run.output[-3000:]
    assert report["binding"]["name"] == name
    assert set(report["requirements"].values()) <= {"passed", "not-claimed"}, report["requirements"]
    # The loop, its tool errors and arguments, its cap, parallel calls, the per-call cap, and its
    # approval callback (asked through the module's ask_approval, read by its read_approval).
    assert {"LOOP-1", "LOOP-2", "LOOP-3", "LOOP-4", "LOOP-6", "ERR-1", "ERR-2", "ARGS-1", "ARGS-3",
            "ARGS-5", "TRJ-1", "TRJ-2", "EXH-5", "EXH-7", "HITL-3", "HITL-4", "HITL-7",
            "ASYNC-1", "ASYNC-2"} <= run.requirements("passed")
    # The loop's async form (its own thread or Task), and fifty runs at once through the module's
    # run_concurrently: each run's requests and answers kept apart by run id, in flight together.
    # The other two async scenarios need what the loop lacks (a signature, a durable pause).
    verdicts = {s["id"]: s["verdict"] for s in report["scenarios"] if "async" in s["id"]}
    assert verdicts == {
        "test_an_async_call_gives_the_same_result_as_a_sync_call": "passed",
        "test_an_async_call_shows_a_raising_tools_error_to_the_agent_as_a_sync_call_does": "passed",
        "test_fifty_overlapping_async_runs_of_one_agent_share_no_state": "passed",
        "test_fifty_overlapping_async_runs_share_no_state": "not-claimed",
        "test_an_async_resume_gives_the_same_result_as_a_sync_resume": "not-claimed",
    }, verdicts
    # Every message in both directions was valid under the protocol (else the run would be errored),
    # and ARGS-5's args nested thousands of levels deep reached the suite's tool as their JSON text.
    assert '"args_json":"{' in transcript.read_text(encoding="utf-8")


MODULES = {"ruby": ("harness.rb", "ruby", ROOT / "harnesses" / "lib" / "protocol.rb"),
           "elixir": ("harness.exs", "elixir", ROOT / "harnesses" / "lib" / "protocol.ex")}
LANGUAGES = [pytest.param("ruby", marks=needs_ruby), pytest.param("elixir", marks=needs_elixir),
             pytest.param("go", marks=needs_go), pytest.param("rust", marks=needs_cargo)]
GO_HARNESS_SOURCE = """package main

import (
\t"context"
\t"errors"
\t"fmt"
\t"log"

\t"react-conformance/protocol"
)

type h struct{{}}

func (h) Hello(protocol.Object) (protocol.Object, error) {{ return protocol.Object{{}}, nil }}
func (h) Build(protocol.Object) (protocol.Object, error) {{ return protocol.Object{{}}, nil }}
func (h) MutateLastResult(protocol.Object) (protocol.Object, error) {{ return protocol.Object{{}}, nil }}
func (h) Run(ctx context.Context, cmd protocol.Object) (protocol.Object, error) {{
{body}
\treturn protocol.Object{{"outcome": protocol.Object{{"outputs": protocol.Object{{}}}}}}, nil
}}

var _, _ = errors.New, fmt.Sprint

func main() {{ log.SetFlags(0); protocol.Serve(h{{}}) }}
"""
RAISING = {"ruby": """require '{module}'
class H
  def run(command)
    raise 'the harness broke' if command['run'] == 'r2'
    {{ 'outcome' => {{ 'outputs' => {{}} }} }}
  end
end
ReactConformance::Protocol.serve(H.new)
""", "elixir": """Code.require_file("{module}")
defmodule H do
  def run(%{{"run" => "r2"}}), do: raise("the harness broke")
  def run(_), do: %{{"outcome" => %{{"outputs" => %{{}}}}}}
end
ReactConformance.Protocol.serve(H)
"""}
LOGGING = {"ruby": """require 'logger'
require '{module}'
class H
  def run(_command)
    Logger.new($stdout).warn('the library logs')
    {{ 'outcome' => {{ 'outputs' => {{}} }} }}
  end
end
ReactConformance::Protocol.serve(H.new)
""", "elixir": """Code.require_file("{module}")
defmodule H do
  require Logger
  def run(_command) do
    Logger.warning("the library logs")
    Logger.flush()
    %{{"outcome" => %{{"outputs" => %{{}}}}}}
  end
end
# Erlang's default handler, on standard_io, as Elixir 1.15 and later have it (beside 1.14's console).
:logger.add_handler(:default, :logger_std_h, %{{}})
ReactConformance.Protocol.serve(H)
"""}
RAISING["go"] = GO_HARNESS_SOURCE.format(body="""\tif protocol.RunOf(ctx) == "r2" {
\t\treturn nil, errors.New("the harness broke")
\t}""")
LOGGING["go"] = GO_HARNESS_SOURCE.format(body="""\tfmt.Println("the library prints")
\tlog.SetOutput(os.Stdout)
\tlog.Print("the library logs")
\t_, _ = syscall.Write(1, []byte("a C library writes to file descriptor 1\\n"))""").replace(
    '\t"log"\n', '\t"log"\n\t"os"\n\t"syscall"\n')


def _go_program(folder: Path, source: str) -> list[str]:
    """`source` built as a Go program in `folder` against the protocol module: its command."""
    module = ROOT / "harnesses" / "lib" / "go"
    (folder / "go.mod").write_text("module harness\n\ngo 1.22\n\n"
                                   "require react-conformance/protocol v0.0.0\n\n"
                                   f"replace react-conformance/protocol => {module}\n", encoding="utf-8")
    (folder / "main.go").write_text(source, encoding="utf-8")
    built = subprocess.run(["go", "build", "-o", "harness", "."], cwd=folder, capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stderr
    return [str(folder / "harness")]


RUST_HARNESS_SOURCE = """use react_conformance_protocol as protocol;
use protocol::{{json, object, Error, Object, Run}};

struct H;

impl protocol::Handlers for H {{
    fn hello(&self, _: &Object) -> Result<Object, Error> {{ Ok(Object::new()) }}
    fn build(&self, _: &Object) -> Result<Object, Error> {{ Ok(Object::new()) }}
    fn mutate_last_result(&self, _: &Object) -> Result<Object, Error> {{ Ok(Object::new()) }}
    fn run(&self, run: &Run, _: &Object) -> Result<Object, Error> {{
{body}
        Ok(object(json!({{"outcome": {{"outputs": {{}}}}}})))
    }}
}}

fn main() {{ protocol::serve(H) }}
"""
RAISING["rust"] = RUST_HARNESS_SOURCE.format(body="""        if run.id() == "r2" {
            return Err("the harness broke".into());
        }""")
RAISING["rust-panic"] = RUST_HARNESS_SOURCE.format(
    body="""        assert!(run.id() != "r2", "the harness broke");""")
LOGGING["rust"] = RUST_HARNESS_SOURCE.format(body="""        let _ = run;
        println!("the library prints");
        std::io::Write::write_all(&mut std::io::stdout(), b"the library writes to stdout\\n")?;
        std::io::Write::flush(&mut std::io::stdout())?;
        extern "C" {
            fn write(fd: i32, bytes: *const u8, count: usize) -> isize;
        }
        let line = b"a C library writes to file descriptor 1\\n";
        // SAFETY: the buffer is valid for its length.
        unsafe { write(1, line.as_ptr(), line.len()) };""")


def _rust_program(folder: Path, source: str) -> list[str]:
    """`source` built as a Rust program in `folder` against the protocol module: its command."""
    (folder / "src").mkdir()
    (folder / "Cargo.toml").write_text(
        '[package]\nname = "harness"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n'
        f'react-conformance-protocol = {{ path = "{RUST_MODULE}" }}\n', encoding="utf-8")
    # The loop's lock, so that this program builds with the same crates, offline.
    shutil.copy(RUST / "Cargo.lock", folder / "Cargo.lock")
    (folder / "src" / "main.rs").write_text(source, encoding="utf-8")
    built = _cargo(folder, "build", "--offline")
    assert built.returncode == 0, built.stderr
    return [str(RUST_TARGET / "debug" / "harness")]


def _serve(tmp_path: Path, language: str, source: str, command: dict[str, object]) -> list[str]:
    """What a harness of `source` writes to stdout for `command`, then for `stop`: every line."""
    if language == "go":
        argv = _go_program(tmp_path, source)
    elif language == "rust":
        argv = _rust_program(tmp_path, source)
    else:
        name, program, module = MODULES[language]
        (tmp_path / name).write_text(source.format(module=module), encoding="utf-8")
        argv = [program, str(tmp_path / name)]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as harness:
        assert harness.stdin is not None and harness.stdout is not None
        harness.stdin.write(json.dumps(command) + "\n")
        harness.stdin.flush()
        ready, _, _ = select.select([harness.stdout], [], [], 60)
        first = harness.stdout.readline() if ready else ""
        harness.stdin.write('{"type": "stop", "id": 99}\n')
        harness.stdin.close()
        rest = harness.stdout.read()
        harness.wait(timeout=60)
    return (first + rest).splitlines()


RAISINGS = [*LANGUAGES, pytest.param("rust-panic", marks=needs_cargo)]


@pytest.mark.parametrize("language", RAISINGS)
def test_a_run_that_raises_in_run_concurrently_fails_the_command(tmp_path: Path, language: str) -> None:
    """A harness's exception in one of the concurrent runs is the `failed` reply to the command, as
    in a `run`: never a lost reply the suite would wait for until its timeout. (A Rust harness
    returns an error or panics.)"""
    command = {"type": "run_concurrently", "id": 5,
               "runs": [{"agent": "a", "run": run, "call": {}} for run in ("r1", "r2", "r3")]}
    lines = _serve(tmp_path, language.removesuffix("-panic"), RAISING[language], command)
    assert all(line.startswith("{") for line in lines), lines
    replies = [json.loads(line) for line in lines]
    assert replies[0]["type"] == "failed" and replies[0]["id"] == 5, lines
    assert "the harness broke" in replies[0]["message"]
    assert replies[1:] == [{"type": "done", "id": 99}]


@pytest.mark.parametrize("language", LANGUAGES)
def test_what_the_library_logs_stays_off_the_wire(tmp_path: Path, language: str) -> None:
    """A library's logger (Ruby's Logger on $stdout, Elixir's Logger) writes to stderr: every line
    on stdout is a protocol message."""
    command = {"type": "run", "id": 5, "agent": "a", "run": "r1", "call": {}}
    lines = _serve(tmp_path, language, LOGGING[language], command)
    assert all(line.startswith("{") for line in lines), lines
    assert [json.loads(line) for line in lines] == [{"type": "ran", "id": 5, "outcome": {"outputs": {}}},
                                                    {"type": "done", "id": 99}]


@needs_ruby
@needs_elixir
def test_the_ruby_and_elixir_loops_get_the_same_verdicts(tmp_path: Path) -> None:
    verdicts = []
    for command in (f"ruby {RUBY}", f"elixir {ELIXIR}"):
        run = suite_run(tmp_path, f"cmd:{command}")
        assert run.report is not None, run.output[-3000:]
        verdicts.append({s["id"]: s["verdict"] for s in run.report["scenarios"]})
    assert verdicts[0] == verdicts[1]


@pytest.mark.parametrize(("name", "command"), LOOPS)
def test_an_auxiliary_call_is_answered_without_a_scripted_turn(
    tmp_path: Path, name: str, command: str
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    run = suite_run(tmp_path, f"cmd:env OBSERVER=1 {command}", "--harness-debug", str(transcript),
                    "-k", "chosen_tool_runs or choosing_finish")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["binding"]["name"] == name
    assert run.requirements("passed") >= {"LOOP-1", "LOOP-2"}
    lines = transcript.read_text(encoding="utf-8").splitlines()
    sent = [json.loads(line.split("->", 1)[1]) for line in lines if line.startswith("harness ->")]
    auxiliary = [m for m in sent if m["type"] == "model" and m["call"]["kind"] == "auxiliary"]
    assert auxiliary and all(m["call"]["auxiliary"] == "observation" for m in auxiliary)
    answered = [line for line in lines if '"auxiliary":"continue"' in line]
    assert len(answered) == len(auxiliary), lines[:20]


@needs_ruby
@pytest.mark.skipif(shutil.which("uv") is None or shutil.which("uvx") is None,
                    reason="needs uv and uvx (the dev extra)")
def test_a_ruby_library_runs_the_suite_as_writing_a_harness_md_shows(tmp_path: Path) -> None:
    """The CI recipe for a library not in Python, verbatim but for where the suite comes from (a
    built wheel, as docs/ci.md says) and with the protocol module copied beside the harness."""
    built = subprocess.run(["uv", "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("react_conformance-*.whl")
    repo = tmp_path / "rubylib"
    (repo / "conformance").mkdir(parents=True)
    shutil.copy(ROOT / "harnesses" / "lib" / "protocol.rb", repo / "conformance" / "protocol.rb")
    shutil.copy(ROOT / "tests" / "ruby" / "loop.rb", repo / "conformance" / "loop.rb")
    harness = RUBY.read_text(encoding="utf-8").replace("require_relative '../../harnesses/lib/protocol'",
                                                       "require_relative 'protocol'")
    (repo / "conformance" / "harness.rb").write_text(harness, encoding="utf-8")

    doc = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8")
    [command] = re.findall(r"```sh\n(uvx --with .*?)```", doc, re.S)
    source = re.search(r'"(react-conformance @ git\+[^"]+)"', command)
    assert source is not None
    command = command.replace(source.group(1), str(wheel))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((repo / "conformance.json").read_text(encoding="utf-8"))
    assert report["binding"]["name"] == "ruby-loop" and report["complete"]
    assert {"LOOP-1", "LOOP-3", "ERR-1", "ARGS-1"} <= {r for r, v in report["requirements"].items()
                                                       if v == "passed"}
    assert (repo / "conformance.xml").is_file()
    assert sorted(p.name for p in repo.iterdir()) == ["conformance", "conformance.json", "conformance.xml"]


@needs_elixir
@pytest.mark.skipif(shutil.which("mix") is None, reason="needs Mix (Debian's elixir has it)")
def test_an_elixir_harness_runs_in_a_mix_project_as_writing_a_harness_md_shows(tmp_path: Path) -> None:
    """The Mix route of the docs: `mix compile` first, then the documented `mix run --no-compile`
    command (a plain `mix run` writes its compiling lines to stdout)."""
    created = subprocess.run(["mix", "new", "mylib"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
    assert created.returncode == 0, created.stderr
    repo = tmp_path / "mylib"
    (repo / "conformance").mkdir()
    shutil.copy(ROOT / "harnesses" / "lib" / "protocol.ex", repo / "conformance" / "protocol.ex")
    shutil.copy(ROOT / "tests" / "elixir" / "loop.ex", repo / "conformance" / "loop.ex")
    harness = ELIXIR.read_text(encoding="utf-8").replace('"../../harnesses/lib/protocol.ex"', '"protocol.ex"')
    (repo / "conformance" / "harness.exs").write_text(harness, encoding="utf-8")
    compiled = subprocess.run(["mix", "compile"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

    doc = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8")
    [command] = re.findall(r'`--impl "cmd:(mix run [^"]+)"`', doc)
    run = suite_run(repo, f"cmd:{command}", "-k", "choosing_finish or chosen_tool_runs or approv")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["binding"]["name"] == "elixir-loop"
    assert run.requirements("passed") >= {"LOOP-1", "LOOP-2", "HITL-3"}


@needs_cargo
def test_a_rust_harness_runs_as_an_example_of_its_crate_as_writing_a_harness_md_shows(tmp_path: Path) -> None:
    """The Rust route of the docs, word for word: a fresh crate, the module copied to
    conformance/protocol, the page's Cargo.toml lines, its build command and its pytest command
    (the harness is tests/rust's loop, copied beside the module). About 20 s: a fresh target."""
    created = subprocess.run(["cargo", "new", "--lib", "mylib"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
    assert created.returncode == 0, created.stderr
    repo = tmp_path / "mylib"
    shutil.copytree(RUST_MODULE, repo / "conformance" / "protocol", ignore=shutil.ignore_patterns("target"))
    shutil.copy(RUST / "src" / "main.rs", repo / "conformance" / "harness.rs")
    shutil.copy(RUST / "src" / "tinyloop.rs", repo / "conformance" / "tinyloop.rs")
    shutil.copy(RUST / "Cargo.lock", repo / "Cargo.lock")  # the crates the loop is tested with

    section = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8").split("### Rust")[1]
    [toml] = re.findall(r"```toml\n(.*?)```", section.split("###")[0], re.S)
    with (repo / "Cargo.toml").open("a", encoding="utf-8") as manifest:
        manifest.write("\n" + toml)
    [commands] = re.findall(r"```sh\n(cargo build .*?)```", section, re.S)
    build, test = commands.strip().splitlines()
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    built = subprocess.run(["bash", "-c", build], cwd=repo, env=env, capture_output=True, text=True,
                           timeout=900)
    assert built.returncode == 0, built.stderr
    [command] = re.findall(r'--impl "cmd:([^"]+)"', test)
    run = suite_run(repo, f"cmd:{command}", "-k", "choosing_finish or chosen_tool_runs or approv")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["binding"]["name"] == "rust-loop"
    assert run.requirements("passed") >= {"LOOP-1", "LOOP-2", "HITL-3"}


@needs_ruby
def test_the_ruby_files_have_no_warnings() -> None:
    for path in (ROOT / "harnesses" / "lib" / "protocol.rb", RUBY, ROOT / "tests" / "ruby" / "loop.rb"):
        checked = subprocess.run(["ruby", "-wc", str(path)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0 and checked.stderr == "", f"{path}: {checked.stderr}"


@needs_go
def test_the_go_module_and_loop_pass_go_vet() -> None:
    for folder in (ROOT / "harnesses" / "lib" / "go", GO):
        vetted = subprocess.run(["go", "vet", "./..."], cwd=folder, capture_output=True, text=True,
                                timeout=600)
        assert vetted.returncode == 0 and vetted.stderr == "", f"{folder}: {vetted.stderr}"
        unformatted = subprocess.run(["gofmt", "-l", "."], cwd=folder, capture_output=True, text=True,
                                     timeout=60)
        assert unformatted.stdout == "", f"not gofmt-formatted: {unformatted.stdout}"


@needs_cargo
def test_the_rust_module_and_loop_pass_clippy_and_rustfmt() -> None:
    for folder in (RUST_MODULE, RUST):
        linted = _cargo(folder, "clippy", "--locked", "--all-targets", "--", "-D", "warnings")
        assert linted.returncode == 0, f"{folder}: {linted.stderr}"
        assert "warning" not in linted.stderr, f"{folder}: {linted.stderr}"
        if shutil.which("rustfmt") is not None:
            formatted = _cargo(folder, "fmt", "--check")
            assert formatted.returncode == 0, f"not rustfmt-formatted: {formatted.stdout}"


@needs_elixir
def test_the_elixir_modules_compile_without_warnings(tmp_path: Path) -> None:
    sources = [ROOT / "harnesses" / "lib" / "protocol.ex", ROOT / "tests" / "elixir" / "loop.ex"]
    compiled = subprocess.run(["elixirc", "--warnings-as-errors", "-o", str(tmp_path), *map(str, sources)],
                              capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr


@pytest.mark.parametrize(("name", "command"), LOOPS)
def test_a_harnesss_mutation_reply_says_what_it_changed(tmp_path: Path, name: str, command: str) -> None:
    """The module carries the harness's `changed` in its `done` reply to `mutate_last_result`: the
    snapshot scenario reads it (a reply without it would be errored)."""
    transcript = tmp_path / "transcript.jsonl"
    run = suite_run(tmp_path, f"cmd:{command}", "--harness-debug", str(transcript), "-k", "Mutating")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["binding"]["name"] == name
    assert run.requirements("passed") == {"TRJ-2"}
    lines = transcript.read_text(encoding="utf-8").splitlines()
    sent = [json.loads(line.split("->", 1)[1]) for line in lines if line.startswith("harness ->")]
    [asked] = [m["id"] for m in (json.loads(line.split("->", 1)[1]) for line in lines
                                 if not line.startswith("harness ->")) if m["type"] == "mutate_last_result"]
    [reply] = [m for m in sent if m["id"] == asked and m["type"] == "done"]
    assert [line.split(" (")[0] for line in reply["changed"]] == ["result.steps"], reply


# Five ways a library's output reaches file descriptor 1 past the language's own stdout object:
# each, run by the harness's `configure`, must stay off the protocol stream and reach the log.
PRINTS = {
    "node": {
        "console.log": "console.log('PRINTED')",
        "process.stdout.write": "process.stdout.write('PRINTED\\n')",
        "fs.writeSync(1)": "writeSync(1, 'PRINTED\\n')",
        "a child with stdio inherit": "spawnSync('echo', ['PRINTED'], { stdio: 'inherit' })",
        # pino's destination (sonic-boom): asynchronous writes to file descriptor 1.
        "a logger on fd 1": "await new Promise((done) => write(1, '{\"msg\":\"PRINTED\"}\\n', done))",
    },
    "ruby": {
        "puts": "puts 'PRINTED'",
        "$stdout.write": "$stdout.write(\"PRINTED\\n\")",
        "fd 1": "IO.new(1, autoclose: false).syswrite(\"PRINTED\\n\")",
        "a child inheriting stdout": "system('echo', 'PRINTED')",
        "Logger on STDOUT": "require 'logger'; Logger.new(STDOUT).warn('PRINTED')",
    },
    "elixir": {
        "IO.puts": 'IO.puts("PRINTED")',
        "a process under the user group leader": 'IO.puts(:user, "PRINTED")',
        "fd 1": 'File.open!("/dev/fd/1", [:write], &IO.write(&1, "PRINTED\\n"))',
        "a port's program": ('port = Port.open({:spawn, "echo PRINTED"}, [:nouse_stdio, :exit_status])\n'
                             "    receive do: ({^port, {:exit_status, _}} -> :ok)"),
        "Logger": 'require Logger\n    Logger.warning("PRINTED")\n    Logger.flush()',
    },
}
PRINTERS = {
    "node": ("harness.mjs", "node", """import {{ spawnSync }} from 'node:child_process';
import {{ write, writeSync }} from 'node:fs';
import {{ serve }} from '{module}';
serve({{
  hello: () => ({{ name: 'printer', version: '0' }}),
  configure: async () => {{ {prints}; return {{}}; }},
}});
"""),
    "ruby": ("harness.rb", "ruby", """require '{module}'
class H
  def hello(_command) = {{ 'name' => 'printer', 'version' => '0' }}
  def configure(_command)
    {prints}
    {{}}
  end
end
ReactConformance::Protocol.serve(H.new)
"""),
    "elixir": ("harness.exs", "elixir", """Code.require_file("{module}")
defmodule H do
  def hello(_command), do: %{{"name" => "printer", "version" => "0"}}
  def configure(_command) do
    {prints}
    %{{}}
  end
end
ReactConformance.Protocol.serve(H)
"""),
}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
NEEDS = {"node": needs_node, "ruby": needs_ruby, "elixir": needs_elixir}
PRINT_CASES = [pytest.param(language, how, marks=NEEDS[language], id=f"{language}-{how}")
               for language, ways in PRINTS.items() for how in ways]


@pytest.mark.parametrize(("language", "how"), PRINT_CASES)
def test_what_reaches_file_descriptor_1_stays_off_the_wire_and_is_kept_as_a_log(
    tmp_path: Path, language: str, how: str
) -> None:
    # The Node module kept only console and process.stdout off the wire: fs.writeSync(1), pino's
    # destination and a child with stdio 'inherit' wrote on the protocol stream (5 of 5 broke a run).
    from conformance._process import process_binding

    name, program, source = PRINTERS[language]
    module = ROOT / "harnesses" / "lib" / f"protocol.{dict(node='mjs', ruby='rb', elixir='ex')[language]}"
    (tmp_path / name).write_text(source.format(module=module, prints=PRINTS[language][how]),
                                 encoding="utf-8")
    binding = process_binding(f"{program} {tmp_path / name}", timeout=30)
    binding.configure(adapter=None)  # a line of the print on the wire would fail it
    harness = binding._process  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10
    while "PRINTED" not in harness._tail() and time.monotonic() < deadline:
        time.sleep(0.05)  # its log comes on another pipe than its reply
    assert "PRINTED" in harness._tail(), harness._tail()
    binding.configure(adapter=None)  # and nothing of it came on the wire late
    assert harness.failure is None
