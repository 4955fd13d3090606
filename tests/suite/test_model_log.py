"""How the model-log steps read what a model call showed (STEP-3's native declarations)."""

from __future__ import annotations

import json

from conformance._steps.model_log import _SCHEMA_TYPES, _declared, _json_values


def test_a_gemini_schema_declares_an_argument_with_its_type_in_capitals() -> None:
    # ADK for TypeScript sends zod parameters as Gemini's Schema (utils/simple_zod_to_json.ts).
    gemini = {"type": "OBJECT", "properties": {"query": {"type": "STRING"}}, "required": ["query"]}
    assert _declared([gemini], "query", _SCHEMA_TYPES["str"])


def test_an_argument_declared_with_another_type_is_not_declared_with_its_own() -> None:
    assert not _declared([{"type": "OBJECT", "properties": {"query": {"type": "INTEGER"}}}], "query",
                         _SCHEMA_TYPES["str"])
    assert not _declared([{"type": "object", "properties": {"other": {"type": "string"}}}], "query",
                         _SCHEMA_TYPES["str"])


def test_a_tool_schema_in_a_json_string_inside_a_fenced_block_of_a_message_is_read() -> None:
    # DSPy.rb's step prompt: its inputs as one JSON object in a ```json block, each tool's schema a
    # JSON string in it. The model sees `a` declared as an integer; so must STEP-3.
    schema = {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    tools = [{"name": "add", "schema": json.dumps(schema)}]
    inputs = {"question": "What is 1 + 2?", "available_tools": tools}
    message = f"## Input Values\n```json\n{json.dumps(inputs, indent=2)}\n```\n\nRespond with JSON."
    values = _json_values([{"role": "user", "content": message}])
    assert _declared(values, "a", ("integer", "int"))
    assert not _declared(values, "a", ("string",)) and not _declared(values, "b", ("integer",))


def test_a_fenced_block_that_is_not_json_adds_nothing() -> None:
    message = "Call a tool:\n```\nadd(a: int)\n```"
    assert _json_values(message) == [message]
