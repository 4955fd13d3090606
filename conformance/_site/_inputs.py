"""The files `site`, `compare` and `history` read, checked before anything is built from them: each
is a bounded, UTF-8, strict-JSON file of the shape it claims, and a report's requirement verdicts
follow from its scenarios by the suite's own rule. A file that is not is refused with one line
naming it, what is wrong and what to do (`InputRefused`), never a traceback or a page that shows a
verdict its scenarios contradict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from conformance._report import Report, requirement_verdicts
from conformance._site._model import SiteReport
from conformance._text import name

#: The largest file read: 250 times the largest committed report (131 KB) and 90 times the
#: committed history (345 KB); a bigger one is not a report the suite wrote.
MAX_BYTES = 32 * 1024 * 1024
#: The most scenarios in a report, or snapshots in a history file: 100 times the scenarios of a
#: whole run (194).
MAX_ROWS = 20_000
#: The first report format; `site` reads any later one too (its models ignore fields they do not
#: know), `compare` those the suite's `Report` reads.
FIRST_FORMAT = 1
WRITTEN_BY = "give a report written by pytest --conformance-json"


M = TypeVar("M", bound=BaseModel)


class InputRefused(Exception):
    """A file the commands cannot read, said in one line: the file, what is wrong, what to do."""

    def __init__(self, where: object, what: str, todo: str) -> None:
        line = f"{where}: {what}; {todo}"
        super().__init__(line.replace("\r", "\\r").replace("\n", "\\n"))


class _Constant(ValueError):
    """NaN or Infinity: Python's JSON, not JSON."""


def _no_constant(name: str) -> Any:
    raise _Constant(name)


def read_bytes(path: Path) -> bytes:
    """A file's bytes, refused when it is missing, not a regular file, or over `MAX_BYTES`."""
    if not path.exists():
        raise InputRefused(path, "no such file", "check the path")
    if not path.is_file():
        raise InputRefused(path, "not a file", "give a JSON file (a folder only to --history)")
    too_big = InputRefused(path, f"larger than {MAX_BYTES // 2**20} MiB, far more than any report",
                           WRITTEN_BY)
    if path.stat().st_size > MAX_BYTES:
        raise too_big
    with path.open("rb") as f:
        data = f.read(MAX_BYTES + 1)  # a file that grew since: still never more than the limit
    if len(data) > MAX_BYTES:
        raise too_big
    return data


def parse_json(data: bytes, where: object) -> Any:
    """`data` as strict JSON in UTF-8 (a byte-order mark allowed): no NaN or Infinity, no nesting
    deeper than Python's parser takes."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputRefused(where, f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                           "write reports as UTF-8, as --conformance-json does") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _Constant as e:
        raise InputRefused(where, f"holds {e}, which is not JSON", WRITTEN_BY) from None
    except json.JSONDecodeError as e:
        raise InputRefused(where, f"not valid JSON ({e.msg}: line {e.lineno} column {e.colno}; "
                           "truncated?)", WRITTEN_BY) from None
    except RecursionError:
        raise InputRefused(where, "JSON nested too deeply to read", WRITTEN_BY) from None


def read_json(path: Path) -> Any:
    """A JSON file, checked as `read_bytes` and `parse_json` do."""
    return parse_json(read_bytes(path), path)


def validated(model: type[M], data: Any, where: object, todo: str = WRITTEN_BY) -> M:
    """`data` as `model`, its first error said in one line."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(name(str(part)) for part in first["loc"]) or "the file"
        more = f" (and {e.error_count() - 1} more error(s))" if e.error_count() > 1 else ""
        raise InputRefused(where, f"{field}: {first['msg']}{more}", todo) from None
    except RecursionError:
        raise InputRefused(where, "JSON nested too deeply to read", todo) from None


def rows(data: dict[str, Any], key: str, where: object, todo: str) -> None:
    """Refuse a list under `key` longer than `MAX_ROWS` before any model reads it."""
    found = data.get(key)
    if isinstance(found, list | dict) and len(found) > MAX_ROWS:
        raise InputRefused(where, f"{len(found)} {key}, more than the {MAX_ROWS} a file may hold",
                           todo)


def report_of(data: Any, where: object) -> SiteReport:
    """A report's JSON data as the site reads it; its verdicts are not checked (`check_verdicts`)."""
    if not isinstance(data, dict) or "binding" not in data or "requirements" not in data:
        hint = ("it is a history file: give it to --history" if isinstance(data, dict) and "snapshots" in data
                else WRITTEN_BY)
        raise InputRefused(where, "not a conformance report (no binding and requirements)", hint)
    version = data.get("format_version", FIRST_FORMAT)
    if not isinstance(version, int) or isinstance(version, bool) or version < FIRST_FORMAT:
        raise InputRefused(where, f"format_version {name(repr(version))} is not a report format (1 or more)",
                           WRITTEN_BY)
    rows(data, "scenarios", where, WRITTEN_BY)
    rows(data, "requirements", where, WRITTEN_BY)
    return validated(SiteReport, data, where)


def check_verdicts(report: SiteReport, where: object) -> SiteReport:
    """`report`, refused unless every requirement's verdict is the one its scenarios give by the
    suite's rule (`requirement_verdicts`), and, in a complete report, every requirement with
    scenarios has its verdict (a partial report leaves out those that did not finish)."""
    derived = requirement_verdicts(report.scenarios, {})
    todo = "a report's verdicts must be the suite's own: run the suite again rather than edit one"
    for rid, verdict in report.requirements.items():
        own, said = derived.get(rid), name(rid)
        if own is None:
            raise InputRefused(where, f"it says {said} {verdict} but holds no scenario of {said}", todo)
        if own != verdict:
            mine = [s.verdict for s in report.scenarios if s.requirement == rid]
            shown = ", ".join(f"{mine.count(v)} {v}" for v in dict.fromkeys(mine))
            raise InputRefused(where, f"it says {said} {verdict}, but its scenarios of {said} ({shown}) "
                               f"make it {own}", todo)
    unjudged = [rid for rid in derived if rid not in report.requirements]
    if report.complete and unjudged:
        raise InputRefused(where, f"it holds scenarios of {name(unjudged[0])} but no verdict for it", todo)
    return report


def load_report(path: Path) -> SiteReport:
    """Read one JSON report, every check but its verdicts' (pages from a hand-made report)."""
    return report_of(read_json(path), path)


def read_report(path: Path) -> SiteReport:
    """Read one JSON report as the commands do: every check, its verdicts' too."""
    return check_verdicts(load_report(path), path)


def read_for_compare(path: Path) -> Report:
    """A report as `compare` reads it: checked as the site's are, then in the suite's own model
    (formats 1 to 3: a newer one is refused rather than misread)."""
    data = read_json(path)
    check_verdicts(report_of(data, path), path)
    return validated(Report, data, path,
                     "compare reads report formats 1 to 3: compare newer ones with the suite that wrote them")
