"""A translation memory, and translation with lineage (KorSTS/KorNLI, Ham et al. 2020, 3.1).

A team that rebuilds a translated benchmark usually has translations already: a previous
release, a client's glossary, its own post-edits. :class:`TranslationMemory` is such a
table of source -> target sentences. :func:`translate_with_memory` looks every sentence
up in it first and machine-translates only the rest:

- ``memory-exact``: the source is in the memory (after trimming and collapsing blanks);
  its target is taken as it is (match score 100);
- ``memory-fuzzy``: the memory's closest source scores at least ``fuzzy_threshold`` on
  rapidfuzz's ``fuzz.ratio`` (0-100, on the same normalised text); that source's target
  is the draft, reported as fuzzy with its score and the source it matched, as a CAT
  tool shows a fuzzy match to a translator;
- else the machine translator (``backend`` and ``model`` of the translator).

Every sentence keeps its lineage: how it was translated, by which model, the match
score and the matched memory source.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from rapidfuzz import fuzz, process

from pipelines.core.errors import BenchforgeError
from pipelines.core.progress import progress
from pipelines.pairing.translate import TranslationError, Translator

log = logging.getLogger(__name__)

LINEAGE_COLUMNS = ["text", "draft", "backend", "model", "tm_score", "tm_source"]


class TranslationMemoryError(BenchforgeError, ValueError):
    """A translation memory file that cannot be used (names the file and the line)."""


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Match:
    target: str
    score: float
    source: str
    exact: bool


class TranslationMemory:
    """Source -> target sentences; exact lookup, then fuzzy above ``fuzzy_threshold``."""

    def __init__(self, table: dict[str, str], fuzzy_threshold: float = 90.0,
                 name: str = "memory") -> None:  # fmt: skip
        self.table = {_key(k): v for k, v in table.items()}
        self.sources = list(self.table)
        self.fuzzy_threshold = fuzzy_threshold
        self.name = name

    @classmethod
    def load(cls, path: Path, fuzzy_threshold: float = 90.0, source: str = "source",
             target: str = "target") -> TranslationMemory:  # fmt: skip
        """Read a TSV (no quoting) or CSV with a header (``read_parallel``). A source
        listed twice with two different targets is an error naming both lines: a memory
        must say one thing."""
        from pipelines.models.train_mt import ParallelDataError, read_parallel

        if not path.is_file():
            raise TranslationMemoryError(f"{path}: translation memory not found")
        try:
            rows = read_parallel(path, source, target)
        except ParallelDataError as exc:
            raise TranslationMemoryError(str(exc)) from None
        table: dict[str, str] = {}
        first_line: dict[str, int] = {}
        for line, src, tgt in rows.itertuples(index=False):
            src = _key(src)
            if src in table and table[src] != tgt:
                raise TranslationMemoryError(
                    f"{path}: line {line}: source {src[:60]!r} is also on line "
                    f"{first_line[src]} with another target ({table[src][:40]!r} vs "
                    f"{tgt[:40]!r}); keep one"
                )
            table.setdefault(src, tgt)
            first_line.setdefault(src, line)
        return cls(table, fuzzy_threshold, path.name)

    def lookup(self, texts: Sequence[str]) -> list[Match | None]:
        """The memory's match for each text (None when none reaches the threshold)."""
        out: list[Match | None] = []
        for text in progress(texts, desc=f"translation memory {self.name}", unit="sentence",
                             logger=log):  # fmt: skip
            key = _key(text)
            if key in self.table:
                out.append(Match(self.table[key], 100.0, key, True))
                continue
            best = None
            if self.sources and self.fuzzy_threshold < 100:
                best = process.extractOne(key, self.sources, scorer=fuzz.ratio,
                                          score_cutoff=self.fuzzy_threshold)  # fmt: skip
            out.append(
                Match(self.table[best[0]], round(float(best[1]), 2), best[0], False)
                if best
                else None
            )
        return out


def translate_with_memory(
    texts: Sequence[str],
    memory: TranslationMemory | None,
    translator: Translator | None,
    src: str,
    tgt: str,
) -> pd.DataFrame:
    """One row per text (``LINEAGE_COLUMNS``): the memory first, then the translator for
    the rest (see the module docstring). A translator that returns another number of
    translations than it was given texts is an error naming the backend."""
    matches = memory.lookup(texts) if memory else [None] * len(texts)
    rows = []
    for text, m in zip(texts, matches, strict=True):
        if m is None:
            rows.append([text, None, None, None, None, None])
        else:
            kind = "memory-exact" if m.exact else "memory-fuzzy"
            rows.append([text, m.target, kind, memory.name, m.score, m.source])
    frame = pd.DataFrame(rows, columns=LINEAGE_COLUMNS)
    todo = frame.index[frame["draft"].isna()].tolist()
    if todo:
        if translator is None:
            raise TranslationError(
                f"{len(todo)} sentences are not in the translation memory and no translator "
                "is configured (translation.translator or translation.train)"
            )
        done = translator.translate([texts[i] for i in todo], src, tgt)
        if len(done) != len(todo):
            raise TranslationError(
                f"{translator.backend} {translator.model}: returned {len(done)} translations "
                f"for {len(todo)} texts"
            )
        frame.loc[todo, "draft"] = [str(d).strip() for d in done]
        frame.loc[todo, "backend"] = translator.backend
        frame.loc[todo, "model"] = str(translator.model)
    return frame
