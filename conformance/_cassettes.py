"""vcrpy cassettes of the HTTP profile: where they live, how they match, what they may hold.

A cassette holds one scenario's exchanges with the scripted endpoint. Requests match on method,
path and body (compared as JSON), never on host or port: the loopback server's port changes on
every run. What a cassette keeps is an allowlist (`conformance._keep`): every header, query value,
form field and JSON key outside it is redacted, and every kept string goes through `scrub`, which
replaces a credential the detector (detect-secrets, and the patterns below) finds by `[REDACTED]`
(the live request is kept the same way before it is matched, so it still replays). `secrets_in`
scans cassettes for any credential that slipped through anyway; a recording that holds one is
never written.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from conformance import _held
from conformance._keep import REDACTED, Keeper, keep_request, keep_response, readable_text
from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance.server import api_for, request_call

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

    # vcrpy is imported only when an http scenario opens a cassette: its import costs a noticeable
    # part of the suite's start-up, and most runs (a binding without `http`, `-k`) never need it.
    from vcr.cassette import Cassette
    from vcr.request import Request

#: What a replayed request must share with the recorded one.
MATCH_ON = ("method", "path", "body")
#: The names a credential goes by, anywhere in a longer name (`openai_api_key`, `x-api-key`,
#: `OPENAI_API_KEY` in an environment dump, `client_secret`, `db_password`), matched ignoring case.
_STRONG_NAME = (r"(?:api[-_]?key|(?:access|auth|refresh|id|session|bearer)[-_]?token|secret"
                r"|password|passwd|credentials?|private[-_]?key)")
#: Names that are a credential's only as a whole word (`key`, not `monkey`, `key_id` or
#: `idempotency_key`), and only before a value that looks random (`"key": "user_theme"` is no key).
_WEAK_NAME = r"(?:key|token|sig|signature)"
#: Between a name and its value: an optional (escaped) closing quote, `:` or `=`, an optional
#: (escaped) opening quote (JSON inside a JSON string escapes its quotes once, twice...).
_ASSIGN = r"""(?:\\*['"])?\s*[:=]\s*"""
_QUOTE = r"""\\*['"]"""

#: After a header's name: a value that is not the placeholder recording writes for it (on its line,
#: or as the first item of its list, as vcrpy's YAML and JSON serializers write a request's headers).
_UNREDACTED = r"""\s*:(?!\s*(?:-\s*|\[\s*)?['"]?\[REDACTED\])"""

#: What must never appear in a cassette, by what it would be. A pattern's `secret` group is the value
#: that recording replaces in a URL or a body; a pattern without one finds a header, whose value
#: recording redacts whole.
#:
#: These cover what the maintained detector (detect-secrets, whose provider patterns `scrub` and the
#: scan also apply) misses in a cassette: a bearer or Basic credential (a header or a prompt), an
#: `api-key` header, a value named like a credential in a JSON body, a form, a URL or an environment
#: dump (a cassette holds each body as one quoted string), and provider keys it does not know
#: (`sk-proj-`, Hugging Face's `hf_`, Google's API keys and OAuth `ya29.` tokens, Groq's, GitHub's
#: fine-grained tokens, npm's `npm_` and Telegram's bot tokens outside an `.npmrc` or of any length).
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "an authorization header": re.compile(
        r"^\s*-?\s*['\"]?(proxy-)?authorization['\"]?" + _UNREDACTED, re.I | re.M),
    "a cookie header": re.compile(r"^\s*-?\s*['\"]?(set-)?cookie['\"]?" + _UNREDACTED, re.I | re.M),
    "an API-key header": re.compile(
        r"^\s*-?\s*['\"]?([a-z0-9]+-)*api[-_]?key['\"]?" + _UNREDACTED, re.I | re.M),
    "a bearer token": re.compile(r"bearer\s+(?P<secret>[a-z0-9._~+/=-]{8,})", re.I),
    # Basic's base64 of `user:password`: a multiple of four characters, so prose ("basic maths") is
    # rarely one; `Basic` capitalised as HTTP writes it, or after an authorization's name.
    "a Basic credential": re.compile(
        r"(?:(?i:authorization)" + _ASSIGN + r"(?:" + _QUOTE + r")?(?i:basic)|\bBasic)\s+"
        r"(?P<secret>(?:[A-Za-z0-9+/]{4}){2,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)(?![\w+/=])"),
    "an API key": re.compile(
        r"(?P<secret>\b(?:sk|rk|pk)-[a-z0-9_-]{16,}|\bAIza[0-9a-z_-]{30,}|\bgsk_[a-z0-9]{20,}"
        r"|\bhf_[a-z0-9]{30,}|\bapi_org_[a-z0-9]{30,}|\bgithub_pat_[a-z0-9_]{22,}|\bxai-[a-z0-9]{20,}"
        r"|\bya29\.[0-9a-z_-]{20,}|\bnpm_[a-z0-9]{30,}|(?<![\w:])\d{8,10}:AA[0-9a-z_-]{30,})",
        re.I),
    # A value after a credential's name. A quoted one runs to its closing quote (a password may hold
    # `&` or no digit); a bare one (a form, a URL, `KEY=value` in an environment dump) to a blank, a
    # quote, a backslash (`\n` in a JSON string) or the next `&name=`.
    "a credential": re.compile(
        r"(?i:" + _STRONG_NAME + r")" + _ASSIGN + r"(?:" + _QUOTE + r"(?P<secret>(?!\[REDACTED\])"
        r"""[^'"\\\s][^'"\\]{3,}?)(?=""" + _QUOTE + r")|(?P<bare>(?!\[REDACTED\])"
        r"""(?:[^\s'"\\&,;<>{}\[\]]|&(?!\w+=)){8,}))"""
        r"|(?<![\w-])(?i:" + _WEAK_NAME + r")" + _ASSIGN + r"(?:" + _QUOTE + r")?"
        r"(?P<random>(?=[\w.~+/=-]*\d)[\w.~+/=-]{16,}|[A-Za-z0-9+/=-]{24,})"),
}
#: The secret groups of a pattern: recording replaces whichever matched.
_SECRET_GROUPS = ("secret", "bare", "random")
#: What the detector finds only the start of, widened to the whole secret: a private key's header
#: (its base64 body runs to its footer, or to where its characters end).
_WIDENED: dict[str, re.Pattern[str]] = {
    "a private key": re.compile(
        r"(?P<secret>-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z0-9 ]*PRIVATE"
        r" KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=\s]|\\[nr])*))", re.S),
}
#: A JSON escape of a character that never needs one (`\u002d` for `-`): what a detector reads is
#: the character itself.
_NEEDLESS_ESCAPE = re.compile(r"\\+u00(2[bdef]|3[0-9d]|[46][1-9a-f]|[57][0-9a]|5f|7e)", re.I)
#: A URL's percent escape of a printable ASCII character (`%2D` for `-`).
_PERCENT_ESCAPE = re.compile(r"%(2[0-9a-f]|[3-6][0-9a-f]|7[0-9a-e])", re.I)


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
    """`request` as a cassette keeps it, on its own (`use_cassette` keeps a cassette's exchanges
    with one `Keeper`, so a reply also loses what was redacted from the requests)."""
    return keep_request(request, Keeper(scrub))


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    return keep_response(response, Keeper(scrub))


def scrub(text: str) -> str:
    """`text` with every credential (a `SECRET_PATTERNS` secret group, or the whole of what the
    detector finds) made `REDACTED`, and needless JSON escapes (`\\u002d`) written plainly.

    Whatever was found is then required gone: a value a replacement left a piece of (or that overlaps
    another) is replaced again wherever it still occurs."""
    text = unescaped(text)
    found = {text[start:end] for start, end, _ in _spans(text)}
    for _ in range(3):  # a redaction can bring two halves of a credential together
        spans = _spans(text)
        if not spans:
            break
        text = _redact(text, spans)
    for value in sorted(found, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def unescaped(text: str) -> str:
    """`text` with a JSON escape of a character that never needs one written as the character."""
    return _NEEDLESS_ESCAPE.sub(lambda m: chr(int(m[1], 16)), text)


def _spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, what) of every credential in `text`, outermost first where two overlap."""
    spans: list[tuple[int, int, str]] = []
    for what, pattern in (*SECRET_PATTERNS.items(), *_WIDENED.items()):
        groups = [g for g in _SECRET_GROUPS if g in pattern.groupindex]
        for match in pattern.finditer(text) if groups else ():
            for group in groups:
                if match[group]:
                    spans.append((*match.span(group), what))
    for detector in _detectors():
        for regex in detector.denylist:
            for match in regex.finditer(text):
                start, end = _secret_span(match)
                if end > start and text[start:end] != REDACTED:
                    spans.append((start, end, f"a secret detect-secrets knows ({detector.secret_type})"))
    return sorted(spans, key=lambda span: (span[0], -span[1]))


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    """Where the secret is in a detector's match: its longest group if that is a value of some length
    (some detectors capture only a prefix, `ghp`), else the whole match less the delimiters it
    matched around the secret."""
    groups = [match.span(i) for i in range(1, (match.re.groups or 0) + 1) if match[i]]
    start, end = max(groups, key=lambda s: s[1] - s[0], default=(0, 0))
    if end - start >= 8:
        return start, end
    start, end = match.span()
    while start < end and match.string[start] in _DELIMITERS:
        start += 1
    while end > start and match.string[end - 1] in _DELIMITERS:
        end -= 1
    return start, end


_DELIMITERS = frozenset(" \t\r\n\"':=/@\\")


def _redact(text: str, spans: list[tuple[int, int, str]]) -> str:
    parts, position = [], 0
    for start, end, _ in spans:
        if start >= position:
            parts += [text[position:start], REDACTED]
            position = end
        elif end > position:  # overlaps the last one: widen it
            position = end
    return "".join([*parts, text[position:]])


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


@contextmanager
def use_cassette(path: Path, record_mode: Literal["all", "none", "once"],
                 cassette_class: type[Cassette] | None = None) -> Iterator[Any]:
    """A vcrpy cassette at `path` with the profile's matching and scrubbing (any client, any host)."""
    import vcr
    from vcr.cassette import Cassette

    keeper = Keeper(scrub)
    refusals: list[str] = []
    config = vcr.VCR(
        serializer="yaml", record_mode=record_mode, match_on=MATCH_ON,
        before_record_request=lambda request: keep_request(request, keeper),
        before_record_response=lambda response: keep_response(response, keeper),
        decode_compressed_response=True,
        # Re-recording drops stale interactions; replaying must never write (vcrpy would rewrite
        # the cassette with only the interactions a failed replay used).
        drop_unused_requests=record_mode == "all",
    ).get_merged_config(path=str(path), persister=_scanning_persister(refusals))
    with (cassette_class or Cassette).use(**config) as cassette:
        yield cassette
    # Raised only once vcrpy has let go of the HTTP clients: its context saves before it unpatches,
    # so a save that raised left every later httpx request of the process going through this
    # cassette's patch, until the garbage collector undid it, in whatever cassette was open then.
    if refusals:
        raise AssertionError(refusals[0])


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
            body = _json_body(request)
            api = api_for(request.path)
            if self.model is None or body is None or api is None:
                return response
            try:
                # Read as the endpoint reads it: the whole request (an Anthropic thread's `continue`
                # expanded from the replies this cassette held, as the endpoint held them), in
                # chat-completions form. The cassette owns the threads, as the server did.
                body = api.read(self, body)
                call = request_call(api.chat_body(body))
            except (_held.Refused, AttributeError, TypeError, ValueError):
                return response  # the endpoint refused it before its script saw it
            try:
                self.model.answer(call)
            except UnexpectedModelCall:
                pass  # the model remembers it as its violation; the recorded reply plays anyway
            if response["status"]["code"] == 200:
                kind = next((str(v[0] if isinstance(v, list) else v) for k, v in response["headers"].items()
                             if k.lower() == "content-type"), "")
                payload = response["body"]["string"]
                api.replayed(self, body, kind, payload.encode() if isinstance(payload, str) else payload)
            return response

    return _ReplayCassette


def _json_body(request: Request) -> dict[str, Any] | None:
    """A request's JSON object as the loopback server reads it (`json.loads` of the raw bytes), or
    None where the server refuses the body (gzip, Latin-1, not an object) before its script sees it."""
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        return None
    return body if isinstance(body, dict) else None


def _scanning_persister(refusals: list[str]) -> type[Any]:
    """vcrpy's file persister, but a cassette is scanned before it is written, and one that holds a
    credential recording could not scrub is not written at all (deleting it afterwards would leave
    the credential on disk for a moment, and for good if the run died first): why is appended to
    `refusals`, for `use_cassette` to raise."""
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serialize import serialize

    class _ScanningPersister(FilesystemPersister):  # type: ignore[misc]
        @staticmethod
        def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
            path = Path(cassette_path)
            found = [f"{path.name}:{line}: {what}"
                     for line, what in _findings(serialize(cassette_dict, serializer))]
            if found:
                refusals.append(
                    # binding/feature/scenario only: a report must not carry this machine's paths
                    f"the recorded cassette {Path(*path.parts[-3:])} holds a credential that recording "
                    f"could not scrub, so it was not written: {found}. Keep the credential out of the "
                    "request (a header, the URL or a body), and record again.")
                return
            FilesystemPersister.save_cassette(path, cassette_dict, serializer)

    return _ScanningPersister


def _findings(text: str) -> Iterator[tuple[int, str]]:
    """(line, what) of every credential in `text`, each at most once per line."""
    seen: set[tuple[int, str]] = set()
    # A URL's credential may be percent-encoded (`sk%2Dproj%2D...`): read as a client would decode
    # it too, printable characters only, so the lines keep their numbers.
    decoded = _PERCENT_ESCAPE.sub(lambda m: chr(int(m[1], 16)), text)
    for variant in {text, decoded}:
        seen.update(_findings_as_written(variant))
    for line, body in _binary_bodies(text):
        if body is None:
            seen.add((line, UNREADABLE))
        else:  # a body written as `!!binary` is read as recording reads one: its findings are here
            seen.update((line, what) for _, what in _findings(body))
    yield from sorted(seen)


#: What the scan reports of a `!!binary` body it cannot read as text: it may hide anything.
UNREADABLE = ("a binary body the scan cannot read (recording keeps such a body as its sha256 digest:"
              " record the cassette again)")


def _binary_bodies(text: str) -> Iterator[tuple[int, str | None]]:
    """(line, text or None) of every `!!binary` value of a YAML cassette: vcrpy writes a body that is
    not UTF-8 (gzip, Latin-1, UTF-16) so, which no pattern can read. It is decoded from base64 and
    read as recording reads a body (gzip and zlib undone, a BOM's or JSON's encoding); None when it
    cannot be."""
    if "!!binary" not in text:
        return
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return
    nodes: list[Any] = [root] if root is not None else []
    while nodes:
        node = nodes.pop()
        if isinstance(node.value, list):
            nodes += [n for item in node.value for n in (item if isinstance(item, tuple) else (item,))]
        elif node.tag == "tag:yaml.org,2002:binary":
            try:
                raw = base64.b64decode(str(node.value), validate=False)
            except ValueError:
                yield node.start_mark.line + 1, None
                continue
            coding = "gzip" if raw[:2] == b"\x1f\x8b" else "deflate" if raw[:1] == b"\x78" else ""
            yield node.start_mark.line + 1, readable_text(raw, coding) or readable_text(raw)


def _findings_as_written(text: str) -> set[tuple[int, str]]:
    text = unescaped(text)
    seen: set[tuple[int, str]] = set()
    for what, pattern in SECRET_PATTERNS.items():
        for match in pattern.finditer(text):
            seen.add((text.count("\n", 0, match.start()) + 1, what))
    for start, _, what in _spans(text):
        if what not in SECRET_PATTERNS and what not in _WIDENED:  # those count as the detector's
            seen.add((text.count("\n", 0, start) + 1, what))
    return seen


#: The files vcrpy writes a cassette as, by its serializers (yaml, json) and the usual spellings.
CASSETTE_SUFFIXES = frozenset({".yaml", ".yml", ".json"})


def secrets_in(root: Path) -> Iterator[str]:
    """`<file>:<line>: <what>` for every credential-like text in the cassettes under `root` (a
    cassette itself, or a folder of them). A `root` that does not exist is a `FileNotFoundError`:
    finding nothing there must not read as finding no credential."""
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist: give a folder of cassettes or a cassette")
    paths = [root] if root.is_file() else sorted(
        p for p in root.rglob("*") if p.suffix.lower() in CASSETTE_SUFFIXES and p.is_file())
    for path in paths:
        name = path.name if path == root else path.relative_to(root)
        for line, what in _findings(path.read_text(encoding="utf-8", errors="replace")):
            yield f"{name}:{line}: {what}"
