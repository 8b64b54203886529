"""Headless Chromium for the tests that need a real browser (the HTML card, the
annotator's path in Label Studio)."""

from __future__ import annotations

import pytest


def headless_chromium():  # noqa: ANN201 - a selenium webdriver
    """Headless Chromium (Debian's chromium + chromium-driver, installed by scripts/test.sh)
    with the flags this closed network needs; skips when it is not installed."""
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.skip(
            "headless Chromium is not installed (Debian packages chromium and chromium-driver; "
            "scripts/test.sh installs them where apt-get can)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ):
        options.add_argument(flag)  # fmt: skip
    return webdriver.Chrome(service=Service(driver_path), options=options)
