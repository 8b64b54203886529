"""The language seam: every stage that needs sentences, morphemes or a script check asks
:func:`language` for the corpus's language object instead of importing a language's
module (DataTrove's ``load_word_tokenizer(lang)`` idea).

A language is one registration: a module in this package that builds a
:class:`Language` and registers it (``LANGUAGES.add("ko", ...)``, see ``ko.py``). The
recipe's ``language`` (and a corpus's own ``language``) picks it; Korean is the
default; ``ja.py`` is the Japanese pack (JGLUE).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
    - ``normalise(text)``: the language's text normalisation before the noise rules.
    """

    code: str
    name: str
    split_sentences: Callable[[list[str]], list[list[str]]]
    tagged: Callable[[str], list[tuple[str, str]]]
    script_share: Callable[[str], float]
    foreign_chars: Callable[[str], int]
    script_reason: str
    script_name: str = "script"  # in a dropped sentence's detail: "Hangul share 0.14"
    label: str = ""  # the data card's "Language:" line, e.g. "Korean (ko-KR)"
    normalise: Callable[[str], str] = str

    def morphemes(self, text: str) -> list[str]:
        """Surface forms of the morphemes of ``text``."""
        return [surface for surface, _ in self.tagged(text)]


LANGUAGES: Registry[Language] = Registry("language", "pipelines.lang", "text packs")


def register_language(lang: Language) -> Language:
    """Register ``lang`` under its code (a language module's one registration)."""
    LANGUAGES.add(lang.code, lang, lang.name)
    return lang


def language(code: str | None = None) -> Language:
    """The registered language ``code`` (Korean when None)."""
    return LANGUAGES.get(code or DEFAULT_LANGUAGE)
