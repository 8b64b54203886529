"""KLUE-DP's pseudo-parser (issue 57, item 3): the biaffine parser of
:mod:`pipelines.models.dep_parser` trained on UD Korean trees converted to KLUE's
conventions (:mod:`.dp_convert`), with MeCab's morphology as its input
(:mod:`.dp_morph`), so that training and pseudo-parsing see the same features.

Held-out sentences: every ``holdout``-th sentence of each treebank file (by position,
so the split is the same on every machine) is kept out of training and scores the
parser (UAS and LAS), beside the right-branching baseline on the same sentences.

A parser trained from files is cached in benchforge's data folder
(``$BENCHFORGE_HOME/parsers/<key>``, :func:`cached_parser`), keyed by the files' bytes,
the settings, the held-out rule and the code of the conversion, the morphology and the
parser, so that a second rebuild (or a test) reuses it; it is trained in a temporary
folder and renamed into place, so an interrupted training leaves nothing half-made.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from pipelines.families.klue.dp_convert import KlueTree, convert
from pipelines.families.klue.dp_morph import Word
from pipelines.families.klue.ud import read_conllu
from pipelines.models.dep_parser import ParserSettings, train_parser

SYMBOL_TAGS = frozenset(["SF", "SP", "SS", "SE", "SO", "SW"])


def features(word: Word) -> tuple[str, ...]:
    """The parser's six feature slots of a word: its POS string, first and last
    non-symbol tag, last morpheme with its tag (the particle or ending), first
    content morpheme, and the form itself."""
    core = [
        (m, t) for m, t in zip(word.morphemes, word.tags, strict=True) if t not in SYMBOL_TAGS
    ] or list(zip(word.morphemes, word.tags, strict=True))
    last_m, last_t = word.morphemes[-1], word.tags[-1]
    return (word.pos, core[0][1], core[-1][1], f"{last_m}/{last_t}",
            f"{core[0][0]}/{core[0][1]}", word.form)  # fmt: skip


@dataclass
class TreebankSplit:
    train: list[KlueTree]
    heldout: list[KlueTree]
    files: dict[str, int]
    forced: int


def load_treebanks(paths: list[Path], holdout: int = 10) -> TreebankSplit:
    """The UD files converted, every ``holdout``-th sentence of each held out (0: none)."""
    train, heldout, files, forced = [], [], {}, 0
    for path in paths:
        trees = [convert(s) for s in read_conllu(path)]
        files[path.name] = len(trees)
        for i, t in enumerate(trees):
            forced += t.forced
            (heldout if holdout and i % holdout == holdout - 1 else train).append(t)
    return TreebankSplit(train, heldout, files, forced)


def examples(trees: list[KlueTree]) -> list[tuple[list[tuple[str, ...]], list[int], list[str]]]:
    return [([features(w) for w in t.words], t.heads, t.labels) for t in trees]


def train_on_ud(paths: list[Path], settings: ParserSettings, folder: Path, holdout: int = 10,
                licence: str | None = None) -> dict:  # fmt: skip
    """Train the pseudo-parser on the UD files into ``folder``; its metrics, with the
    held-out scores (``dev``) and the right-branching baseline's UAS on them."""
    data = load_treebanks(paths, holdout)
    info = train_parser(examples(data.train), examples(data.heldout), settings, folder,
                        {"treebanks": data.files, "holdout": f"every {holdout}th sentence",
                         "licence": licence, "forced_attachments": data.forced})  # fmt: skip
    return info


def cache_key(paths: list[Path], settings: ParserSettings, holdout: int) -> str:
    """The cache folder's name: the files' bytes, the settings (the device aside), the
    held-out rule and the code that turns the files into a parser."""
    from pipelines.core.io import sha256_file
    from pipelines.families.klue import dp_convert, dp_morph
    from pipelines.models import dep_parser

    code = "".join(inspect.getsource(m) for m in (dp_convert, dp_morph, dep_parser))
    key = json.dumps([[sha256_file(p) for p in paths], asdict(settings) | {"device": None},
                      holdout, hashlib.sha256(code.encode()).hexdigest()])  # fmt: skip
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def parser_cache(paths: list[Path], settings: ParserSettings, holdout: int = 10) -> Path:
    """The folder in benchforge's data folder that holds (or will hold) the parser of
    ``paths`` under ``settings``."""
    from pipelines.core.home import home

    return home() / "parsers" / f"klue-dp-{cache_key(paths, settings, holdout)}"


def is_cached(folder: Path) -> bool:
    """Whether ``folder`` holds a trained parser (its summary and its weights)."""
    return (folder / "parser.json").is_file() and (folder / "model.safetensors").is_file()


def cached_parser(paths: list[Path], settings: ParserSettings, holdout: int = 10,
                  licence: str | None = None) -> Path:  # fmt: skip
    """The folder of a parser trained on ``paths`` (module docstring), trained first
    when the cache has none."""
    folder = parser_cache(paths, settings, holdout)
    if is_cached(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{folder.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        train_on_ud(paths, settings, tmp, holdout, licence)
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first: keep its folder
            if not (folder / "parser.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
