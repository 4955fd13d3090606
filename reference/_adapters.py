"""Adapters: how a signature and its inputs become chat messages, and a reply becomes values."""

from __future__ import annotations

import json
import re
import typing
from abc import ABC, abstractmethod
from typing import Any, Literal

from reference._args import MAX_DEPTH, ToolArgsError, max_digits, parse_tool_args, too_deep, unfence
from reference._signature import FieldInfo, Signature

_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]")
_DECODED = (int, float, bool, list)  # types a chat section holds as JSON


class AdapterParseError(ValueError):
    """A reply that does not fit the signature; names the field and quotes the reply."""

    def __init__(self, message: str, *, field: str | None, reply: str) -> None:
        shown = reply if len(reply) <= 300 else reply[:300] + "..."
        where = f"field {field!r}: " if field else ""
        super().__init__(f"{where}{message}; the reply was {shown!r}")
        self.field = field
        self.reply = reply


class Adapter(ABC):
    """Formats a signature and its inputs as chat messages; parses a reply into output values.

    `format` makes the system message once per signature object (a signature is not changed in
    place): a ReAct sends the same one at every step.
    """

    # id(signature) -> the signature (held, so that its id is not reused) and its system message.
    _systems: dict[int, tuple[Signature, str]] | None = None

    def format(self, signature: Signature, inputs: dict[str, Any]) -> list[dict[str, str]]:
        """The chat messages asking for `signature`'s outputs given `inputs`."""
        if self._systems is None or len(self._systems) > 64:  # a few agents' worth
            self._systems = {}
        known = self._systems.get(id(signature))
        if known is None:
            known = self._systems[id(signature)] = (signature, self.system(signature))
        return [{"role": "system", "content": known[1]},
                {"role": "user", "content": self.user(signature, inputs)}]

    @abstractmethod
    def system(self, signature: Signature) -> str:
        """The system message: the fields with their types, the reply format, the instructions."""

    @abstractmethod
    def user(self, signature: Signature, inputs: dict[str, Any]) -> str:
        """The user message: the input values."""

    @abstractmethod
    def parse(self, signature: Signature, text: str) -> dict[str, Any]:
        """The output values in `text`, typed; AdapterParseError if they do not fit."""

    @abstractmethod
    def format_reply(self, signature: Signature, values: dict[str, Any]) -> str:
        """An assistant reply carrying `values`, as this adapter expects one."""


class ChatAdapter(Adapter):
    """DSPy-style `[[ ## field ## ]]` sections, the reply ending with `[[ ## completed ## ]]`."""

    def system(self, signature: Signature) -> str:
        names = (*signature.inputs, *signature.outputs)
        return "\n".join([
            *_field_list(signature), "",
            "All interactions are structured this way, with the values filled in:", "",
            *(f"[[ ## {n} ## ]]\n{{{n}}}\n" for n in names),
            "[[ ## completed ## ]]", "", "Your objective is:", signature.instructions,
        ])

    def user(self, signature: Signature, inputs: dict[str, Any]) -> str:
        order = ", then ".join([f"`[[ ## {n} ## ]]`" for n in signature.outputs])
        return "\n\n".join([
            *[f"[[ ## {n} ## ]]\n{_text(inputs[n])}" for n in signature.inputs],
            f"Respond with the output fields {order}, and end with `[[ ## completed ## ]]`.",
        ])

    def parse(self, signature: Signature, text: str) -> dict[str, Any]:
        sections: dict[str, str] = {}
        parts = _SECTION.split(text)  # [before, name, its text, name, its text, ...]
        for name, section in zip(parts[1::2], parts[2::2], strict=True):
            sections.setdefault(name, section.strip())
        values = {}
        for name, field in signature.outputs.items():
            if name not in sections:
                raise AdapterParseError("missing from the reply", field=name, reply=text)
            values[name] = _coerce(field, _decode(field, sections[name], text), text)
        return values

    def format_reply(self, signature: Signature, values: dict[str, Any]) -> str:
        parts = [f"[[ ## {n} ## ]]\n{_text(values[n])}" for n in signature.outputs]
        return "\n\n".join([*parts, "[[ ## completed ## ]]"])


class JSONAdapter(Adapter):
    """The reply is one JSON object keyed by the output field names (a ```json fence is fine)."""

    def system(self, signature: Signature) -> str:
        keys = ", ".join(f'"{n}"' for n in signature.outputs)
        return "\n".join([
            *_field_list(signature), "",
            f"Reply with a single JSON object with exactly the keys {keys}.", "",
            "Your objective is:", signature.instructions,
        ])

    def user(self, signature: Signature, inputs: dict[str, Any]) -> str:
        return "\n\n".join([*(f"{n}:\n{_text(inputs[n])}" for n in signature.inputs),
                            "Reply with the JSON object of the output fields."])

    def parse(self, signature: Signature, text: str) -> dict[str, Any]:
        body = unfence(text)
        if too_deep(body, MAX_DEPTH + 1):  # tool args sit one level down, inside the reply
            raise AdapterParseError(f"the reply nests deeper than {MAX_DEPTH + 1} levels",
                                    field=None, reply=text)
        try:
            data = json.loads(body)
        except json.JSONDecodeError as exc:
            raise AdapterParseError(f"the reply is not valid JSON ({exc.msg})", field=None,
                                    reply=text) from None
        except ValueError:  # not a JSONDecodeError: an integer too long for int() to read
            raise AdapterParseError(f"the reply holds an integer of more than {max_digits()} digits",
                                    field=None, reply=text) from None
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


def _field_list(signature: Signature) -> list[str]:
    return ["Your input fields are:",
            *(f"{i}. {_describe(f)}" for i, f in enumerate(signature.inputs.values(), 1)),
            "Your output fields are:",
            *(f"{i}. {_describe(f)}" for i, f in enumerate(signature.outputs.values(), 1))]


def _describe(field: FieldInfo) -> str:
    desc = f": {field.desc}" if field.desc else ""
    return f"`{field.name}` ({_type_note(field.annotation)}){desc}"


def _type_note(annotation: Any) -> str:
    if typing.get_origin(annotation) is Literal:
        return "one of: " + ", ".join(str(c) for c in typing.get_args(annotation))
    if annotation is dict:
        return "a JSON object"
    return getattr(annotation, "__name__", str(annotation))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _decode(field: FieldInfo, text: str, reply: str) -> Any:
    """A section's text as JSON when the field is an int, float, bool or list."""
    if type(field.annotation) is not type or field.annotation not in _DECODED:  # a Literal's == is slow
        return text
    if too_deep(text, MAX_DEPTH):
        raise AdapterParseError(f"the value nests deeper than {MAX_DEPTH} levels",
                                field=field.name, reply=reply)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise AdapterParseError(f"{_short(text)} is not a valid {field.annotation.__name__}",
                                field=field.name, reply=reply) from None
    except ValueError:  # not a JSONDecodeError: an integer too long for int() to read
        raise AdapterParseError(f"the value holds an integer of more than {max_digits()} digits",
                                field=field.name, reply=reply) from None


def _coerce(field: FieldInfo, value: Any, reply: str) -> Any:
    """`value`, decoded from JSON, as the field's type, strictly."""
    annotation = field.annotation
    if annotation is str:
        return value if isinstance(value, str) else json.dumps(value)
    if annotation is dict:
        try:  # decoded JSON goes back through the text parser, so its size and depth limits apply
            return parse_tool_args(value if isinstance(value, str) else json.dumps(value))
        except ToolArgsError as exc:
            raise AdapterParseError(str(exc), field=field.name, reply=reply) from None
    if typing.get_origin(annotation) is Literal:
        choices = typing.get_args(annotation)
        if value not in choices:
            raise AdapterParseError(f"{_short(value)} is not one of {', '.join(map(str, choices))}",
                                    field=field.name, reply=reply)
        return value
    if annotation is float and type(value) is int:
        value = float(value)
    if annotation in _DECODED and type(value) is not annotation:
        raise AdapterParseError(f"{_short(value)} is not a valid {annotation.__name__}",
                                field=field.name, reply=reply)
    return value


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:80] + "..."
