"""Tool: name, description and JSON argument schema from a function; strict validation first."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from reference import Tool, ToolArgsError


def transfer(amount: int, recipient: str, memo: str = "", rate: float = 1.0) -> str:
    """Send money to someone."""
    return f"sent {amount * rate} to {recipient}{memo}"


def test_name_description_and_schema_come_from_the_function() -> None:
    tool = Tool(transfer)
    assert tool.name == "transfer" and tool.description == "Send money to someone."
    schema = tool.args_schema
    assert set(schema["properties"]) == {"amount", "recipient", "memo", "rate"}
    assert schema["properties"]["amount"]["type"] == "integer"
    assert schema["required"] == ["amount", "recipient", "memo", "rate"]
    assert schema["additionalProperties"] is False


def test_name_and_description_can_be_given() -> None:
    tool = Tool(lambda x: x, name="echo", description="Say it back.")
    assert (tool.name, tool.description) == ("echo", "Say it back.")
    assert tool.args_schema["required"] == ["x"]


def test_validation_passes_the_given_values_and_every_parameter_is_required() -> None:
    tool = Tool(transfer)
    args = {"amount": 5, "recipient": "Ann", "memo": "!", "rate": 2.0}
    assert tool.validate(args) == args
    assert tool.func(**tool.validate(args)) == "sent 10.0 to Ann!"
    with pytest.raises(ToolArgsError, match=r"^memo: .*; rate: "):
        tool.validate({"amount": 5, "recipient": "Ann"})


@pytest.mark.parametrize(("args", "field"), [
    ({"amount": 50}, "recipient"),
    ({"amount": 50, "recipient": "Ann", "note": "rent"}, "note"),
    ({"amount": "fifty", "recipient": "Ann"}, "amount"),
    ({"amount": "50", "recipient": "Ann"}, "amount"),
    ({"amount": 50.5, "recipient": "Ann"}, "amount"),
    ({"amount": True, "recipient": "Ann"}, "amount"),
    ({"amount": 50, "recipient": ["Ann", "Bob"]}, "recipient"),
    ({"amount": 50, "recipient": "Ann", "rate": "2"}, "rate"),
    ({"amount": 50, "recipient": "Ann"}, "rate"),
])
def test_missing_extra_or_wrongly_typed_args_never_reach_the_function(
        args: dict[str, Any], field: str) -> None:
    calls: list[dict[str, Any]] = []

    def record(amount: int, recipient: str, rate: float = 1.0) -> None:
        calls.append({"amount": amount, "recipient": recipient})

    with pytest.raises(ToolArgsError, match=f"^{field}: |; {field}: ") as info:
        Tool(record).validate(args)
    assert isinstance(info.value, ValueError) and calls == []


def test_args_that_are_not_json_values_are_refused() -> None:
    with pytest.raises(ToolArgsError, match="not JSON values"):
        Tool(transfer).validate({"amount": object(), "recipient": "Ann"})


def test_untyped_parameters_take_any_json_and_variadics_are_not_arguments() -> None:
    def loose(data, *rest: int, **more: int) -> Any:  # type: ignore[no-untyped-def]
        return data

    tool = Tool(loose)
    assert set(tool.args_schema["properties"]) == {"data"}
    assert tool.validate({"data": {"deep": [1, {"x": None}]}}) == {"data": {"deep": [1, {"x": None}]}}
    with pytest.raises(ToolArgsError, match="other"):
        tool.validate({"data": 1, "other": 2})


def test_a_function_with_a_programmatic_signature_and_annotations() -> None:
    def impl(**kwargs: Any) -> str:
        return f"{kwargs}"

    params = [inspect.Parameter("text", inspect.Parameter.KEYWORD_ONLY, annotation=str),
              inspect.Parameter("data", inspect.Parameter.KEYWORD_ONLY, annotation=dict)]
    impl.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    impl.__annotations__ = {"text": str, "data": dict, "return": str}
    impl.__name__ = "record"
    impl.__doc__ = "Record something."
    tool = Tool(impl)
    assert tool.name == "record" and tool.description == "Record something."
    assert tool.args_schema["required"] == ["text", "data"]
    args = tool.validate({"text": "a", "data": {"k": [1]}})
    assert tool.func(**args) == "{'text': 'a', 'data': {'k': [1]}}"
    with pytest.raises(ToolArgsError, match="data"):
        tool.validate({"text": "a", "data": [1]})
