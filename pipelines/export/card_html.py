"""The data card as one HTML file a data steward opens in a browser: the Markdown card
converted with Python-Markdown (tables, attribute lists), every figure embedded as a
``data:`` URI so the file needs nothing beside it, and a small print-friendly style."""

from __future__ import annotations

import base64
import html

import markdown

STYLE = """
body { font-family: "Noto Sans KR", "Nanum Gothic", "Apple SD Gothic Neo", sans-serif;
       max-width: 62rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #222; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
blockquote { border-left: 4px solid #d9822b; background: #fff6ec; margin: 1rem 0;
             padding: 0.4rem 1rem; }
img { max-width: 100%; border: 1px solid #eee; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; margin-top: 2rem; }
code { background: #f5f5f5; padding: 0 0.2rem; }
"""


def to_html(text: str, figures: dict[str, bytes], title: str, lang: str = "ko") -> str:
    """``text`` (the card's Markdown) as a standalone HTML page; each image whose source
    is a key of ``figures`` is replaced by the PNG itself as a data URI."""
    body = markdown.markdown(text, extensions=["tables", "sane_lists"], output_format="html")
    for name, png in sorted(figures.items()):
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        body = body.replace(f'src="{name}"', f'src="{uri}"')
    return (
        f'<!DOCTYPE html>\n<html lang="{html.escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>Data card: {html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )
