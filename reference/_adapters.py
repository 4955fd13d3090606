"""Adapters: how a signature and its inputs become chat messages, and a reply becomes values."""

from __future__ import annotations

import json
import re
import typing
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Any, Literal

from reference._args import MAX_DEPTH, ToolArgsError, nesting_exceeds, parse_tool_args
from reference._signature import FieldInfo, Signature

_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]")
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?\s*```$", re.DOTALL)


class AdapterParseError(ValueError):
    """A reply that does not fit the signature; names the field and quotes the reply."""

    def __init__(self, message: str, *, field: str | None, reply: str) -> None:
        shown = reply if len(reply) <= 300 else reply[:300] + "..."
        where = f"field {field!r}: " if field else ""
        super().__init__(f"{where}{message}; the reply was {shown!r}")
        self.field = field
        self.reply = reply


class Adapter(ABC):
    """Formats a signature + inputs as chat messages and parses the reply into output values."""

    def format(self, signature: Signature, inputs: dict[str, Any]) -> list[dict[str, str]]:
        """The chat messages asking for `signature`'s outputs given `inputs`."""
        return [{"role": "system", "content": _system(type(self), signature)},
                {"role": "user", "content": self._user(signature, inputs)}]

    @abstractmethod
    def parse(self, signature: Signature, text: str) -> dict[str, Any]:
        """The output values in `text`, typed; AdapterParseError if they do not fit."""

    @abstractmethod
    def format_reply(self, signature: Signature, values: dict[str, Any]) -> str:
        """An assistant reply carrying `values`, as this adapter expects one."""

    @abstractmethod
    def _system(self, signature: Signature) -> str: ...

    @abstractmethod
    def _user(self, signature: Signature, inputs: dict[str, Any]) -> str: ...


@lru_cache(maxsize=256)
def _system(adapter: type[Adapter], signature: Signature) -> str:
    # The system message depends only on the signature: built once, not at every step.
    return adapter._system(adapter(), signature)


def _describe(field: FieldInfo) -> str:
    kind = _type_note(field.annotation)
    desc = f": {field.desc}" if field.desc else ""
    return f"`{field.name}` ({kind}){desc}"


def _type_note(annotation: Any) -> str:
    if typing.get_origin(annotation) is Literal:
        return "one of: " + ", ".join(str(c) for c in typing.get_args(annotation))
    if annotation is dict:
        return "a JSON object"
    return getattr(annotation, "__name__", str(annotation))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _coerce(field: FieldInfo, value: Any, reply: str) -> Any:
    """`value` (text, or already-decoded JSON) as the field's type."""
    annotation = field.annotation

    def fail(why: str) -> AdapterParseError:
        return AdapterParseError(why, field=field.name, reply=reply)

    if typing.get_origin(annotation) is Literal:
        choices = typing.get_args(annotation)
        if value not in choices:
            raise fail(f"{value!r} is not one of {', '.join(map(str, choices))}")
        return value
    if annotation is dict:
        try:
            # Decoded JSON goes back through the text parser, so its size and depth limits apply.
            return parse_tool_args(value if isinstance(value, str) else json.dumps(value))
        except ToolArgsError as exc:
            raise fail(str(exc)) from None
    if annotation is str:
        return value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise fail(f"{value!r} is not a {_type_note(annotation)}") from None
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if annotation in (int, float, bool, list) and type(value) is not annotation:
        raise fail(f"{value!r} is not a {_type_note(annotation)}")
    return value


class ChatAdapter(Adapter):
    """DSPy-style `[[ ## field ## ]]` sections, the reply ending with `[[ ## completed ## ]]`."""

    def _system(self, signature: Signature) -> str:
        lines = ["Your input fields are:"]
        lines += [f"{i}. {_describe(f)}" for i, f in enumerate(signature.inputs.values(), 1)]
        lines += ["Your output fields are:"]
        lines += [f"{i}. {_describe(f)}" for i, f in enumerate(signature.outputs.values(), 1)]
        lines += ["", "All interactions are structured this way, with the values filled in:", ""]
        lines += [f"[[ ## {n} ## ]]\n{{{n}}}\n" for n in (*signature.inputs, *signature.outputs)]
        lines += ["[[ ## completed ## ]]", "", "Your objective is:", signature.instructions]
        return "\n".join(lines)

    def _user(self, signature: Signature, inputs: dict[str, Any]) -> str:
        parts = [f"[[ ## {n} ## ]]\n{_text(inputs[n])}" for n in signature.inputs]
        first = next(iter(signature.outputs))
        parts.append(f"Respond with the output fields, starting with `[[ ## {first} ## ]]` and "
                     "ending with the marker `[[ ## completed ## ]]`.")
        return "\n\n".join(parts)

    def parse(self, signature: Signature, text: str) -> dict[str, Any]:
        sections: dict[str, str] = {}
        marks = list(_SECTION.finditer(text))
        for mark, following in zip(marks, [*marks[1:], None], strict=True):
            end = following.start() if following else len(text)
            sections.setdefault(mark.group(1), text[mark.end():end].strip())
        values = {}
        for name, field in signature.outputs.items():
            if name not in sections:
                raise AdapterParseError("missing from the reply", field=name, reply=text)
            values[name] = _coerce(field, sections[name], text)
        return values

    def format_reply(self, signature: Signature, values: dict[str, Any]) -> str:
        parts = [f"[[ ## {n} ## ]]\n{_text(values[n])}" for n in signature.outputs]
        return "\n\n".join([*parts, "[[ ## completed ## ]]"])


class JSONAdapter(Adapter):
    """The reply is one JSON object keyed by the output field names."""

    def _system(self, signature: Signature) -> str:
        lines = ["Your input fields are:"]
        lines += [f"{i}. {_describe(f)}" for i, f in enumerate(signature.inputs.values(), 1)]
        lines += ["Your output fields are:"]
        lines += [f"{i}. {_describe(f)}" for i, f in enumerate(signature.outputs.values(), 1)]
        keys = ", ".join(f'"{n}"' for n in signature.outputs)
        lines += ["", f"Reply with a single JSON object with exactly the keys {keys}.", "",
                  "Your objective is:", signature.instructions]
        return "\n".join(lines)

    def _user(self, signature: Signature, inputs: dict[str, Any]) -> str:
        parts = [f"{n}:\n{_text(inputs[n])}" for n in signature.inputs]
        parts.append("Reply with the JSON object of the output fields.")
        return "\n\n".join(parts)

    def parse(self, signature: Signature, text: str) -> dict[str, Any]:
        stripped = text.strip()
        fenced = _FENCE.match(stripped)
        if nesting_exceeds(stripped, MAX_DEPTH + 1):
            raise AdapterParseError(f"the reply nests deeper than {MAX_DEPTH + 1} levels", field=None,
                                    reply=text)
        try:
            data = json.loads(fenced.group(1) if fenced else stripped)
        except json.JSONDecodeError as exc:
            raise AdapterParseError(f"the reply is not valid JSON ({exc.msg})", field=None,
                                    reply=text) from None
        if not isinstance(data, dict):
            raise AdapterParseError("the reply is not a JSON object", field=None, reply=text)
        values = {}
        for name, field in signature.outputs.items():
            if name not in data:
                raise AdapterParseError("missing from the reply", field=name, reply=text)
            values[name] = _coerce(field, data[name], text)
        return values

    def format_reply(self, signature: Signature, values: dict[str, Any]) -> str:
        return json.dumps({n: values[n] for n in signature.outputs})
