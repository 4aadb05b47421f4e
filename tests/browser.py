"""Debian's chromium, headless, driven through its chromedriver by selenium (``make setup``
installs both); tests that need it skip with the reason when either is missing."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

OFFLINE_FLAGS = (
    # No name resolves and every non-loopback connection goes to a dead proxy: an air-gapped
    # cluster, as far as the page can tell.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
)


def chromium(*flags: str) -> Any:
    """A headless chromium WebDriver (quit it when done), with extra command-line ``flags``."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (browser and driver):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make setup)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    for flag in flags:
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    session.implicitly_wait(10)  # element look-ups wait for a slow page instead of failing
    return session
