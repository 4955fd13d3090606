"""Text from a binding, a harness or a library, made safe for every place the suite writes it.

Such text may hold lone surrogates (`json.loads` of `"\\ud800"`, a JavaScript string cut inside an
emoji), which no UTF-8 writer accepts; control characters and ANSI escapes, which rewrite a terminal;
lines that a CI runner reads as its own commands (`::add-mask::`, `::stop-commands::`); Markdown
that forges headings or splits table rows; and megabytes. Every writer (terminal, JSON, Markdown,
JUnit, the CI step summary) gets it through here, capped before it is written.
"""

from __future__ import annotations

import html as _html
import re

#: How long one scenario's message may be anywhere it is shown: terminal, JSON, Markdown, JUnit.
MESSAGE_LIMIT = 2000
#: How long a name (a binding's, its version, a capability) may be anywhere it is shown.
NAME_LIMIT = 200
#: How much longer than its limit a capped text is: "... (N more chars)".
_SLACK = 40

_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: ANSI escape sequences (CSI, OSC up to its terminator, and two-character ones).
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
#: Control characters but tab and newline (a carriage return rewrites the line a reader sees).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
#: A line a CI runner would read as a command: GitHub's `::name ...::`, and its older `##[name]`.
_WORKFLOW_COMMAND = re.compile(r"^(\s*)(::|##\[)", re.M)


def clean(text: str) -> str:
    """`text` encodable as UTF-8: a surrogate pair joined into its character, a lone surrogate
    replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def capped(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text`, cut to `limit` characters with how many more there were: a failure message can hold
    a multi-megabyte argument."""
    if len(text) <= limit + _SLACK:  # so a capped text, capped again, stays as it is
        return text
    return f"{text[:limit]}... ({len(text) - limit} more chars)"


def safe(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` capped, UTF-8-encodable, without ANSI escapes or control characters but tab and
    newline (each shown as its `\\xNN` escape): fit for any writer."""
    text = clean(capped(text, limit))
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _CONTROL.sub(lambda m: repr(m[0])[1:-1], text)


def name(text: str) -> str:
    """A name (a binding's, a version, a capability): `safe`, on one line, `NAME_LIMIT` long."""
    return " ".join(safe(text, NAME_LIMIT).split())


def terminal(text: str) -> str:
    """`safe` text, no line of which a CI runner would take for a workflow command."""
    return _WORKFLOW_COMMAND.sub(r"\1\\\2", safe(text))


def html(text: str) -> str:
    """`text` escaped for HTML text and attribute values, no line of which a CI runner reading the
    file would take for a workflow command: such a line's first character as its character
    reference, which a browser shows as that character."""
    escaped = _html.escape(text, quote=True)
    return _WORKFLOW_COMMAND.sub(lambda m: f"{m[1]}&#{ord(m[2][0])};{m[2][1:]}", escaped)


def markdown(text: str) -> str:
    """`safe` text as part of one line of Markdown (a table cell, a list item, a heading): never a
    line of its own (so no heading, list or table row it could forge), no cell boundary, no HTML, no
    link brackets."""
    text = " ".join(safe(text).split())
    text = re.sub(r"\\*([|\[\]])", r"\\\1", text)  # a backslash before `|` would unescape it
    return text.replace("<", "&lt;").replace(">", "&gt;")


def code(text: str) -> str:
    """`text` as one line of inline code: fenced by more backticks than it holds in a row."""
    text = " ".join(safe(text).split()).replace("|", "¦")  # a `|` ends a table cell even in code
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") or fence != "`" else text
    return f"{fence}{padded}{fence}"
