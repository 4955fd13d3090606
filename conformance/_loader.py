"""Find a binding by entry-point name, `module:attr`, `cmd:<command line>` or bundled harness name."""

from __future__ import annotations

import importlib
import inspect
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from conformance import _build, _guard, _java_harness, _ruby_harness, _rust_harness
from conformance._known_failures import PLACEHOLDER, placeholders
from conformance.binding import CAPABILITIES, CONTRACT_VERSION, V1_CAPABILITIES, Binding

GROUP = "react_conformance.bindings"
#: The prefix that selects a harness process: `--impl cmd:"node harness.mjs"`.
CMD = "cmd:"
#: The bundled Node harnesses, by name: each directory holds `harness.mjs` and its lock file.
NODE_HARNESSES = ("dspy-ts", "ax", "ai", "openai-agents-js", "openai-agents-js+tool-not-found",
                  "langgraph-js", "mastra", "mastra+retries", "openai-runtools", "strands-ts",
                  "anthropic-ts", "llamaindex-ts", "genkit", "adk-ts")
#: The bundled Go harnesses, by name: each directory is a Go module (`harness.go`, go.mod, go.sum).
GO_HARNESSES = ("langchaingo", "eino", "genkit-go", "anthropic-go", "adk-go", "adk-go+database")
#: The bundled Java harnesses, by name: each directory holds its `pom.xml` and its sources (koog's
#: are Kotlin), built on first use (conformance/_java_harness.py).
JAVA_HARNESSES = ("langchain4j", "spring-ai", "google-adk-java", "google-adk-java+resumable", "koog")
#: The bundled Rust harnesses, by name: each directory is a cargo package (Cargo.toml, Cargo.lock),
#: built on first use (conformance/_rust_harness.py).
RUST_HARNESSES = ("rig",)
#: The bundled Ruby harnesses, by name: each directory holds `harness.rb`, which Ruby runs with the
#: library on its load path (conformance/_ruby_harness.py).
RUBY_HARNESSES = ("dspy-rb",)
#: The bundled Mix harnesses, by name, each with the environment variable that names the Mix project
#: it runs in (one that has the library among its dependencies, or the library's own): their
#: libraries are on Hex, which the suite does not install from.
MIX_HARNESSES = {"dspy-ex": "DSPY_EX_PROJECT", "dspy-ex+chat-adapter": "DSPY_EX_PROJECT"}
#: Every bundled harness, by name.
HARNESSES = (NODE_HARNESSES + GO_HARNESSES + JAVA_HARNESSES + RUST_HARNESSES + RUBY_HARNESSES
             + tuple(MIX_HARNESSES))
#: A bundled harness whose name is not its directory's: (directory, arguments of harness.mjs).
#: `openai-agents-js` (the JavaScript SDK) lives in harnesses/openai-agents/, as `openai-agents` names
#: the Python binding; `+tool-not-found` is the same harness with the SDK's documented opt-in, as
#: `mastra+retries` is Mastra's harness with the Agent's documented `maxRetries`, `adk-go+database`
#: ADK Go's harness with ADK's documented database session store, `google-adk-java+resumable`
#: ADK for Java's harness with the App's documented ResumabilityConfig, and `dspy-ex+chat-adapter`
#: dspy.ex's with `Dspy.configure(adapter: ChatAdapter)`.
HARNESS_DIRS = {
    "openai-agents-js": ("openai-agents",),
    "openai-agents-js+tool-not-found": ("openai-agents", "--tool-not-found"),
    "mastra+retries": ("mastra", "--retries"),
    "adk-go+database": ("adk-go", "--database"),
    "google-adk-java+resumable": ("google-adk-java", "--resumable"),
    "dspy-ex+chat-adapter": ("dspy-ex", "--chat-adapter"),
}
#: Where the bundled harnesses live in a checkout (they are not part of the wheel).
HARNESS_DIR = Path(__file__).resolve().parent.parent / "harnesses"


def available() -> list[str]:
    """The names registered in the `react_conformance.bindings` entry-point group, and the bundled
    harnesses."""
    return sorted({ep.name for ep in entry_points(group=GROUP)} | set(HARNESSES))


def harness_command(name: str) -> str:
    """The `cmd:` command line of the bundled harness `name`, its Node packages installed (or its Go
    program or Java harness built) first."""
    directory_name, *arguments = HARNESS_DIRS.get(name, (name,))
    directory = HARNESS_DIR / directory_name
    if name in GO_HARNESSES:
        return shlex.join([str(_go_build(name, directory)), *arguments])
    if name in JAVA_HARNESSES:
        return _java_harness.command(name, directory, arguments)
    if name in RUBY_HARNESSES:
        return _ruby_harness.command(name, directory)
    if name in MIX_HARNESSES:
        return _mix_command(name, directory / "harness.exs", MIX_HARNESSES[name], arguments)
    if name in RUST_HARNESSES:
        return _rust_harness.command(name, directory)
    if not (directory / "harness.mjs").is_file():
        raise pytest.UsageError(
            f"--impl {name}: the bundled harness is not here ({directory} has no harness.mjs). The "
            "Node harnesses ship with a checkout of react-conformance, not with the wheel."
        )
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise pytest.UsageError(f"--impl {name}: the harness needs Node.js 20 or later, with npm, on PATH.")
    _install(name, directory, npm)
    return shlex.join([node, str(directory / "harness.mjs"), *arguments])


def _install(name: str, directory: Path, npm: str) -> None:
    """Install the harness's locked packages, once: one-line use on a fresh machine, as pip is.

    `npm install --no-save` installs the versions of the committed lock file and leaves it as it
    is. (`npm ci` would be the usual choice, but refuses dspy.ts's lock file: dspy.ts names an
    optional dependency, @mlflow/tracking, that the registry does not have.)
    """
    installed = directory / "node_modules" / ".package-lock.json"  # npm writes it last
    if installed.is_file():
        return
    import fcntl  # here, not at the top: the plugin must still load where fcntl does not exist

    # Two runs at once (xdist, parallel tests) must not install into the same directory together.
    with open(directory / ".npm-ci.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed.is_file():
            return
        command = [npm, "install", "--no-save", "--prefix", str(directory)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        # npm states the cause first and its usage text after it.
        errors = [line for line in done.stderr.splitlines() if not line.startswith("npm warn")]
        raise pytest.UsageError(
            f"--impl {name}: installing the harness's Node packages failed ({shlex.join(command)}, "
            f"exit {done.returncode}):\n  " + "\n  ".join(errors[:12])
        )


def _go_build(name: str, directory: Path) -> Path:
    """The harness's program, built by `go build` from its pinned go.mod and go.sum (the go command
    fetches the modules on the first build and rebuilds only what changed after it)."""
    go = _build.require(name, directory, "go.mod", "Go", "go", "Go 1.24 or later")
    program = directory / ".bin" / f"{name}-harness"
    command = [go, "build", "-mod=readonly", "-o", str(program), "."]
    done = _build.locked_run(directory / ".bin" / ".lock", command, cwd=directory)
    if done.returncode != 0:
        raise pytest.UsageError(
            f"--impl {name}: building the Go harness failed ({shlex.join(command)} in {directory}, "
            f"exit {done.returncode}):\n  " + "\n  ".join(done.stderr.splitlines()[:12])
        )
    return program


def _mix_command(name: str, harness: Path, variable: str, arguments: Iterable[str] = ()) -> str:
    """The command that runs the Mix harness `harness` in the Mix project `$variable` names, the
    project compiled first (`mix compile` writes its progress on stdout, where the suite reads only
    protocol messages, so the harness runs with `--no-compile`)."""
    project = os.environ.get(variable, "")
    if not project or not (Path(project) / "mix.exs").is_file():
        given = f"it is {project!r}, which has no mix.exs" if project else "it is not set"
        raise pytest.UsageError(
            f"--impl {name}: set {variable} to a Mix project that has the library among its "
            f"dependencies (or the library's own checkout); {given}. See "
            f"harnesses/{harness.parent.name}/README.md."
        )
    mix = shutil.which("mix")
    if mix is None:
        raise pytest.UsageError(f"--impl {name}: the harness needs Elixir's mix on PATH.")
    done = subprocess.run([mix, "compile"], cwd=project, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = (done.stderr or done.stdout).splitlines()
        raise pytest.UsageError(
            f"--impl {name}: compiling the Mix project {project} failed (mix compile, exit "
            f"{done.returncode}):\n  " + "\n  ".join(output[-12:])
        )
    # `mix run` runs in the project's directory: `cd` there, then the harness by its absolute path.
    return shlex.join(["sh", "-c", 'cd "$0" && exec "$@"', project, mix, "run", "--no-compile",
                       str(harness), *arguments])


def load_binding(
    name: str,
    *,
    timeout: float = _guard.DEFAULT_TIMEOUT,
    transcript: Path | None = None,
    isolate: bool = False,
) -> Binding:
    """Instantiate the binding `name`; a bad name is a usage error that lists what exists.

    `timeout` and `transcript` apply to harness processes (`cmd:` and the bundled harnesses). With
    `isolate`, a Python binding runs in a worker process (`conformance._isolate`) behind the
    process binding, so a crash or `os._exit` in it costs one scenario, not the run.
    """
    if name in HARNESSES:
        return _process(name, harness_command(name), timeout * _HARNESS_SHARE, transcript)
    if name.startswith(CMD):
        return _process(name, name.removeprefix(CMD), timeout * _HARNESS_SHARE, transcript)
    if isolate:
        # The worker guards each operation with the suite's own limit, as `_guard` does in
        # process: a library that hangs fails its scenario as hung (its reply says so, if it comes
        # before the suite's guard fires), and the next operation runs on a fresh thread. The
        # process binding waits longer for a reply: the worker is not a stalled harness.
        worker = shlex.join([sys.executable, "-m", "conformance._isolate", name,
                             "--timeout", f"{timeout:g}"])
        return _process(name, worker, timeout * 1.2 + 5, transcript)
    target: object
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            target = getattr(_import(name, module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise pytest.UsageError(
                f"--impl {name}: could not load {attr!r} from module {module_name!r} ({exc})."
            ) from exc
    else:
        matches = _unique(ep for ep in entry_points(group=GROUP) if ep.name == name)
        if not matches:
            names = ", ".join(available()) or "(none installed)"
            raise pytest.UsageError(
                f"--impl {name}: no binding of that name. Available bindings: {names}. "
                f"Register one under the entry-point group {GROUP!r}, pass module:attr, or run a "
                f"harness process with cmd:<command line>."
            )
        if len(matches) > 1:
            sources = "; ".join(f"{_source(ep)} registers {ep.value}" for ep in matches)
            raise pytest.UsageError(
                f"--impl {name}: {len(matches)} installed packages register a binding of that name "
                f"({sources}). Uninstall one, or pass the one you mean as module:attr."
            )
        try:
            _import(name, matches[0].module)  # a module that exits or raises is named first
            target = matches[0].load()
        except ImportError as exc:
            raise pytest.UsageError(
                f"--impl {name}: the binding is registered but its library is not installed "
                f"({exc}). Install the matching extra, e.g. pip install 'react-conformance[{name}]'."
            ) from exc
    binding = _instantiate(name, target) if isinstance(target, type) else target
    if not isinstance(binding, Binding):
        raise pytest.UsageError(
            f"--impl {name}: {target!r} is not a conformance.Binding (subclass it)."
        )
    return _checked(name, binding)


def _import(name: str, module_name: str) -> object:
    """The module `module_name`; one that exits or raises while it is imported is a usage error
    naming it, not an INTERNALERROR (a missing module stays an ImportError for the caller to word)."""
    try:
        return importlib.import_module(module_name)
    except ImportError:
        raise
    except SystemExit as exc:
        raise pytest.UsageError(
            f"--impl {name}: module {module_name!r} called sys.exit({exc.code!r}) while it was "
            "imported. A binding module must import without exiting; move that code into build()."
        ) from exc
    except Exception as exc:
        raise pytest.UsageError(
            f"--impl {name}: module {module_name!r} raised {type(exc).__name__}: {exc} while it was "
            "imported. Fix the module, or move the code that raised into build()."
        ) from exc


def _unique(found: Iterable[EntryPoint]) -> list[EntryPoint]:
    """The entry points, one per distinct target: the same package found twice on the path (an
    editable install and a checkout, say) registers one binding, not two."""
    seen: dict[str, EntryPoint] = {}
    for ep in found:
        seen.setdefault(ep.value, ep)
    return list(seen.values())


def _source(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unnamed package"


def _instantiate(name: str, cls: type) -> object:
    """An instance of the binding class `cls`; one that cannot be made is a usage error."""
    if issubclass(cls, Binding) and inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise pytest.UsageError(
            f"--impl {name}: the binding class {cls.__module__}.{cls.__qualname__} is abstract: "
            f"it does not implement {missing}. Every binding implements version, build, run and "
            "mutate_last_result (see docs/writing-a-binding.md)."
        )
    try:
        return cls()
    except Exception as exc:
        raise pytest.UsageError(
            f"--impl {name}: the binding class {cls.__module__}.{cls.__qualname__} could not be "
            f"created: its constructor raised {type(exc).__name__}: {exc}"
        ) from exc


def _checked(name: str, binding: Binding) -> Binding:
    """The binding, if what it declares makes sense for the contract version it was written for."""
    version, claimed = binding.contract_version, set(binding.capabilities)
    if version not in range(1, CONTRACT_VERSION + 1):
        raise pytest.UsageError(
            f"--impl {name}: the binding declares contract_version = {version!r}; this "
            f"react-conformance speaks contract versions 1 to {CONTRACT_VERSION}. Upgrade "
            "react-conformance, or declare the version the binding was written against."
        )
    if version == 1:
        newer = sorted(claimed & (CAPABILITIES - set(V1_CAPABILITIES)))
        if newer:
            raise pytest.UsageError(
                f"--impl {name}: the binding claims {newer}, capabilities of contract version "
                f"{CONTRACT_VERSION}, but declares no contract_version (so version 1). Add "
                f"`contract_version = {CONTRACT_VERSION}` to the binding class; see \"What changed\" "
                "in docs/writing-a-binding.md."
            )
        known: set[str] = set(V1_CAPABILITIES)
    else:
        older = sorted(claimed & (set(V1_CAPABILITIES) - CAPABILITIES))
        if older:
            raise pytest.UsageError(
                f"--impl {name}: the binding declares contract_version = {version} but claims "
                f"{older}, capabilities of contract version 1: tool-errors, tool-args and "
                "stop-reason are core now (drop them), adapter-override is part of signature, and "
                "human-in-the-loop is ask-user and tool-approval. See \"What changed\" in "
                "docs/writing-a-binding.md."
            )
        known = set(CAPABILITIES)
    unknown = claimed - known
    if unknown:
        raise pytest.UsageError(
            f"--impl {name}: unknown capabilities {sorted(unknown)}; contract version {version} "
            f"knows {sorted(known)}."
        )
    reasons = dict(binding.not_claimed)
    core = sorted(set(reasons) - CAPABILITIES)
    if core:
        raise pytest.UsageError(
            f"--impl {name}: not_claimed names {core}, which are not optional capabilities: core "
            f"requirements cannot be unclaimed (the optional ones are {sorted(CAPABILITIES)})."
        )
    both = sorted(set(reasons) & claimed)
    if both:
        raise pytest.UsageError(
            f"--impl {name}: {both} are both claimed and listed in not_claimed; keep one."
        )
    for attribute in ("not_claimed", "known_failures", "fuzz_known_failures", "cannot_express"):
        listed: dict[str, object] = dict(getattr(binding, attribute, {}))
        blank = sorted(k for k, reason in listed.items() if not isinstance(reason, str) or not reason.strip())
        if blank:
            raise pytest.UsageError(
                f"--impl {name}: {attribute} gives no reason for {blank}: each entry needs a "
                "one-line reason, a non-empty string."
            )
    twice = sorted(set(getattr(binding, "cannot_express", {})) & set(binding.known_failures))
    if twice:
        raise pytest.UsageError(
            f"--impl {name}: {twice} are listed both in cannot_express and in known_failures: a "
            "scenario the library cannot express is not run, so it cannot fail; keep one.")
    for attribute in ("known_failures", "fuzz_known_failures"):
        unsaid = placeholders(dict(getattr(binding, attribute)))
        if unsaid:
            raise pytest.UsageError(
                f"--impl {name}: {attribute} still gives the placeholder reason {PLACEHOLDER!r} "
                f"for {unsaid}: replace it with what the library does there and where in its "
                "source (the reports show it).")
    return binding


#: A harness's share of the suite's time limit: a stalled harness is reported by the process
#: binding, with its stderr, as errored, before the suite's guard would report a hung scenario.
_HARNESS_SHARE = 0.9


def _process(name: str, command: str, limit: float, transcript: Path | None) -> Binding:
    """The process binding of `command`, each of whose commands may take `limit` seconds."""
    from conformance._process import HarnessError, process_binding

    try:
        binding = process_binding(command, timeout=limit, transcript=transcript)
    except HarnessError as exc:
        raise pytest.UsageError(f"--impl {name}: {exc}") from exc
    return _checked(name, binding)
