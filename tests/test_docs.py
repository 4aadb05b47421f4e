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
