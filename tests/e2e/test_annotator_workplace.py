"""Issue 55, item 3: the human path in a real browser for every kind of answer. One invited
annotator logs in to a real Label Studio server in headless Chromium (Selenium with
Debian's chromium-driver) and, in the shipped interfaces with their guidelines:

- corrects pre-loaded NER spans (a type changed by its hotkey, a boundary dragged, a
  wrong span deleted, a missing one added);
- corrects a pre-loaded dependency tree (KLUE-DP): a wrong arrow deleted, the right one
  drawn and labelled, another arrow relabelled;
- chooses a KLUE-RE relation among the candidates by hotkey, and one under "show all";
- marks an answer span in a KLUE-MRC paragraph and writes the question;
- writes a KoBEST-COPA item;
- writes a KLUE-WoS dialogue from a goal, and corrects a turn's pre-filled state (a
  closed value searched and picked in the taxonomy, an open one typed);
- post-edits a machine translation;
- judges a reported item in the review round (fix, with a reason and the fixed text).

After each, ``pull`` gives exactly what the person did, as theirs, with ``simulated =
False``. Every action's seconds are recorded (printed with ``-s``, and written with one
screenshot per interface to ``$BENCHFORGE_SHOTS`` when set, else the test's folder)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest
from browser import headless_chromium

from pipelines.annotation import annotate
from pipelines.annotation.guidelines import instruction_html, interface_options
from pipelines.annotation.invite import invite

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "annotation_configs"
pytestmark = pytest.mark.e2e

# the character offsets of a span inside the Text object's rendered text
JS_RECT = """
const root = arguments[0]; const [start, end] = [arguments[1], arguments[2]];
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
let pos = 0, node, set = false; const range = document.createRange();
while ((node = walker.nextNode())) {
  const n = node.textContent.length;
  if (!set && start < pos + n) { range.setStart(node, start - pos); set = true; }
  if (set && end <= pos + n) { range.setEnd(node, end - pos); break; }
  pos += n;
}
const r = range.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom];"""


class Workplace:
    """The logged-in browser, the person's account and the timings of their actions."""

    def __init__(self, browser, url: str, user_id: int, shots: Path) -> None:  # noqa: ANN001
        self.browser, self.url, self.user_id, self.shots = browser, url, user_id, shots
        self.timings: dict[str, dict[str, float]] = {}
        self._interface = ""
        self._mark = time.monotonic()

    # -- timing
    def start(self, interface: str) -> None:
        self._interface, self._mark = interface, time.monotonic()
        self.timings[interface] = {}

    def lap(self, action: str) -> None:
        now = time.monotonic()
        self.timings[self._interface][action] = round(now - self._mark, 2)
        self._mark = now

    # -- the page
    def wait(self, condition, timeout: float = 60):  # noqa: ANN001, ANN201
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.browser, timeout).until(condition)

    def open(self, project_id: int, guideline_text: str) -> None:
        """Open the project's labelling stream, read the guideline shown before
        labelling (``guideline_text`` is on it), close it and wait for the task."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as seen

        self.browser.get(f"{self.url}/projects/{project_id}/data?labeling=1")
        header = self.wait(
            seen.visibility_of_element_located((By.CSS_SELECTOR, ".lsf-modal-ls__header"))
        )
        modal = self.browser.find_element(By.CSS_SELECTOR, ".lsf-modal-ls").text
        assert "Labeling Instructions" in modal and guideline_text in modal, modal[:500]
        assert "English summary" in modal
        self.shot(f"{Path(self._interface).stem}-guideline")
        header.find_element(By.TAG_NAME, "button").click()
        self.wait(seen.invisibility_of_element_located((By.CSS_SELECTOR, ".lsf-modal-ls__header")))
        self.wait(lambda b: b.find_elements(By.CSS_SELECTOR, ".lsf-object, .lsf-richtext"))
        time.sleep(0.5)  # the interface's controls settle after the object
        self.lap("open the task and read the guideline")

    def key(self, hotkey: str) -> None:
        """Press a Label Studio hotkey (``1``, ``q``, ``shift+a``)."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        chain = ActionChains(self.browser)
        *mods, last = hotkey.split("+")
        held = [{"shift": Keys.SHIFT, "ctrl": Keys.CONTROL, "alt": Keys.ALT}[m] for m in mods]
        for m in held:
            chain = chain.key_down(m)
        chain = chain.send_keys(last)
        for m in reversed(held):
            chain = chain.key_up(m)
        chain.perform()
        time.sleep(0.3)

    def text_object(self, index: int = 0):  # noqa: ANN201
        from selenium.webdriver.common.by import By

        return self.browser.find_elements(By.CSS_SELECTOR, ".lsf-richtext")[index]

    def drag(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """Press the mouse at (x0, y0), move to (x1, y1) and release, as a hand would."""
        from selenium.webdriver.common.actions.action_builder import ActionBuilder

        action = ActionBuilder(self.browser)
        action.pointer_action.move_to_location(int(x0), int(y0)).pointer_down()
        action.pointer_action.move_to_location(int((x0 + x1) / 2), int(y1))
        action.pointer_action.move_to_location(int(x1), int(y1)).pointer_up()
        action.perform()
        time.sleep(0.4)

    def select(self, start: int, end: int, index: int = 0) -> None:
        """Select characters ``start``..``end`` of a text object with the mouse."""
        root = self.text_object(index)
        left, top, _, bottom = self.browser.execute_script(JS_RECT, root, start, start + 1)
        _, _, right, _ = self.browser.execute_script(JS_RECT, root, end - 1, end)
        self.drag(left + 1, (top + bottom) / 2, right - 1, (top + bottom) / 2)

    def regions(self) -> list[tuple[int, int, str]]:
        """The spans on screen: (start, end, shown label)."""
        found = self.browser.execute_script(
            "return Array.from(document.querySelectorAll('.htx-highlight'))"
            ".map(e => [e.dataset.start, e.dataset.end, e.dataset.label]);"
        )
        return sorted((int(s), int(e), str(lab).split(":", 1)[-1]) for s, e, lab in found)

    def type_into(self, name: str, text: str, replace: bool = False) -> None:
        """Type ``text`` into the text box ``name`` and add it (Shift+Enter)."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        box = self.browser.find_element(
            By.CSS_SELECTOR, f"textarea[name='{name}'], input[name='{name}']"
        )
        box.click()
        if replace:
            box.send_keys(Keys.CONTROL, "a")
            box.send_keys(Keys.DELETE)
        box.send_keys(text)
        box.send_keys(Keys.SHIFT, Keys.ENTER)
        time.sleep(0.3)

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.browser.save_screenshot(str(path))
        return path

    def submit(self) -> None:
        from selenium.webdriver.common.by import By

        self.browser.find_element(By.CSS_SELECTOR, "[data-testid=bottombar-submit-button]").click()
        self.wait(
            lambda b: (
                "/data" in b.current_url
                and not b.find_elements(By.CSS_SELECTOR, ".lsf-modal-ls__header")
            )
        )
        time.sleep(1.0)
        self.lap("submit")

    def mine(self, project: str) -> pd.DataFrame:
        """The project's pulled rows of this person (checked: not simulated)."""
        table = annotate.pull(project)
        rows = table[table["annotator_id"] == f"ls-user-{self.user_id}"]
        assert len(rows) and not rows["simulated"].any() and not rows["cancelled"].any()
        return rows


@pytest.fixture(scope="module")
def workplace(server, tmp_path_factory):  # noqa: ANN001, ANN201
    shots = Path(os.environ.get("BENCHFORGE_SHOTS") or tmp_path_factory.mktemp("shots"))
    shots.mkdir(parents=True, exist_ok=True)
    first = push(
        "workplace-first",
        CONFIGS / "sts.xml",
        pd.DataFrame({"item_id": ["w0"], "sentence1": ["가"], "sentence2": ["나"]}),
    )
    credentials = tmp_path_factory.mktemp("private") / "annotators.json"
    invite(["park.annotator@example.org"], "workplace-first", credentials)
    person = json.loads(credentials.read_text(encoding="utf-8"))["annotators"][0]
    url = json.loads(credentials.read_text(encoding="utf-8"))["url"]
    del first
    from selenium.webdriver.common.by import By

    browser = headless_chromium()
    browser.set_window_size(1400, 1000)
    place = Workplace(browser, url, person["user_id"], shots)
    try:
        browser.get(f"{url}/user/login/")
        browser.find_element(By.NAME, "email").send_keys(person["email"])
        browser.find_element(By.NAME, "password").send_keys(person["password"])
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        place.wait(lambda b: "/user/login" not in b.current_url)
        yield place
    finally:
        browser.quit()
        (shots / "timings.json").write_text(json.dumps(place.timings, indent=2), encoding="utf-8")
        print(f"\nbrowser actions (s): {json.dumps(place.timings, ensure_ascii=False)}")
        print(f"screenshots: {shots}")


def push(project: str, config: Path, items: pd.DataFrame, guideline: Path | None = None):  # noqa: ANN201
    """Push ``items`` to a new project with the interface and its guideline."""
    parsed = annotate.load_config(config)
    return annotate.push(items, parsed, project, 1, instruction=instruction_html(config, guideline))


def keys_of(config: Path) -> dict[tuple[str, str], str]:
    """(field, stored code) -> hotkey, as the interface declares them."""
    return {(o.field, o.code): o.key for o in interface_options(config)}


def spans_of_rows(rows: pd.DataFrame, field: str) -> set[tuple[int, int, str]]:
    (value,) = rows.loc[rows["field"] == field, "value"].tolist()
    return {(s["start"], s["end"], s["label"]) for s in json.loads(value)}


# ------------------------------------------------------------------------ the interfaces


def test_ner_spans_corrected(workplace: Workplace) -> None:
    from pipelines.agreement.suggestions import suggestion_table
    from pipelines.annotation.values import VALUE_TYPES
    from pipelines.families.klue.ner import prediction

    text = "홍길동은 2021년 서울에서 삼성전자에 다녔다."
    at = {
        w: (text.index(w), text.index(w) + len(w))
        for w in ("홍길동", "2021년", "서울", "삼성전자", "다녔다")
    }
    suggested = [(*at["홍길동"], "PS"),                           # right: kept
                 (*at["서울"], "OG"),                             # wrong type: LC
                 (at["삼성전자"][0], at["삼성전자"][1] - 1, "OG"),  # cut short: 삼성전 -> 삼성전자
                 (*at["다녔다"], "QT")]  # fmt: skip               # not an entity: deleted
    config = CONFIGS / "ner.xml"
    keys = keys_of(config)
    items = pd.DataFrame(
        {
            "item_id": ["ner-1"],
            "text": [text],
            "ls_prediction": [prediction(suggested, text, "tagger-test")],
        }
    )
    pushed = push("workplace-ner", config, items)
    workplace.start("ner.xml")
    workplace.open(pushed.project_id, "English summary")
    on_screen = workplace.regions()
    assert [(s, e) for s, e, _ in on_screen] == sorted((s, e) for s, e, _ in suggested)
    workplace.lap("see the pre-loaded spans")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    def region_at(start: int):  # noqa: ANN202
        return workplace.browser.find_element(
            By.CSS_SELECTOR, f".htx-highlight[data-start='{start}']"
        )

    region_at(at["서울"][0]).click()
    workplace.key(keys[("entities", "LC")])  # relabel the selected span
    workplace.key("u")
    workplace.lap("change a type (OG -> LC)")
    region_at(at["삼성전자"][0]).click()
    time.sleep(0.3)
    handle = workplace.browser.find_element(
        By.CSS_SELECTOR, ".htx-highlight.__active area.__resize_right"
    )
    hl, ht, hr, hb = workplace.browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();return [r.left, r.top, r.right, r.bottom];",
        handle,
    )
    root = workplace.text_object()
    _, top, right, bottom = workplace.browser.execute_script(
        JS_RECT, root, at["삼성전자"][1] - 1, at["삼성전자"][1]
    )
    workplace.drag((hl + hr) / 2, (ht + hb) / 2, right - 1, (top + bottom) / 2)
    workplace.key("u")
    workplace.lap("move a boundary (drag the end of 삼성전 to 삼성전자)")
    region_at(at["다녔다"][0]).click()
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(workplace.browser).send_keys(Keys.BACKSPACE).perform()
    time.sleep(0.3)
    workplace.lap("delete a span")
    workplace.key(keys[("entities", "DT")])
    workplace.select(*at["2021년"])
    workplace.key("u")
    workplace.lap("add a span (DT 2021년)")
    workplace.shot("ner")
    workplace.submit()
    rows = workplace.mine("workplace-ner")
    expected = {
        (*at["홍길동"], "PS"),
        (*at["2021년"], "DT"),
        (*at["서울"], "LC"),
        (*at["삼성전자"], "OG"),
    }
    assert spans_of_rows(rows, "entities") == expected
    # the suggestion travels with the row, and the acceptance measure reads what they did
    answers = rows[rows["field"] == "entities"]
    (row,) = (
        suggestion_table(answers, VALUE_TYPES.get("span_set"))
        .query("annotator_id != 'overall'")
        .itertuples()
    )
    assert (row.suggested, row.accepted, row.edited, row.deleted, row.added) == (4, 1, 2, 1, 1)


def test_dependency_arrows_corrected(workplace: Workplace) -> None:
    """KLUE-DP (issue 57): the pseudo-parse is on screen as arrows; the person deletes a
    wrong arrow, draws the right one from the word to its head and labels it, and
    changes another arrow's label, all in the Relations panel and on the text."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from pipelines.families.klue.dp import prediction

    words = ["노동계의", "반발은", "국민의", "지지를", "받지", "못했다."]
    text = " ".join(words)
    right = [(2, "NP_MOD"), (6, "NP_SBJ"), (4, "NP_MOD"), (5, "NP_OBJ"), (6, "VP"), (0, "ROOT")]
    shown = list(right)
    shown[1] = (6, "NP")  # a wrong label: 반발은 is the subject
    shown[2] = (5, "NP_MOD")  # a wrong head: 국민의 modifies 지지를, not 받지
    heads, labels = [h for h, _ in shown], [lab for _, lab in shown]
    suggested = prediction(words, heads, labels, "parser-test")
    items = pd.DataFrame(
        {"item_id": ["dp-1"], "text": [text], "words": [words], "ls_prediction": [suggested]}
    )
    pushed = push("workplace-dp", CONFIGS / "dp.xml", items)
    workplace.start("dp.xml")
    workplace.open(pushed.project_id, "English summary")
    b = workplace.browser

    def relations_tab() -> list:
        tabs = b.find_elements(By.XPATH, "//div[normalize-space(.)='Relations']")
        [t for t in tabs if t.is_displayed()][-1].click()
        time.sleep(0.3)
        return b.find_elements(By.CSS_SELECTOR, ".lsf-relations__item")

    def arcs_listed() -> list[tuple[int, int]]:
        pairs = []
        for item in relations_tab():
            numbers = [int(x) for x in item.text.split() if x.isdigit()]
            pairs.append((numbers[0], numbers[1]))
        return pairs

    def word(i: int):  # noqa: ANN202 - the i-th word's region on the text
        start = sum(len(w) + 1 for w in words[: i - 1])
        return b.find_element(By.CSS_SELECTOR, f".htx-highlight[data-start='{start}']")

    def labels_of(item) -> None:  # noqa: ANN001 - open an arrow's label picker
        ActionChains(b).move_to_element(item).perform()
        time.sleep(0.3)
        item.find_element(By.CSS_SELECTOR, "button[aria-label='Show Relation Labels']").click()
        time.sleep(0.4)
        item.find_element(By.CSS_SELECTOR, "button[data-slot=popover-trigger]").click()
        time.sleep(0.4)

    def pick(label: str) -> None:
        b.find_element(By.CSS_SELECTOR, f"[data-slot=command-item][data-value='{label}']").click()
        time.sleep(0.3)
        ActionChains(b).send_keys(Keys.ESCAPE).perform()
        time.sleep(0.3)

    assert sorted(arcs_listed()) == sorted((d, h) for d, (h, _) in enumerate(shown, 1) if h)
    workplace.lap("see the pre-loaded arrows")
    (wrong,) = [it for it, arc in zip(relations_tab(), arcs_listed(), strict=True) if arc == (3, 5)]
    ActionChains(b).move_to_element(wrong).perform()
    time.sleep(0.3)
    wrong.find_element(By.CSS_SELECTOR, "button[aria-label='Delete Relation']").click()
    time.sleep(0.4)
    workplace.lap("delete a wrong arrow (국민의 -> 받지)")
    word(3).click()
    time.sleep(0.3)
    workplace.key("alt+r")  # Label Studio's "create a relation from the selected region"
    word(4).click()
    time.sleep(0.6)
    (drawn,) = [it for it, arc in zip(relations_tab(), arcs_listed(), strict=True) if arc == (3, 4)]
    labels_of(drawn)
    pick("NP_MOD")
    workplace.lap("draw the right arrow (국민의 -> 지지를) and label it NP_MOD")
    (subject,) = [
        it for it, arc in zip(relations_tab(), arcs_listed(), strict=True) if arc == (2, 6)
    ]
    labels_of(subject)
    b.find_element(By.CSS_SELECTOR, "[data-slot=command-item][data-value='NP']").click()  # off
    pick("NP_SBJ")
    workplace.lap("change an arrow's label (NP -> NP_SBJ)")
    workplace.shot("dp")
    workplace.submit()
    rows = workplace.mine("workplace-dp")
    pulled = annotate.pull("workplace-dp", value_types={"relations": "dependency_tree"})
    mine = pulled[(pulled["annotator_id"] == f"ls-user-{workplace.user_id}")
                  & (pulled["field"] == "relations")]  # fmt: skip
    assert len(rows) and [tuple(a) for a in json.loads(mine["value"].iloc[0])] == right


def test_relation_chosen_among_candidates_and_under_show_all(workplace: Workplace) -> None:
    from pipelines.families.klue.relations import OTHER, marked, relation_options

    config = CONFIGS / "re.xml"
    keys = keys_of(config)
    sentence = "이순신은 1545년 한성에서 태어났다."
    s = (0, 3, "PER")
    o1, o2 = (5, 10, "DAT"), (11, 13, "LOC")
    rows = []
    for n, (obj, cands) in enumerate(
        [
            (o1, ["per:date_of_birth", "per:date_of_death"]),
            (o2, ["per:place_of_birth", "per:place_of_death"]),
        ]
    ):
        rows.append(
            {
                "item_id": f"re-{n}",
                "marked": marked(sentence, s, obj),
                "subject": sentence[s[0] : s[1]],
                "subject_type": s[2],
                "object": sentence[obj[0] : obj[1]],
                "object_type": obj[2],
                "candidates": ", ".join(cands),
                "relation_options": relation_options(cands),
            }
        )
    pushed = push("workplace-re", config, pd.DataFrame(rows))
    workplace.start("re.xml")
    workplace.open(pushed.project_id, "English summary")
    shown = workplace.text_object().text.strip()
    task = next(r for r in rows if r["marked"] == shown)
    chosen = task["relation_options"][0]
    workplace.key(chosen["hotkey"])
    workplace.lap("choose a candidate by its hotkey")
    workplace.shot("re")
    workplace.submit()
    other = next(r for r in rows if r is not task)
    assert workplace.text_object().text.strip() == other["marked"]
    other_option = next(
        o for o in other["relation_options"] if (o.get("alias") or o["value"]) == OTHER
    )
    workplace.key(other_option["hotkey"])
    from selenium.webdriver.common.by import By

    workplace.browser.find_element(By.CSS_SELECTOR, ".lsf-collapse, [class*=collapse]").click()
    time.sleep(0.5)
    wanted = "per:spouse"  # under "show all", a Shift+letter hotkey
    workplace.key(keys[("relation_all", wanted)])
    workplace.lap(
        f"choose 'other', open 'show all' and pick {wanted} ({keys[('relation_all', wanted)]})"
    )
    workplace.shot("re-show-all")
    workplace.submit()
    mine = workplace.mine("workplace-re")
    got = {(r.item_id, r.field): r.value for r in mine.itertuples()}
    assert got[(task["item_id"], "relation")] == (chosen.get("alias") or chosen["value"])
    assert got[(other["item_id"], "relation")] == OTHER
    assert got[(other["item_id"], "relation_all")] == wanted


def test_answer_span_marked_and_question_written(workplace: Workplace) -> None:
    config = CONFIGS / "klue_mrc_writing.xml"
    keys = keys_of(config)
    context = "세종은 1418년에 조선의 제4대 왕으로 즉위하였다. 그는 훈민정음을 창제하였다."
    items = pd.DataFrame(
        {
            "item_id": ["mrc-1"],
            "title": ["세종"],
            "context": [context],
            "question_type": ["paraphrase"],
            "instruction": ["문단의 한 문장을 바꾸어 질문을 쓰세요."],
            "similar_title": [""],
            "similar": [""],
        }
    )
    pushed = push("workplace-mrc", config, items)
    workplace.start("klue_mrc_writing.xml")
    workplace.open(pushed.project_id, "English summary")
    answer = "훈민정음"
    start = context.index(answer)
    (label_code,) = [c for f, c in keys if f == "answer"]
    workplace.key(keys[("answer", label_code)])
    workplace.select(start, start + len(answer))
    workplace.key("u")
    workplace.lap("mark the answer span")
    question = "세종이 만든 문자는 무엇인가?"
    workplace.type_into("question", question)
    workplace.lap("write the question")
    workplace.shot("klue_mrc_writing")
    workplace.submit()
    rows = workplace.mine("workplace-mrc")
    got = dict(zip(rows["field"], rows["value"], strict=True))
    assert got["question"] == question
    span = json.loads(got["answer"])
    assert (span["start"], span["end"], span["text"]) == (start, start + len(answer), answer)


def test_kobest_copa_item_written(workplace: Workplace) -> None:
    config = CONFIGS / "kobest_copa.xml"
    items = pd.DataFrame(
        {"item_id": ["copa-1"], "instruction": ["질문: 결과 / 정답: 대안 1"], "question": ["결과"]}
    )
    pushed = push("workplace-copa", config, items)
    workplace.start("kobest_copa.xml")
    workplace.open(pushed.project_id, "English summary")
    written = {
        "premise": "나는 창문을 열었다.",
        "alternative_1": "방에 바람이 들어왔다.",
        "alternative_2": "방이 어두워졌다.",
    }
    for field, text in written.items():
        workplace.type_into(field, text)
        workplace.lap(f"write {field}")
    workplace.shot("kobest_copa")
    workplace.submit()
    rows = workplace.mine("workplace-copa")
    assert dict(zip(rows["field"], rows["value"], strict=True)) == written


def test_wos_dialogue_written_and_a_turns_state_annotated(workplace: Workplace) -> None:
    """KLUE-WoS (issue 58): a person writes a dialogue from a goal and its database rows
    (both roles, a line a turn), then corrects a turn's pre-filled state: a closed value
    picked in the taxonomy (searched), an open one typed as written."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from pipelines.families.klue.wos_dialogues import dialogue_problems, parse_lines
    from pipelines.families.klue.wos_goals import DomainGoal, Goal, Venue, instruction
    from pipelines.families.klue.wos_interfaces import rows_html
    from pipelines.families.klue.wos_items import state_prediction
    from pipelines.families.klue.wos_ontology import read_ontology

    ontology = read_ontology(ROOT / "data" / "demo" / "klue-wos" / "ontology.json")
    venue = Venue(
        "식당", "뽀식이네 감자탕", {"지역": "서울 중앙", "종류": "한식당", "주차 가능": "yes"}
    )
    goal = Goal("goal-1", [DomainGoal("식당", {"지역": "서울 중앙", "종류": "한식당"},
                                      ["주차 가능"], target=venue.name)])  # fmt: skip
    items = pd.DataFrame({"item_id": ["wos-write-1"], "goal": [instruction(goal)],
                          "rows": [rows_html(goal, [venue])]})  # fmt: skip
    pushed = push("workplace-wos-write", CONFIGS / "wos_write.xml", items)
    workplace.start("wos_write.xml")
    workplace.open(pushed.project_id, "English summary")
    lines = [
        "사용자: 서울 중앙에 있는 한식당을 찾고 있어요.",
        "시스템: 뽀식이네 감자탕을 추천드립니다.",
        "사용자: 주차는 되나요?",
        "시스템: 주차는 됩니다.",
        "사용자: 좋아요, 감사합니다.",
        "시스템: 이용해 주셔서 감사합니다.",
    ]
    box = workplace.browser.find_element(By.CSS_SELECTOR, "textarea[name='dialogue']")
    box.click()
    for n, line in enumerate(lines):  # Enter starts a new line; Shift+Enter adds the text
        box.send_keys(line + (Keys.ENTER if n < len(lines) - 1 else ""))
    ActionChains(workplace.browser).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(
        Keys.SHIFT).perform()  # fmt: skip
    time.sleep(0.3)
    workplace.lap("write the dialogue (6 turns)")
    workplace.shot("wos_write")
    workplace.submit()
    rows = workplace.mine("workplace-wos-write")
    (text,) = rows.loc[rows["field"] == "dialogue", "value"].tolist()
    turns = parse_lines(text)
    assert [r for r, _ in turns] == ["user", "sys"] * 3
    assert dialogue_problems(turns, goal, [venue]) == []

    dialogue = [{"author": "사용자", "text": "서울 중앙에 있는 한식당을 찾고 있어요."},
                {"author": "시스템", "text": "뽀식이네 감자탕을 추천드립니다."},
                {"author": "사용자", "text": "네, 거기로 할게요."}]  # fmt: skip
    items = pd.DataFrame({"item_id": ["wos-state-1"], "dialogue": [dialogue],
                          "ls_prediction": [state_prediction(["식당-종류-한식당"], ontology,
                                                             "rule-tracker")]})  # fmt: skip
    pushed = push("workplace-wos-state", CONFIGS / "wos_state.xml", items)
    workplace.start("wos_state.xml")
    workplace.open(pushed.project_id, "English summary")
    b = workplace.browser
    b.find_element(By.CSS_SELECTOR, ".htx-taxonomy .ant-select-selector").click()
    time.sleep(0.6)
    b.find_element(By.CSS_SELECTOR, "input[placeholder='Search']").send_keys("서울 중앙")
    time.sleep(1.0)
    nodes = b.find_elements(By.CSS_SELECTOR, ".ant-select-tree-treenode")
    texts = [n.text.strip() for n in nodes]
    under = texts.index("식당")
    leaf = next(n for n, t in zip(nodes[under:], texts[under:], strict=True) if t == "서울 중앙")
    leaf.find_element(By.CSS_SELECTOR, ".ant-select-tree-checkbox").click()
    time.sleep(0.4)
    ActionChains(b).send_keys(Keys.ESCAPE).perform()
    time.sleep(0.4)
    workplace.lap("pick a closed value (식당-지역-서울 중앙) in the taxonomy")
    workplace.type_into("state_typed", "식당-이름-뽀식이네 감자탕")
    workplace.lap("type an open value (식당-이름)")
    workplace.shot("wos_state")
    workplace.submit()
    workplace.mine("workplace-wos-state")
    pulled = annotate.pull("workplace-wos-state", value_types={"state": "dialogue_state"})
    mine = pulled[(pulled["annotator_id"] == f"ls-user-{workplace.user_id}")
                  & (pulled["field"] == "state")]  # fmt: skip
    assert json.loads(mine["value"].iloc[0]) == [
        "식당-이름-뽀식이네 감자탕", "식당-종류-한식당", "식당-지역-서울 중앙"]  # fmt: skip


def test_translation_post_edited(workplace: Workplace) -> None:
    config = CONFIGS / "mt_postedit.xml"
    items = pd.DataFrame(
        {
            "item_id": ["mt-1"],
            "english": ["A cat is sitting on the mat."],
            "translation": ["고양이는 매트에 앉아있는 중이다."],
        }
    )
    pushed = push("workplace-mt", config, items)
    workplace.start("mt_postedit.xml")
    workplace.open(pushed.project_id, "English summary")
    edited = "고양이 한 마리가 매트 위에 앉아 있다."
    workplace.type_into("postedit", edited, replace=True)
    workplace.lap("post-edit the translation")
    workplace.shot("mt_postedit")
    workplace.submit()
    rows = workplace.mine("workplace-mt")
    assert rows.loc[rows["field"] == "postedit", "value"].tolist() == [edited]


def test_review_item_judged(workplace: Workplace, tmp_path: Path) -> None:
    from pipelines.rebuild.people import REVIEW_GUIDELINE, review_config

    config = tmp_path / "review.xml"
    config.write_text(review_config(["sentence1", "sentence2"]), encoding="utf-8")
    keys = keys_of(config)
    items = pd.DataFrame(
        {
            "item_id": ["rv-1"],
            "reports": ['{"personal_information": 2}'],
            "sentence1": ["김민수 010-1234-5678로 연락 주세요."],
            "sentence2": ["연락처를 남겨 주세요."],
        }
    )
    pushed = push("workplace-review", config, items, REVIEW_GUIDELINE)
    workplace.start("review.xml")
    workplace.open(pushed.project_id, "English summary")
    workplace.key(keys[("decision", "fix")])
    workplace.lap("decide: fix (hotkey)")
    workplace.type_into("reason", "전화번호가 있다")
    fixed = "김민수 ***-****-****로 연락 주세요."
    workplace.type_into("sentence1", fixed, replace=True)
    workplace.lap("write the reason and the fixed text")
    workplace.shot("review")
    workplace.submit()
    rows = workplace.mine("workplace-review")
    got = dict(zip(rows["field"], rows["value"], strict=True))
    assert (got["decision"], got["reason"], got["sentence1"]) == ("fix", "전화번호가 있다", fixed)
