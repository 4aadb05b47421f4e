"""The documentation pages work offline: every script, style and icon of /docs and /redoc is
served by the server itself (from a package installed with the project), and Swagger UI renders
the API in a real browser that cannot reach anything but the server."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.browser import OFFLINE_FLAGS, chromium

PAGES = ("/docs", "/redoc")
_ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")


@pytest.mark.parametrize("page", PAGES)
def test_docs_pages_load_only_assets_the_server_serves(base_url: str, page: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        html = http.get(page)
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        assets = _ASSET.findall(html.text)
        assert assets, html.text
        assert [a for a in assets if not a.startswith("/")] == [], "an asset from elsewhere"
        for asset in assets:
            reply = http.get(asset)
            assert reply.status_code == 200, asset
            assert len(reply.content) > 500, asset  # the real file, not an error page
        scripts = [a for a in assets if a.endswith(".js")]
        assert scripts and all("javascript" in http.get(s).headers["content-type"] for s in scripts)


def test_swagger_ui_renders_every_operation_with_no_network(base_url: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    spec = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
    operations = sum(len(methods) for methods in spec["paths"].values())
    browser = chromium(*OFFLINE_FLAGS)
    try:
        browser.get(f"{base_url}/docs")
        WebDriverWait(browser, 30).until(
            lambda b: len(b.find_elements(By.CSS_SELECTOR, ".opblock")) == operations
        )
        assert "envserver" in browser.find_element(By.CSS_SELECTOR, ".info .title").text
        # The page fetched nothing but the server's own files.
        fetched = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert fetched and all(url.startswith(base_url) for url in fetched), fetched
        # An operation opens and shows its documented problem responses.
        verify = browser.find_element(
            By.CSS_SELECTOR, "#operations-verification-verify_v1_verify_post"
        )
        verify.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
        WebDriverWait(browser, 30).until(
            lambda b: "application/problem+json" in verify.text and "429" in verify.text
        )
    finally:
        browser.save_screenshot(str(tmp_path / "docs.png"))
        browser.quit()


# --- the repository's Markdown links stay inside it -------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SKIPPED = {".git", ".venv", "build", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


def _markdown_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.md")
        if not _SKIPPED.intersection(path.relative_to(ROOT).parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
    )


def local_link_problems(path: Path) -> list[str]:
    """The links of a Markdown file that leave the repository or name no file in it."""
    problems = []
    for target in _LINK.findall(path.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the same page
        resolved = (path.parent / target.split("#", 1)[0]).resolve()
        if not resolved.is_relative_to(ROOT):
            problems.append(f"{target}: outside the repository")
        elif not resolved.exists():
            problems.append(f"{target}: no such file")
    return problems


def test_markdown_links_stay_inside_the_repository() -> None:
    files = _markdown_files()
    assert ROOT / "docs" / "architecture.md" in files
    found = [f"{p.relative_to(ROOT)}: {why}" for p in files for why in local_link_problems(p)]
    assert found == []
    # No mention of the design notes outside the repository, as a link or as a path.
    mentions = [
        str(path.relative_to(ROOT))
        for path in files
        if re.search(r"\.\./shared|DESIGN\.md", path.read_text())
    ]
    assert mentions == []


def test_the_link_check_sees_a_link_out(tmp_path: Path) -> None:
    page = ROOT / "docs" / "architecture.md"
    assert local_link_problems(page) == []
    outside = tmp_path / "page.md"
    outside.write_text("[design](../shared/DESIGN.md) [gone](missing.md) [web](https://x.org)")
    assert len(local_link_problems(outside)) == 2


def test_the_tamarin_fix_points_at_ways_to_install_it() -> None:
    from verifiers.tamarin import INSTALL_FIX

    path, section = re.search(r"(environments/\S+\.md), '([^']+)'", INSTALL_FIX).groups()  # type: ignore[union-attr]
    text = (ROOT / path).read_text()
    assert f"\n## {section}\n" in text
    ways = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    for way in ("GitHub releases", "brew install", "nix-env", "container image", "Maude"):
        assert way in ways, way


def test_the_port_is_shown_where_make_serve_is_first_shown() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```sh", 1)[1].split("```", 1)[0]
    assert "make serve" in first_block and "ENVSERVER_PORT=" in first_block


def test_redoc_renders_with_no_network(base_url: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser = chromium(*OFFLINE_FLAGS)
    try:
        browser.get(f"{base_url}/redoc")
        # ReDoc's sidebar ends with its "API docs by Redocly" link and logo; the logo was an
        # image from a CDN, which an offline browser could not fetch.
        logo = WebDriverWait(browser, 60).until(
            lambda b: b.find_elements(By.CSS_SELECTOR, "a[href*='redocly.com'] img")
        )[0]
        assert logo.get_attribute("src").startswith(("data:", base_url))
        assert "envserver" in browser.find_element(By.CSS_SELECTOR, "h1").text
        fetched = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert fetched and all(url.startswith(base_url) for url in fetched), fetched
    finally:
        browser.save_screenshot(str(tmp_path / "redoc.png"))
        browser.quit()
