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


# what Markdown looks like when a converter left it as text (issue 54: KoBEST's opened
# artifact reviews showed pipes, #### and backquotes), and entities escaped twice
RAW_MARKDOWN = {
    "a table's rule row": r"\|\s*:?-{3,}:?\s*\|",
    "a heading's hashes": r"(?m)^\s*#{2,6} \S",
    "a code span's backquotes": r"`[^`\s][^`\n]*`",
    "an escaped entity": r"&(?:gt|lt|amp|quot|#\d+);",
}


def raw_markdown_in(page, screenshot=None) -> list[str]:  # noqa: ANN001 - paths
    """Open the HTML card ``page`` in headless Chromium, open every ``<details>`` (a
    collapsed report), save a full-page ``screenshot`` (PNG) when given, and return
    each piece of the rendered text that is Markdown or an entity left as text."""
    import re

    browser = headless_chromium()
    try:
        browser.set_window_size(1280, 1000)
        browser.get(page.resolve().as_uri())
        browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true);")
        # the text a reader sees, code elements left out (a code span's text is data)
        text = browser.execute_script(
            "const b = document.body.cloneNode(true);"
            "b.querySelectorAll('code, pre').forEach(c => c.remove());"
            "document.documentElement.appendChild(b); b.style.display = 'block';"
            "const t = b.innerText; b.remove(); return t;"
        )
        if screenshot is not None:
            height = browser.execute_script("return document.body.scrollHeight")
            browser.set_window_size(1280, min(int(height) + 100, 16000))
            browser.save_screenshot(str(screenshot))
    finally:
        browser.quit()
    found = []
    for what, pattern in RAW_MARKDOWN.items():
        for m in re.finditer(pattern, text):
            line = text[text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end())]
            found.append(f"{what}: {line.strip()[:160]}")
    return found


def assert_card_reads_well(dataset, name: str, tmp_path) -> None:  # noqa: ANN001 - paths
    """Issue 54's screenshot test: ``dataset``'s DATA_CARD.html opened in headless
    Chromium, every collapsed report open, shows no Markdown or entity left as text; the
    full-page screenshot is kept (``BENCHFORGE_CARD_SHOTS``, else ``tmp_path``) for a
    person to look at."""
    import os
    from pathlib import Path

    shots = Path(os.environ.get("BENCHFORGE_CARD_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / f"{name}.png"
    found = raw_markdown_in(Path(dataset) / "DATA_CARD.html", shot)
    assert not found, "\n".join(found)
    assert shot.stat().st_size > 10_000  # a page was drawn
