"""The compatibility site (`python -m conformance site`): the generator on small synthetic reports of
both formats, and the committed reports' site in a real headless Chromium."""

from __future__ import annotations

import json
import os
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.__main__ import main
from conformance._features import Requirement, catalogue
from conformance._site import SiteReport, badge_json, badge_svg, build_site, core_score, load_report, reason
from tests.peer_envs import peers

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "conformance"
SITE = ROOT / "docs" / "site"
#: The order of the peers session (noxfile.PEERS): the matrix's columns.
PEERS = peers()

CATALOGUE = {
    "CORE-1": Requirement(id="CORE-1", title="Passes everywhere.", profile="core"),
    "CORE-2": Requirement(id="CORE-2", title="A title with <b>markup</b> & an ampersand.", profile="core"),
    "CORE-3": Requirement(id="CORE-3", title="Fails on purpose.", profile="core"),
    "CORE-4": Requirement(id="CORE-4", title="The binding raises.", profile="core"),
    "CAP-1": Requirement(id="CAP-1", title="Stops on the cap.", profile="max-steps-extract|max-steps-return"),
    "CAP-2": Requirement(id="CAP-2", title="Asks the user.", profile="ask-user"),
}

FEATURE = """\
Feature: Synthetic
  Background:
    Given a ReAct agent with the signature "question -> answer"

  @req:CORE-1
  Scenario: It passes
    Then all is well

  @req:CORE-3 @smoke
  Scenario: It fails
    Then the answer is "<b>bold</b>"

  @req:CORE-4
  @capability:none
  Scenario Outline: It raises
    Then it raises on <x>

    Examples:
      | x |
      | 1 |
"""


def _scenario(rid: str, name: str, verdict: str, message: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": f"test_{rid.lower()}", "feature": "synthetic.feature", "name": name,
            "requirement": rid, "verdict": verdict, "message": message, **extra}


V1: dict[str, Any] = {
    "format_version": 1,
    "binding": {"name": "oldlib", "version": "1.0", "capabilities": ["max-steps-extract"]},
    "suite_version": "0.1.0",
    "requirements": {"CORE-1": "passed", "CORE-2": "known-failure", "CORE-3": "failed",
                     "CORE-4": "errored", "CAP-1": "passed", "CAP-2": "not-claimed"},
    "scenarios": [
        _scenario("CORE-1", "It passes", "passed"),
        _scenario("CORE-2", "It is known", "known-failure", "oldlib has no adapters\nsecond line"),
        _scenario("CORE-3", "It fails", "failed", "expected 5, got <script>alert(1)</script>"),
        _scenario("CORE-4", "It raises", "errored", "TypeError: boom"),
    ],
}

V2: dict[str, Any] = {
    "format_version": 2,
    "binding": {"name": "newlib", "version": "2.0", "capabilities": ["max-steps-return"],
                "not_claimed": {"ask-user": "newlib has no human-in-the-loop hook"},
                "contract_version": 2, "a_field_from_the_future": True},
    "suite_version": "0.2.0",
    "generated": "2025-01-02T03:04:05Z",
    "requirements": {"CORE-1": "passed", "CORE-2": "passed", "CORE-3": "known-failure",
                     "CORE-4": "blocked", "CAP-1": "failed", "CAP-2": "not-claimed"},
    "reasons": {"CORE-3": "newlib returns the answer in <b>bold</b>",
                "CORE-4": "blocked by CORE-3: it cannot run without it",
                "CAP-1": "stopped without the history",
                "CAP-2": "newlib has no human-in-the-loop hook"},
    "scenarios": [
        _scenario("CORE-1", "It passes", "passed"),
        _scenario("CORE-3", "It fails", "known-failure", "newlib returns the answer in <b>bold</b>"),
        _scenario("CORE-4", "It raises", "blocked", "", blocked_by="CORE-3"),
        _scenario("CAP-1", "It stops", "failed", "3 steps, expected 2"),
    ],
}


@pytest.fixture
def reports(tmp_path: Path) -> list[Path]:
    paths = []
    for data in (V1, V2):
        path = tmp_path / f"{data['binding']['name']}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture
def features(tmp_path: Path) -> Path:
    folder = tmp_path / "features"
    folder.mkdir()
    (folder / "synthetic.feature").write_text(FEATURE, encoding="utf-8")
    return folder


def _build(paths: list[Path], out: Path, features: Path) -> dict[str, str]:
    written = build_site([load_report(p) for p in paths], out, requirements=CATALOGUE, features=features)
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in written}


def test_both_formats_load_and_a_missing_date_reads_unknown(reports: list[Path], tmp_path: Path,
                                                             features: Path) -> None:
    old, new = (load_report(p) for p in reports)
    assert (old.format_version, old.generated, old.reasons, old.binding.not_claimed) == (1, None, {}, {})
    assert new.binding.contract_version == 2 and new.scenarios[1].blocked_by is None
    assert new.scenarios[2].blocked_by == "CORE-3"
    pages = _build(reports, tmp_path / "site", features)
    assert {"index.html", "lib/oldlib.html", "lib/newlib.html", "badges/oldlib.json", "badges/newlib.svg",
            *(f"req/{rid}.html" for rid in CATALOGUE)} <= set(pages)
    assert "<td>unknown</td>" in pages["index.html"]
    assert "2025-01-02T03:04:05Z" in pages["index.html"]


def test_the_matrix_has_a_labelled_cell_for_every_requirement_and_library(
        reports: list[Path], tmp_path: Path, features: Path) -> None:
    index = _build(reports, tmp_path / "site", features)["index.html"]
    assert '<th scope="col" data-lib="oldlib">' in index and '<th scope="col" data-lib="newlib">' in index
    for rid in CATALOGUE:
        assert f'<a href="req/{rid}.html">{rid}</a>' in index
    for lib, verdicts in (("oldlib", V1["requirements"]), ("newlib", V2["requirements"])):
        for rid, verdict in verdicts.items():
            assert f'data-verdict="{verdict}" data-lib="{lib}" aria-label="{lib}, {rid}: ' in index
    # Alternatives joined by `|` are each a profile the filter can choose.
    assert 'data-profiles="max-steps-extract max-steps-return"' in index
    assert '<option value="max-steps-return">' in index and '<option value="ask-user">' in index


def test_every_verdict_gets_its_label_and_reason(reports: list[Path], tmp_path: Path) -> None:
    old, new = (load_report(p) for p in reports)
    # Format 1 has no reasons: the first line of the first message of that verdict stands in.
    assert reason(old, "CORE-2") == "oldlib has no adapters"
    assert reason(old, "CORE-4") == "TypeError: boom"
    assert reason(old, "CORE-1") == "" and reason(old, "CAP-2") == ""
    assert reason(new, "CORE-4") == "blocked by CORE-3: it cannot run without it"
    assert reason(new, "CAP-2") == "newlib has no human-in-the-loop hook"
    no_reasons = SiteReport.model_validate({**V2, "reasons": {}})
    assert reason(no_reasons, "CORE-4") == "blocked by CORE-3"


def test_a_library_page_shows_each_failures_reason_message_and_gherkin(
        reports: list[Path], tmp_path: Path, features: Path) -> None:
    pages = _build(reports, tmp_path / "site", features)
    new = pages["lib/newlib.html"]
    assert "⚠" in new and "known failure" in new
    assert "newlib returns the answer in &lt;b&gt;bold&lt;/b&gt;" in new
    assert "blocked by CORE-3" in new
    assert "3 steps, expected 2" in new
    assert "<code>ask-user</code>: newlib has no human-in-the-loop hook" in new
    assert "Contract version" in new and "2025-01-02T03:04:05Z" in new
    # The scenario's Gherkin, with its feature's Background and its tags.
    assert "@req:CORE-3 @smoke\nScenario: It fails\n  Then the answer is &quot;&lt;b&gt;bold" in new
    assert 'Background:\n  Given a ReAct agent' in new
    old = pages["lib/oldlib.html"]
    assert "@req:CORE-4\n@capability:none\nScenario Outline: It raises" in old
    assert "Examples:" in old and "TypeError: boom" in old
    assert "Report generated</dt><dd>unknown" in old


def test_a_requirement_page_compares_the_libraries(reports: list[Path], tmp_path: Path,
                                                   features: Path) -> None:
    page = _build(reports, tmp_path / "site", features)["req/CORE-3.html"]
    assert "oldlib" in page and "newlib" in page
    assert 'aria-label="oldlib, CORE-3: failed: expected 5, got &lt;script&gt;' in page
    assert 'aria-label="newlib, CORE-3: known failure: newlib returns' in page
    assert "Scenario: It fails" in page


def test_hostile_text_is_escaped_everywhere(tmp_path: Path, features: Path) -> None:
    hostile = '<script>alert("x")</script>'
    data = json.loads(json.dumps(V2))
    data["binding"]["name"] = f'evil"{hostile}'
    data["binding"]["version"] = hostile
    data["reasons"]["CAP-1"] = hostile
    data["scenarios"][3]["message"] = f"{hostile}\n' onmouseover='x"
    data["requirements"][hostile] = "failed"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert all(name.count("/") <= 1 and ".." not in name for name in pages)  # a safe file name
    for name, text in pages.items():
        assert "<script>alert" not in text, name
        assert "onmouseover='x" not in text.replace("onmouseover=&#x27;x", ""), name
    assert pages["index.html"].count("<script>") == 1  # only the filters' own
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in pages["index.html"]
    svg = next(text for name, text in pages.items() if name.endswith(".svg"))
    ET.fromstring(svg)


def test_the_badge_counts_passed_core_requirements(reports: list[Path], tmp_path: Path,
                                                   features: Path) -> None:
    old, new = (load_report(p) for p in reports)
    assert core_score(old, CATALOGUE) == (1, 4)  # a known failure is a failure
    assert core_score(new, CATALOGUE) == (2, 4)  # the capability's CAP-1 does not count
    assert badge_json(new, CATALOGUE) == {"schemaVersion": 1, "label": "conformance",
                                          "message": "2/4 core", "color": "orange"}
    perfect = SiteReport.model_validate({**V1, "requirements": dict.fromkeys(CATALOGUE, "passed")})
    assert badge_json(perfect, CATALOGUE)["color"] == "brightgreen"
    assert badge_json(old, CATALOGUE)["color"] == "red"
    root = ET.fromstring(badge_svg(new, CATALOGUE))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.get("role") == "img"
    assert root.findtext(f"{ns}title") == "conformance: 2/4 core"
    assert [t.text for t in root.iter(f"{ns}text")] == ["conformance", "2/4 core"]
    pages = _build(reports, tmp_path / "site", features)
    assert json.loads(pages["badges/newlib.json"])["message"] == "2/4 core"


def test_the_cli_writes_the_site_and_drops_pages_of_old_names(reports: list[Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    (out / "lib").mkdir(parents=True)
    (out / "lib" / "gone.html").write_text("stale", encoding="utf-8")
    assert main(["site", *map(str, reports), "--out", str(out)]) == 0
    assert "open" in capsys.readouterr().out
    assert (out / "index.html").is_file() and (out / "lib" / "oldlib.html").is_file()
    assert not (out / "lib" / "gone.html").exists()


def test_the_committed_site_is_built_from_the_committed_reports(tmp_path: Path) -> None:
    fresh = tmp_path / "site"
    build_site([load_report(REPORTS / f"{name}.json") for name in PEERS], fresh)
    def files(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): p.read_text(encoding="utf-8")
                for p in sorted(root.rglob("*")) if p.is_file()}
    assert files(fresh) == files(SITE), (
        "docs/site/ is stale: run `nox -s site` (or `nox -s peers`) and commit docs/site/")


# ---------------------------------------------------------------------------------------------
# In a real browser

CHROMIUM = Path(os.environ.get("CONFORMANCE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser_or_skip() -> Any:
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (as .ci/run does), "
                    "or set CONFORMANCE_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not importable: pip install -e '.[dev]'")
    return sync_playwright


#: The focused element's tag, name (or class) and outline style.
FOCUSED = ("(() => { const a = document.activeElement; "
           "return [a.tagName, a.name || a.className, getComputedStyle(a).outlineStyle]; })()")


def test_the_site_in_a_real_browser(tmp_path: Path) -> None:
    sync_playwright = _browser_or_skip()
    out = tmp_path / "site"
    reports = [load_report(REPORTS / f"{name}.json") for name in PEERS]
    build_site(reports, out)
    artifacts = Path(os.environ.get("CONFORMANCE_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
            page.goto((out / "index.html").as_uri())

            # Every library and every requirement.
            heads = page.locator("#matrix thead th[data-lib]").all_inner_texts()
            assert [h.split()[0] for h in heads] == list(PEERS)
            rows = page.locator("#matrix tbody tr")
            assert rows.count() == len(catalogue())
            assert page.locator("#matrix td[aria-label]").count() == len(catalogue()) * len(PEERS)
            assert page.locator("#filter-status").inner_text() == (
                f"Showing {len(catalogue())} of {len(catalogue())} requirements.")

            shot = artifacts / "site-matrix.png"
            top = page.locator("#matrix-h").bounding_box()
            assert top is not None
            page.screenshot(path=str(shot), full_page=True,
                            clip={"x": 0, "y": top["y"] - 16, "width": 1280, "height": 1000})
            print(f"\nscreenshot of the matrix: {shot}")

            # The keyboard reaches the skip link, the filters and the matrix, each with a visible
            # focus ring, and drives the filters.
            focused = []
            for _ in range(6):
                page.keyboard.press("Tab")
                focused.append(page.evaluate(FOCUSED))
            assert [f[:2] for f in focused] == [["A", "skip"], ["SELECT", "profile"], ["SELECT", "verdict"],
                                                ["SELECT", "library"], ["BUTTON", ""], ["DIV", "scroll"]]
            assert {f[2] for f in focused} == {"solid"}
            page.focus("select[name=verdict]")
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")
            assert page.eval_on_selector("select[name=verdict]", "s => s.value") == "failed"
            assert not page.locator("#filter-status").inner_text().startswith(f"Showing {len(catalogue())}")

            # A verdict filter hides the rows no library failed.
            page.select_option("select[name=verdict]", "failed")
            failing = {rid for r in reports for rid, v in r.requirements.items()
                       if v in ("failed", "known-failure")}
            visible = page.locator("#matrix tbody tr:visible th a").all_inner_texts()
            assert set(visible) == failing and 0 < len(visible) < len(catalogue())
            # A library filter hides the other columns, and narrows the rows to that library.
            page.select_option("select[name=library]", "ax")
            assert page.locator("#matrix thead th[data-lib]:visible").all_inner_texts()[0].startswith("ax")
            assert page.locator("#matrix thead th[data-lib]:visible").count() == 1
            ax = reports[PEERS.index("ax")]
            assert set(page.locator("#matrix tbody tr:visible th a").all_inner_texts()) == {
                rid for rid, v in ax.requirements.items() if v in ("failed", "known-failure")}
            page.click("button[type=reset]")
            page.wait_for_function(f"document.getElementById('filter-status').textContent"
                                   f".startsWith('Showing {len(catalogue())} of')")
            assert page.locator("#matrix thead th[data-lib]:visible").count() == len(PEERS)

            # A library page shows a known failure's reason.
            page.click("#matrix thead a:text-is('ax')")
            page.wait_for_url("**/lib/ax.html")
            known = next(rid for rid, v in ax.requirements.items() if v == "known-failure")
            section = page.locator(f"section:has(h3#f-{known})")
            assert section.locator(".reason").inner_text() == reason(ax, known) != ""
            section.locator("summary").first.click()
            assert "Scenario" in section.locator("details pre").first.inner_text()

            # On a phone: the page does not scroll sideways, the matrix does.
            phone = browser.new_page(viewport={"width": 375, "height": 740}, is_mobile=True)
            phone.on("pageerror", lambda e: errors.append(str(e)))
            phone.goto((out / "index.html").as_uri())
            assert phone.evaluate("document.documentElement.scrollWidth") <= 375
            assert phone.evaluate("(() => { const s = document.getElementById('matrix').parentElement;"
                                  " return s.scrollWidth > s.clientWidth; })()")

            # Without JavaScript the whole matrix shows and the filters, which need it, do not.
            plain = browser.new_context(java_script_enabled=False).new_page()
            plain.goto((out / "index.html").as_uri())
            assert plain.locator("#matrix tbody tr:visible").count() == len(catalogue())
            assert not plain.locator("#filters").is_visible()
        finally:
            browser.close()
    assert errors == []
    assert time.monotonic() - started < 60


def test_the_browser_test_skips_with_a_reason_without_chromium(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setattr(f"{__name__}.CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        _browser_or_skip()


def test_a_missing_out_folder_is_created(reports: list[Path], tmp_path: Path, features: Path) -> None:
    out = tmp_path / "a" / "new" / "folder"
    _build(reports, out, features)
    assert (out / "index.html").is_file()


def _luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(ink: str, paper: str) -> float:
    high, low = sorted((_luminance(ink), _luminance(paper)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_verdict_colour_the_muted_text_and_the_badge_meet_wcag_aa_contrast() -> None:
    from conformance._site._pages import _CSS

    pairs = re.findall(r"\.v-[a-z-]+(?:, \.v-)? \{ background: (#[0-9a-f]{6}); color: (#[0-9a-f]{6});", _CSS)
    assert len(pairs) == 6, pairs  # passed, failed, known failure, errored, blocked, not claimed
    muted = re.search(r"--muted: (#[0-9a-f]{6})", _CSS)
    link = re.search(r"--link: (#[0-9a-f]{6})", _CSS)
    assert muted and link
    pairs += [(bg, muted.group(1)) for bg in ("#ffffff", "#f6f8fa")]
    pairs += [(bg, link.group(1)) for bg in ("#ffffff", "#f6f8fa")]
    from conformance._site._pages import _COLOURS

    pairs += [(fill, "#ffffff") for _, _, fill in _COLOURS] + [("#555555", "#ffffff")]  # the badge
    for paper, ink in pairs:
        assert _contrast(ink, paper) >= 4.5, (ink, paper)


# ---------------------------------------------------------------------------------------------
# `--out` never harms what the suite did not write


def _site(reports: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["site", *map(str, reports), "--out", str(out)])
    return code, capsys.readouterr().err


def test_an_out_folder_holding_foreign_files_is_refused_and_left_alone(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "docs"  # `--out docs`, `--out .`: a folder of the user's own
    for rel in ("lib/mine.py", "req/notes.txt", "badges/logo.png", "README.md"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("the user's own", encoding="utf-8")
    code, err = _site(reports, out, capsys)
    assert code == 2
    assert "refusing to write the site into" in err and "lib/mine.py" in err and "new or empty folder" in err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md", "badges/logo.png", "lib/mine.py", "req/notes.txt"]
    assert not (out / "index.html").exists()


def test_a_site_replaces_its_own_previous_site_only(reports: list[Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert _site(reports, out, capsys)[0] == 0
    assert _site(reports[:1], out, capsys)[0] == 0  # its own: replaced, the dropped library's page gone
    assert (out / "lib" / "oldlib.html").is_file() and not (out / "lib" / "newlib.html").exists()
    (out / "lib" / "added-by-hand.html").write_text("mine", encoding="utf-8")
    code, err = _site(reports, out, capsys)
    assert code == 2 and "lib/added-by-hand.html" in err
    assert (out / "lib" / "added-by-hand.html").read_text(encoding="utf-8") == "mine"


def test_no_symlink_is_followed_out_of_the_site(reports: list[Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert _site(reports, out, capsys)[0] == 0
    outside = tmp_path / "precious.html"
    outside.write_text("precious", encoding="utf-8")
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(outside)
    code, err = _site(reports, out, capsys)
    assert code == 2 and "symbolic link" in err
    assert outside.read_text(encoding="utf-8") == "precious"
    linked = tmp_path / "linked-site"
    linked.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    code, err = _site(reports, linked, capsys)
    assert code == 2 and "symbolic link" in err and not (tmp_path / "elsewhere").exists()


def test_a_build_that_fails_midway_leaves_the_old_site_whole(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    assert _site(reports, out, capsys)[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = Path.write_text
    def failing(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        if self.name == "newlib.html":
            raise OSError(36, "File name too long")
        return real(self, text, *args, **kwargs)
    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(OSError):
        main(["site", *map(str, reports), "--out", str(out)])
    monkeypatch.undo()
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site")) == []


def test_a_300_character_name_gets_a_short_file_name(tmp_path: Path, features: Path) -> None:
    data = json.loads(json.dumps(V2))
    data["binding"]["name"] = "x" * 300
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert max(len(Path(name).name) for name in pages) <= 100


def test_two_ids_that_would_share_a_page_are_an_error_not_an_overwrite(
        reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(json.dumps(V2))
    data["requirements"]["CORE-1."] = "failed"  # would be written as req/CORE-1.html too
    path = tmp_path / "clash.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, err = _site([path], tmp_path / "site", capsys)
    assert code == 2 and "'CORE-1' and 'CORE-1.'" in err and "would share the page" in err
    assert not (tmp_path / "site").exists()
    twins = [path, tmp_path / "twin.json"]
    data["requirements"].pop("CORE-1.")
    data["binding"]["name"] = "new lib"
    twins[0].write_text(json.dumps(data), encoding="utf-8")
    data["binding"]["name"] = "new-lib"
    twins[1].write_text(json.dumps(data), encoding="utf-8")
    code, err = _site(twins, tmp_path / "site", capsys)
    assert code == 2 and "'new lib' and 'new-lib'" in err


def test_every_text_is_capped_in_the_pages(tmp_path: Path, features: Path) -> None:
    data = json.loads(json.dumps(V2))
    data["scenarios"][3]["message"] = "m" * 1_000_000
    data["reasons"]["CAP-1"] = "r" * 1_000_000
    data["binding"]["not_claimed"]["ask-user"] = "n" * 1_000_000
    data["binding"]["version"] = "v" * 1_000_000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = _build([path], tmp_path / "site", features)
    assert max(len(text) for text in pages.values()) < 200_000
    assert "more chars)" in pages["lib/newlib.html"]
