"""docs/benchmarks.{json,md,png} from one run's Results."""

from __future__ import annotations

from pathlib import Path

from bench._results import LABELS, Results, Spread


def write(results: Results, docs: Path) -> None:
    """benchmarks.json, benchmarks.png and benchmarks.md in `docs`."""
    from bench._plot import plot  # needs matplotlib (the bench extra), which the page does not

    (docs / "benchmarks.json").write_text(results.model_dump_json(indent=1) + "\n", encoding="utf-8")
    plot(results, docs / "benchmarks.png")
    (docs / "benchmarks.md").write_text(markdown(results), encoding="utf-8")


#: Episode time T(50)/T(10) above this is growth faster than linear (linear: 5, less with a fixed
#: cost per episode); the same limit as the reference's own target.
SUPERLINEAR = 5.5
#: Why an implementation's per-step cost grows with N: what its loop redoes over the whole history
#: on every step, and where (found by profiling N=10 against N=50, then reading the source).
GROWTH_CAUSES = {
    "dspy": "every step, `ReAct._format_trajectory` (dspy/predict/react.py) builds a new `dspy.Signature` "
            "from the trajectory's keys, four input fields per step so far, so each step creates a "
            "pydantic model class (`make_signature`, then pydantic's `create_model`) with 4(k-1) fields "
            "and its schema, and the ChatAdapter re-serialises every field's value "
            "(`format_user_message_content`, dspy/adapters/chat_adapter.py).",
    "openai-agents": "every turn, `execute_tools_and_side_effects` (agents/run_internal/turn_resolution.py) "
                     "hands every run item so far to `_register_tool_call_items` and "
                     "`_dedupe_processed_response_invocations` (agents/run_internal/tool_planning.py), which "
                     "recompute the identity of every earlier tool call and output, normalising and "
                     "fingerprinting its arguments (`tool_invocation_identity`, agents/_tool_invocation.py), "
                     "to refuse a reused call id.",
    "pydantic-ai": "before every request, `_make_request` (pydantic_ai/_agent_graph.py) runs "
                   "`Model.prepare_messages` (pydantic_ai/models/__init__.py) over the whole message history "
                   "(translating retry parts, noting text that looks like a framework frame in "
                   "`_note_lookalike_frames`, reordering each request's tool results, replacing unsupported "
                   "files), and `_prepare_attempt` re-reads the history for instruction changes "
                   "(pydantic_ai/_instructions.py) and cleans it (`_clean_message_history`, "
                   "pydantic_ai/messages.py).",
    "langchain": "each model call re-normalises the whole message list (`_patch_invalid_tool_calls` in "
                 "langchain/agents/factory.py, `convert_to_messages` and `_normalize_messages` in "
                 "langchain_core), small beside LangGraph's fixed cost per super-step.",
    "smolagents": "every step, `ToolCallingAgent._step_stream` calls `write_memory_to_messages` "
                  "(smolagents/agents.py), which rebuilds the messages of every step in memory "
                  "(`ActionStep.to_messages`, smolagents/memory.py, re-serialising each tool call with "
                  "`make_json_serializable`); each `run` also compiles its system-prompt Jinja template "
                  "afresh (`populate_template`, smolagents/agents.py), a fixed cost of about 2 ms that "
                  "weighs on short episodes.",
    "crewai": "every model call, `BaseLLM._emit_call_started_event` and `_emit_call_completed_event` "
              "(crewai/llms/base_llm.py) serialise the whole conversation so far into an event for the "
              "global event bus, value by value (`to_serializable`, crewai/utilities/serialization.py), "
              "and the `openai` client transforms the whole message list of each request again "
              "(`_transform_recursive`, openai/_utils/_transform.py).",
    "bare": "every step joins the whole trajectory so far into its prompt (`''.join(trajectory)`), as any "
            "ReAct must show the model its history: timed alone, about 0.2 µs more per step at N=50 than at "
            "N=10 on the machine of 2026-11-23; a ratio beyond that is to be read against the bare loop's "
            "min-max spread in the tables above.",
}


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _notes(r: Results) -> list[str]:
    """Why a missed target is missed, from this run's own figures."""
    missed = [t.name for t in r.targets if not t.met]
    notes = []
    if any(name.endswith("5x the bare loop") for name in missed):
        notes.append(
            "- Per step, the reference does what the bare loop skips, and what the requirements ask for: "
            "it checks the inputs, formats the step prompt from a signature, parses the reply field by "
            "field with typed coercion, checks the tool name against the allowed set, guards the tool "
            "args' size and depth, validates them against the tool's pydantic schema, and keeps a typed "
            "step record. The loop itself stays linear (see T(50)/T(10)).")
    if any(name.startswith("import reference") for name in missed) and "pydantic" in r.import_ms:
        floor, udspy = r.import_ms["pydantic"].median, r.import_ms.get("udspy")
        share = f", {floor / udspy.median:.0%} of `import udspy`" if udspy else ""
        notes.append(
            f"- Importing pydantic and defining one model takes {floor:.0f} ms here{share}: a third of "
            "udspy is out of reach for any package whose public data types (Step, ToolCall, ...) are "
            "pydantic models defined at import. The reference imports httpx only when an LM is built, "
            "and asyncio only on the first async call.")
    suite = r.suite_s.get("reference")
    if suite is not None and any(name.startswith("full suite") for name in missed):
        session = r.session_s["reference"].median
        notes.append(
            f"- Of the {suite.median:.1f} s wall time against the reference, pytest's session (collecting "
            f"and running the scenarios) is {session:.1f} s; the rest is the interpreter's start and the "
            "imports and plugin loading of pytest, pytest-bdd, hypothesis and the conformance plugin.")
    own = r.suite_own
    if own is not None and any(name.startswith("the suite ") for name in missed):
        parallel = any(name.startswith("the suite with -n 2") for name in missed)
        notes.append(
            f"- A serial run is {own.startup_s.median:.2f} s of start-up, {own.scenarios_s.median:.2f} s "
            f"of scenarios and {own.teardown_s.median:.2f} s after them (medians)"
            + ("; `-n 2` pays the start-up three times (the controller, then two workers starting "
               "together) to share the scenarios between two" if parallel else "")
            + f". CPU time, less disturbed by the machine's other work: {own.serial_cpu_s.median:.2f} s "
            f"serial, {own.parallel_cpu_s.median:.2f} s with `-n 2`.")
    return ["", "## Missed targets", "", *notes] if notes else []


def _suite_own(r: Results) -> list[str]:
    own = r.suite_own
    if own is None:
        return []

    def row(name: str, s: Spread) -> str:
        return f"| {name} | {s.median:.2f} | {s.min:.2f}-{s.max:.2f} |"

    # The three phases that follow one another; their medians need not add up to the median run.
    total = own.startup_s.median + own.scenarios_s.median + own.teardown_s.median
    phases = [("start-up: the interpreter, imports, plugins, loading the binding", own.plugins_s),
              (f"start-up: collecting the {own.scenarios} scenarios", own.collection_s),
              ("**start-up in all, to the first scenario**", own.startup_s),
              ("**the scenarios, first start to last end**", own.scenarios_s),
              ("**after the last scenario: reports, summary, exit**", own.teardown_s)]
    lines = ["", "## The suite's own time", "",
             "Against the reference: `python -m pytest --impl reference -q -p no:cacheprovider`, "
             f"{own.runs} serial runs", f"and {own.runs} with `-n 2`, alternating, after one untimed run "
             "of each (bytecode cached, as after", "an install). Wall time of the whole process, and CPU "
             "time of it and every process it started", "(xdist's workers). The serial runs also note "
             "when start-up ended and when each scenario ran", "(`bench/_suite_clock.py`).", "",
             "| run | median | min-max |", "|---|---:|---:|",
             row("serial, wall s", own.serial_wall_s), row("serial, CPU s", own.serial_cpu_s),
             row("`-n 2`, wall s", own.parallel_wall_s), row("`-n 2`, CPU s", own.parallel_cpu_s),
             f"| **`-n 2` speed-up**: serial wall over `-n 2` wall, medians | **{own.speedup:.2f}x** | |",
             "", "Where a serial run's wall time goes (medians; the shares are of the sum of the three "
             f"phases in bold, {total:.2f} s):", "",
             "| phase | s | min-max | share |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {s.median:.2f} | {s.min:.2f}-{s.max:.2f} | {s.median / total:.0%} |"
              for name, s in phases]
    median, cpu = own.scenario_median_ms.median, own.scenario_cpu_median_ms.median
    lines += ["", f"Per scenario ({own.scenarios} scenarios, setup to teardown): the median one takes "
              f"{median:.1f} ms of wall time", f"({cpu:.1f} ms of CPU), the mean "
              f"{own.scenario_mean_ms.median:.1f} ms. The slowest:", "",
              "| scenario | wall ms, median | min-max |", "|---|---:|---:|"]
    lines += [f"| `{name}` | {_fmt(s.median)} | {_fmt(s.min)}-{_fmt(s.max)} |"
              for name, s in own.slowest_ms.items()]
    return lines


def growth(r: Results) -> dict[str, float]:
    """T(50)/T(10) of each implementation: the episode-time ratio, from the per-step medians."""
    if 10 not in r.steps or 50 not in r.steps:
        return {}
    return {i: 5 * r.median_us(i, 50) / r.median_us(i, 10) for i in r.per_step_us}


def _growth(r: Results) -> list[str]:
    ratios = growth(r)
    if not ratios:
        return []
    lines = ["", "## Growth: episode time T(50)/T(10)", "",
             "Five times the per-step median at N=50 over the one at N=10: 5 if a step costs the same",
             "however long the episode, less where a fixed cost per episode (building the run, the",
             "extraction call) is spread over more steps, more where each step redoes work over the whole",
             "history so far.", "",
             "| implementation | T(50)/T(10) |", "|---|---:|"]
    lines += [f"| {LABELS.get(i, i)} | {x:.2f}{' **(faster than linear)**' if x > SUPERLINEAR else ''} |"
              for i, x in ratios.items()]
    fast = [i for i, x in ratios.items() if x > SUPERLINEAR]
    if fast:
        lines += ["", f"Above {SUPERLINEAR} (faster than linear), and why:", ""]
        lines += [f"- **{LABELS.get(i, i)}** ({ratios[i]:.1f}): "
                  + GROWTH_CAUSES.get(i, "not explained yet: profile N=10 against N=50.") for i in fast]
    near = [i for i, x in ratios.items() if x <= SUPERLINEAR and i in GROWTH_CAUSES]
    if near:
        lines += ["", f"Not above {SUPERLINEAR} here, though each step redoes some work over the history:",
                  ""]
        lines += [f"- **{LABELS.get(i, i)}** ({ratios[i]:.1f}): {GROWTH_CAUSES[i]}" for i in near]
    return lines


def _table(results: Results, per_step: dict[str, dict[str, Spread]]) -> list[str]:
    impls = list(per_step)
    lines = ["| N | " + " | ".join(LABELS.get(i, i) for i in impls) + " |", "|---:|" + "---:|" * len(impls)]
    for n in results.steps:
        spreads = [per_step[i][str(n)] for i in impls]
        cells = [f"{_fmt(s.median)} ({_fmt(s.min)}-{_fmt(s.max)})" for s in spreads]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def markdown(results: Results) -> str:
    """The page: method, machine, plot, tables, targets, why any was missed, how to reproduce."""
    r, m = results, results.machine
    impls = list(r.per_step_us)
    lines = [
        "# Benchmarks",
        "",
        "What one step of a ReAct loop costs, without the model: each implementation plays a scripted",
        "episode of N steps, N-1 calls of a trivial `add` tool and then the end of the run, driven",
        "directly through its own model seam (not through a conformance binding) by a scripted model",
        "whose replies are rendered ahead of time in the format its loop parses, so the model costs next",
        "to nothing. The DSPy-style loops (reference, dspy, udspy, the bare loop) end with a `finish`",
        "step and then the extraction call: N+1 model calls. The native tool-calling loops end their own",
        "way, a reply with no tool call (smolagents: a call of its `final_answer` tool): N model calls.",
        "Before timing, every episode is run once and checked: the tool ran N-1 times, every scripted",
        "reply was asked for and no more, the answer is right. `bare loop` is the floor: a loop written",
        "inline in the benchmark that formats a prompt, parses a JSON reply, calls the tool and appends",
        "to the trajectory. dspy runs with `cache=False`, so no repeated episode is answered from its",
        "cache; no implementation caches replies (the reference keeps each signature's system message,",
        "which does not change from step to step).",
        "",
        "The seams: dspy, an engine behind `dspy.LM(engine=..., cache=False)`; udspy, a `BaseLM`",
        "subclass; langchain, `create_agent` over a `BaseChatModel` subclass that binds tools as the",
        "provider integrations do and returns ready `AIMessage`s; openai-agents, `Runner.run_sync` over a",
        "subclass of the SDK's own `Model` interface returning ready `ModelResponse`s (the cheapest seam",
        "that keeps the Runner's loop: `OpenAIChatCompletionsModel` over an in-memory transport would add",
        "the chat-completions converter, the OpenAI client and httpx to every step); pydantic-ai, its own",
        "`FunctionModel` over an async function (a sync one runs in a thread pool) whose responses carry",
        "their usage, as a provider's do (without it FunctionModel estimates usage over every message);",
        "smolagents, `ToolCallingAgent` over a `Model` subclass returning ready `ChatMessage`s;",
        "llama-index, `FunctionAgent` awaited under `asyncio.run` over llama-index-core's own",
        "`MockFunctionCallingLLM`, whose response generator returns ready `ChatMessage`s (with",
        "`max_iterations=N+1`: FunctionAgent never acts on its `max_iterations`-th reply); haystack,",
        "`Agent` over a `@component` chat generator returning ready `ChatMessage`s; semantic-kernel,",
        "`ChatCompletionAgent.get_response` under `asyncio.run` over its OpenAI connector, whose",
        "`AsyncOpenAI` client's in-memory transport returns ready response bodies (the binding's seam:",
        "its steps include the connector, the OpenAI client and httpx); autogen, `AssistantAgent.run`",
        "under `asyncio.run` (reset before each episode) over autogen-ext's OpenAI client on such a",
        "transport; google-adk, `Runner.run` of an `LlmAgent` over a `BaseLlm` subclass yielding ready",
        "`LlmResponse`s, in its own environment. Each library",
        "parses, validates and runs the tool call itself.",
        "",
        "Figures taken on a **shared 2-core machine**, where other work may have been running",
        f"(load average {', '.join(map(str, m.load_average))} at the start). Each implementation runs",
        f"in a process of its own: {r.warmups} warm-up rounds, then {r.repetitions} repetitions in which",
        "every implementation takes its turn at each N, in a rotating order, each turn a batch of",
        "episodes lasting at least tens of milliseconds. The tables give the median, then the min-max",
        "spread over the repetitions, in **CPU time** of the implementation's process (all its",
        "threads): the loop is CPU-bound, and",
        "CPU time is much less disturbed than wall time by the other work on the machine. Wall-time",
        "medians are given below and in the JSON; the ratios between implementations, all from this",
        "one run, are what to read.",
        "",
        f"Machine: {m.cpu}, {m.cores} cores, {m.platform}, Python {m.python}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in r.versions.items()) + ".",
        "",
        "![µs per step against N](benchmarks.png)",
        "",
        "## Microseconds per step, CPU time (median, min-max)",
        "",
        *_table(r, r.per_step_us),
    ]
    if "reference" in impls and len(impls) > 1:
        others = [i for i in impls if i != "reference"]
        lines += ["", "Each median over the reference's (above 1: slower than the reference):", "",
                  "| N | " + " | ".join(LABELS.get(i, i) for i in others) + " |",
                  "|---:|" + "---:|" * len(others)]
        for n in r.steps:
            ref = r.median_us("reference", n)
            lines.append(f"| {n} | " + " | ".join(f"{r.median_us(i, n) / ref:.2f}x" for i in others) + " |")
    lines += _growth(r)
    lines += ["", "## Microseconds per step, wall time (median, min-max)", "",
              "Inflated, and spread, by whatever else the machine was running at that moment.", "",
              *_table(r, r.per_step_wall_us)]
    lines += ["", "## Import time", "",
              "CPU time of `import NAME` inside a fresh interpreter (its start excluded), runs interleaved,",
              "with bytecode cached as after a normal install. `pydantic` is `import pydantic` and one",
              "model class: the floor of any package whose data types are pydantic models defined at",
              "import.", "",
              "| import | median ms | min-max ms |", "|---|---:|---:|"]
    lines += [f"| {p} | {_fmt(s.median)} | {_fmt(s.min)}-{_fmt(s.max)} |" for p, s in r.import_ms.items()]
    if r.suite_s:
        lines += ["", "## Conformance suite time", "",
                  "`python -m pytest --impl NAME -q -p no:cacheprovider`, serial: the wall time of the",
                  "whole process, and the session time pytest reports (without the interpreter's start,",
                  "the imports and the plugins' loading).", "",
                  "| binding | wall s, median | min-max | session s, median | min-max |",
                  "|---|---:|---:|---:|---:|"]
        lines += [f"| {b} | {s.median:.1f} | {s.min:.1f}-{s.max:.1f} | {r.session_s[b].median:.1f} | "
                  f"{r.session_s[b].min:.1f}-{r.session_s[b].max:.1f} |" for b, s in r.suite_s.items()]
    lines += _suite_own(r)
    lines += ["", "## Targets (issues 7 and 18), from this run", "",
              "| target | value | limit | |", "|---|---:|---:|---|"]
    lines += [f"| {t.name} | {t.value:.3g} | {t.limit:.3g} | {'met' if t.met else '**missed**'} |"
              for t in r.targets]
    lines += _notes(r)
    lines += ["", "## Reproduce", "", "```sh",
              "nox -s bench                          # this page, benchmarks.json and benchmarks.png",
              "nox -s bench -- --quick results.json  # under a minute: the JSON only",
              "python -m bench --help                # in a checkout with .[bench,peers] installed",
              "```", "",
              "`docs/benchmarks.json` holds every sample (µs per step, per implementation and N, in CPU",
              "and in wall time), the import and suite times, and the targets as checked. The code is in",
              "`bench/` (not shipped in the wheel). Timings are never test assertions:",
              "`tests/test_bench.py` only checks that the quick path runs end to end and writes valid JSON.",
              ""]
    return "\n".join(lines)
