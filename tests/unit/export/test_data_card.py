"""Issue 18: licence resolution, readable settings, per-annotator figures and the
card's answers from the recipe."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml

from pipelines.agreement.rules import label_agreement
from pipelines.core.licenses import LicenceError, attribution_lines, resolve
from pipelines.core.markdown import inline, settings_table
from pipelines.core.recipe import RecipeError, load_recipe


@pytest.mark.parametrize(
    ("sources", "release", "governing"),
    [
        ({"a": "CC0-1.0"}, "CC0-1.0", ()),
        ({"a": "CC0-1.0", "b": "CC-BY-4.0"}, "CC-BY-4.0", ("b (CC-BY-4.0)",)),
        ({"a": "CC0-1.0", "b": "CC-BY-SA-4.0"}, "CC-BY-SA-4.0", ("b (CC-BY-SA-4.0)",)),
        ({"a": "MIT", "b": "CC-BY-SA-3.0"}, "CC-BY-SA-4.0", ("a (MIT)", "b (CC-BY-SA-3.0)")),
        ({"a": "CC-BY-4.0", "b": "CC-BY-NC-4.0"}, "CC-BY-NC-4.0",
         ("a (CC-BY-4.0)", "b (CC-BY-NC-4.0)")),
        # issue 54: MIT sources keep MIT (KoBBQ was released as CC BY 4.0)
        ({"kobbq": "MIT"}, "MIT", ("kobbq (MIT)",)),
        ({"a": "Apache-2.0", "b": "Apache-2.0"}, "Apache-2.0",
         ("a (Apache-2.0)", "b (Apache-2.0)")),
        ({"a": "MIT", "b": "Apache-2.0"}, "CC-BY-4.0", ("a (MIT)", "b (Apache-2.0)")),
    ],
)  # fmt: skip
def test_the_release_licence_is_the_most_permissive_every_source_allows(
    sources, release, governing
):
    resolution = resolve(sources)
    assert (resolution.release, resolution.governing) == (release, governing)


@pytest.mark.parametrize(
    ("sources", "declared", "message"),
    [
        ({"films": "CC-BY-ND-4.0"}, None, "films is CC-BY-ND-4.0 (no derivatives"),
        ({"a": "CC-BY-SA-4.0", "b": "CC-BY-NC-4.0"}, None, "no common release licence"),
        ({"a": "CC0-1.0", "b": "CC-BY-NC-4.0"}, "CC-BY-4.0",
         "export.license CC-BY-4.0 is not allowed: corpus b is CC-BY-NC-4.0 (non-commercial"),
        ({"a": "CC-BY-SA-4.0"}, "CC0-1.0", "corpus a is CC-BY-SA-4.0 (share-alike"),
        ({"a": "CC-BY-4.0"}, "CC0-1.0", "corpus a is CC-BY-4.0 (attribution required)"),
        ({"a": "GPL-3.0"}, None, "unknown licence 'GPL-3.0' (corpus a)"),
        ({"a": "CC-BY-4.0"}, "MIT", "corpus a is CC-BY-4.0 (attribution required)"),
    ],
)  # fmt: skip
def test_incompatible_licences_are_refused_with_the_sources_named(sources, declared, message):
    with pytest.raises(LicenceError, match=re.escape(message)):
        resolve(sources, declared)


def test_a_recipe_with_a_no_derivatives_source_fails_at_load(tmp_path):
    recipe = {
        "name": "nd",
        "corpora": [
            {"name": "ok", "path": "a.txt", "format": "txt", "license": "CC0-1.0",
             "domain": "review", "style": "colloquial"},
            {"name": "films", "path": "b.txt", "format": "txt", "license": "CC-BY-NC-ND-4.0",
             "domain": "review", "style": "colloquial"},
        ],
    }  # fmt: skip
    path = tmp_path / "nd.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    with pytest.raises(RecipeError) as err:
        load_recipe(path)
    assert "nd.yaml" in str(err.value) and "films is CC-BY-NC-ND-4.0" in str(err.value)
    recipe["corpora"].pop()
    recipe["export"] = {"license": "CC-BY-4.0"}
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    assert load_recipe(path).release_licence().release == "CC-BY-4.0"


def test_attribution_lines_name_each_source_and_its_licence():
    lines = attribution_lines([
        {"name": "nsmc", "license": "CC0-1.0", "attribution": "NSMC, by Lucy Park"},
        {"name": "x", "license": "CC-BY-4.0"},
    ])  # fmt: skip
    assert lines[0].startswith("NSMC, by Lucy Park. Licence: CC0-1.0.")
    assert "corpus `x` (no attribution in the recipe). Licence: CC-BY-4.0." in lines[1]


def test_settings_read_as_tables_not_json():
    settings = {"rule": "tc", "seed": 0, "text_columns": ["title", "body"], "cutoff": None,
                "model": {"hidden": 128, "lr": 0.0005}, "near": True,
                "corpora": [{"corpus": "nsmc", "gsm": {"pool": 2000}}]}  # fmt: skip
    text = settings_table(settings)
    assert "| text_columns | title, body |" in text and "| model.hidden | 128 |" in text
    assert "| model.lr | 0.0005 |" in text and "| near | yes |" in text
    assert "| corpora.nsmc.gsm.pool | 2000 |" in text and "cutoff" not in text
    assert "{" not in text and "[" not in text
    assert inline({"sample": 150, "stratify": "corpus", "premises": None}) == (
        "sample 150, stratify corpus"
    )


def test_per_annotator_label_agreement_by_hand():
    ratings = pd.DataFrame(
        [("i1", "a", "x"), ("i1", "b", "x"), ("i1", "c", "y"),
         ("i2", "a", "y"), ("i2", "b", "y"), ("i2", "c", "y"),
         ("i3", "a", "x"), ("i3", "b", "y"), ("i3", "c", "z")],
        columns=["item_id", "annotator_id", "value"],
    )  # fmt: skip
    gold = pd.DataFrame({"item_id": ["i1", "i2"], "label": ["x", "y"]})
    table = label_agreement(ratings, gold).set_index("annotator_id")
    assert table.loc["a", "gold_agreement"] == 1.0 and table.loc["c", "gold_agreement"] == 0.5
    # c on i1: the others (a, b) chose x -> disagrees; on i2 agrees; i3: others tie -> skipped
    assert table.loc["c", "others_agreement"] == 0.5
    # a on i1: others b x, c y tie -> skipped; i2 agrees; i3 others tie -> skipped
    assert table.loc["a", "others_agreement"] == 1.0
    assert table.loc["a", "items"] == 3 and table.loc["a", "gold_items"] == 2


HOSTILE_LINES = [
    "<script>alert(1)</script>",
    "<svg onload=alert(2)>",
    "[y](javascript:alert(4))",
    "![i](data:text/html,<script>alert(5)</script>)",
    "[z](&#106;avascript:alert(6))",
    "a|b",
    "`code`<img src=x onerror=alert(3)>",
]


def test_table_cells_are_text_not_markup():
    """Issue 32: every cell of a card table is escaped as data (tags, links, code spans,
    pipes), so a row keeps its columns and renders as the characters it holds."""
    import markdown as md

    from pipelines.core.markdown import Markdown, table

    text = table(["text", "note"], [[line, Markdown("`kept`")] for line in HOSTILE_LINES])
    html = md.markdown(text, extensions=["tables"])
    for bad in ("<script", "<svg", "<img", 'javascript:alert(4)"', 'href="'):
        assert bad not in html, bad
    assert html.count("<tr>") == len(HOSTILE_LINES) + 1
    assert all(row.count("<td>") == 2 for row in html.split("<tr>")[2:])
    assert html.count("<code>kept</code>") == len(HOSTILE_LINES)  # the code's Markdown stays
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text


def test_neutralize_defuses_raw_tags_and_unsafe_links_whatever_their_origin():
    from pipelines.core.markdown import neutralize

    out = neutralize("\n".join([*HOSTILE_LINES, "[ok](https://klue-benchmark.com)",
                                "<details><summary>x</summary>", "`<b>` in code"]))  # fmt: skip
    assert "<script" not in out and "<svg" not in out and "<img" not in out
    assert "](javascript:" not in out and "](data:" not in out and "](&#106;" not in out
    assert "[ok](https://klue-benchmark.com)" in out  # safe links stay
    assert "<details><summary>x</summary>" in out and "`<b>` in code" in out


def test_html_card_is_sanitised_and_forbids_scripts():
    from pipelines.export.card_html import to_html

    page = to_html("\n\n".join(["# t", *HOSTILE_LINES, "<a href='javascript:x'>a</a>"]), {}, "t")
    body = page.split("<body>", 1)[1]
    tags = re.findall(r"<[^>]*>", body)  # hostile markup is shown as text, never a tag
    for bad in ("<script", "<svg", "onload", "onerror", "javascript:", "data:text"):
        assert not any(bad in tag for tag in tags), bad
    assert "&lt;svg onload=alert(2)&gt;" in body
    assert "default-src 'none'" in page  # a Content-Security-Policy: no script runs


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("-3", "-3"),
        ("+0.5", "+0.5"),
        ("1e-3", "1e-3"),
        ("평범한 문장", "평범한 문장"),
    ],
)
def test_spreadsheet_cells_never_start_a_formula(text, safe):
    from pipelines.core.spreadsheet import safe_cell
    from pipelines.families.kobbq.templates import release_tsv
    from pipelines.families.kornlu.export import tsv

    assert safe_cell(text) == safe
    assert tsv([{"sentence1": text, "score": 1.5}]).splitlines()[1] == f"{safe}\t1.500"
    assert tsv([{"sentence1": text}], spreadsheet_safe=False).splitlines()[1] == text
    assert release_tsv([{"context": text, "choices": ["a"]}]).splitlines()[1].startswith(safe)


def test_a_collapsed_report_renders_as_markdown_in_the_html_card():
    """Issue 54: KoBEST's artifact reviews, opened in the HTML card, showed raw pipes,
    ``####`` and backquotes (the converter left Markdown inside ``<details>`` as text)."""
    import re

    from pipelines.export.card_html import to_html
    from pipelines.families.kobest.card import _report_block

    report = ("# Artifact report (split rule `review 1`)\n\n## Split sizes\n\n"
              "| split | items |\n|---|---|\n| dev | 5 |\n\nCue `a1:두` -> label 0.")  # fmt: skip
    page = to_html(f"# Card\n\n{_report_block('1', report)}\n\nAfter.", {}, "t")
    body = page.split("<body>", 1)[1]
    assert "<details>" in body and "<summary>Artifact review 1</summary>" in body
    # each heading carries the anchor GitHub gives it (the card's contents link them)
    assert '<h4 id="artifact-report-split-rule-review-1">Artifact report (split rule ' \
        "<code>review 1</code>)</h4>" in body  # fmt: skip
    assert '<h5 id="split-sizes">Split sizes</h5>' in body and "<td>dev</td>" in body
    assert "<code>a1:두</code>" in body
    assert not re.search(r"\|---|#{2,}|`|markdown=", body), body
