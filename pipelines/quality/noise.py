"""Noise rules of KLUE section 2.3, one small class per rule.

Cleaners rewrite text (KLUE 2.3: "we remove hashtags, HTML tags, bad characters, empty
parentheses and consecutive blanks"; for news "reporter and press names, image tags,
source tags and copyright tags"). Filters drop a sentence with a reason (KLUE 2.3:
"sentences with more than 10 Chinese or Japanese characters"; benchforge adds a share
of Hangul, measured with addresses masked, and length bounds, set in the recipe). A
sentence that several rules drop records all of them.

``clean_documents`` is the ``clean`` stage over documents; ``filter_noise`` is the
``noise`` stage over sentences.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

import pandas as pd

from pipelines.core.stage import StageResult, split_by_reason
from pipelines.lang import DEFAULT_LANGUAGE, Language, language
from pipelines.quality.pii import mask_addresses
from pipelines.quality.pii import pii_kinds as find_pii_kinds
from pipelines.quality.settings import NoiseSettings


class Cleaner:
    """Rewrites text; ``name`` is recorded in the row's ``edits`` when the text changes."""

    name = "cleaner"

    def clean(self, text: str) -> str:
        raise NotImplementedError


_INVISIBLE_KEEP = {"\n", "\t"}
_EXTRA_INVISIBLE = {"\ufffd", "\u3164", "\u115f", "\u1160", "\uffa0"}  # replacement, fillers


class InvisibleCharacters(Cleaner):
    """KLUE 2.3 bad characters: zero-width and format characters (U+200B, U+FEFF, U+200E,
    soft hyphen...), control and private-use characters, the replacement character and
    Hangul fillers are removed; exotic spaces become plain spaces; line and paragraph
    separators become newlines."""

    name = "invisible_characters"

    def _map(self, ch: str) -> str | None:
        if ch in _INVISIBLE_KEEP:
            return ch
        if ch in ("\u2028", "\u2029", "\r", "\x85"):
            return "\n"
        if ch in _EXTRA_INVISIBLE:
            return ""
        cat = unicodedata.category(ch)
        if cat in ("Cf", "Cc", "Co", "Cs", "Cn"):
            return ""
        if cat == "Zs":
            return " "
        return ch

    def clean(self, text: str) -> str:
        if text.isascii() and text.isprintable():
            return text
        return "".join(self._map(ch) or "" for ch in text)


_BLOCK_TAG = re.compile(r"<\s*(?:br|/?p|/?div|/?li|/?tr|hr)\b[^<>]*>", re.I)
_TAG = re.compile(r"<!--.*?-->|<\s*/?\s*[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?\s*>", re.S)
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")


class HtmlTags(Cleaner):
    """KLUE 2.3 HTML tags (e.g. ``<br>``): block tags become line breaks, other tags are
    removed, entities (``&amp;``, ``&nbsp;``) are decoded."""

    name = "html_tags"

    def clean(self, text: str) -> str:
        if "<" in text:
            text = _BLOCK_TAG.sub("\n", text)
            text = _TAG.sub(" ", text)
        if "&" in text:
            text = _ENTITY.sub(lambda m: html.unescape(m.group(0)).replace("\xa0", " "), text)
        return text


_HASHTAG = re.compile(r"(?<![\w&/#])#(?!\d+(?:\W|$))\w+")


class Hashtags(Cleaner):
    """KLUE 2.3 hashtags (e.g. ``#JMT``, ``#맛집``); ``#1`` style numbers are kept."""

    name = "hashtags"

    def clean(self, text: str) -> str:
        return _HASHTAG.sub(" ", text) if "#" in text else text


_EMPTY_PARENS = re.compile(r"[(\[{（【「『〔<《〈]\s*[)\]}）】」』〕>》〉]")


class EmptyParentheses(Cleaner):
    """KLUE 2.3 empty parentheses such as ``()`` or ``[ ]`` (often left by other rules)."""

    name = "empty_parentheses"

    def clean(self, text: str) -> str:
        while True:
            new = _EMPTY_PARENS.sub("", text)
            if new == text:
                return text
            text = new


_BLANKS = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


class ConsecutiveBlanks(Cleaner):
    """KLUE 2.3 consecutive blanks: runs of spaces become one, lines are stripped."""

    name = "consecutive_blanks"

    def clean(self, text: str) -> str:
        text = _BLANKS.sub(" ", text)
        if "\n" in text:
            text = "\n".join(line.strip() for line in text.split("\n"))
            text = _BLANK_LINES.sub("\n", text)
        return text.strip()


_NAME = r"[가-힣]{2,4}"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_REPORTER = r"(?:기자|특파원|통신원|객원기자|인턴기자|선임기자)"
_PRESS_END = r"(?:뉴스|일보|신문|닷컴|방송|경제|미디어|통신|타임스|헤럴드|투데이|데일리|저널)"
_TAG_WORDS = r"(?:단독|종합|속보|포토|영상|사진|공식입장|인터뷰|현장|이슈|초점|리뷰|전문|화보)"
_NEWS_RULES: list[tuple[re.Pattern[str], str]] = [
    # copyright lines: "ⓒ 연합뉴스, 무단 전재-재배포 금지", "<저작권자 ⓒ 뉴스1>", "Copyright ..."
    (re.compile(r"[<\[(]?\s*(?:저작권자|Copyright|ⓒ|©|\(c\))[^\n]*$", re.I | re.M), ""),
    (re.compile(r"[^\n.!?]*무단\s*[-·ㆍ]?\s*전재[^\n]*$", re.M), ""),
    (re.compile(r"[^\n.!?]*재배포\s*금지[^\n]*$", re.M), ""),
    # image captions: lines that start with a caption or link bullet
    (re.compile(r"^\s*[▲△▶▷■□☞◆◇►]\s*[^\n]*$", re.M), ""),
    (re.compile(r"^\s*사진\s*설명\s*[:=]?[^\n]*$", re.M), ""),
    # dateline + byline: "(서울=연합뉴스) 홍길동 기자 =", "[서울=뉴시스]홍길동 기자 ="
    (
        re.compile(
            rf"^\s*[(\[][^()\[\]\n]{{1,20}}=[^()\[\]\n]{{1,20}}[)\]]\s*(?:{_NAME}\s*{_REPORTER}\s*=?\s*)?",
            re.M,
        ),
        "",
    ),
    # press tag in brackets at the start: "[연합뉴스]", "[OSEN=홍길동 기자]", "[단독]", "[종합]"
    (
        re.compile(
            rf"^\s*\[(?:[^\[\]\n]{{0,20}}(?:{_REPORTER}|[=:]|{_PRESS_END}|{_TAG_WORDS})[^\[\]\n]{{0,20}})\]\s*",
            re.M,
        ),
        "",
    ),
    (re.compile(rf"\s*[(\[](?:{_TAG_WORDS}|\d+보|종합\d*보)[)\]]\s*$", re.M), ""),
    # photo and source tags: "(사진=연합뉴스)", "[사진 제공=OO]", "<출처: OO>", "/사진=뉴시스"
    (
        re.compile(
            r"[(\[<]\s*(?:사진|자료|출처|그래픽|영상|사진\s*제공|자료\s*제공|제공|이미지)\s*[=:：][^()\[\]<>\n]{0,40}[)\]>]"
        ),
        " ",
    ),
    (re.compile(r"[(\[]\s*(?:자료\s*사진|사진|이미지|그래픽)\s*[)\]]"), " "),
    (re.compile(r"/\s*(?:사진|자료|출처)\s*=\s*\S+"), " "),
    # reporter bylines: "홍길동 기자 hong@yna.co.kr", "홍길동 기자 =", trailing "/홍길동 기자"
    (re.compile(rf"{_NAME}\s*{_REPORTER}\s*(?:\(?{_EMAIL}\)?|=)"), " "),
    (re.compile(rf"(?:^|[/\s]){_NAME}\s*{_REPORTER}\s*$", re.M), ""),
]


class NewsBoilerplate(Cleaner):
    """KLUE 2.3, news corpora only: remove reporter and press names (bylines, datelines),
    image captions, photo and source tags, and copyright lines."""

    name = "news_boilerplate"

    def clean(self, text: str) -> str:
        for pattern, repl in _NEWS_RULES:
            text = pattern.sub(repl, text)
        return text


def cleaners_for(settings: NoiseSettings, domain: str) -> list[Cleaner]:
    """The cleaners a corpus of ``domain`` gets, in the order they run."""
    chain: list[Cleaner] = []
    if settings.remove_invisible:
        chain.append(InvisibleCharacters())
    if settings.remove_html:
        chain.append(HtmlTags())
    if settings.news_boilerplate and domain in settings.news_domains:
        chain.append(NewsBoilerplate())
    if settings.remove_hashtags:
        chain.append(Hashtags())
    if settings.remove_empty_parentheses:
        chain.append(EmptyParentheses())
    if settings.collapse_blanks:
        chain.append(ConsecutiveBlanks())
    return chain


def apply_cleaners(text: str, chain: list[Cleaner]) -> tuple[str, list[str]]:
    """Run the chain; return the text and the names of the cleaners that changed it."""
    edits = []
    for cleaner in chain:
        new = cleaner.clean(text)
        if new != text:
            edits.append(cleaner.name)
            text = new
    return text, edits


def clean_documents(docs: pd.DataFrame, settings: NoiseSettings) -> StageResult:
    """Stage ``clean`` (documents): rewrite text with the cleaners; a document that is
    empty after cleaning is dropped with reason ``empty_after_cleaning``, one longer than
    ``max_document_chars`` (before cleaning) with reason ``too_long_document``, before
    sentence splitting."""
    texts: list[str] = []
    edits: list[str | None] = []
    reasons: list[str | None] = []
    details: list[str | None] = []
    chains: dict[str, list[Cleaner]] = {}
    for text, domain in zip(docs["text"], docs["domain"], strict=True):
        if len(text) > settings.max_document_chars:
            texts.append(text)
            edits.append(None)
            reasons.append("too_long_document")
            details.append(f"{len(text):,} characters > {settings.max_document_chars:,}")
            continue
        chain = chains.setdefault(domain, cleaners_for(settings, domain))
        new, changed = apply_cleaners(text, chain)
        texts.append(new)
        edits.append(",".join(changed) or None)
        reasons.append(None if new else "empty_after_cleaning")
        details.append(None)
    out = docs.copy()
    out["raw_text"] = docs["text"]
    out["text"] = texts
    out["edits"] = pd.Series(edits, index=docs.index, dtype="object")
    reasons = pd.Series(reasons, index=docs.index, dtype="object")
    # a dropped document is audited with its original text
    dropped_text = docs["text"]
    result = split_by_reason("clean", "document", out, reasons, details)
    if len(result.dropped):
        result.dropped["text"] = dropped_text[reasons.notna()].to_numpy()
    return result


@dataclass(frozen=True)
class SentenceVerdict:
    """Every rule that fired on a sentence, in rule order: ``(reason, detail)`` pairs, plus
    PII kinds found in a sentence that a rule drops (so they are counted too). Empty:
    keep."""

    fired: tuple[tuple[str, str | None], ...] = ()
    pii: tuple[str, ...] = ()

    @property
    def reason(self) -> str | None:
        """The first rule that fired: the row's ``reason``."""
        return self.fired[0][0] if self.fired else None

    @property
    def detail(self) -> str | None:
        """The first rule's detail, then ``also`` every other rule and the PII found."""
        if not self.fired:
            return None
        first = self.fired[0][1]
        others = [f"{r} ({d})" if d else r for r, d in self.fired[1:]]
        if self.pii:
            others.append(f"pii ({','.join(self.pii)})")
        if not others:
            return first
        also = "also " + ", ".join(others)
        return f"{first}; {also}" if first else also

    @property
    def flags(self) -> str | None:
        """Every rule that fired and ``pii:<kind>`` per PII kind, comma-separated."""
        if not self.fired:
            return None
        return ",".join([r for r, _ in self.fired] + [f"pii:{k}" for k in self.pii])


def judge_sentence(
    text: str,
    settings: NoiseSettings,
    pii_kinds: tuple[str, ...] = (),
    lang: Language | None = None,
) -> SentenceVerdict:
    """Decide one sentence: keep, or drop with every rule that applies (the first one is
    the reason). The Hangul share is measured with e-mail addresses, URLs and mentions
    masked, so a Korean sentence that carries an address is left to the PII stage. When
    a rule drops the sentence, the PII kinds of ``pii_kinds`` it holds are recorded."""
    if not text.strip():
        return SentenceVerdict((("empty_after_cleaning", None),))
    lang = lang or language()
    fired: list[tuple[str, str | None]] = []
    n_cjk = lang.foreign_chars(text)
    if n_cjk > settings.max_cjk_chars:
        fired.append(("too_many_cjk", f"{n_cjk} {lang.foreign_name} characters"))
    share = lang.script_share(mask_addresses(text))
    if share < settings.min_hangul_share:
        fired.append((lang.script_reason, f"{lang.script_name} share {share:.2f}"))
    if len(text) < settings.min_chars:
        fired.append(("too_short", f"{len(text)} characters"))
    if len(text) > settings.max_chars:
        fired.append(("too_long", f"{len(text)} characters"))
    if not fired:
        return SentenceVerdict()
    return SentenceVerdict(tuple(fired), tuple(find_pii_kinds(text, pii_kinds)))


def filter_noise(
    sentences: pd.DataFrame,
    settings: NoiseSettings,
    pii_kinds: tuple[str, ...] = (),
    lang: str = DEFAULT_LANGUAGE,
) -> StageResult:
    """Stage ``noise`` (sentences): drop with reasons ``empty_after_cleaning``,
    ``too_many_cjk`` (KLUE 2.3, > ``max_cjk_chars``), ``not_korean`` (Hangul share below
    ``min_hangul_share``, addresses masked), ``too_short`` and ``too_long``
    (``min_chars``/``max_chars``). A dropped row's ``flags`` list every rule that fired
    and the PII kinds (of ``pii_kinds``, the recipe's enabled ones) it holds."""
    language_ = language(lang)
    verdicts = [judge_sentence(t, settings, pii_kinds, language_) for t in sentences["text"]]
    index = sentences.index
    reasons = pd.Series([v.reason for v in verdicts], index=index, dtype="object")
    details = pd.Series([v.detail for v in verdicts], index=index, dtype="object")
    flags = pd.Series([v.flags for v in verdicts], index=index, dtype="object")
    return split_by_reason("noise", "sentence", sentences, reasons, details, {"flags": flags})
