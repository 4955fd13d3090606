"""`python -m conformance compare REPORT.json ... > README.md`: one table across implementations.
`python -m conformance scan-cassettes DIR ...`: fail if any cassette holds a credential or a cookie.
`python -m conformance site REPORT.json ... --out DIR [--history PATH ...]`: the compatibility site.
`python -m conformance history REPORT.json ... --out FILE`: the reports' committed versions, from git."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance._cassettes import secrets_in
from conformance._features import catalogue
from conformance._report import comparison
from conformance._site import (
    InputRefused,
    SiteOutputError,
    build_site,
    from_git,
    load_history,
    read_report,
    write_history,
)
from conformance._site._inputs import read_for_compare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance")
    commands = parser.add_subparsers(dest="command", required=True)
    compare = commands.add_parser("compare", help="a requirement-by-implementation Markdown table")
    compare.add_argument("reports", nargs="+", type=Path, help="JSON reports (--conformance-json)")
    scan = commands.add_parser("scan-cassettes", help="find credentials and cookies in vcrpy cassettes")
    scan.add_argument("dirs", nargs="+", type=Path,
                      help="folders of cassettes (*.yaml, *.yml, *.json) or cassettes")
    site = commands.add_parser("site", help="a static compatibility site (HTML and badges)")
    site.add_argument("reports", nargs="+", type=Path, help="JSON reports, format 1 or 2")
    site.add_argument("--out", type=Path, required=True,
                      help="the folder to write the site into: new, empty, or a site written before")
    site.add_argument("--history", type=Path, nargs="*", default=[],
                      help="reports of earlier runs, history files, or folders of them")
    site.add_argument("--repository",
                      help="the suite's repository URL, for links to bindings and issues "
                           "(default: libraries.toml's)")
    site.add_argument("--base-url",
                      help="where the site is published, for the badge snippets (default: libraries.toml's)")
    history = commands.add_parser("history", help="the reports' committed versions, from git, as one file")
    history.add_argument("reports", nargs="+", type=Path, help="JSON report files tracked by git")
    history.add_argument("--out", type=Path, required=True, help="the history file to write")
    args = parser.parse_args(argv)
    if args.command == "scan-cassettes":
        return scan_cassettes(parser, args.dirs)
    try:  # every input is read and checked before anything is written
        return _reports_command(args)
    except (InputRefused, SiteOutputError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2


def _reports_command(args: argparse.Namespace) -> int:
    if args.command == "site":
        written = build_site([read_report(path) for path in args.reports], args.out,
                             history=load_history(args.history), repository=args.repository,
                             base_url=args.base_url)
        sys.stdout.write(f"wrote {len(written)} files; open {args.out / 'index.html'}\n")
        return 0
    if args.command == "history":
        snapshots = from_git(args.reports)
        write_history(snapshots, args.out)
        sys.stdout.write(f"wrote {len(snapshots)} snapshots to {args.out}\n")
        return 0
    reports = [read_for_compare(path) for path in args.reports]
    sys.stdout.write(comparison(reports, catalogue()))
    return 0


def scan_cassettes(parser: argparse.ArgumentParser, dirs: list[Path]) -> int:
    """`scan-cassettes`: 1 when any cassette holds a credential."""
    missing = [str(d) for d in dirs if not d.exists()]
    if missing:  # finding nothing there must not read as finding no credential
        parser.error(f"{', '.join(missing)} does not exist: give folders of cassettes "
                     "(*.yaml, *.yml, *.json) or cassettes")
    found = [f"{d / f}" for d in dirs for f in secrets_in(d)]
    for finding in found:
        sys.stdout.write(f"{finding}\n")
    sys.stdout.write(f"{len(found)} credential-like text(s) found; remove them before committing\n"
                     if found else "no credential found\n")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
