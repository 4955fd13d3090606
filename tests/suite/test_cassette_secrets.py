"""Every credential shape, in every place a cassette holds text, is scrubbed whole before recording.

Each shape once reached the disk, whole or in part: a detector's capture group (`ghp` of a GitHub
token) was all that was replaced, a private key kept its body, and names, encodings and values the
patterns did not expect (`openai_api_key`, an environment dump, Basic, `hf_`, `&` in a password, a
key with no digit, `\\u002d` for a dash) went undetected.
"""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pytest

from conformance import ExtractTurn, ScriptedModel, _cassettes, _http, render, server
from conformance._cassettes import secrets_in
from tests.suite.conftest import ROOT

HEX = "3f9a1c0be27d4856a0c1f2e3d4b5a697"
_PEM_BODY = "MIIEowIBAAKCAQEA7xQ9Zk3vN1pYb2LqR8sT4uW6yX0aC5dE7fG9hJ1kL3mN5oP7qR9s"
_BASIC = "dXNlcjpzM2NyZXQtcGFzc3dvcmQ="  # base64 of user:s3cret-password

#: name: (the text that carries the credential, the credential, the name it goes by in a JSON field
#: or a query string or None when it names itself).
SHAPES: dict[str, tuple[str, str, str | None]] = {
    "github token": ("token ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 here",
                     "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", None),
    "rsa private key": (f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}\n-----END RSA PRIVATE KEY-----",
                        _PEM_BODY, None),
    "hex openai_api_key": (f"openai_api_key: {HEX}", HEX, "openai_api_key"),
    "hex x-api-key": (f"x-api-key: {HEX}", HEX, "x-api-key"),
    "environment dump": (f"PATH=/usr/bin\nOPENAI_API_KEY={HEX}\nHOME=/root", HEX, "OPENAI_API_KEY"),
    "basic auth": (f"Authorization: Basic {_BASIC}", _BASIC, None),
    "hugging face token": ("use hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 to pull",
                           "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", None),
    "password with &": ('password="p&ssw0rd&more!"', "p&ssw0rd&more!", "password"),
    "key without a digit": ('api_key: "abcdefghijklmnopqrstuvwxyzABCDEF"',
                            "abcdefghijklmnopqrstuvwxyzABCDEF", "api_key"),
    "escaped dash": ("key sk-proj-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1 in use", "sk-proj-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1", None),
    "bearer": (f"Authorization: Bearer tok{HEX}", f"tok{HEX}", None),
    "aws": ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", None),
    "slack": ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
              "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", None),
    "url credentials": ("https://deploy:hunter2hunter2@git.example/repo", "hunter2hunter2", None),
    "client secret": (f"client_secret={HEX}&grant_type=x", HEX, "client_secret"),
    "anthropic key": ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                      "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", None),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            None),
    "google key": ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
                   None),
    "gitlab token": ("glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt", None),
}


def _spellings(secret: str) -> list[str]:
    """The credential and the pieces a partial redaction would leave of it."""
    tail = secret[len(secret) // 3:]
    return [secret, tail, secret.replace("-", "\\u002d")]


def _body(shape: str) -> str:
    fragment, secret, name = SHAPES[shape]
    body: dict[str, Any] = {"messages": [
        {"role": "system", "content": "Reply with a single JSON object."},
        {"role": "user", "content": f"Here it is: {fragment}"},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"stdout": fragment})}],
        "metadata": {"note": fragment}}
    if name is not None:
        body[name] = secret
    text = json.dumps(body)
    return text.replace("-", "\\u002d") if shape == "escaped dash" else text


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_credential_is_scrubbed_whole_from_every_part_of_a_recording(tmp_path: Path, shape: str) -> None:
    fragment, secret, name = SHAPES[shape]
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    query = f"ref={quote(fragment, safe='')}" + (f"&{name}={quote(secret, safe='')}" if name else "")
    profile = _http.HttpProfile("record", cassette)
    reply = profile.run(lambda _: httpx.post(
        f"{profile.base_url}/chat/completions?{query}", content=_body(shape), timeout=5,
        headers={"Content-Type": "application/json", "X-Debug": fragment.replace("\n", " ")}),
        ScriptedModel([ExtractTurn(outputs={"answer": "5", "note": fragment})]))
    profile.close()
    assert reply.status_code == 200, reply.text
    assert secret in reply.text  # the live reply is not altered
    text = cassette.read_text(encoding="utf-8")
    assert not [s for s in _spellings(secret) if s in text], text
    assert _cassettes.REDACTED in text
    assert list(secrets_in(tmp_path)) == []


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_scan_finds_every_credential_shape_unscrubbed(tmp_path: Path, shape: str) -> None:
    (tmp_path / "leak.yml").write_text(
        "interactions:\n- request:\n    body: " + json.dumps(_body(shape)) + "\n", encoding="utf-8")
    assert list(secrets_in(tmp_path)), f"{shape} went undetected"
    scrubbed = _cassettes.scrub(_body(shape))
    assert not [s for s in _spellings(SHAPES[shape][1]) if s in scrubbed], scrubbed
    assert json.loads(scrubbed)["messages"][0]["content"] == "Reply with a single JSON object."


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_the_scan_reads_every_extension_vcrpy_writes(tmp_path: Path, suffix: str) -> None:
    (tmp_path / f"leak{suffix}").write_text(json.dumps({"body": f"api_key={HEX}"}), encoding="utf-8")
    assert list(secrets_in(tmp_path)) == [f"leak{suffix}:1: a credential"]


def test_scan_cassettes_fails_on_a_path_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    run = subprocess.run([sys.executable, "-m", "conformance", "scan-cassettes", str(missing)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "does not exist" in run.stderr and "no credential found" not in run.stdout


@pytest.mark.parametrize("netloc", ["deploy:hunter2hunter2@api.example",
                                    "deploy:hunter2%40x@api.example:8443",
                                    "deploy:hunter2hunter2@[2001:db8::1]:8443"])
def test_credentials_in_a_urls_userinfo_are_dropped_whatever_the_host(netloc: str) -> None:
    # Scrubbing once wrote `[REDACTED]` into the host part of the URL, which vcrpy then refused to
    # parse: the recording raised inside the library's own HTTP call.
    from vcr.request import Request

    request = Request("POST", f"https://{netloc}/v1/chat/completions?api-version=1", b"{}", {})
    uri = _cassettes._scrub_request(request).uri
    assert "hunter2" not in uri and "deploy" not in uri and "REDACTED" not in uri, uri
    assert uri == f"https://{netloc.rpartition('@')[2]}/v1/chat/completions?api-version=1"


def test_a_percent_encoded_credential_in_a_urls_path_is_scrubbed_and_found() -> None:
    # A key in a path segment is percent-encoded by the client (`sk%2Dproj%2D...`); the patterns
    # read the URL as written, so the key reached the cassette and the scan missed it.
    from vcr.request import Request

    secret = SHAPES["escaped dash"][1]
    encoded = secret.replace("-", "%2D")
    request = Request("GET", f"https://api.example/v1/keys/{encoded}/usage?api-version=1", b"", {})
    uri = _cassettes._scrub_request(request).uri
    assert secret not in unquote(uri) and "Zx8Yw7" not in uri, uri
    assert uri.startswith("https://api.example/v1/keys/") and uri.endswith("/usage?api-version=1"), uri
    assert list(_cassettes._findings(f"uri: https://api.example/v1/keys/{encoded}/usage\n"))


def test_an_ipv6_loopback_url_is_recorded_parsable_without_its_port() -> None:
    # `http://::1/...` (brackets lost with the port) is no URL: reading its port raises.
    from urllib.parse import urlsplit

    from vcr.request import Request

    uri = _cassettes._scrub_request(Request("POST", "http://[::1]:41235/v1/chat/completions", b"{}", {})).uri
    assert uri == "http://[::1]/v1/chat/completions"
    assert urlsplit(uri).port is None and urlsplit(uri).hostname == "::1"


# Cassettes by allowlist (issue 36): each shape below reached a cassette with a clean scan, because
# recording redacted by a list of names and patterns, and read only UTF-8 bodies.

#: A credential of no known shape: only its place (a name outside the allowlist) gives it away.
PLAIN = "Qm9sdC1zZWNyZXQtdmFsdWUtOTk4"


def _record(tmp_path: Path, content: bytes | str, headers: dict[str, str], query: str = "",
            answer: str = "5") -> tuple[str, httpx.Response]:
    """Record one POST to the loopback endpoint; the cassette's text and the live reply."""
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    profile = _http.HttpProfile("record", cassette)
    reply = profile.run(lambda _: httpx.post(
        f"{profile.base_url}/chat/completions{query}", content=content, headers=headers, timeout=5),
        ScriptedModel([ExtractTurn(outputs={"answer": answer})]))
    profile.close()
    return cassette.read_text(encoding="utf-8"), reply


def _stored(text: str) -> dict[str, Any]:
    """The first request a cassette holds, as vcrpy reads it (YAML folds and escapes its text)."""
    import yaml

    request: dict[str, Any] = yaml.safe_load(text)["interactions"][0]["request"]
    return request


def _replays(tmp_path: Path, content: bytes | str, headers: dict[str, str],
             query: str = "") -> httpx.Response:
    """The same POST replayed from the cassette `_record` wrote: it must match."""
    cassette = tmp_path / "mine" / "http" / "scenario.yaml"
    profile = _http.HttpProfile("replay", cassette)
    try:
        return profile.run(lambda _: httpx.post(
            f"{profile.base_url}/chat/completions{query}", content=content, headers=headers, timeout=5),
            ScriptedModel([ExtractTurn(outputs={"answer": "5"})]))
    finally:
        profile.close()


def _chat(**extra: Any) -> dict[str, Any]:
    return {"model": "scripted", "messages": [
        {"role": "system", "content": "Reply with a single JSON object."},
        {"role": "user", "content": "What is 2 + 3? café"}], **extra}


#: How a body may be sent that is not UTF-8: (its bytes, its headers).
_ENCODED: dict[str, tuple[bytes, dict[str, str]]] = {
    "gzip": (gzip.compress(json.dumps(_chat(api_key=PLAIN)).encode()),
             {"Content-Type": "application/json", "Content-Encoding": "gzip"}),
    "latin-1": (json.dumps(_chat(api_key=PLAIN), ensure_ascii=False).encode("latin-1"),
                {"Content-Type": "application/json; charset=latin-1"}),
    "utf-16": (json.dumps(_chat(api_key=PLAIN), ensure_ascii=False).encode("utf-16"),
               {"Content-Type": "application/json"}),
}


@pytest.mark.parametrize("encoding", sorted(_ENCODED))
def test_a_body_that_is_not_utf8_is_decoded_and_kept_by_the_allowlist(tmp_path: Path, encoding: str) -> None:
    # Such a body once skipped scrubbing and was stored as `!!binary`, which the scan cannot read.
    content, headers = _ENCODED[encoding]
    text, _ = _record(tmp_path, content, headers)
    assert "!!binary" not in text and PLAIN not in text, text
    body = json.loads(_stored(text)["body"])
    assert body["messages"][1]["content"] == "What is 2 + 3? café" and body["api_key"] == "[REDACTED]"
    assert list(secrets_in(tmp_path)) == []
    assert _replays(tmp_path, content, headers).status_code in (200, 400)  # matched, as recorded


@pytest.mark.parametrize("content_type", ["application/octet-stream", "application/json"])
def test_a_body_that_cannot_be_read_is_kept_only_as_its_digest_and_still_replays(
    tmp_path: Path, content_type: str
) -> None:
    # Latin-1 JSON that does not say so, say: not UTF-8, and no charset to read it by.
    content = b'{"api_key": "' + PLAIN.encode() + b'", "note": "caf\xe9"}' + bytes(range(128, 256))
    headers = {"Content-Type": content_type}
    text, recorded = _record(tmp_path, content, headers)
    assert "!!binary" not in text and PLAIN not in text, text
    assert hashlib.sha256(content).hexdigest() in text
    assert list(secrets_in(tmp_path)) == []
    replayed = _replays(tmp_path, content, headers)
    assert (replayed.status_code, replayed.text) == (recorded.status_code, recorded.text)


@pytest.mark.parametrize("name", ["access_key", "auth", "subscription-key", "X-Amz-Security-Token",
                                  "X-Amz-Signature", "code"])
def test_a_query_value_outside_the_allowlist_is_redacted(tmp_path: Path, name: str) -> None:
    body = json.dumps(_chat())
    query = f"?api-version=2024-06-01&{name}={PLAIN}"
    text, _ = _record(tmp_path, body, {"Content-Type": "application/json"}, query)
    assert PLAIN not in text and "api-version=2024-06-01" in text, text
    assert f"{name}=[REDACTED]" in _stored(text)["uri"], text
    assert list(secrets_in(tmp_path)) == []
    assert _replays(tmp_path, body, {"Content-Type": "application/json"}, query).status_code == 200


#: JSON bodies whose names no pattern knew: each value must go, wherever the key sits.
_JSON_NAMES: dict[str, Any] = {
    "access_key": PLAIN, "subscription_key": PLAIN, "private_token": PLAIN, "pwd": PLAIN,
    "authorization": f"Token {PLAIN}", "session_token_hex": PLAIN, "otp": 73914820,
    "metadata": {"session_token_hex": PLAIN, "nested": [PLAIN]},
}


@pytest.mark.parametrize("name", sorted(_JSON_NAMES))
@pytest.mark.parametrize("where", ["top", "message"])
def test_a_json_value_outside_the_allowlist_is_redacted(tmp_path: Path, name: str, where: str) -> None:
    body = _chat()
    if where == "top":
        body[name] = _JSON_NAMES[name]
    else:
        body["messages"][1][name] = _JSON_NAMES[name]
    text, _ = _record(tmp_path, json.dumps(body), {"Content-Type": "application/json"})
    assert PLAIN not in text and "73914820" not in text, text
    stored = json.loads(_stored(text)["body"])
    assert (stored if where == "top" else stored["messages"][1])[name] == "[REDACTED]", text
    assert stored["messages"][1]["content"] == "What is 2 + 3? café"
    assert list(secrets_in(tmp_path)) == []
    assert _replays(tmp_path, json.dumps(body), {"Content-Type": "application/json"}).status_code == 200


def test_a_tools_schema_keeps_its_property_names_and_redacts_what_is_no_keyword(tmp_path: Path) -> None:
    parameters = {"type": "object", "properties": {"pwd": {"type": "string", "description": "a word"}},
                  "required": ["pwd"], "x-vault-token": PLAIN}
    body = _chat(tools=[{"type": "function", "function": {"name": "login", "parameters": parameters}}])
    text, _ = _record(tmp_path, json.dumps(body), {"Content-Type": "application/json"})
    kept = json.loads(_stored(text)["body"])["tools"][0]["function"]["parameters"]
    assert PLAIN not in text and kept == {**parameters, "x-vault-token": "[REDACTED]"}, text


@pytest.mark.parametrize("form", ["urlencoded", "multipart"])
def test_a_form_field_outside_the_allowlist_is_redacted(tmp_path: Path, form: str) -> None:
    fields = {"model": "scripted", "client_assertion": PLAIN, "session_token_hex": PLAIN}
    request = httpx.Request("POST", "http://127.0.0.1/", data=fields,
                            files={"upload": ("notes.txt", PLAIN.encode())} if form == "multipart" else None)
    content = request.read()
    headers = {"Content-Type": request.headers["Content-Type"]}
    text, _ = _record(tmp_path, content, headers)
    assert PLAIN not in text and "notes.txt" not in text, text
    assert "client_assertion" in text and "session_token_hex" in text and "scripted" in text, text
    assert list(secrets_in(tmp_path)) == []
    # Replayed with a new multipart boundary, as a client draws one per request: it still matches.
    again = httpx.Request("POST", "http://127.0.0.1/", data=fields,
                          files={"upload": ("notes.txt", PLAIN.encode())} if form == "multipart" else None)
    replayed = _replays(tmp_path, again.read(), {"Content-Type": again.headers["Content-Type"]})
    assert replayed.status_code == 400


def test_a_request_header_outside_the_allowlist_keeps_its_name_not_its_value(tmp_path: Path) -> None:
    headers = {"Content-Type": "application/json", "Authorization": f"Token {PLAIN}",
               "X-Session-Token-Hex": PLAIN, "Ocp-Apim-Subscription-Key": PLAIN}
    text, _ = _record(tmp_path, json.dumps(_chat()), headers)
    assert PLAIN not in text, text
    kept = _stored(text)["headers"]
    assert kept["x-session-token-hex"] == kept["authorization"] == ["[REDACTED]"], kept
    assert kept["content-type"] == ["application/json"]
    assert list(secrets_in(tmp_path)) == []


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_the_scan_flags_a_header_value_only_where_it_is_not_the_placeholder(
    tmp_path: Path, serializer: str
) -> None:
    from vcr.request import Request
    from vcr.serialize import serialize
    from vcr.serializers import jsonserializer, yamlserializer

    module = yamlserializer if serializer == "yaml" else jsonserializer
    for name, value in (("kept", "[REDACTED]"), ("leak", f"Token {PLAIN}")):
        request = Request("POST", "http://127.0.0.1/v1/chat/completions", b"{}",
                          {"authorization": value, "cookie": value})
        response = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": b""}}
        text = serialize({"requests": [request], "responses": [response]}, module)
        (tmp_path / f"{name}.{serializer}").write_text(text, encoding="utf-8")
    found = list(secrets_in(tmp_path))
    assert found and all(f.startswith(f"leak.{serializer}:") for f in found), found
    assert {f.rpartition(": ")[2] for f in found} == {"an authorization header", "a cookie header"}, found


#: Tokens in prose (a prompt, a tool's output) that neither the patterns nor the detector knew.
_PROSE = {
    "google oauth": "ya29.a0AfH6SMBx3kL9mN2pQ7rS8tU1vW4xY5zA6bC7dE8fG9hI0jK1lM2nO3pQ4",
    "npm": "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "telegram": "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    "telegram long": "7012345678:AAFz1x2y3w4v5u6t7s8r9q0p1o2n3m4l5k6j7i8",
}


@pytest.mark.parametrize("shape", sorted(_PROSE))
def test_a_token_in_prose_is_redacted_and_found(tmp_path: Path, shape: str) -> None:
    token = _PROSE[shape]
    body = _chat()
    body["messages"][1]["content"] = f"deploy with {token} now"
    text, _ = _record(tmp_path, json.dumps(body), {"Content-Type": "application/json"})
    assert token not in text and token[len(token) // 2:] not in text, text
    assert json.loads(_stored(text)["body"])["messages"][1]["content"] == "deploy with [REDACTED] now"
    assert list(secrets_in(tmp_path)) == []
    (tmp_path / "leak.yaml").write_text(f"interactions:\n- request:\n    body: 'deploy with {token}'\n")
    assert list(secrets_in(tmp_path / "leak.yaml")), f"the scan missed {shape}"


def test_the_scan_reads_a_binary_body(tmp_path: Path) -> None:
    # vcrpy writes a body that is not UTF-8 as `!!binary` base64: the scan once read past it.
    hidden = gzip.compress(f"Authorization: Bearer tok{HEX}".encode())
    unreadable = bytes(range(128, 256))
    for name, raw in (("gzip", hidden), ("utf-16", f"password={PLAIN}".encode("utf-16")),
                      ("unreadable", unreadable)):
        encoded = base64.b64encode(raw).decode()
        (tmp_path / f"{name}.yaml").write_text(
            f"interactions:\n- request:\n    body: !!binary |\n      {encoded}\n", encoding="utf-8")
    found = list(secrets_in(tmp_path))
    assert {"gzip.yaml:3: a bearer token", "unreadable.yaml:3: " + _cassettes.UNREADABLE,
            "utf-16.yaml:3: a credential"} <= set(found), found


#: A request of each API the endpoint serves, with a tool, as its clients send one.
_REQUESTS: dict[str, dict[str, Any]] = {
    "chat-completions": _chat(tools=[{"type": "function", "function": {"name": "add"}}]),
    "OpenAI Responses API": {"model": "m", "instructions": "Answer.", "include": [], "input": [
        {"role": "user", "content": "What is 2 + 3?"}], "tools": [{"type": "function", "name": "add"}]},
    "Anthropic Messages API": {"model": "m", "max_tokens": 100, "system": "Answer.", "messages": [
        {"role": "user", "content": "What is 2 + 3?"}], "tools": [{"name": "add", "input_schema": {}}]},
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", [api.name for api in server.APIS])
def test_the_allowlist_keeps_every_reply_the_suite_serves(api: str, stream: bool) -> None:
    # Replay serves the kept response: a key of the suite's reply outside the allowlist would reach
    # the client as `[REDACTED]` on replay and change a verdict. (The Responses and Messages APIs'
    # replies once lost their `call_id`, `stop_reason`, `tool_use` input and usage counts.)
    from conformance import StepTurn, _keep

    served = next(a for a in server.APIS if a.name == api)
    owner = ScriptedModel()  # what holds a Messages thread
    body = served.read(owner, {**_REQUESTS[api], "stream": stream})
    chat = served.chat_body(body)
    for turn in (StepTurn(thought="I will add", tool_name="add", tool_args={"a": 1}),
                 ExtractTurn(outputs={"answer": "5"})):
        message = render.openai_message(turn, 1, render.tool_names(server.native_call(chat).tools))
        content_type, payload = served.reply(owner, body, message, 1)
        kept, _ = _keep.kept_text(payload.decode(), content_type, _keep.Keeper(lambda text: text))
        assert kept == payload.decode()
    error = json.dumps(served.error(500, "scripted fault: Internal Server Error"))
    assert _keep.kept_text(error, "application/json", _keep.Keeper(lambda text: text))[0] == error


@pytest.mark.parametrize("api", sorted(_REQUESTS))
def test_the_allowlist_keeps_every_request_key_the_endpoint_reads(api: str) -> None:
    # The matcher compares the kept request: a key the endpoint reads (the instructions, the input
    # items, a Messages thread) redacted would let a changed prompt replay unnoticed.
    from conformance import _keep

    body = _REQUESTS[api]
    assert _keep.kept_json(body, _keep.Keeper(lambda text: text)) == body


def test_a_tool_use_input_is_kept_whole_and_scrubbed_as_arguments_are() -> None:
    # A Messages `tool_use` block carries the tool's arguments as an object, whose keys are the tool's
    # own: kept whole, and scanned as one JSON text, as a chat-completions call's `arguments` are.
    from conformance import _keep

    def blocks(value: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f",
                                                  "input": value}]}

    keeper = _keep.Keeper(_cassettes.scrub)
    plain = {"a": 1, "nested": {"pwd_hint": ["x"]}}
    assert _keep.kept_json(blocks(plain), keeper) == blocks(plain)
    leaked = _keep.kept_json(blocks({"api_key": HEX, "a": 1}), keeper)
    assert HEX not in json.dumps(leaked) and leaked["content"][0]["input"]["a"] == 1
    assert _keep.kept_json({"type": "message", "input": {"pwd": PLAIN}}, keeper)["input"] == {
        "pwd": "[REDACTED]"}  # elsewhere `input` is the Responses API's items, read key by key


def test_every_committed_cassette_is_what_recording_it_again_would_keep() -> None:
    # A committed cassette replays only if the live request, kept as recording keeps it, matches the
    # stored one: so every stored request and response must be its own kept form (and scan clean).
    import yaml
    from vcr import matchers
    from vcr.matchers import requests_match
    from vcr.request import Request

    paths = sorted(ROOT.joinpath("cassettes").rglob("*.yaml"))
    assert paths
    for path in paths:
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            stored = Request._from_dict(interaction["request"])
            match_on = [getattr(matchers, name) for name in _cassettes.MATCH_ON]
            assert requests_match(_cassettes._scrub_request(stored), stored, match_on), path
            assert _cassettes._scrub_request(stored)._to_dict() == stored._to_dict(), path
            response = copy.deepcopy(interaction["response"])
            response["body"]["string"] = response["body"]["string"].encode()
            kept = _cassettes._scrub_response(response)
            assert kept["body"]["string"].decode() == interaction["response"]["body"]["string"], path
            assert kept["headers"] == interaction["response"]["headers"], path
    assert list(secrets_in(ROOT / "cassettes")) == []
