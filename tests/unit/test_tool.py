"""Tools: schema from type hints; bad arguments never reach the function."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from reference import Tool, ToolArgsError


def transfer(amount: int, recipient: str, memo: str = "") -> str:
    """Send money."""
    return f"sent {amount} to {recipient}{memo}"


def test_name_description_and_schema_come_from_the_function() -> None:
    tool = Tool(transfer)
    assert (tool.name, tool.description) == ("transfer", "Send money.")
    assert tool.args_schema["required"] == ["amount", "recipient"]
    assert tool.args_schema["properties"]["amount"]["type"] == "integer"
    assert Tool(transfer, name="pay", description="Pay someone.").name == "pay"


@pytest.mark.parametrize(("args", "field"), [
    ({"amount": 5}, "recipient"),
    ({"amount": "five", "recipient": "Ann"}, "amount"),
    ({"amount": 5, "recipient": "Ann", "extra": 1}, "extra"),
    ({"amount": 5, "recipient": ["Ann"]}, "recipient"),
])
def test_bad_arguments_name_the_field_and_never_call_the_function(args: dict[str, Any], field: str) -> None:
    calls: list[dict[str, Any]] = []

    def record(amount: int, recipient: str) -> None:
        calls.append({"amount": amount, "recipient": recipient})

    with pytest.raises(ToolArgsError, match=field):
        Tool(record)(**args)
    assert calls == []


def test_a_programmatic_signature_is_read() -> None:
    def anything(**kwargs: Any) -> Any:
        return kwargs

    anything.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("q", inspect.Parameter.KEYWORD_ONLY, annotation=str)])
    anything.__annotations__ = {"q": str}
    tool = Tool(anything)
    assert tool.args_schema["required"] == ["q"]
    assert tool(q="x") == {"q": "x"}
    with pytest.raises(ToolArgsError, match="q"):
        tool(q=3)
