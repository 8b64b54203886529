"""Every shipped interface has a guideline in its annotators' language whose hotkey table
matches the interface (issue 55), and the checks name the file for each kind of break."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.annotation.configs import CONFIG_DIR
from pipelines.annotation.guidelines import (
    GuidelineError,
    check_guideline,
    check_interface_keys,
    default_guideline,
    instruction_html,
)

SHIPPED = sorted(CONFIG_DIR.glob("*.xml"))
JAPANESE = ("jcqa_", "jglue_", "jnli_", "jsquad_", "jsts", "marc_ja")


@pytest.mark.parametrize("config", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_interface_has_a_matching_guideline(config: Path) -> None:
    guideline = check_guideline(config, default_guideline(config))
    assert guideline.lang == ("ja" if config.name.startswith(JAPANESE) else "ko")


XML = """<View><Text name="t" value="$text"/>
<Choices name="label" toName="t"><Choice value="좋음" alias="good" hotkey="1"/>
<Choice value="나쁨" alias="bad" hotkey="{key}"/></Choices></View>"""
GUIDE = """lang: ko

# 지침

좋은지 나쁜지 고르세요.

| 단축키 / key | 항목 / field | 코드 / code | 화면 / shown | 뜻 / meaning |
|---|---|---|---|---|
| `1` | `label` | `good` | 좋음 | 좋다 |
{extra}
## English summary

Choose good or bad.
"""


def _write(tmp_path: Path, key: str = "2", extra: str = "| `2` | `label` | `bad` | 나쁨 | 나쁘다 |",
           guide: str | None = None) -> tuple[Path, Path]:  # fmt: skip
    config = tmp_path / "toy.xml"
    config.write_text(XML.format(key=key), encoding="utf-8")
    path = default_guideline(config)
    path.parent.mkdir(exist_ok=True)
    path.write_text(guide if guide is not None else GUIDE.format(extra=extra), encoding="utf-8")
    return config, path


def test_a_matching_pair_passes_and_the_codes_are_the_aliases(tmp_path: Path) -> None:
    config, path = _write(tmp_path)
    assert check_guideline(config, path).keys == {("label", "good", "1"), ("label", "bad", "2")}
    html = instruction_html(config, None, "pilot")
    assert "자격 시험" in html and "<table>" in html


def test_a_hotkey_clash_names_the_interface_and_both_options(tmp_path: Path) -> None:
    config, _ = _write(tmp_path, key="1")
    with pytest.raises(
        GuidelineError, match=r"toy\.xml: hotkey '1' is both label='good' and label='bad'"
    ):
        check_interface_keys(config)


def test_a_missing_hotkey_and_one_of_label_studios_own_are_refused(tmp_path: Path) -> None:
    config, _ = _write(tmp_path, key="")
    with pytest.raises(GuidelineError, match="label='bad' has no hotkey"):
        check_interface_keys(config)
    config, _ = _write(tmp_path, key="u")
    with pytest.raises(GuidelineError, match="one of Label Studio's own"):
        check_interface_keys(config)


def test_a_label_missing_from_the_guideline_or_not_in_the_interface(tmp_path: Path) -> None:
    config, path = _write(tmp_path, extra="")
    with pytest.raises(GuidelineError, match=r"toy\.md: label='bad' \(hotkey '2'\) is in toy\.xml"):
        check_guideline(config, path)
    config, path = _write(
        tmp_path, extra="| `2` | `label` | `bad` | 나쁨 | - |\n| `3` | `label` | `ugly` | - | - |"
    )
    with pytest.raises(GuidelineError, match="the table's label='ugly'.*not an option"):
        check_guideline(config, path)


def test_a_missing_or_empty_guideline_or_no_language(tmp_path: Path) -> None:
    config, path = _write(tmp_path)
    path.unlink()
    with pytest.raises(GuidelineError, match="has no guideline"):
        instruction_html(config)
    _write(tmp_path, guide="")
    with pytest.raises(GuidelineError, match="lang"):
        check_guideline(config, path)
    _write(tmp_path, guide="lang: ko\n\n| 단축키 | 항목 | 코드 |\n|---|---|---|\n")
    with pytest.raises(GuidelineError, match="empty"):
        check_guideline(config, path)


def test_the_review_rounds_written_interface_matches_its_guideline(tmp_path: Path) -> None:
    from pipelines.rebuild.people import REVIEW_GUIDELINE, review_config

    config = tmp_path / "review.xml"
    config.write_text(review_config(["sentence1", "sentence2"]), encoding="utf-8")
    assert {c for _, c, _ in check_guideline(config, REVIEW_GUIDELINE).keys} == {
        "keep",
        "drop",
        "fix",
    }
