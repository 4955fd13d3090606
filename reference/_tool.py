"""Tools: a function with a name, a description and an argument schema the model can read."""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from reference._args import ToolArgsError

_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class Tool:
    """A function the agent may call; its arguments are validated before the function runs.

    The arguments are JSON values, as a model writes them, validated strictly against the schema
    from the function's type hints: a missing, extra or wrongly typed argument (`"5"` for an `int`)
    is a ToolArgsError naming the field. Every parameter is a required argument, one with a default
    too (no requirement asks for optional ones); one without a hint takes any JSON value. An
    `interruptible` tool never runs before a person approves the call (see `ReAct.resume`).
    """

    def __init__(self, func: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None, interruptible: bool = False) -> None:
        self.func = func
        self.interruptible = interruptible
        self.name: str = name or func.__name__
        self.description: str = description or inspect.getdoc(func) or ""
        hints = typing.get_type_hints(func)
        fields: dict[str, Any] = {
            p.name: (hints.get(p.name, Any), ...)
            for p in inspect.signature(func).parameters.values() if p.kind not in _VARIADIC
        }
        self._args: type[BaseModel] = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid", strict=True), **fields)
        self.args_schema: dict[str, Any] = self._args.model_json_schema()

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the function will get them, or a ToolArgsError naming each bad field."""
        try:
            text = json.dumps(dict(args))
        except (TypeError, ValueError) as exc:
            raise ToolArgsError(f"the arguments are not JSON values: {exc}") from None
        try:
            model = self._args.model_validate_json(text)
        except ValidationError as exc:
            raise ToolArgsError("; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors()
            )) from None
        return dict(model.__dict__)  # the fields as validated, not dumped

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"
