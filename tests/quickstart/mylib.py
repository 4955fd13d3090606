"""A tiny native tool-calling loop over the chat-completions API, written as a third-party library
would be (tests/test_quickstart.py copies it into a fresh project): it checks arguments against the
declared types; on its cap it makes one last call with its tools declared and their use forbidden
(`tool_choice: "none"`) to write the answer; before a tool named in `needs_approval` runs it returns
a pause, which `resume` answers once."""
import inspect
import json
import uuid
from dataclasses import dataclass, field


@dataclass
class StepRecord:
    tool: str
    args: object
    observation: object


@dataclass
class Pause:
    """A call waiting for a person's approval: answer it with `Agent.resume(pause.id, ...)`."""
    id: str
    tool: str
    args: object
    call_id: str


@dataclass
class Result:
    answer: str
    steps: list = field(default_factory=list)
    capped: bool = False
    rounds: int = 0
    pause: Pause | None = None


@dataclass
class _Session:
    """A run in progress: what `resume` continues from."""
    messages: list
    steps: list
    cap: int
    rounds: int = 0
    calls: list = field(default_factory=list)  # the last reply's calls not yet carried out


_TYPES = {int: "integer", str: "string", float: "number", bool: "boolean", list: "array", dict: "object"}
_PY = {int: int, str: str, float: (int, float), bool: bool, list: list, dict: dict}


class Agent:
    def __init__(self, instructions, tools, max_steps, http_client, base_url, needs_approval=()):
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.instructions, self.max_steps = instructions, max_steps or 10
        self.tools = {t.__name__: t for t in tools}
        self.needs_approval = set(needs_approval)
        self._paused = {}  # pause id -> the session it stopped, until it is answered
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
        return self._loop(_Session(messages, [], cap))

    def resume(self, pause_id, approved, message=None):
        """Answer a pause once: approved, its call runs; not, the model is told (with `message`)."""
        session = self._paused.pop(pause_id, None)
        if session is None:
            raise KeyError(f"no pause {pause_id!r} is waiting on this agent (answered already?)")
        call = session.calls.pop(0)
        if approved:
            self._call(session, call)
        else:
            said = f": {message}" if message else ""
            self._observe(session, call, call["function"]["name"], _parsed(call["function"]["arguments"]),
                          f"the user rejected this call{said}")
        return self._loop(session)

    def _loop(self, session):
        while True:
            while session.calls:
                call = session.calls[0]
                if call["function"]["name"] in self.needs_approval:
                    pause = Pause(uuid.uuid4().hex, call["function"]["name"],
                                  _parsed(call["function"]["arguments"]), call["id"])
                    self._paused[pause.id] = session
                    return Result("", list(session.steps), rounds=session.rounds, pause=pause)
                self._call(session, session.calls.pop(0))
            if session.rounds == session.cap:
                message = self._ask(session.messages, tool_choice="none")
                return Result(message.get("content") or "", list(session.steps), capped=True,
                              rounds=session.rounds)
            session.rounds += 1
            message = self._ask(session.messages)
            session.calls = list(message.get("tool_calls") or [])
            session.messages.append({"role": "assistant", "content": message.get("content"),
                                     "tool_calls": list(session.calls) or None})
            if not session.calls:
                return Result(message.get("content") or "", list(session.steps), rounds=session.rounds)

    def _call(self, session, call):
        name, raw = call["function"]["name"], call["function"]["arguments"]
        args = raw
        try:
            args = json.loads(raw)
            out = self.tools[name](**self._checked(name, args))
        except Exception as exc:  # the model sees the error and may try again
            out = f"error: {exc}"
        self._observe(session, call, name, args, out)

    def _observe(self, session, call, name, args, out):
        session.steps.append(StepRecord(name, args, out))
        session.messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(out)})


def _parsed(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return raw
