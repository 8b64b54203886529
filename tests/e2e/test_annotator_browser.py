"""Issue 35, item 7: the human path in a real browser. An invited annotator logs in to a
real Label Studio server in headless Chromium (Selenium with Debian's chromium-driver),
opens the labelling stream of an STS project, reads the guideline shown before
labelling, picks a score and a report by their hotkeys and submits, then skips the next
task; ``pull`` then shows both annotations as that annotator's, with ``simulated =
False``, and the stored codes under the Korean the person read. Each step's time is
printed (run with ``-s`` to see them)."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pandas as pd
import pytest
from browser import headless_chromium

from pipelines.annotation import annotate
from pipelines.annotation.annotate import AnnotationError
from pipelines.annotation.guidelines import instruction_html
from pipelines.annotation.invite import invite

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e

ITEMS = pd.DataFrame({
    "item_id": ["web-1", "web-2", "web-3"],
    "sentence1": ["고양이가 나무 위에 있다.", "남자가 기타를 친다.", "비가 온다."],
    "sentence2": ["나무 위에 고양이가 앉아 있다.", "한 남자가 기타를 연주하고 있다.",
                  "아이들이 공원에서 논다."],
})  # fmt: skip


def _browser():  # noqa: ANN202 - a selenium webdriver
    browser = headless_chromium()
    browser.set_window_size(1400, 1000)
    return browser


def _texts(browser) -> list[str]:  # noqa: ANN001
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.lsf-richtext, .lsf-text'))"
        ".map(e => e.textContent.trim()).filter(t => t);"
    )


def test_an_invited_annotator_rates_and_skips_in_the_browser(server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    config = annotate.load_config(ROOT / "annotation_configs" / "sts.xml")
    guideline = instruction_html(ROOT / "annotation_configs" / "sts.xml")
    pushed = annotate.push(ITEMS, config, "browser-sts", 1, instruction=guideline)
    credentials = tmp_path / "private" / "annotators.json"
    invited = invite(["kim.annotator@example.org"], "browser-sts", credentials)
    assert invited["created"] == ["kim.annotator@example.org"]
    assert "password" not in json.dumps(invited)  # the result never carries one
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert stat.S_IMODE(credentials.parent.stat().st_mode) == 0o700
    with pytest.raises(AnnotationError, match="already a Label Studio account"):
        invite(["new.one@example.org", "admin@benchforge.local"], "browser-sts", credentials)
    listed = json.loads(credentials.read_text(encoding="utf-8"))
    assert [a["email"] for a in listed["annotators"]] == ["kim.annotator@example.org"]
    person = listed["annotators"][0]

    browser = _browser()
    wait = WebDriverWait(browser, 60)
    steps: dict[str, float] = {}
    start = time.monotonic()

    def lap(name: str) -> None:
        steps[name] = round(time.monotonic() - start - sum(steps.values()), 2)

    try:
        browser.get(f"{listed['url']}/user/login/")
        browser.find_element(By.NAME, "email").send_keys(person["email"])
        browser.find_element(By.NAME, "password").send_keys(person["password"])
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda b: "/user/login" not in b.current_url)
        lap("log in")
        browser.get(f"{listed['url']}/projects/{pushed.project_id}/data?labeling=1")
        header = wait.until(seen.visibility_of_element_located(
            (By.CSS_SELECTOR, ".lsf-modal-ls__header")))  # fmt: skip
        modal = browser.find_element(By.CSS_SELECTOR, ".lsf-modal-ls").text
        assert "Labeling Instructions" in modal
        assert "Rating sentence similarity" in modal
        assert "equivalent in terms of important and unimportant content" in modal
        lap("open the stream and read the guideline")
        header.find_element(By.TAG_NAME, "button").click()
        wait.until(seen.invisibility_of_element_located((By.CSS_SELECTOR, ".lsf-modal-ls__header")))
        wait.until(seen.visibility_of_element_located((By.CSS_SELECTOR, ".lsf-choices")))
        first = _texts(browser)
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(browser).send_keys("3").perform()  # the score's own digit (issue 55)
        ActionChains(browser).send_keys("e").perform()  # report: personal information
        checked = browser.execute_script(
            "return Array.from(document.querySelectorAll('.lsf-choices input:checked'))"
            ".map(i => i.closest('label').textContent.trim());"
        )
        assert checked[0].startswith("3: 두 문장은 대체로 같다") and checked[1].startswith(
            "개인정보"
        )
        browser.find_element(By.CSS_SELECTOR, "[data-testid=bottombar-submit-button]").click()
        wait.until(lambda b: _texts(b) and _texts(b) != first)  # the next task is shown
        lap("pick 3 and submit")
        second = _texts(browser)
        # "Annotation saved successfully" covers the Skip button until it fades
        wait.until(
            lambda b: (
                not any(
                    t.is_displayed() for t in b.find_elements(By.CSS_SELECTOR, "[class*=toast_]")
                )
            )
        )
        wait.until(seen.element_to_be_clickable(
            (By.CSS_SELECTOR, "[data-testid=bottombar-skip-button]"))).click()  # fmt: skip
        wait.until(lambda b: _texts(b) != second)
        lap("skip the next task")
    finally:
        print(f"\nbrowser steps (s): {steps}")
        browser.quit()

    table = annotate.pull("browser-sts")
    mine = table[table["annotator_id"] == f"ls-user-{person['user_id']}"]
    assert not mine["simulated"].any()
    by_item = dict(zip(ITEMS["sentence1"], ITEMS["item_id"], strict=True))
    rated = mine[mine["item_id"] == by_item[first[0]]]
    assert rated.loc[rated["field"] == "similarity", "value"].tolist() == ["3"]
    # what the person read was Korean; what the annotation stores is the stable code
    assert rated.loc[rated["field"] == "report", "value"].tolist() == ["personal_information"]
    assert not rated["cancelled"].any()
    skipped = mine[mine["item_id"] == by_item[second[0]]]
    assert skipped["cancelled"].all() and len(skipped.drop_duplicates("annotation_id")) == 1
    assert mine["annotation_id"].nunique() == 2
