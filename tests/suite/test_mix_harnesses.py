"""The bundled Mix harnesses (harnesses/dspy-ex): how `--impl` finds their Mix project, and their code.

Their libraries are on Hex, which CI cannot reach: their reports are run by hand and say so
(tests/test_peers.py). What CI can check without the library is checked here: a missing or wrong
project is a usage error that says what to set, and the harness compiles under Debian's Elixir with
no warning but those the absent library causes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import _loader
from conformance._loader import MIX_HARNESSES

ROOT = Path(__file__).resolve().parents[2]

#: Compiles the modules of a harness script (not its top-level start-up, which needs the library)
#: after the protocol module, so that the compiler's warnings reach stderr.
_COMPILE = """
[harness, protocol] = System.argv()
Code.require_file(protocol)
{:__block__, _, forms} = Code.string_to_quoted!(File.read!(harness), file: harness)
modules = for {:defmodule, _, _} = form <- forms, do: Code.compile_quoted(form, harness)
IO.puts("compiled #{length(modules)} modules")
"""

#: The warnings only the library's absence causes: its modules, its behaviour, the callbacks of it.
_ABSENT_LIBRARY = re.compile(r"Dspy[.\w]*(/\d+)? (is undefined|does not exist)"
                             r"|\"@impl true\" for function \S+ but no behaviour specifies such callback")


@pytest.mark.parametrize(("name", "variable"), MIX_HARNESSES.items())
def test_without_its_mix_project_the_harness_is_a_usage_error_saying_what_to_set(
        name: str, variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(pytest.UsageError, match=f"set {variable} to a Mix project .*; it is not set"):
        _loader.harness_command(name)
    monkeypatch.setenv(variable, str(tmp_path))
    given = re.escape(repr(str(tmp_path)))
    with pytest.raises(pytest.UsageError, match=f"it is {given}, which has no mix.exs"):
        _loader.harness_command(name)


@pytest.mark.parametrize("name", MIX_HARNESSES)
def test_a_failing_mix_compile_is_a_usage_error_with_the_compiler_s_words(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("mix") is None:
        pytest.skip("needs Mix (Debian's elixir has it; .ci/run installs it)")
    (tmp_path / "mix.exs").write_text("this is not elixir (\n", encoding="utf-8")
    monkeypatch.setenv(MIX_HARNESSES[name], str(tmp_path))
    failed = r"compiling the Mix project .* failed \(mix compile, exit 1\)"
    with pytest.raises(pytest.UsageError, match=failed):
        _loader.harness_command(name)


@pytest.mark.parametrize("name", MIX_HARNESSES)
def test_the_harness_compiles_with_no_warning_but_the_absent_library_s(name: str, tmp_path: Path) -> None:
    if shutil.which("elixir") is None:
        pytest.skip("needs Debian's elixir (.ci/run installs it)")
    script = tmp_path / "compile.exs"
    script.write_text(_COMPILE, encoding="utf-8")
    directory = _loader.HARNESS_DIRS.get(name, (name,))[0]
    harness = ROOT / "harnesses" / directory / "harness.exs"
    protocol = ROOT / "harnesses" / "lib" / "protocol.ex"
    done = subprocess.run(["elixir", str(script), str(harness), str(protocol)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and "compiled" in done.stdout, done.stderr[-3000:]
    warnings = [line for line in done.stderr.splitlines() if line.strip().startswith("warning:")]
    # The protocol module's own fallback JSON library (jiffy) is the protocol module's test's.
    mine = [w for w in warnings if not _ABSENT_LIBRARY.search(w) and ":jiffy." not in w]
    assert mine == [], "\n".join(mine)
