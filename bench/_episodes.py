"""The scripted episode, built once per implementation: N-1 steps of `add`, then finish, then extraction.

Each library is driven directly through its own model seam (never through a conformance binding,
whose translation would be timed too) by a scripted model that hands back replies rendered ahead
of time in the format that library's adapter parses, so the model itself costs next to nothing.
`Episode.check` runs one episode and fails loudly unless the library did exactly that work, so the
benchmark never times a run that went wrong. "bare" is the floor: the loop itself, written inline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

#: The implementations, in the order the reports list them.
IMPLS = ("reference", "dspy", "udspy", "bare")
QUESTION = "What is 1 + 2?"
ANSWER = "3"
THOUGHT = "I add the numbers."
ARGS = {"a": 1, "b": 2}


class Script:
    """The pre-rendered replies of one episode, and the count of tool calls, kept on our side."""

    def __init__(self) -> None:
        self.calls = 0
        self._replies: Iterator[Any] = iter(())

    def add(self, a: int, b: int) -> int:
        """Add two integers."""
        self.calls += 1
        return a + b

    def start(self, replies: list[Any]) -> None:
        """Begin an episode: these replies, in order, and no tool call yet."""
        self.calls = 0
        self._replies = iter(replies)

    def reply(self) -> Any:
        """The next reply; running out means the library asked the model more than the episode needs."""
        reply = next(self._replies, None)
        if reply is None:
            raise RuntimeError("the library asked the model more often than the episode needs")
        return reply

    def unused(self) -> int:
        """How many replies of this episode were never asked for (and drop them)."""
        return sum(1 for _ in self._replies)


class Episode:
    """`run(n)` plays the n-step episode once: n step calls (the last one finishes), one extraction."""

    def __init__(self, script: Script, play: Callable[[], Any], answer_of: Callable[[Any], Any],
                 render: Callable[[dict[str, Any]], Any]) -> None:
        self.script = script
        self._play = play
        self._answer_of = answer_of
        step = render({"next_thought": THOUGHT, "next_tool_name": "add", "next_tool_args": ARGS})
        finish = render({"next_thought": "I have it.", "next_tool_name": "finish", "next_tool_args": {}})
        self._extract = render({"reasoning": "The trajectory has it.", "answer": ANSWER})
        self._step, self._finish = step, finish
        self._scripts: dict[int, list[Any]] = {}

    def run(self, n: int) -> Any:
        """Play the n-step episode once; what the library returned."""
        script = self._scripts.get(n)
        if script is None:
            script = self._scripts[n] = [*[self._step] * (n - 1), self._finish, self._extract]
        self.script.start(script)
        return self._play()

    def check(self, n: int) -> None:
        """Run once; raise unless the tool ran n-1 times, every reply was used, and the answer is right."""
        answer = self._answer_of(self.run(n))
        calls, unused = self.script.calls, self.script.unused()
        if calls != n - 1 or unused or str(answer) != ANSWER:
            raise RuntimeError(f"the {n}-step episode went wrong: the tool ran {calls} times (expected "
                               f"{n - 1}), {unused} scripted replies were not asked for, and the answer was "
                               f"{answer!r} (expected {ANSWER!r})")


def build(impl: str, max_steps: int) -> Episode:
    """The episode for `impl`, its agent allowed `max_steps` steps; imports only that library."""
    builders = {"reference": _reference, "dspy": _dspy, "udspy": _udspy, "bare": _bare}
    if impl not in builders:
        raise ValueError(f"unknown implementation {impl!r}; choose from {', '.join(IMPLS)}")
    return builders[impl](Script(), max_steps)


def _chat(values: dict[str, Any]) -> str:
    """DSPy-style `[[ ## field ## ]]` sections; non-strings as JSON."""
    parts = [f"[[ ## {k} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}" for k, v in values.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def _reference(script: Script, max_steps: int) -> Episode:
    import reference

    class ScriptedLM:
        def complete(self, messages: list[dict[str, str]]) -> str:
            reply: str = script.reply()
            return reply

    reference.configure(lm=ScriptedLM())
    agent = reference.ReAct("question -> answer", [script.add], max_iters=max_steps)
    # The reference's extraction asks for the outputs only: no reasoning field.
    return Episode(script, lambda: agent(question=QUESTION), lambda p: p.answer,
                   lambda v: _chat({k: x for k, x in v.items() if k != "reasoning"}))


def _dspy(script: Script, max_steps: int) -> Episode:
    import dspy
    from dspy import lm15

    class Engine:
        def complete(self, request: Any) -> Any:
            return script.reply()

        def close(self) -> None:
            """Nothing to release."""

    def response(values: dict[str, Any]) -> Any:
        message = lm15.Message.assistant([lm15.TextPart(_chat(values))])
        return lm15.Response(id=None, model="scripted", message=message, finish_reason="stop",
                             usage=lm15.Usage(input_tokens=0, output_tokens=0, total_tokens=0))

    # cache=False: otherwise dspy answers a repeated prompt from its cache and the episode is free.
    dspy.configure(lm=dspy.LM("scripted/model", engine=Engine(), cache=False))
    agent = dspy.ReAct("question -> answer", tools=[script.add], max_iters=max_steps)
    return Episode(script, lambda: agent(question=QUESTION), lambda p: p.answer, response)


def _udspy(script: Script, max_steps: int) -> Episode:
    import udspy
    from openai.types.chat import ChatCompletion
    from udspy.lm import BaseLM

    class ScriptedLM(BaseLM):  # type: ignore[misc]
        async def acomplete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
            return script.reply()

    def completion(values: dict[str, Any]) -> Any:
        # udspy's adapter asks for, and parses, one JSON object (adapter.py parse_outputs).
        return ChatCompletion.model_validate({
            "id": "scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(values)}}],
        })

    udspy.settings.configure(lm=ScriptedLM())
    agent = udspy.ReAct("question -> answer", [udspy.Tool(script.add)], max_iters=max_steps)
    return Episode(script, lambda: agent(question=QUESTION), lambda p: p["answer"], completion)


_BARE_SYSTEM = ("Answer the question. In each step, reply with one JSON object with the keys next_thought, "
                "next_tool_name (add or finish) and next_tool_args. Tools: add(a: int, b: int).")


def _bare(script: Script, max_steps: int) -> Episode:
    """The floor: format a prompt, parse a JSON reply, call the tool, append; then extract."""
    tools: dict[str, Callable[..., Any]] = {"add": script.add}

    def complete(prompt: str) -> str:
        reply: str = script.reply()
        return reply

    def play() -> dict[str, Any]:
        trajectory: list[str] = []
        for _ in range(max_steps):
            prompt = f"{_BARE_SYSTEM}\n\nquestion: {QUESTION}\n\ntrajectory:\n{''.join(trajectory)}"
            choice = json.loads(complete(prompt))
            name, args = choice["next_tool_name"], choice["next_tool_args"]
            observation = "Completed." if name == "finish" else tools[name](**args)
            trajectory.append(f"thought: {choice['next_thought']}\ntool: {name}\nargs: {json.dumps(args)}\n"
                              f"observation: {observation}\n")
            if name == "finish":
                break
        prompt = f"Give the answer.\n\nquestion: {QUESTION}\n\ntrajectory:\n{''.join(trajectory)}"
        outputs: dict[str, Any] = json.loads(complete(prompt))
        return outputs

    return Episode(script, play, lambda outputs: outputs["answer"], json.dumps)
