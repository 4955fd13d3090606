"""`python -m conformance compare REPORT.json ... > README.md`: one table across implementations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance._features import catalogue
from conformance._report import Report, comparison


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance")
    commands = parser.add_subparsers(dest="command", required=True)
    compare = commands.add_parser("compare", help="a requirement-by-implementation Markdown table")
    compare.add_argument("reports", nargs="+", type=Path, help="JSON reports (--conformance-json)")
    args = parser.parse_args(argv)
    reports = [Report.model_validate_json(path.read_text(encoding="utf-8")) for path in args.reports]
    sys.stdout.write(comparison(reports, catalogue()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
