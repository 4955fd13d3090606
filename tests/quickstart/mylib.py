"""A tiny native tool-calling loop over the chat-completions API, written as a third-party library
would be (tests/test_quickstart.py copies it into a fresh project): it checks arguments against the
declared types, and on its cap makes one last call with its tools declared and their use forbidden
(`tool_choice: "none"`) to write the answer."""
import inspect
import json
from dataclasses import dataclass, field


@dataclass
class StepRecord:
    tool: str
    args: object
    observation: object


@dataclass
class Result:
    answer: str
    steps: list = field(default_factory=list)
    capped: bool = False
    rounds: int = 0


_TYPES = {int: "integer", str: "string", float: "number", bool: "boolean", list: "array", dict: "object"}
_PY = {int: int, str: str, float: (int, float), bool: bool, list: list, dict: dict}


class Agent:
    def __init__(self, instructions, tools, max_steps, http_client, base_url):
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.instructions, self.max_steps = instructions, max_steps or 10
        self.tools = {t.__name__: t for t in tools}
        self.http, self.url = http_client, base_url.rstrip("/") + "/chat/completions"

    def _schema(self):
        return [{"type": "function", "function": {"name": n, "description": f.__doc__ or "", "parameters": {
                 "type": "object", "required": list(inspect.signature(f).parameters),
                 "properties": {p: {"type": _TYPES.get(a.annotation, "string")}
                                for p, a in inspect.signature(f).parameters.items()}}}}
                for n, f in self.tools.items()]

    def _checked(self, name, args):
        """The arguments, refused unless each has its declared type."""
        if not isinstance(args, dict):
            raise TypeError(f"arguments must be an object, got {args!r}")
        for p, a in inspect.signature(self.tools[name]).parameters.items():
            want = _PY.get(a.annotation)
            got = args.get(p)
            wrong = want and (not isinstance(got, want) or (isinstance(got, bool) and want is not bool))
            if p not in args or wrong:
                raise TypeError(f"argument {p!r} must be {_TYPES.get(a.annotation, 'string')}, "
                                f"got {got!r}")
        return args

    def _ask(self, messages, **extra):
        tools = {"tools": self._schema()} if self.tools else {}
        body = {"model": "m", "messages": messages, **tools, **extra}
        reply = self.http.post(self.url, json=body)
        reply.raise_for_status()
        return reply.json()["choices"][0]["message"]

    def run(self, question, max_steps=None):
        cap = self.max_steps if max_steps is None else max_steps
        if cap < 1:
            raise ValueError(f"max_steps must be at least 1, got {cap}")
        messages = [{"role": "system", "content": self.instructions}, {"role": "user", "content": question}]
        steps = []
        for rounds in range(1, cap + 1):
            message = self._ask(messages)
            calls = message.get("tool_calls") or []
            messages.append({"role": "assistant", "content": message.get("content"),
                             "tool_calls": calls or None})
            if not calls:
                return Result(message.get("content") or "", steps, rounds=rounds)
            for c in calls:
                name, raw = c["function"]["name"], c["function"]["arguments"]
                args = raw
                try:
                    args = json.loads(raw)
                    out = self.tools[name](**self._checked(name, args))
                except Exception as exc:  # the model sees the error and may try again
                    out = f"error: {exc}"
                steps.append(StepRecord(name, args, out))
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": str(out)})
        message = self._ask(messages, tool_choice="none")
        return Result(message.get("content") or "", steps, capped=True, rounds=cap)
