"""Writing the site into `--out` without harming what is there: every page is written into a fresh
folder beside it, which then replaces the old site in two renames. Only a folder that is new, empty
or wholly the suite's own (listed in its manifest) is replaced; anything else is refused."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

#: The list of files a `site` run wrote, kept in the site: what a later run may replace.
MANIFEST = ".conformance-site.json"
#: A site written before the manifest existed holds only these (index, lib/, req/, badges/).
_LEGACY = re.compile(r"index\.html|(lib|req)/[^/]+\.html|badges/[^/]+\.(svg|json)")
#: Far below any file system's name limit (255 bytes), with room for the extension.
SLUG_LIMIT = 80


class SiteOutputError(Exception):
    """`--out` cannot take the site: it holds what the suite did not write, or two pages would
    share one file name."""


def slug(text: str, fallback: str) -> str:
    """A file name for `text`: letters, digits, `.`, `_`, `-`; at most SLUG_LIMIT characters."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-")[:SLUG_LIMIT].strip(".-")
    return cleaned or fallback


def unique_slugs(names: list[str], fallback: str, what: str) -> list[str]:
    """A slug per name; two names that would share a file are an error, never an overwrite."""
    seen: dict[str, str] = {}
    slugs = []
    for name in names:
        s = slug(name, fallback)
        if s.lower() in seen:  # case-insensitive file systems (macOS, Windows) would merge them
            raise SiteOutputError(
                f"two {what} names, {seen[s.lower()]!r} and {name!r}, would share the page {s!r}: rename "
                f"one (a {what} name is written to a file name as letters, digits, '.', '_' and '-')")
        seen[s.lower()] = name
        slugs.append(s)
    return slugs


def _present(out: Path) -> tuple[list[str], list[str]]:
    """Every file under `out` (relative, '/'-separated), and every symlink, without following any."""
    files, links = [], []
    for root, dirs, names in os.walk(out, followlinks=False):
        for name in [*dirs, *names]:
            path = Path(root, name)
            rel = path.relative_to(out).as_posix()
            if path.is_symlink():
                links.append(rel)
            elif path.is_file():
                files.append(rel)
    return sorted(files), sorted(links)


def _check_replaceable(out: Path) -> None:
    here, real = Path.cwd().resolve(), out.resolve()  # the same folder by any path
    if real == here or real in here.parents:
        raise SiteOutputError(
            f"refusing to write the site to {out}: it is the current folder or holds it, and the "
            "site replaces the whole folder it is written to; give a folder of its own below it "
            "(for example site/)")
    if out.is_symlink():
        raise SiteOutputError(
            f"refusing to write the site to {out}: it is a symbolic link, and the site never writes "
            "through one; give the folder it points to, or a new folder")
    if not out.exists():
        return
    if not out.is_dir():
        raise SiteOutputError(f"refusing to write the site to {out}: it is a file, not a folder")
    files, links = _present(out)
    if links:
        raise SiteOutputError(
            f"refusing to write the site into {out}: it holds symbolic links the site did not write "
            f"({', '.join(links[:5])}); remove them or choose a new folder")
    ours: set[str]
    try:
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
        ours = {str(f) for f in listed} | {MANIFEST}
    except (OSError, ValueError, KeyError, TypeError):
        ours = {f for f in files if _LEGACY.fullmatch(f)}  # no manifest: only an old site's layout
    foreign = [f for f in files if f not in ours]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise SiteOutputError(
            f"refusing to write the site into {out}: it holds files a `site` run did not write "
            f"({shown}), and the site replaces the whole folder; choose a new or empty folder "
            "(for example site/), or one a previous `site` run wrote")


def write_site(out: Path, pages: Mapping[str, str]) -> list[Path]:
    """Write `pages` (relative path -> text) as the whole of `out`, atomically replacing a previous
    site there; returns the files written. Raises SiteOutputError before writing anything when
    `out` holds what the suite did not write, or is the current folder (or one above it)."""
    # `.`, `..` and `docs/..` named by what they are: their name and parent are not a folder's
    # (a link is kept as a link, unlike resolve()).
    out = Path(os.path.abspath(out))
    _check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{out.name[:40]}.new-", dir=out.parent))
    try:
        os.chmod(fresh, 0o755)  # mkdtemp's 0700 would hide the site from a web server
        for rel, text in pages.items():
            path = fresh / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        manifest = {"written_by": "python -m conformance site", "files": sorted(pages)}
        (fresh / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name[:40]}.old-", dir=out.parent))
            os.replace(out, old / "site")
            try:
                os.replace(fresh, out)
            except BaseException:
                os.replace(old / "site", out)  # the old site back, whole
                raise
        else:
            os.replace(fresh, out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return [out / rel for rel in pages]
