"""What a cassette keeps of an exchange: an allowlist, not a list of secrets.

Three adversarial passes each found credential shapes that a list of names to redact missed
(`pwd`, `subscription_key`, `session_token_hex`, `X-Amz-Signature`...): such a list never converges.
So a cassette keeps only what replay and review need, and redacts everything else whatever its name:

- the method, the path and the allowlisted query values (`QUERY_NAMES`); every other query value
  becomes `REDACTED`;
- request headers by name, each value `REDACTED` but `REQUEST_HEADERS`' (the body is compared as
  JSON only with its content type); response headers outside `RESPONSE_HEADERS` are dropped, since
  replay serves them to the client and a placeholder is no valid value of most headers;
- a JSON body's keys on `JSON_KEYS` (the request and response shapes of the three APIs the
  endpoint serves, chat completions, the Responses API and the Messages API, that the matcher reads
  and replay serves), inside a JSON schema (`parameters`, `schema`, `input_schema`) its keywords and
  property names, and a Messages `tool_use` block's `input` (the tool's arguments, free-form as a
  chat-completions call's `arguments` string is) whole; every other key's value becomes `REDACTED`
  (booleans and null, which carry no secret, stay);
- a form's field values (urlencoded or multipart) on `QUERY_NAMES`; every other one is `REDACTED`.

Every kept string (a prompt, a tool's arguments, a reply) still goes through `prose`, the detector.
A body is read as the client sent it: its content encoding (gzip, deflate) undone and its declared
charset (or a JSON body's UTF-16/32) decoded, and stored as UTF-8 text; a body that cannot be read
is stored only as its sha256 digest. The live request goes through the same function before it is
matched, so a replayed request still matches its recording.
"""

from __future__ import annotations

import copy
import email.parser
import email.policy
import gzip
import hashlib
import json
import threading
import zlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from vcr.request import Request

#: What every redacted value becomes.
REDACTED = "[REDACTED]"
#: Query parameters and form fields whose values are kept (Azure OpenAI's `api-version`).
QUERY_NAMES = frozenset({"api-version", "model"})
#: Request headers whose values are kept: the matcher compares a body as JSON only by its type.
REQUEST_HEADERS = frozenset({"content-type"})
#: Response headers kept (replay serves them): the body's type, and a 429's Retry-After.
RESPONSE_HEADERS = frozenset({"content-type", "retry-after"})
#: The keys of an OpenAI chat-completions request, reply and stream chunk that the matcher reads
#: (the prompt, the tools, the options that change the reply) or replay serves (ids bind tool calls).
JSON_KEYS = frozenset({
    # the request
    "model", "messages", "role", "content", "name", "tool_calls", "tool_call_id", "id", "type",
    "function", "arguments", "tools", "tool_choice", "parameters", "description", "strict", "text",
    "refusal", "stream", "stream_options", "include_usage", "n", "stop", "max_tokens",
    "max_completion_tokens", "temperature", "top_p", "seed", "parallel_tool_calls",
    "response_format", "json_schema", "schema",
    # the reply, its stream chunks and its errors
    "object", "created", "choices", "index", "message", "delta", "finish_reason", "logprobs",
    "usage", "prompt_tokens", "completion_tokens", "total_tokens", "system_fingerprint", "error",
    # the OpenAI Responses API: its request, its `response`, its output items and events, its errors
    "instructions", "input", "call_id", "output", "status", "annotations", "store", "include",
    "previous_response_id", "max_output_tokens", "truncation", "reasoning", "effort", "summary",
    "format", "verbosity", "top_logprobs", "created_at", "incomplete_details", "input_tokens",
    "input_tokens_details", "cached_tokens", "output_tokens", "output_tokens_details",
    "reasoning_tokens", "sequence_number", "output_index", "item_id", "content_index", "part", "item",
    "response", "param",
    # Anthropic's Messages API: its request (message threads), its `message`, events and errors
    "system", "input_schema", "tool_use_id", "is_error", "thread", "previous_message_id",
    "stop_sequences", "top_k", "stop_reason", "stop_sequence", "content_block", "partial_json",
    "details", "error_code",
})
#: The keys whose value is a JSON schema (a tool's parameters, a response format's schema, a
#: Messages tool's input schema).
_SCHEMA_KEYS = frozenset({"parameters", "schema", "input_schema"})
#: The block types whose `input` is a tool's arguments, kept whole (`kept_arguments`).
_TOOL_USES = frozenset({"tool_use", "server_tool_use"})
#: JSON Schema's keywords: what a tool's parameters may hold besides its property names.
SCHEMA_KEYWORDS = frozenset({
    "type", "properties", "required", "items", "prefixItems", "description", "title", "enum",
    "const", "default", "examples", "anyOf", "oneOf", "allOf", "not", "$defs", "definitions", "$ref",
    "$schema", "$id", "additionalProperties", "patternProperties", "propertyNames", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "contains", "minProperties",
    "maxProperties", "nullable", "strict", "discriminator",
})
#: Schema keywords whose value maps names the schema chose (a tool's argument names) to schemas.
_NAMED_SCHEMAS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
#: The multipart boundary a kept form is written with (a client draws a new one for every request).
BOUNDARY = "cassette-boundary"

Prose = Callable[[str], str]
#: The shortest redacted value also taken out of the replies: a shorter one ("5") may be a reply's
#: own text, which replay must serve as it was.
_ECHOED = 8


class Keeper:
    """The redaction of one cassette: `prose` (the detector) for every kept string, and the values
    redacted from its requests, also taken out of its replies, where an error may quote a request
    (the scripted endpoint's message for an unexpected call quotes the whole request)."""

    def __init__(self, prose: Prose) -> None:
        self.prose = prose
        self.redacted: set[str] = set()
        # An async library records from several threads: a reply must not read the set mid-update.
        self._lock = threading.Lock()

    def redact(self, value: Any) -> str:
        """`REDACTED`, noting each string and number `value` holds (at any depth)."""
        if isinstance(value, dict):
            for key, item in value.items():
                self.redact(key)
                self.redact(item)
        elif isinstance(value, list):
            for item in value:
                self.redact(item)
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = str(value)
            with self._lock:
                self.redacted.update(v for v in (text, *text.split()) if len(v) >= _ECHOED and v != REDACTED)
        return REDACTED

    def reply(self, text: str) -> str:
        """A reply's string: through `prose`, and without any value redacted from a request."""
        text = self.prose(text)
        with self._lock:
            redacted = sorted(self.redacted, key=len, reverse=True)
        for value in redacted:
            text = text.replace(value, REDACTED)
        return text


def keep_request(request: Request, keeper: Keeper) -> Request:
    """A copy of `request` holding only what the cassette keeps (see the module's docstring)."""
    request = copy.deepcopy(request)
    request.uri = _kept_uri(request.uri, keeper)
    headers = {k.lower(): v for k, v in request.headers.items()}
    body, headers = _kept_body(request.body, headers, keeper)
    # Header values are redacted without noting them: the endpoint never quotes a header, and a
    # reply must not lose `application/json` because a request accepted it.
    request.headers = {k: keeper.prose(_header(headers, k)) if k in REQUEST_HEADERS else REDACTED
                       for k in headers}
    request.body = body
    return request


def keep_response(response: dict[str, Any], keeper: Keeper) -> dict[str, Any]:
    """A copy of a vcrpy response holding only what the cassette keeps: its strings also lose every
    value `keeper` redacted from a request."""
    response = copy.deepcopy(response)
    replies = Keeper(keeper.reply)
    headers = {k.lower(): v for k, v in response["headers"].items()}
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        single = {k: v[0] if isinstance(v, list) and v else v for k, v in headers.items()}
        body["string"], single = _kept_body(body["string"], single, replies)
        headers = {k: [v] for k, v in single.items()}
    response["headers"] = {k: [keeper.prose(str(x)) for x in v] if isinstance(v, list)
                           else keeper.prose(str(v))
                           for k, v in headers.items() if k in RESPONSE_HEADERS}
    return response


def _kept_uri(uri: str, keeper: Keeper) -> str:
    prose = keeper.prose
    parts = urlsplit(uri)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(prose(k), prose(v) if k.lower() in QUERY_NAMES else REDACTED) for k, v in pairs]
    query = parts.query if kept == pairs else urlencode(kept, quote_via=quote, safe="[]")
    # A user and password before the host are dropped whole: no match needs them, and a redaction
    # there would make the host unparsable.
    netloc = parts.netloc.rpartition("@")[2]
    if parts.hostname in ("127.0.0.1", "localhost", "::1"):  # the loopback port changes every run
        netloc = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    # A client percent-encodes a key in a path segment (`sk%2Dproj%2D...`): scrubbed decoded.
    path = unquote(parts.path)
    path = parts.path if prose(path) == path else quote(prose(path), safe="/[]")
    return prose(urlunsplit((parts.scheme, netloc, path, query, "")))


def _kept_body(body: bytes | str | None, headers: dict[str, Any],
               keeper: Keeper) -> tuple[Any, dict[str, Any]]:
    """The body as kept, and the headers that describe it (its encoding undone, its charset UTF-8)."""
    if not body:
        return body, headers
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    content_type = _header(headers, "content-type")
    text = readable_text(raw, _header(headers, "content-encoding"), content_type)
    if text is None:
        return digest(raw).encode("utf-8"), headers
    headers = {k: v for k, v in headers.items() if k != "content-encoding"}
    if "charset=" in content_type.lower():
        media = content_type.split(";")[0]
        headers["content-type"] = f"{media}; charset=utf-8"
    kept, boundary = kept_text(text, content_type, keeper)
    if boundary:
        headers["content-type"] = f"multipart/form-data; boundary={BOUNDARY}"
    return kept.encode("utf-8"), headers


def _header(headers: Mapping[str, Any], name: str) -> str:
    value = headers.get(name, "")
    value = value[0] if isinstance(value, list) and value else value
    return value.decode("latin-1") if isinstance(value, bytes) else str(value or "")


def digest(raw: bytes) -> str:
    """What a body that cannot be read as text is kept as: its size and sha256, nothing of it."""
    return f"[{len(raw)} bytes, not text: sha256 {hashlib.sha256(raw).hexdigest()}]"


def readable_text(raw: bytes, encoding: str = "", content_type: str = "") -> str | None:
    """`raw` as text: its content encodings undone (gzip, deflate), decoded by its declared charset,
    a JSON body by its own UTF-8/16/32 form (RFC 8259), anything else as UTF-8; None if it cannot be."""
    try:
        for coding in reversed([c.strip().lower() for c in encoding.split(",") if c.strip()]):
            raw = _decoded(raw, coding)
        charset = _charset(content_type)
        if charset is None and ("json" in content_type.lower() or raw[:2] in _BOMS):
            charset = json.detect_encoding(raw)  # a BOM, or JSON's UTF-16/32 by its zero bytes
        return raw.decode(charset or "utf-8")
    except (OSError, EOFError, zlib.error, LookupError, UnicodeDecodeError, ValueError):
        return None


_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\xef\xbb")


def _decoded(raw: bytes, coding: str) -> bytes:
    if coding in ("gzip", "x-gzip"):
        return gzip.decompress(raw)
    if coding == "deflate":  # zlib-wrapped as the RFC says, or raw as some servers send it
        try:
            return zlib.decompress(raw)
        except zlib.error:
            return zlib.decompress(raw, -zlib.MAX_WBITS)
    if coding == "identity":
        return raw
    raise ValueError(f"content encoding {coding!r} is not one recording can undo")


def _charset(content_type: str) -> str | None:
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


def kept_text(text: str, content_type: str, keeper: Keeper) -> tuple[str, bool]:
    """What is kept of a body read as `text`, and whether it was written as a multipart form (with
    `BOUNDARY`): a form's allowlisted fields, JSON's allowlisted keys, a stream's events; prose."""
    prose = keeper.prose
    media = content_type.split(";")[0].strip().lower()
    if media == "application/x-www-form-urlencoded":
        return _kept_form(text, keeper), False
    if media.startswith("multipart/"):
        form = _kept_multipart(text, content_type, keeper)
        if form is not None:
            return form, True
        return prose(text), False
    if media == "text/event-stream":
        return "\n".join(_kept_event_line(line, keeper) for line in text.split("\n")), False
    if text.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except ValueError:
            return prose(text), False
        kept = kept_json(value, keeper)
        # The client's own serialisation when nothing changed: a cassette diff shows real changes.
        return (text if kept == value else json.dumps(kept, ensure_ascii=False, separators=(",", ":"))), False
    return prose(text), False


def _kept_form(text: str, keeper: Keeper) -> str:
    pairs = parse_qsl(text, keep_blank_values=True)
    kept = [(keeper.prose(k), keeper.prose(v) if k.lower() in QUERY_NAMES else keeper.redact(v))
            for k, v in pairs]
    return urlencode(kept, quote_via=quote, safe="[]")


def _kept_multipart(text: str, content_type: str, keeper: Keeper) -> str | None:
    """The form's fields by name, each value `REDACTED` but `QUERY_NAMES`' (a file's name and content
    too), written with `BOUNDARY` so that the live request, redacted alike, still matches."""
    parser = email.parser.Parser(policy=email.policy.HTTP)
    message = parser.parsestr(f"Content-Type: {content_type}\r\n\r\n{text}")
    if not message.is_multipart():
        return None
    lines = []
    for part in message.iter_parts():
        name = str(part.get_param("name", "", header="content-disposition"))
        content = part.get_content()
        kept = keeper.prose(content) if name.lower() in QUERY_NAMES and isinstance(content, str) else (
            keeper.redact(content if isinstance(content, str) else ""))
        lines += [f"--{BOUNDARY}", f'Content-Disposition: form-data; name="{keeper.prose(name)}"', "", kept]
    return "\r\n".join([*lines, f"--{BOUNDARY}--", ""])


def _kept_event_line(line: str, keeper: Keeper) -> str:
    field, colon, value = line.partition(":")
    if field == "data" and colon and value.strip() not in ("", "[DONE]"):
        kept, _ = kept_text(value.lstrip(), "application/json", keeper)
        return f"data: {kept}"
    return keeper.prose(line)


def kept_json(value: Any, keeper: Keeper, schema: bool = False) -> Any:
    """`value` with every object key outside the allowlist redacted: `JSON_KEYS`, or inside a JSON
    schema its keywords and property names. Kept strings (and every key) go through `prose`."""
    prose = keeper.prose
    if isinstance(value, list):
        return [kept_json(item, keeper, schema) for item in value]
    if isinstance(value, str):
        return prose(value)
    if not isinstance(value, dict):
        return value
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if not schema and key == "input" and value.get("type") in _TOOL_USES:
            kept[key] = kept_arguments(item, keeper)
        elif schema and key in _NAMED_SCHEMAS and isinstance(item, dict):
            kept[prose(key)] = {prose(k): kept_json(v, keeper, True) for k, v in item.items()}
        elif key in (SCHEMA_KEYWORDS if schema else JSON_KEYS):
            kept[key] = kept_json(item, keeper, schema or key in _SCHEMA_KEYS)
        else:
            kept[prose(key)] = item if isinstance(item, bool) or item is None else keeper.redact(item)
    return kept


def kept_arguments(value: Any, keeper: Keeper) -> Any:
    """A tool call's arguments given as JSON (a Messages `tool_use` block's `input`), kept as a
    chat-completions call's `arguments` string is: its JSON text through `prose` whole (so that a
    credential's name and value, a key and its string, are read together), or `REDACTED` if what
    `prose` left is no longer JSON. A string (arguments a script wrote as malformed JSON) is prose."""
    if isinstance(value, str):
        return keeper.prose(value)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return keeper.redact(value)
    kept = keeper.prose(text)
    if kept == text:
        return value
    try:
        return json.loads(kept)
    except (ValueError, RecursionError):
        return keeper.redact(value)
