"""Issue 54: a card that reads well. The checker the per-family screenshot tests use
(``tests/browser.py:raw_markdown_in``) finds Markdown left as text, and the card's
Markdown helpers give what it looks for."""

from __future__ import annotations

from browser import raw_markdown_in

from pipelines.core.markdown import docstring
from pipelines.export.card_html import to_html


def test_a_docstrings_literals_become_code_spans_and_the_rest_is_escaped():
    text = docstring("no slang (the ``slang`` lexicon, runs like ㅋㅋ, *not* <b>)")
    assert text == "no slang (the `slang` lexicon, runs like ㅋㅋ, \\*not\\* &lt;b&gt;)"
    assert docstring("a ``x|y`` cell", table=True) == "a `x\\|y` cell"


def test_the_checker_finds_markdown_left_as_text_and_passes_a_rendered_card(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<html><body><p>| split | items |<br>|---|---|</p><p>#### Artifact report</p>"
        "<p>cue `a1:두` -&amp;gt; 0</p><p><code>`kept`</code></p></body></html>",
        encoding="utf-8",
    )
    found = raw_markdown_in(broken, tmp_path / "broken.png")
    kinds = sorted({f.split(":")[0] for f in found})
    assert kinds == ["a code span's backquotes", "a heading's hashes", "a table's rule row",
                     "an escaped entity"]  # fmt: skip
    assert (tmp_path / "broken.png").stat().st_size > 1000
    card = "# Card\n\n<details><summary>Report</summary>\n\n#### Sizes\n\n| a | b |\n|---|---|\n" \
           "| `x` | 1 |\n\n</details>\n\nText with `code` and 1 -> 2.\n"  # fmt: skip
    page = tmp_path / "card.html"
    page.write_text(to_html(card, {}, "t"), encoding="utf-8")
    assert raw_markdown_in(page) == []
