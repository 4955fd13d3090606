"""Tools: a function with a name, a description and an argument schema the model can read."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from reference._args import ToolArgsError


class Tool:
    """A callable the agent may use; its arguments are validated before the function runs."""

    def __init__(self, func: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None) -> None:
        self.func = func
        self.name: str = name or func.__name__
        self.description: str = description or inspect.getdoc(func) or ""
        hints = typing.get_type_hints(func)
        fields: dict[str, Any] = {
            p.name: (hints.get(p.name, Any), ... if p.default is inspect.Parameter.empty else p.default)
            for p in inspect.signature(func).parameters.values()
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        }
        self._args: type[BaseModel] = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid"), **fields)
        self.args_schema: dict[str, Any] = self._args.model_json_schema()

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the function will get them, or a ToolArgsError naming each bad field."""
        try:
            model = self._args.model_validate(dict(args))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in exc.errors())
            raise ToolArgsError(problems) from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    def __call__(self, **kwargs: Any) -> Any:
        """Validate the arguments, then call the function."""
        return self.func(**self.validate(kwargs))

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"
