"""The Ruby, Elixir, Go, Java and Rust protocol modules (harnesses/lib/protocol.rb, protocol.ex,
go/, java/, rust/) drive the suite to verdicts: a tiny loop in each language (tests/ruby/loop.rb,
tests/elixir/loop.ex, tests/go/tinyloop, tests/java/TinyLoop.java, tests/rust/src/tinyloop.rs)
bound by a harness that writes only its translation (tests/ruby/harness.rb,
tests/elixir/harness.exs, tests/go/harness.go, tests/java/Harness.java, tests/rust/src/main.rs),
every message checked against the protocol; Ruby under Debian's ruby (standard library only),
Elixir under Debian's elixir with its erlang-jiffy for JSON, Go under its standard library, Java
under the JDK alone (17), Rust with serde_json (pinned by tests/rust/Cargo.lock).

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
import zipfile
from pathlib import Path

import pytest

from conformance import _protocol as p
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
needs_java = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (the CI machine has one)")
JAVA = ROOT / "tests" / "java"
JAVA_MODULE = ROOT / "harnesses" / "lib" / "java" / "Protocol.java"
# The Java module and loop's classes, compiled once per run (javac takes about 4 s for the three files).
JAVA_CLASSES = Path(tempfile.gettempdir()) / f"react-conformance-{os.getuid()}" / "java-loop"


def _javac(out: Path, *sources: Path) -> subprocess.CompletedProcess[str]:
    """javac as the Java files are held to it: every lint on, each warning an error."""
    return subprocess.run(["javac", "-Xlint:all", "-Werror", "-d", str(out), *map(str, sources)],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module", autouse=True)
def _go_harness_built() -> None:
    """Builds tests/go into GO_HARNESS, where the Go loop's tests run it."""
    if shutil.which("go") is None:
        return
    built = subprocess.run(["go", "build", "-o", str(GO_HARNESS), "."], cwd=GO, capture_output=True,
                           text=True, timeout=600)
    assert built.returncode == 0, built.stderr


@pytest.fixture(scope="module", autouse=True)
def _java_harness_built() -> None:
    """Compiles the Java module and tests/java into JAVA_CLASSES, where the Java loop's tests run it."""
    if shutil.which("javac") is None:
        return
    shutil.rmtree(JAVA_CLASSES, ignore_errors=True)
    built = _javac(JAVA_CLASSES, JAVA_MODULE, *sorted(JAVA.glob("*.java")))
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
         pytest.param("java-loop", f"java -cp {JAVA_CLASSES} Harness", marks=needs_java, id="java"),
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
             pytest.param("go", marks=needs_go), pytest.param("java", marks=needs_java),
             pytest.param("rust", marks=needs_cargo)]
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


JAVA_HARNESS_SOURCE = """import java.util.Map;

import reactconformance.Protocol;

public final class H implements Protocol.Handlers {{
    public Map<String, Object> hello(Map<String, Object> command) {{ return Protocol.object(); }}
    public Map<String, Object> build(Map<String, Object> command) {{ return Protocol.object(); }}
    public Map<String, Object> mutateLastResult(Map<String, Object> command) {{ return Protocol.object(); }}
    public Map<String, Object> run(Map<String, Object> command) throws Exception {{
        {body}
        return Protocol.object("outcome", Protocol.object("outputs", Protocol.object()));
    }}
    public static void main(String[] args) {{ Protocol.serve(new H()); }}
}}
"""
RAISING["java"] = JAVA_HARNESS_SOURCE.format(
    body='if ("r2".equals(Protocol.currentRun())) throw new IllegalStateException("the harness broke");')
# java.util.logging's ConsoleHandler writes to stderr already: a handler on System.out is the test.
LOGGING["java"] = JAVA_HARNESS_SOURCE.format(body="""System.out.println("the library prints");
        java.util.logging.Logger logger = java.util.logging.Logger.getAnonymousLogger();
        java.util.logging.StreamHandler handler = new java.util.logging.StreamHandler(
            System.out, new java.util.logging.SimpleFormatter());
        logger.addHandler(handler);
        logger.warning("the library logs");
        handler.flush();""")


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
    elif language == "java":  # the JDK's source-file mode, against the module's classes
        (tmp_path / "H.java").write_text(source, encoding="utf-8")
        argv = ["java", "-cp", str(JAVA_CLASSES), str(tmp_path / "H.java")]
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


@needs_ruby
@pytest.mark.skipif(shutil.which("bundle") is None, reason="needs Bundler (Debian's ruby-bundler)")
def test_a_ruby_harness_runs_under_bundler_as_the_dspy_rb_readme_shows(tmp_path: Path) -> None:
    """The Bundler route of harnesses/dspy-rb/README.md in a library's repository, its lines
    verbatim: the copy from a react-conformance checkout beside it (but its clone), the install,
    then the `--impl "cmd:bundle exec ..."` command. The test loop's harness stands in for DSPy.rb's
    and a gem of the loop for DSPy.rb, loaded from the bundle (the Gemfile's one line is its
    gemspec, so no gem server is needed)."""
    (tmp_path / "react-conformance").symlink_to(ROOT)
    repo = tmp_path / "mylib"
    (repo / "lib").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "ruby" / "loop.rb", repo / "lib" / "mylib.rb")
    (repo / "mylib.gemspec").write_text(
        'Gem::Specification.new do |spec|\n  spec.name = "mylib"\n  spec.version = "0.1.0"\n'
        '  spec.summary = "A tiny loop"\n  spec.authors = ["suite"]\n  spec.files = ["lib/mylib.rb"]\nend\n',
        encoding="utf-8")
    (repo / "Gemfile").write_text("gemspec\n", encoding="utf-8")

    readme = (ROOT / "harnesses" / "dspy-rb" / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Running the suite in DSPy.rb's repository", 1)[1].split("```yaml")[0]
    copy, install = re.findall(r"```sh\n(.*?)```", section, re.S)[:2]
    [command] = re.findall(r'--impl "cmd:(bundle exec [^"]+)"', section)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUNDLE_", "GEM_", "RUBY"))}
    env["HOME"] = str(tmp_path)
    cloned = "\n".join(line for line in copy.splitlines() if not line.startswith("git clone "))
    for step in (cloned, install.split("\nuvx ")[0]):
        done = subprocess.run(["bash", "-ec", step], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, f"{step}\n{done.stdout}{done.stderr}"
    assert {p.name for p in (repo / "conformance").iterdir()} == {"harness.rb", "protocol.rb"}
    harness = RUBY.read_text(encoding="utf-8").replace(
        "require_relative '../../harnesses/lib/protocol'", "require_relative 'protocol'").replace(
        "require_relative 'loop'", "require 'mylib'")
    (repo / "conformance" / "harness.rb").write_text(harness, encoding="utf-8")
    run = suite_run(repo, f"cmd:{command}", "-k", "choosing_finish or chosen_tool_runs or approv")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["binding"]["name"] == "ruby-loop"
    assert run.requirements("passed") >= {"LOOP-1", "LOOP-2", "HITL-3"}


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


def _java_route(doc: str) -> tuple[str, str, str]:
    """The Java section of writing-a-harness.md: its harness, its javac command and its suite command."""
    section = doc.split("### Java (and Kotlin)", 1)[1].split("\n## ", 1)[0]
    [harness] = re.findall(r"```java\n(.*?)```", section, re.S)
    [compile_command] = re.findall(r"```sh\n(javac .*?)\n", section)
    [suite_command] = re.findall(r'`?pytest --impl "cmd:(java [^"]+)"', section)
    return harness, compile_command, suite_command


@needs_java
def test_a_java_harness_runs_in_a_fresh_project_as_writing_a_harness_md_shows(tmp_path: Path) -> None:
    """The Java route of the docs, word for word: the module copied as conformance/Protocol.java,
    the page's javac command, then its suite command, with the library's class path (here a Maven
    project's target/classes, not built: the loop is compiled beside the harness)."""
    repo = tmp_path / "mylib"
    (repo / "conformance").mkdir(parents=True)
    shutil.copy(JAVA_MODULE, repo / "conformance" / "Protocol.java")
    for source in JAVA.glob("*.java"):
        shutil.copy(source, repo / "conformance" / source.name)
    doc = (ROOT / "docs" / "writing-a-harness.md").read_text(encoding="utf-8")
    _, compile_command, suite_command = _java_route(doc)
    env = {**os.environ, "LIBRARY_CLASSPATH": "target/classes"}
    compiled = subprocess.run(["bash", "-c", compile_command], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stderr
    command = suite_command.replace("$LIBRARY_CLASSPATH", env["LIBRARY_CLASSPATH"])
    run = suite_run(repo, f"cmd:{command}", "-k", "choosing_finish or chosen_tool_runs or approv")
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None and run.report["binding"]["name"] == "java-loop"
    assert run.requirements("passed") >= {"LOOP-1", "LOOP-2", "HITL-3"}


@needs_java
def test_the_java_harness_of_writing_a_harness_md_compiles_without_warnings_and_says_hello(
    tmp_path: Path
) -> None:
    harness, _, _ = _java_route((ROOT / "docs" / "writing-a-harness.md").read_text("utf-8"))
    (tmp_path / "Harness.java").write_text(harness, encoding="utf-8")
    compiled = _javac(tmp_path / "classes", JAVA_MODULE, tmp_path / "Harness.java")
    assert compiled.returncode == 0 and compiled.stderr == "", compiled.stderr
    lines = _serve(tmp_path, "java", harness, {"type": "hello", "id": 1})
    welcome = json.loads(lines[0])
    assert welcome["type"] == "welcome" and welcome["protocol"] == 3 and welcome["name"] == "mylib"
    assert welcome["dependencies"] == {"com.example:mylib": "not installed"}




@needs_java
def test_the_java_module_reads_the_version_of_a_jar_without_pom_properties_from_its_manifest(
    tmp_path: Path
) -> None:
    # Anthropic's Java SDK is a Gradle build, whose jars carry no pom.properties: google-adk-java's
    # report once named no version of the client its http verdicts rest on.
    manifests = {"titled.jar": "Implementation-Title: mylib-core\nImplementation-Version: 2.15.0\n",
                 "untitled.jar": "Implementation-Version: 9.9.9\n"}
    for name, manifest in manifests.items():
        with zipfile.ZipFile(tmp_path / name, "w") as jar:
            jar.writestr("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\n{manifest}\n")
    program = tmp_path / "Versions.java"
    program.write_text(
        "public class Versions { public static void main(String[] args) { System.err.println("
        'reactconformance.Protocol.installedVersions("com.example:mylib-core", '
        '"com.example:mylib-http")); } }',
        encoding="utf-8")
    classpath = os.pathsep.join([str(JAVA_CLASSES), *(str(tmp_path / name) for name in manifests)])
    run = subprocess.run(["java", "-cp", classpath, str(program)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[-1] == (
        "{com.example:mylib-core=2.15.0, com.example:mylib-http=not installed}")


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
    # The bundled DSPy.rb harness too: CI cannot install DSPy.rb (its registry is not reachable
    # here), so its syntax and warnings are what CI checks of it.
    for path in (ROOT / "harnesses" / "lib" / "protocol.rb", RUBY, ROOT / "tests" / "ruby" / "loop.rb",
                 ROOT / "harnesses" / "dspy-rb" / "harness.rb"):
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


@needs_go
def test_the_go_module_s_own_tests_pass() -> None:
    # messages_test.go holds MessagesEndpoint's translation to conformance/_messages_api.py's shapes.
    tested = subprocess.run(["go", "test", "-count=1", "./..."], cwd=ROOT / "harnesses" / "lib" / "go",
                            capture_output=True, text=True, timeout=600)
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-3000:]


@needs_go
@needs_java
def test_the_go_and_java_loops_get_the_same_verdicts(tmp_path: Path) -> None:
    verdicts = []
    for command in (str(GO_HARNESS), f"java -cp {JAVA_CLASSES} Harness"):
        run = suite_run(tmp_path, f"cmd:{command}", "-n", "2")
        assert run.report is not None, run.output[-3000:]
        verdicts.append({s["id"]: s["verdict"] for s in run.report["scenarios"]})
    assert verdicts[0] == verdicts[1]


@needs_java
def test_the_java_module_and_loop_compile_without_warnings(tmp_path: Path) -> None:
    compiled = _javac(tmp_path, JAVA_MODULE, *sorted(JAVA.glob("*.java")))
    assert compiled.returncode == 0 and compiled.stderr == "", compiled.stderr


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
    "java": {
        "System.out": 'System.out.println("PRINTED");',
        "fd 1": 'new java.io.FileOutputStream(java.io.FileDescriptor.out).write("PRINTED\\n".getBytes());',
        "a child inheriting stdout": 'new ProcessBuilder("echo", "PRINTED").inheritIO().start().waitFor();',
        "a logger's handler on System.out": (
            "java.util.logging.StreamHandler handler = new java.util.logging.StreamHandler(\n"
            "            System.out, new java.util.logging.SimpleFormatter());\n"
            "        handler.publish(new java.util.logging.LogRecord(\n"
            '            java.util.logging.Level.WARNING, "PRINTED"));\n'
            "        handler.flush();"),
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
    "java": ("H.java", f"java -cp {JAVA_CLASSES}", """import java.util.Map;

import reactconformance.Protocol;

public final class H implements Protocol.Handlers {{
    public Map<String, Object> hello(Map<String, Object> c) {{
        return Protocol.object("name", "printer", "version", "0");
    }}
    public Map<String, Object> build(Map<String, Object> c) {{ return Protocol.object(); }}
    public Map<String, Object> run(Map<String, Object> c) {{ return Protocol.object(); }}
    public Map<String, Object> mutateLastResult(Map<String, Object> c) {{ return Protocol.object(); }}
    public Map<String, Object> configure(Map<String, Object> c) throws Exception {{
        {prints}
        return Protocol.object();
    }}
    public static void main(String[] args) {{ Protocol.serve(new H()); }}
}}
"""),
}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
NEEDS = {"node": needs_node, "ruby": needs_ruby, "elixir": needs_elixir, "java": needs_java}
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
    module = ROOT / "harnesses" / "lib" / f"protocol.{dict(node='mjs', ruby='rb', elixir='ex').get(language)}"
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


GEMFILE_LOCK = """PATH
  remote: .
  specs:
    mylib (0.1.0)
      ruby_llm (~> 1.3)

GEM
  remote: https://gems.example/
  specs:
    faraday (2.13.1)
      faraday-net_http (>= 2.0, < 3.5)
    faraday-net_http (3.4.0)
    ruby_llm (1.3.1)
      faraday (>= 1.10.0)

PLATFORMS
  x86_64-linux

DEPENDENCIES
  mylib!
  rake (~> 13.0)
  ruby_llm (~> 1.3)

BUNDLED WITH
   2.4.22
"""
MIX_LOCK = """%{
  "jason": {:hex, :jason, "1.4.4", "b9226785", [:mix],
            [{:decimal, "~> 2.0", [hex: :decimal, repo: "hexpm", optional: true]}], "hexpm", "c5eb0cab"},
  "req": {:hex, :req, "0.5.10", "a3a063eb", [:mix],
          [{:jason, "~> 1.0", [hex: :jason, repo: "hexpm", optional: false]}], "hexpm", "8a604815"},
  "mylib": {:git, "https://git.example/mylib.git", "0123abcd", []},
}
"""
#: A harness whose welcome gives the module's `installed_versions` of LOCKFILE; beside it, the
#: library (the gem or application `mylib` 0.1.0) is loaded, as a harness loads the library it binds.
WELCOMING = {"ruby": """require '{module}'
Gem.use_paths(Gem.dir, ['GEMS', *Gem.path])
require 'mylib'
class H
  def hello(_command)
    {{ 'name' => 'mylib', 'version' => '0.1.0',
      'dependencies' => ReactConformance::Protocol.installed_versions('LOCKFILE') }}
  end
end
ReactConformance::Protocol.serve(H.new)
""", "elixir": """Code.require_file("{module}")
:ok = :application.load({{:application, :mylib, [vsn: ~c"0.1.0", description: ~c"mylib", modules: [],
                                              registered: [], applications: [:kernel, :stdlib]]}})
defmodule H do
  def hello(_command) do
    %{{"name" => "mylib", "version" => "0.1.0",
      "dependencies" => ReactConformance.Protocol.installed_versions("LOCKFILE")}}
  end
end
ReactConformance.Protocol.serve(H)
"""}


def _installed_gem(folder: Path) -> Path:
    """A gem directory holding the gem `mylib` 0.1.0."""
    (folder / "gems" / "mylib-0.1.0" / "lib").mkdir(parents=True)
    (folder / "gems" / "mylib-0.1.0" / "lib" / "mylib.rb").write_text("module Mylib; end\n")
    (folder / "specifications").mkdir()
    (folder / "specifications" / "mylib-0.1.0.gemspec").write_text(
        "Gem::Specification.new do |s|\n  s.name = 'mylib'\n  s.version = '0.1.0'\n"
        "  s.summary = 'a library'\n  s.authors = ['someone']\n  s.files = ['lib/mylib.rb']\nend\n")
    return folder


@pytest.mark.parametrize(("language", "lock", "locked"), [
    pytest.param("ruby", ("Gemfile.lock", GEMFILE_LOCK),
                 {"mylib": "0.1.0", "rake": "not installed", "ruby_llm": "1.3.1"},
                 marks=needs_ruby, id="ruby"),
    pytest.param("elixir", ("mix.lock", MIX_LOCK),
                 {"jason": "1.4.4", "req": "0.5.10", "mylib": "git 0123abcd"},
                 marks=needs_elixir, id="elixir"),
])
def test_the_welcome_names_the_dependencies_locked_or_else_loaded(
    tmp_path: Path, language: str, lock: tuple[str, str], locked: dict[str, str],
) -> None:
    """`installed_versions`, as protocol.mjs's `installedVersions`: the lockfile's packages (a
    Gemfile.lock's direct dependencies), or without one the library's packages the process loaded
    (never Ruby's default gems, Erlang/OTP's or Elixir's own applications)."""
    (tmp_path / lock[0]).write_text(lock[1], encoding="utf-8")
    gems = _installed_gem(tmp_path / "gemdir")
    hello = {"type": "hello", "id": 1, "protocol": 3}
    for lockfile, expected in ((tmp_path / lock[0], locked), (tmp_path / "absent.lock", {"mylib": "0.1.0"})):
        source = WELCOMING[language].replace("LOCKFILE", str(lockfile)).replace("GEMS", str(gems))
        folder = tmp_path / lockfile.stem
        folder.mkdir()
        first, *rest = _serve(folder, language, source, hello)
        welcome = p.decode(p.from_harness, first)
        assert isinstance(welcome, p.Welcome), first
        assert welcome.dependencies == expected
        assert [json.loads(line) for line in rest] == [{"type": "done", "id": 99}]


# What each module's rendering helpers are held to: conformance.render's and the contract's outputs.
RENDER_CASES: list[dict[str, object]] = [
    {"outputs": {"answer": "Paris"}, "inputs": {"question": "Capital of France?"},
     "signature": {"outputs": [{"name": "answer"}]}, "reply": "Paris",
     "tool": {"name": "lookup", "description": "d", "parameters": [
         {"name": "city", "type": "str", "description": "the city"},
         {"name": "count", "type": "int", "description": ""}]}},
    {"outputs": {"total": 3.5}, "inputs": {"a": [1, 2], "b": "two"},
     "signature": {"outputs": [{"name": "x"}, {"name": "y"}]}, "reply": '{"x": 1, "y": [true]}',
     "tool": {"name": "none", "description": "d", "parameters": []}},
    {"outputs": {"x": 1, "y": {"z": [None, "é"]}}, "inputs": {"only": {"k": 1}},
     "signature": {"outputs": [{"name": "x"}, {"name": "y"}]}, "reply": "not json",
     "tool": {"name": "t", "description": "d", "parameters": [
         {"name": "flags", "type": "list", "description": "f"},
         {"name": "on", "type": "bool", "description": ""},
         {"name": "opts", "type": "dict", "description": ""},
         {"name": "w", "type": "float", "description": ""}]}},
    {"outputs": {}, "inputs": {}, "signature": {"outputs": []}, "reply": "hi",
     "tool": {"name": "t", "description": "d"}},
]


def _rendered_by_python(case: dict[str, object]) -> dict[str, object]:
    from conformance.binding import FinalTurn, SignatureSpec, ToolSpec
    from conformance.render import reply_outputs, user_message

    return {
        "reply_text": FinalTurn(outputs=case["outputs"]).reply_text(),  # type: ignore[arg-type]
        "user_message": user_message(case["inputs"]),  # type: ignore[arg-type]
        "reply_outputs": reply_outputs(SignatureSpec.model_validate(case["signature"]), case["reply"]),
        "json_schema": ToolSpec.model_validate(case["tool"]).json_schema(),
    }


def _same_text(text: object, lines: bool = False) -> object:
    """A rendered text as what it says: JSON parsed, `name: value` lines as pairs (each language
    spaces its JSON its own way); text that is not JSON stays as it is, to the byte."""
    if lines and isinstance(text, str):
        pairs = (line.partition(": ") for line in text.split("\n"))
        return [(name, _same_text(value)) for name, _, value in pairs]
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


RUBY_RENDER = """
P = ReactConformance::Protocol
File.write(ARGV[0], JSON.generate(JSON.parse($stdin.read).map { |c|
  { 'reply_text' => P.reply_text(c['outputs']), 'user_message' => P.user_message(c['inputs']),
    'reply_outputs' => P.reply_outputs(c['signature'], c['reply']),
    'json_schema' => P.json_schema(c['tool']) }
}))
"""


def _ruby_render(folder: Path, out: Path) -> list[str]:
    return ["ruby", "-r", str(ROOT / "harnesses" / "lib" / "protocol.rb"), "-e", RUBY_RENDER, str(out)]


ELIXIR_RENDER = """
alias ReactConformance.Protocol, as: P
[out] = System.argv()
cases = P.decode!(IO.read(:stdio, :eof))
File.write!(out, P.encode!(for c <- cases, do: %{
  "reply_text" => P.reply_text(c["outputs"]), "user_message" => P.user_message(c["inputs"]),
  "reply_outputs" => P.reply_outputs(c["signature"], c["reply"]), "json_schema" => P.json_schema(c["tool"])}))
"""


def _elixir_render(folder: Path, out: Path) -> list[str]:
    module = ROOT / "harnesses" / "lib" / "protocol.ex"
    return ["elixir", "-r", str(module), "-e", ELIXIR_RENDER, "--", str(out)]


JAVA_RENDER = """
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import reactconformance.Protocol;

public final class Render {
    public static void main(String[] args) throws Exception {
        String cases = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        List<Object> out = new ArrayList<>();
        for (Object c : Protocol.asList(Protocol.parse(cases))) {
            var k = Protocol.asObject(c);
            out.add(Protocol.object(
                "reply_text", Protocol.replyText(Protocol.asObject(k.get("outputs"))),
                "user_message", Protocol.userMessage(Protocol.asObject(k.get("inputs"))),
                "reply_outputs", Protocol.replyOutputs(Protocol.asObject(k.get("signature")), k.get("reply")),
                "json_schema", Protocol.jsonSchema(Protocol.asObject(k.get("tool")))));
        }
        Files.writeString(Path.of(args[0]), Protocol.stringify(out));
    }
}
"""


def _java_render(folder: Path, out: Path) -> list[str]:
    (folder / "Render.java").write_text(JAVA_RENDER)
    built = _javac(folder / "classes", JAVA_MODULE, folder / "Render.java")
    assert built.returncode == 0, built.stderr
    return ["java", "-cp", str(folder / "classes"), "Render", str(out)]


RUST_RENDER = """
use react_conformance_protocol::{self as protocol, json, object, serde_json, Value};

fn main() {
    let cases: Value = serde_json::from_reader(std::io::stdin()).unwrap();
    let rendered: Vec<Value> = cases.as_array().unwrap().iter().map(|c| json!({
        "reply_text": protocol::reply_text(&object(c["outputs"].clone())),
        "user_message": protocol::user_message(&object(c["inputs"].clone())),
        "reply_outputs": protocol::reply_outputs(&c["signature"], c["reply"].as_str().unwrap()),
        "json_schema": protocol::json_schema(&c["tool"]),
    })).collect();
    let out = std::env::args().nth(1).unwrap();
    std::fs::write(out, Value::Array(rendered).to_string()).unwrap();
}
"""


def _rust_render(folder: Path, out: Path) -> list[str]:
    return [*_rust_program(folder, RUST_RENDER), str(out)]


# Each program reads RENDER_CASES on stdin and writes what its helpers rendered to the file it is given.
RENDER_PROGRAMS = {"ruby": (needs_ruby, _ruby_render), "elixir": (needs_elixir, _elixir_render),
                   "java": (needs_java, _java_render), "rust": (needs_cargo, _rust_render)}


@pytest.mark.parametrize("language", [pytest.param(name, marks=mark)
                                      for name, (mark, _) in RENDER_PROGRAMS.items()])
def test_a_modules_rendering_helpers_render_as_the_python_ones_do(tmp_path: Path, language: str) -> None:
    out = tmp_path / "rendered.json"
    command = RENDER_PROGRAMS[language][1](tmp_path, out)
    ran = subprocess.run(command, input=json.dumps(RENDER_CASES), capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    for case, rendered in zip(RENDER_CASES, json.loads(out.read_text()), strict=True):
        expected = _rendered_by_python(case)
        assert _same_text(rendered["reply_text"]) == _same_text(expected["reply_text"]), case
        several = len(case["inputs"]) > 1  # type: ignore[arg-type]
        assert (_same_text(rendered["user_message"], several)
                == _same_text(expected["user_message"], several)), case
        assert rendered["reply_outputs"] == expected["reply_outputs"], case
        assert rendered["json_schema"] == expected["json_schema"], case
