"""The language seam: every stage that needs sentences, morphemes or a script check asks
:func:`language` for the corpus's language object instead of importing a language's
module (DataTrove's ``load_word_tokenizer(lang)`` idea).

A language is one registration: a module in this package that builds a
:class:`Language` and registers it (``LANGUAGES.add("ko", ...)``, see ``ko.py``). The
recipe's ``language`` (and a corpus's own ``language``) picks it; Korean is the
default; ``ja.py`` is the Japanese pack (JGLUE).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from pipelines.core import plugins
from pipelines.core.registry import Registry

DEFAULT_LANGUAGE = "ko"


@dataclass(frozen=True)
class Language:
    """What the stages need to know about a language.

    - ``split_sentences(texts)``: one list of sentences per text (paragraph breaks are
      boundaries);
    - ``tagged(text)``: (surface, part-of-speech tag) of each morpheme;
    - ``script_share(text)``: the share of the language's own script among the letters
      (the noise stage drops a sentence below ``min_hangul_share``, reason
      ``script_reason``);
    - ``foreign_chars(text)``: the characters KLUE 2.3's ``too_many_cjk`` rule counts;
    - ``normalise(text)``: the language's text normalisation before the noise rules;
    - ``analysed(text)``: (surface, the analyser's whole feature string) of each
      morpheme, for a family that reads more than the tag (KLUE-DP's base forms from
      mecab-ko-dic's expression field); None where the language has no such analyser.
    """

    code: str
    name: str
    split_sentences: Callable[[list[str]], list[list[str]]]
    tagged: Callable[[str], list[tuple[str, str]]]
    script_share: Callable[[str], float]
    foreign_chars: Callable[[str], int]
    script_reason: str
    script_name: str = "script"  # in a dropped sentence's detail: "Hangul share 0.14"
    # what ``foreign_chars`` counts, in ``too_many_cjk``'s detail: "12 Hangul characters"
    foreign_name: str = "foreign"
    label: str = ""  # the data card's "Language:" line, e.g. "Korean (ko-KR)"
    normalise: Callable[[str], str] = str
    analysed: Callable[[str], list[tuple[str, str]]] | None = None

    def morphemes(self, text: str) -> list[str]:
        """Surface forms of the morphemes of ``text``."""
        return [surface for surface, _ in self.tagged(text)]


LANGUAGES: Registry[Language] = plugins.LANGUAGES  # in core: a recipe's language is checked there


def register_language(lang: Language) -> Language:
    """Register ``lang`` under its code (a language module's one registration)."""
    LANGUAGES.add(lang.code, lang, lang.name)
    return lang


def is_cjk_or_kana(ch: str) -> bool:
    """Chinese characters (CJK ideographs) and Japanese kana (the prolonged sound mark
    and half-width katakana included)."""
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF  # CJK unified ideographs
        or 0x3400 <= o <= 0x4DBF  # extension A
        or 0x20000 <= o <= 0x2FA1F  # extensions B-F and compatibility supplement
        or 0xF900 <= o <= 0xFAFF  # compatibility ideographs
        or 0x3040 <= o <= 0x30FF  # hiragana, katakana
        or 0x31F0 <= o <= 0x31FF  # katakana phonetic extensions
        or 0xFF66 <= o <= 0xFF9D  # half-width katakana
    )


def letter_share(text: str, in_script: Callable[[str], bool]) -> float:
    """Share of the letters of ``text`` (digits, spaces, punctuation ignored) for which
    ``in_script`` holds: a language pack's ``script_share``."""
    letters = hits = 0
    for ch in text:
        if in_script(ch):
            hits += 1
            letters += 1
        elif unicodedata.category(ch).startswith("L"):
            letters += 1
    return hits / letters if letters else 0.0


def language(code: str | None = None) -> Language:
    """The registered language ``code`` (Korean when None)."""
    return LANGUAGES.get(code or DEFAULT_LANGUAGE)
