"""The data card as one HTML file a data steward opens in a browser: the Markdown card
converted with Python-Markdown (tables), every figure embedded as a ``data:`` URI so the
file needs nothing beside it, and a small print-friendly style.

The text is set in NanumGothic (SIL Open Font License, shipped by the pinned
``koreanize-matplotlib``), subset with fontTools to the characters the card uses
(about 30 KB) and embedded as WOFF, so Korean renders on a machine without a Korean
font. The subset is deterministic: the same card gives the same file.

Data is text here too (issue 51): the Markdown goes through
``pipelines.core.markdown.neutralize`` before it is converted (no raw tag, no unsafe
link, whatever built it), the HTML through an allowlist of tags, attributes and link
schemes (nh3), and an image keeps its source only when it is one of the card's own
figures; a Content-Security-Policy forbids any script and any request."""

from __future__ import annotations

import base64
import html
import io
import logging
import re

import markdown
import nh3

STYLE = """
body { font-family: "BenchforgeCard", "Noto Sans KR", "Nanum Gothic", sans-serif;
       max-width: 62rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #222; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
blockquote { border-left: 4px solid #d9822b; background: #fff6ec; margin: 1rem 0;
             padding: 0.4rem 1rem; }
img { max-width: 100%; border: 1px solid #eee; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; margin-top: 2rem; }
code { background: #f5f5f5; padding: 0 0.2rem;
       font-family: ui-monospace, "DejaVu Sans Mono", monospace, "BenchforgeCard"; }
"""


# default-src 'none': no script of any kind, no request to anywhere; the page's own
# stylesheet, the embedded font and the embedded figures are all it may use
CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
    "base-uri 'none'; form-action 'none'"
)
TAGS = {
    "a", "blockquote", "br", "code", "del", "details", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "img", "li", "ol", "p", "pre", "strong", "summary", "sup", "sub", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "th": {"align"},
              "td": {"align"}, "ol": {"start"},
              **{f"h{n}": {"id"} for n in range(1, 7)}}  # fmt: skip
URL_SCHEMES = {"http", "https", "mailto"}  # and relative links: #anchors, NOTICES.md


def sanitize(body: str, images: frozenset[str] = frozenset()) -> str:
    """``body`` with only the allowlisted tags, attributes and link schemes left; the
    content of ``<script>`` and ``<style>`` is dropped with the tag; an ``<img>`` keeps
    its ``src`` only when it is one of ``images`` (the card's figures)."""

    def keep(tag: str, attribute: str, value: str) -> str | None:
        if tag == "img" and attribute == "src" and value not in images:
            return None
        return value

    return nh3.clean(body, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES,
                     link_rel=None, attribute_filter=keep)  # fmt: skip


def font_face(text: str) -> str:
    """An ``@font-face`` rule with NanumGothic subset to the characters of ``text``."""
    from fontTools import subset

    from pipelines.export.figures import nanum_gothic

    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)
    path = nanum_gothic()
    options = subset.Options()
    options.flavor = "woff"
    font = subset.load_font(str(path), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    buf = io.BytesIO()
    subset.save_font(font, buf, options)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return ('@font-face { font-family: "BenchforgeCard"; '
            f'src: url("data:font/woff;base64,{data}") format("woff"); }}')  # fmt: skip


_DETAILS = re.compile(r"^<details>", re.M)


def to_html(text: str, figures: dict[str, bytes], title: str, lang: str = "ko") -> str:
    """``text`` (the card's Markdown) as a standalone HTML page; each image whose source
    is a key of ``figures`` is replaced by the PNG itself as a data URI."""
    from pipelines.core.markdown import neutralize

    # a <details> block the code wrote (a collapsed report) holds Markdown: md_in_html
    # renders it (issue 54: KoBEST's artifact reviews showed raw pipes and ####); data
    # cannot open one, neutralize leaves no tag of its own but the bare <details>
    text = _DETAILS.sub('<details markdown="1">', neutralize(text))
    from markdown.extensions.toc import TocExtension

    from pipelines.export.card_summary import toc_slugify

    # headings get the anchors GitHub and the Hub give them: the card's contents line
    # links them (card_summary.contents)
    body = markdown.markdown(
        text,
        extensions=["tables", "sane_lists", "md_in_html", TocExtension(slugify=toc_slugify)],
        output_format="html",
    )
    # before the figures: a data: image is the code's, never the text's
    body = sanitize(body, frozenset(figures))
    for name, png in sorted(figures.items()):
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        body = body.replace(f'src="{name}"', f'src="{uri}"')
    return (
        f'<!DOCTYPE html>\n<html lang="{html.escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        f"<title>Data card: {html.escape(title)}</title>\n"
        f"<style>{font_face(text)}\n{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )
