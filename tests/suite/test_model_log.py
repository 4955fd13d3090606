"""The model-log steps' reading of a native tool declaration (STEP-3)."""

from __future__ import annotations

from conformance._steps.model_log import _SCHEMA_TYPES, _declared


def test_a_gemini_schema_declares_an_argument_with_its_type_in_capitals() -> None:
    # ADK for TypeScript sends zod parameters as Gemini's Schema (utils/simple_zod_to_json.ts).
    gemini = {"type": "OBJECT", "properties": {"query": {"type": "STRING"}}, "required": ["query"]}
    assert _declared([gemini], "query", _SCHEMA_TYPES["str"])


def test_an_argument_declared_with_another_type_is_not_declared_with_its_own() -> None:
    assert not _declared([{"type": "OBJECT", "properties": {"query": {"type": "INTEGER"}}}], "query",
                         _SCHEMA_TYPES["str"])
    assert not _declared([{"type": "object", "properties": {"other": {"type": "string"}}}], "query",
                         _SCHEMA_TYPES["str"])
