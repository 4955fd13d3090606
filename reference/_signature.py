"""Signatures: the named, typed inputs and outputs of a prediction, and its instructions."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, replace
from typing import Any, ClassVar

_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool,
                           "list": list, "dict": dict}
_NAMES = {t: n for n, t in _TYPES.items()}


class SignatureError(ValueError):
    """A malformed signature: the message names the problem and the offending text or field."""


@dataclass(frozen=True)
class FieldInfo:
    """One field: its name, type annotation, description, and side."""

    name: str = ""
    annotation: Any = str
    desc: str = ""
    is_input: bool = True


def InputField(*, desc: str = "") -> Any:
    """Declare an input field of a Signature subclass (or of a Signature value's `inputs`)."""
    return FieldInfo(desc=desc, is_input=True)


def OutputField(*, desc: str = "") -> Any:
    """Declare an output field of a Signature subclass (or of a Signature value's `outputs`)."""
    return FieldInfo(desc=desc, is_input=False)


class Signature:
    """Inputs -> outputs, plus instructions; from an arrow string, a subclass, or dicts of fields.

    `Signature("question -> answer")`, `Signature("n: int -> half: float")`,
    `Signature(inputs={"question": str}, outputs={"answer": str}, instructions="...")`, or a
    subclass whose docstring is the instructions and whose fields are declared with
    `question: str = InputField(desc="...")` and `answer: str = OutputField()`; `QA()` is its value.
    """

    _class_fields: ClassVar[tuple[dict[str, FieldInfo], dict[str, FieldInfo]] | None] = None

    def __init__(self, text: str | None = None, *, inputs: dict[str, Any] | None = None,
                 outputs: dict[str, Any] | None = None, instructions: str | None = None) -> None:
        if text is not None and (inputs is not None or outputs is not None):
            raise SignatureError(f"give an arrow string or inputs/outputs, not both (got {text!r})")
        if text is not None:
            ins, outs = _parse(text)
        elif inputs is not None or outputs is not None:
            ins, outs = _fields(inputs or {}, True), _fields(outputs or {}, False)
            _validate(ins, outs, "the signature value")
        elif self._class_fields is not None:
            ins, outs = self._class_fields
            if instructions is None:
                instructions = type(self).__doc__
        else:
            raise SignatureError("a Signature needs an arrow string, inputs/outputs, or fields")
        self.inputs: dict[str, FieldInfo] = ins
        self.outputs: dict[str, FieldInfo] = outs
        self.instructions: str = (inspect.cleandoc(instructions).strip() if instructions
                                  else _default(ins, outs))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hints = typing.get_type_hints(cls)
        declared = {n: replace(v, name=n, annotation=hints.get(n, str))
                    for n, v in vars(cls).items() if isinstance(v, FieldInfo)}
        ins = {n: f for n, f in declared.items() if f.is_input}
        outs = {n: f for n, f in declared.items() if not f.is_input}
        _validate(ins, outs, f"signature class {cls.__name__}")
        cls._class_fields = (ins, outs)

    @classmethod
    def coerce(cls, value: object) -> Signature:
        """A Signature value from an arrow string, a Signature subclass, or a Signature value."""
        if isinstance(value, Signature):
            return value
        if isinstance(value, str):
            return Signature(value)
        if isinstance(value, type) and issubclass(value, Signature) and value._class_fields:
            return value()
        raise SignatureError(f"cannot make a signature from {value!r}: give an arrow string like "
                             "'question -> answer', a Signature subclass, or a Signature")

    def extended(self, *, inputs: dict[str, Any] | None = None,
                 outputs: dict[str, Any] | None = None,
                 instructions: str | None = None) -> Signature:
        """A new signature with more inputs, other outputs or other instructions, when given."""
        return Signature(inputs={**self.inputs, **(inputs or {})},
                         outputs=self.outputs if outputs is None else outputs,
                         instructions=self.instructions if instructions is None else instructions)

    def __str__(self) -> str:
        return f"{_side(self.inputs)} -> {_side(self.outputs)}"

    def __repr__(self) -> str:
        return f"Signature({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and (self.inputs, self.outputs, self.instructions) == (
            other.inputs, other.outputs, other.instructions)

    __hash__ = None  # type: ignore[assignment]  # a mutable value


def _side(fields: dict[str, FieldInfo]) -> str:
    return ", ".join(n if f.annotation is str else f"{n}: {_type_name(f.annotation)}"
                     for n, f in fields.items())


def _type_name(annotation: Any) -> str:
    return _NAMES.get(annotation) or repr(annotation)


def _default(ins: dict[str, FieldInfo], outs: dict[str, FieldInfo]) -> str:
    return (f"Given the fields {', '.join(f'`{n}`' for n in ins)}, "
            f"produce the fields {', '.join(f'`{n}`' for n in outs)}.")


def _fields(fields: dict[str, Any], is_input: bool) -> dict[str, FieldInfo]:
    return {name: replace(value, name=name, is_input=is_input) if isinstance(value, FieldInfo)
            else FieldInfo(name=name, annotation=value, is_input=is_input)
            for name, value in fields.items()}


def _parse(text: str) -> tuple[dict[str, FieldInfo], dict[str, FieldInfo]]:
    arrows = text.count("->")
    if arrows != 1:
        problem = "no '->' between inputs and outputs" if arrows == 0 else "more than one '->'"
        raise SignatureError(f"signature {text!r} has {problem}; "
                             "write it like 'question -> answer'")
    left, right = text.split("->")
    ins, outs = _parse_side(left, text, True), _parse_side(right, text, False)
    _validate(ins, outs, f"signature {text!r}")
    return ins, outs


def _parse_side(side: str, text: str, is_input: bool) -> dict[str, FieldInfo]:
    fields: dict[str, FieldInfo] = {}
    if not side.strip():
        return fields  # _validate names the empty side
    for part in side.split(","):
        name, _, type_name = (p.strip() for p in part.partition(":"))
        if not name:
            raise SignatureError(f"signature {text!r} has an empty field name (at {part!r})")
        if type_name and type_name not in _TYPES:
            raise SignatureError(f"unknown type {type_name!r} for field {name!r} in {text!r}; "
                                 f"use one of {', '.join(_TYPES)}")
        if name in fields:
            raise SignatureError(f"field {name!r} appears more than once in {text!r}")
        fields[name] = FieldInfo(name=name, annotation=_TYPES[type_name or "str"],
                                 is_input=is_input)
    return fields


def _validate(ins: dict[str, FieldInfo], outs: dict[str, FieldInfo], where: str) -> None:
    if not ins:
        raise SignatureError(f"{where} has no input fields (nothing before '->')")
    if not outs:
        raise SignatureError(f"{where} has no output fields (nothing after '->')")
    for name in (*ins, *outs):
        if not name.isidentifier():
            raise SignatureError(f"field name {name!r} in {where} is not a valid identifier")
    both = sorted(set(ins) & set(outs))
    if both:
        raise SignatureError(f"field {both[0]!r} is both an input and an output in {where}")
