"""vcrpy cassettes of the HTTP profile: where they live, how they match, what they may hold.

A cassette holds one scenario's exchanges with the scripted endpoint. Requests match on method,
path and body (compared as JSON), never on host or port: the loopback server's port changes on
every run. Only the headers body matching and replay need are kept, query parameters named like a
credential (`key`, `api_key`, `access_token`, `sig`, ...) are dropped from the URL, and a
credential's value in the URL or a request or response body is replaced by `[REDACTED]` (the live
request is scrubbed the same way before it is matched, so it still replays). `secrets_in` scans
cassettes for any credential that slipped through anyway; a recording that holds one is never
written.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance.server import request_call

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

    # vcrpy is imported only when an http scenario opens a cassette: its import costs a noticeable
    # part of the suite's start-up, and most runs (a binding without `http`, `-k`) never need it.
    from vcr.cassette import Cassette
    from vcr.request import Request

#: What a replayed request must share with the recorded one.
MATCH_ON = ("method", "path", "body")
#: The only headers a cassette keeps: the body is compared as JSON only with its content type, and
#: a replayed 429 needs its Retry-After. Every other header (authorization, cookies, keys) is dropped.
_REQUEST_HEADERS = frozenset({"content-type"})
_RESPONSE_HEADERS = frozenset({"content-type", "retry-after"})

#: The names a credential goes by in a query string, a form or a JSON body (matched ignoring case,
#: `-` or `_` between words).
_CREDENTIAL_NAME = (r"(?:api[-_]?key|key|(?:access|auth|refresh|id|session)[-_]?token|token"
                    r"|(?:client[-_]?)?secret|password|passwd|sig|signature)")

#: What must never appear in a cassette, by what it would be. A pattern's `secret` group is the value
#: that recording replaces in a URL or a body; a pattern without one finds a header, which recording
#: drops whole.
#:
#: These cover what the maintained detector (detect-secrets, whose provider patterns `scrub` and the
#: scan also apply) misses in a cassette: a bearer token (a header or a prompt), an `api-key`
#: header, `api_key` or `access_token` in a JSON body (a cassette holds each body as one quoted
#: string), `key=` in a query string and an `sk-proj-` key in a message (it knows only OpenAI's
#: legacy keys).
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "an authorization header": re.compile(r"^\s*-?\s*['\"]?(proxy-)?authorization['\"]?\s*:", re.I | re.M),
    "a cookie header": re.compile(r"^\s*-?\s*['\"]?(set-)?cookie['\"]?\s*:", re.I | re.M),
    "an API-key header": re.compile(r"^\s*-?\s*['\"]?([a-z0-9]+-)*api[-_]?key['\"]?\s*:", re.I | re.M),
    "a bearer token": re.compile(r"bearer\s+(?P<secret>[a-z0-9._~+/=-]{8,})", re.I),
    "an API key": re.compile(
        r"(?P<secret>\b(sk|rk|pk)-[a-z0-9_-]{16,}|\bAIza[0-9a-z_-]{30,}|\bgsk_[a-z0-9]{20,})", re.I),
    # A value of 16 or more token characters, a digit among them, after a credential's name: a key
    # with no telling prefix (Azure OpenAI's are 32 hex digits) in a URL, a form or a JSON body
    # (quotes possibly escaped). Ids are not named like credentials (`id`, `call_id`,
    # `idempotency_key`), so a hex id is not one.
    "a credential": re.compile(
        r"(?<![\w-])" + _CREDENTIAL_NAME + r"(?:\\*['\"])?\s*[:=]\s*(?:\\*['\"])?"
        r"(?P<secret>(?=[\w.~+/=-]*\d)[\w.~+/=-]{16,})", re.I),
}
#: What a credential's value becomes in a recorded URL or body: no pattern above matches it.
REDACTED = "[REDACTED]"
_CREDENTIAL_PARAMETER = re.compile(_CREDENTIAL_NAME, re.I)


def bundled_dir() -> Path:
    """The cassettes shipped with react-conformance (for its bundled bindings)."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "cassettes", package.parent / "cassettes"):
        if candidate.is_dir():
            return candidate
    return package.parent / "cassettes"


def cassette_path(root: Path, binding: str, feature: str, scenario: str) -> Path:
    """`<root>/<binding>/<feature>/<scenario>.yaml`, the scenario's test name made file-safe."""
    name = re.sub(r"\[(.*)\]$", r"-\1", scenario.removeprefix("test_"))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.")
    return root / binding / feature / f"{name}.yaml"


def _scrub_request(request: Request) -> Request:
    request = copy.deepcopy(request)
    parts = urlsplit(request.uri)
    # Like vcrpy's filter_query_parameters, but by pattern and ignoring case: that filter matches
    # exact names only, and `key`, `api-key`, `Api_Key`, `access_token`... all carry keys.
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if not _CREDENTIAL_PARAMETER.fullmatch(k)]
    query = parts.query if len(kept) == len(pairs) else urlencode(kept)
    netloc = parts.netloc
    if parts.hostname in ("127.0.0.1", "localhost", "::1"):  # the loopback port changes every run
        netloc = parts.hostname
    request.uri = scrub(urlunsplit((parts.scheme, netloc, parts.path, query, "")))
    request.headers = {k: v for k, v in request.headers.items() if k.lower() in _REQUEST_HEADERS}
    request.body = _scrub_body(request.body)
    return request


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {k: v for k, v in response["headers"].items()
                           if k.lower() in _RESPONSE_HEADERS}
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        body["string"] = _scrub_body(body["string"])
    return response


def scrub(text: str) -> str:
    """`text` with every credential's value (a `SECRET_PATTERNS` `secret` group, or what the
    detector finds) made `REDACTED`."""
    for pattern in SECRET_PATTERNS.values():
        if "secret" in pattern.groupindex:
            text = pattern.sub(_redact, text)
    for _, value in _detected(text):
        text = text.replace(value, REDACTED)
    return text


@cache
def _detectors() -> tuple[RegexBasedDetector, ...]:
    """detect-secrets' provider detectors (AWS, GitHub, Slack, Stripe, private keys, JWTs, ...):
    its regular-expression ones, less the public-IP one (an address is not a credential). Its
    entropy and keyword detectors flag every completion's random id, so they are left out."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.ip_public import IPPublicDetector

    plugins: list[type[Any]] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(plugin() for plugin in plugins
                 if issubclass(plugin, RegexBasedDetector) and plugin is not IPPublicDetector)


def _detected(text: str) -> Iterator[tuple[str, str]]:
    """(what, value) of every credential the detector finds in `text`."""
    for detector in _detectors():
        for value in detector.analyze_string(text):
            if value and value != REDACTED:
                yield f"a secret detect-secrets knows ({detector.secret_type})", value


def _redact(match: re.Match[str]) -> str:
    start, end = (i - match.start() for i in match.span("secret"))
    return match[0][:start] + REDACTED + match[0][end:]


def _scrub_body(body: bytes | str | None) -> bytes | str | None:
    if isinstance(body, str):
        return scrub(body)
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body  # binary: not text a credential could be found in
        scrubbed = scrub(text)
        return body if scrubbed == text else scrubbed.encode("utf-8")
    return body


def use_cassette(path: Path, record_mode: Literal["all", "none", "once"],
                 cassette_class: type[Cassette] | None = None) -> AbstractContextManager[Any]:
    """A vcrpy cassette at `path` with the profile's matching and scrubbing (any client, any host)."""
    import vcr
    from vcr.cassette import Cassette

    config = vcr.VCR(
        serializer="yaml", record_mode=record_mode, match_on=MATCH_ON,
        before_record_request=_scrub_request, before_record_response=_scrub_response,
        decode_compressed_response=True,
        # Re-recording drops stale interactions; replaying must never write (vcrpy would rewrite
        # the cassette with only the interactions a failed replay used).
        drop_unused_requests=record_mode == "all",
    ).get_merged_config(path=str(path), persister=_scanning_persister())
    return (cassette_class or Cassette).use(**config)  # type: ignore[no-any-return]


class ReplayCassette(Protocol):
    """What the http profile uses of a replaying cassette (see `replay_cassette`)."""

    model: ScriptedModel | None
    unmatched: list[str]


@cache
def replay_cassette() -> type[Cassette]:
    """The `ReplayCassette` class, defined on first use (it subclasses vcrpy's `Cassette`)."""
    from vcr.cassette import Cassette
    from vcr.errors import CannotOverwriteExistingCassetteException

    class _ReplayCassette(Cassette):  # type: ignore[misc]
        """A write-protected cassette that logs every replayed request with the scenario's script.

        The script is consulted as the loopback server would consult it, so every check of the
        scenario (which calls were made, in what format) holds on replay too. A request the cassette
        does not hold is remembered, so it fails the scenario even if the library swallows vcrpy's
        exception.
        """

        model: ScriptedModel | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.unmatched: list[str] = []

        def can_play_response_for(self, request: Request) -> bool:
            playable = bool(super().can_play_response_for(request))
            if not playable and self.write_protected:
                error = CannotOverwriteExistingCassetteException(cassette=self, failed_request=request)
                number = self.play_count + len(self.unmatched) + 1
                self.unmatched.append(f"Model request #{number} of the scenario: {error}")
            return playable

        def play_response(self, request: Request) -> Any:
            response = super().play_response(request)
            if self.model is not None:
                try:
                    self.model.answer(request_call(json.loads(request.body or b"{}")))
                except UnexpectedModelCall:
                    pass  # the model remembers it as its violation; the recorded reply plays anyway
            return response

    return _ReplayCassette


@cache
def _scanning_persister() -> type[Any]:
    """vcrpy's file persister, but a cassette is scanned before it is written, and one that holds a
    credential recording could not scrub is not written at all: deleting it afterwards would leave
    the credential on disk for a moment, and for good if the run died first."""
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serialize import serialize

    class _ScanningPersister(FilesystemPersister):  # type: ignore[misc]
        @staticmethod
        def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
            path = Path(cassette_path)
            found = [f"{path.name}:{line}: {what}"
                     for line, what in _findings(serialize(cassette_dict, serializer))]
            if found:
                raise AssertionError(
                    # binding/feature/scenario only: a report must not carry this machine's paths
                    f"the recorded cassette {Path(*path.parts[-3:])} holds a credential that recording "
                    f"could not scrub, so it was not written: {found}. Keep the credential out of the "
                    "request (a header, the URL or a body), and record again.")
            FilesystemPersister.save_cassette(path, cassette_dict, serializer)

    return _ScanningPersister


def _findings(text: str) -> Iterator[tuple[int, str]]:
    for what, pattern in SECRET_PATTERNS.items():
        for match in pattern.finditer(text):
            yield text.count("\n", 0, match.start()) + 1, what
    for what, value in _detected(text):
        yield text.count("\n", 0, text.index(value)) + 1, what


def secrets_in(root: Path) -> Iterator[str]:
    """`<file>:<line>: <what>` for every credential-like text in the cassettes under `root`."""
    for path in sorted(root.rglob("*.yaml")):
        for line, what in _findings(path.read_text(encoding="utf-8")):
            yield f"{path.relative_to(root)}:{line}: {what}"
