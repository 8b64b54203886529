"""The English source pairs of KorSTS / KorNLI (STS-B, XNLI) and the reference
translations, read and checked before any work."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

HALVES = ("a", "b")
NLI_LABELS = ("entailment", "neutral", "contradiction")
KORSTS_META = ["genre", "filename", "year", "id"]
LABELS = {"korsts": None, "kornli": NLI_LABELS}  # None: a 0-5 score
# the source's label column (STS-B's score, XNLI's gold_label)
LABEL_FIELDS = {"korsts": "score", "kornli": "gold_label"}
# the label-risk checks a recipe gets when its qa.checks names none
DEFAULT_CHECKS = {
    "korsts": ["identical_translation", "near_identical_translation", "gender_mismatch",
               "untranslated_latin", "length_ratio"],
    "kornli": ["gender_mismatch", "untranslated_latin", "length_ratio"],
}  # fmt: skip


class SourceError(BenchforgeError, ValueError):
    """An English dataset that cannot be read; the message names the file and the line."""


# ------------------------------------------------------------------ reading the source


def read_pairs(path: Path, corpus: object, label_field: str, labels: tuple[str, ...] | None
               ) -> pd.DataFrame:  # fmt: skip
    """The pairs of an English (or reference) dataset: ``row`` (1-based), ``line``,
    ``sentence1``, ``sentence2``, ``label`` and any other column of the file. STS
    (``labels`` None): the score is a number from 0 to 5; NLI: one of ``labels``. A
    missing column, a wrong number of fields, an empty sentence, a sentence with a
    control character or over ``MAX_FIELD_CHARS`` characters, or a bad label names the
    file and the line."""
    from pipelines.core.line_files import field_problem, iter_rows

    if not path.is_file():
        raise SourceError(f"{path}: file not found")
    body = [(line, record) for line, record in iter_rows(path, corpus.format, corpus.encoding,
                                                         corpus.has_header, corpus.columns)
            if record is not None]  # fmt: skip
    need = ["sentence1", "sentence2", label_field]
    out = []
    for n, (line, record) in enumerate(body, start=1):
        missing = [f for f in need if f not in record]
        if missing:
            raise SourceError(f"{path}: line {line}: no field {missing[0]!r} "
                              f"(fields: {list(record)})")  # fmt: skip
        for f in ("sentence1", "sentence2"):
            if not str(record[f] or "").strip():
                raise SourceError(f"{path}: line {line}: empty {f}")
            why = field_problem(record[f])  # a NUL or a 360,000-character field (issue 51)
            if why:
                raise SourceError(f"{path}: line {line}: {f} {why}")
        value = str(record[label_field]).strip()
        if labels is None:
            try:
                score = float(value)
            except ValueError:
                raise SourceError(f"{path}: line {line}: score {value!r} is not a number") from None
            if not 0 <= score <= 5 or math.isnan(score):
                raise SourceError(f"{path}: line {line}: score {score} outside 0-5")
            label: object = score
        else:
            if value not in labels:
                raise SourceError(f"{path}: line {line}: label {value!r} is not one of {labels}")
            label = value
        extra = {k: str(v) for k, v in record.items() if k not in need}
        out.append(
            {
                "row": n,
                "line": line,
                "sentence1": str(record["sentence1"]).strip(),
                "sentence2": str(record["sentence2"]).strip(),
                "label": label,
                **extra,
            }
        )
        if corpus.limit and n >= corpus.limit:
            break
    if not out:
        raise SourceError(f"{path}: no pairs")
    return pd.DataFrame(out)


def aligned_reference(source: pd.DataFrame, reference: pd.DataFrame, src_path: Path,
                      ref_path: Path, numeric: bool) -> pd.DataFrame:  # fmt: skip
    """The reference rows of the source's rows, checked row by row: the same number of
    rows and the same label on every row (a misaligned file names the first row)."""
    if len(reference) < len(source):
        raise SourceError(f"{ref_path}: {len(reference)} rows for the {len(source)} of "
                          f"{src_path}: the files are not aligned")  # fmt: skip
    ref = reference.head(len(source)).reset_index(drop=True)
    for s, r in zip(source.itertuples(index=False), ref.itertuples(index=False), strict=True):
        same = abs(float(s.label) - float(r.label)) < 1e-6 if numeric else s.label == r.label
        if not same:
            raise SourceError(
                f"{ref_path}: line {r.line}: label {r.label} but {src_path} line {s.line} has "
                f"{s.label}: the files are not aligned row by row"
            )
    return ref


def preflight(recipe: Recipe, numeric: bool, label_field: str) -> None:
    """Read the English pairs, check the reference's alignment and load the translation
    memory: bad input fails here, before any server starts or any output is written."""
    from pipelines.pairing.memory import TranslationMemory

    source_tables(recipe, numeric, label_field)
    m = recipe.translation.memory
    if m:
        TranslationMemory.load(recipe.resolve(m.path), m.fuzzy_threshold, m.source_column,
                               m.target_column)  # fmt: skip


def sentence_id(text: str, postedit: bool = True) -> str:
    """A sentence's id: ``s-`` and its hash when it goes to post-editing, ``m-`` when it
    is machine translated only (a sentence in both a train and a dev pair is two
    sentences: Ham et al. 2020, 3.1 post-edits the dev copy only)."""
    return ("s-" if postedit else "m-") + hashlib.sha256(text.encode()).hexdigest()[:12]


def _split_pairs(recipe: Recipe, part: object, numeric: bool, label_field: str) -> pd.DataFrame:
    """The pairs of one English dataset (``part``: source, reference, split), checked
    against its reference row by row."""
    corpora = {c.name: c for c in recipe.corpora}
    src = corpora[part.source]
    labels = None if numeric else NLI_LABELS
    pairs = read_pairs(recipe.corpus_path(src), src, label_field, labels)
    pairs = pairs.rename(columns={"sentence1": "en1", "sentence2": "en2"})
    if part.reference:
        ref_spec = corpora[part.reference]
        ref = aligned_reference(
            pairs,
            read_pairs(recipe.corpus_path(ref_spec), ref_spec, label_field, labels),
            recipe.corpus_path(src),
            recipe.corpus_path(ref_spec),
            numeric,
        )
        pairs["ref1"], pairs["ref2"] = ref["sentence1"], ref["sentence2"]
        for col in KORSTS_META:
            if col in ref.columns:
                pairs[col] = ref[col]
    pairs.insert(0, "pair_id", [f"{part.split}-{r:05d}" for r in pairs["row"]])
    pairs["split"] = part.split
    pairs["source"] = src.name
    pairs["license"] = src.license
    return pairs


def source_tables(recipe: Recipe, numeric: bool, label_field: str
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(pairs, sentences) of the recipe's English datasets: one row per pair (its split,
    the English sentences and their ids, the label, the reference's translations and
    metadata when given, ``postedit``: whether its split goes to post-editing) and one
    per distinct English sentence of a post-edited split and per distinct one of a
    machine-translated-only split (Ham et al. 2020, 3.1: train is machine translated
    only; ``half``: the half of the post-edited pairs where it first occurs, empty for a
    sentence that is not post-edited)."""
    t = recipe.translation
    pairs = pd.concat([_split_pairs(recipe, part, numeric, label_field) for part in t.parts()],
                      ignore_index=True)  # fmt: skip
    pairs["postedit"] = [t.postedited(x) for x in pairs["split"]]
    for k in (1, 2):
        pairs[f"s{k}"] = [sentence_id(x, pe) for x, pe in zip(pairs[f"en{k}"], pairs["postedit"],
                                                              strict=True)]  # fmt: skip
    # the two post-editors each take half of the post-edited pairs (Ham et al. 2020, 3.1.1)
    n_pe = int(pairs["postedit"].sum())
    rank = pairs["postedit"].cumsum() - 1
    pairs["half"] = np.where(~pairs["postedit"], "",
                             np.where(rank < (n_pe + 1) // 2, "a", "b"))  # fmt: skip
    rows: dict[str, dict] = {}
    for p in pairs.itertuples(index=False):
        for k in (1, 2):
            sid = getattr(p, f"s{k}")
            if sid not in rows:
                rows[sid] = {"sentence_id": sid, "english": getattr(p, f"en{k}"),
                             "reference": getattr(p, f"ref{k}", None), "half": p.half,
                             "first_pair": p.pair_id, "source": p.source,
                             "license": p.license, "postedit": bool(p.postedit)}  # fmt: skip
    return pairs, pd.DataFrame(list(rows.values()))
