"""Every credential shape, in every place a cassette holds text, is scrubbed whole before recording.

Each shape once reached the disk, whole or in part: a detector's capture group (`ghp` of a GitHub
token) was all that was replaced, a private key kept its body, and names, encodings and values the
patterns did not expect (`openai_api_key`, an environment dump, Basic, `hf_`, `&` in a password, a
key with no digit, `\\u002d` for a dash) went undetected.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pytest

from conformance import ExtractTurn, ScriptedModel, _cassettes, _http
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
