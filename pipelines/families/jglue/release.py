"""JGLUE release files (Kurihara et al. 2022, v1.3, CC BY-SA 4.0) as a source corpus:
JSTS and JNLI JSON Lines read with the file and line of every problem, the
``yjcaptions_id`` grammar, the YJ Captions captions recovered per image, and the
release's labels by sentence pair (the simulated annotators' latent truth).

``yjcaptions_id`` (JGLUE 3.2.2, as the release writes it):

- ``<image>-<caption>-<caption>``: two captions of one image (JSTS-A, JNLI's pairs);
- ``<image>_<image>-<caption>-<caption>``: captions of two images (JSTS-B);
- ``<image>-<caption>-g<n>`` (or ``-g<n>-<caption>``): a caption and a sentence a
  crowdworker wrote to contradict it (JNLI's contradictions, JSTS-C).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError

FIELDS = ("sentence_pair_id", "yjcaptions_id", "sentence1", "sentence2", "label")
NLI_LABELS = ("entailment", "neutral", "contradiction")
PAIR_ID = re.compile(r"^(?P<image1>\d+)(?:_(?P<image2>\d+))?-(?P<c1>g?\d+)-(?P<c2>g?\d+)$")


class ReleaseError(BenchforgeError, ValueError):
    """A release file that cannot be read; the message names the file and the line."""


def parse_pair_id(text: str) -> dict[str, str]:
    """``image1``, ``image2`` (the same for one image), ``caption1``, ``caption2`` and
    ``kind`` (A: one image; B: two images; C: a written contradiction) of a
    ``yjcaptions_id``; ValueError when it does not parse."""
    m = PAIR_ID.match(text)
    if m is None:
        raise ValueError(f"yjcaptions_id {text!r} is not <image>[_<image>]-<caption>-<caption>")
    image1, c1, c2 = m["image1"], m["c1"], m["c2"]
    image2 = m["image2"] or image1
    written = c1.startswith("g") or c2.startswith("g")
    kind = "C" if written else ("B" if m["image2"] else "A")
    return {"image1": image1, "image2": image2, "caption1": c1, "caption2": c2, "kind": kind}


def read_release(path: Path) -> pd.DataFrame:
    """The pairs of a JSTS or JNLI release file: ``FIELDS``, the parsed id
    (:func:`parse_pair_id`), ``task`` (jsts for a 0-5 label, jnli for an NLI label),
    ``file`` and ``line``. A bad line names the file and the line."""
    from pipelines.core.line_files import read_json_lines

    rows = read_json_lines(path, FIELDS, ReleaseError)
    out = []
    for r in rows:
        where = f"{path}:{r['line']}"
        try:
            parsed = parse_pair_id(str(r["yjcaptions_id"]))
        except ValueError as exc:
            raise ReleaseError(f"{where}: {exc}") from None
        for field in ("sentence1", "sentence2"):
            if not isinstance(r[field], str) or not r[field].strip():
                raise ReleaseError(f"{where}: {field} is empty or not text")
        label = r["label"]
        if isinstance(label, str):
            if label not in NLI_LABELS:
                raise ReleaseError(f"{where}: label {label!r} is not one of {list(NLI_LABELS)}")
            task = "jnli"
        elif isinstance(label, int | float) and not isinstance(label, bool) and 0 <= label <= 5:
            task, label = "jsts", float(label)
        else:
            raise ReleaseError(f"{where}: label {label!r} is neither 0-5 nor an NLI label")
        out.append(
            {
                **{k: r[k] for k in FIELDS},
                "label": label,
                **parsed,
                "task": task,
                "file": Path(path).name,
                "line": r["line"],
            }
        )
    frame = pd.DataFrame(out)
    tasks = sorted(set(frame["task"]))
    if len(tasks) > 1:
        first = frame.loc[frame["task"] != frame["task"].iloc[0]].iloc[0]
        raise ReleaseError(
            f"{path}:{first.line}: a {first.task} label in a {frame['task'].iloc[0]} file"
        )
    frame["sentence_pair_id"] = frame["sentence_pair_id"].astype(str)
    return frame


def read_releases(paths: Iterable[Path]) -> pd.DataFrame:
    """Every pair of the release files, in order; ``label`` as text (a JSTS score "3.6")."""
    frame = pd.concat([read_release(p) for p in paths], ignore_index=True)
    # JSTS scores and JNLI labels in one column: text (labels_by_texts reads them back)
    frame["label"] = frame["label"].astype(str)
    return frame


def captions_of(pairs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(captions, variants). ``captions``: one row per (image, caption id) the pairs hold:
    ``image_id``, ``caption_id``, ``text`` (as first seen), ``written`` (a crowdworker's
    contradiction, ``g<n>``), ``where`` (file:line first seen). ``variants``: every other
    text of a caption id (JNLI v1.3 writes some captions with a closing 。 that JSTS v1.3
    leaves out), with both places."""
    seen: dict[tuple[str, str], tuple[str, str]] = {}
    variants = []
    for r in pairs.itertuples(index=False):
        for image, caption, text in (
            (r.image1, r.caption1, r.sentence1),
            (r.image2, r.caption2, r.sentence2),
        ):
            key, where = (image, caption), f"{r.file}:{r.line}"
            if key in seen and seen[key][0] != text:
                variants.append(
                    {
                        "image_id": image,
                        "caption_id": caption,
                        "text": seen[key][0],
                        "where": seen[key][1],
                        "variant": text,
                        "variant_where": where,
                    }
                )
            seen.setdefault(key, (text, where))
    rows = [
        {"image_id": i, "caption_id": c, "text": t, "written": c.startswith("g"), "where": w}
        for (i, c), (t, w) in seen.items()
    ]
    captions = pd.DataFrame(rows).sort_values(["image_id", "caption_id"], ignore_index=True)
    columns = ["image_id", "caption_id", "text", "where", "variant", "variant_where"]
    return captions, pd.DataFrame(variants, columns=columns).drop_duplicates(
        ["image_id", "caption_id", "variant"], ignore_index=True
    )


def labels_by_texts(
    pairs: pd.DataFrame, task: str, directed: bool
) -> dict[tuple[str, str], object]:
    """The release's label per (sentence1, sentence2) of its ``task`` pairs; undirected
    pairs (STS) are keyed both ways."""
    out: dict[tuple[str, str], object] = {}
    for r in pairs[pairs["task"] == task].itertuples(index=False):
        label = float(r.label) if task == "jsts" else str(r.label)
        out[(r.sentence1, r.sentence2)] = label
        if not directed:
            out.setdefault((r.sentence2, r.sentence1), label)
    return out


def contradictions_by_caption(pairs: pd.DataFrame, task: str = "jnli") -> dict[str, list[str]]:
    """The written contradictions the release keeps per caption text (the ``task``'s
    ``<image>-<caption>-g<n>`` pairs: JNLI-C, or JSTS-C for ``jsts``, in the release's
    order)."""
    out: dict[str, list[str]] = {}
    rows = pairs[(pairs["task"] == task) & (pairs["kind"] == "C")]
    for r in rows.itertuples(index=False):
        if r.caption2.startswith("g") and r.sentence2 not in out.get(r.sentence1, []):
            out.setdefault(r.sentence1, []).append(r.sentence2)
    return out


def contradictions_of(pairs: pd.DataFrame, task: str) -> set[tuple[str, str]]:
    """The (caption, written sentence) pairs of the ``task``'s C pairs, both ways."""
    rows = pairs[(pairs["task"] == task) & (pairs["kind"] == "C")]
    both = zip(rows["sentence1"], rows["sentence2"], strict=True)
    return {p for a, b in both for p in ((a, b), (b, a))}


def caption_tables(paths: list[Path], lang: str, min_share: float) -> tuple[dict, dict]:
    """The captions of the release files and what became of them: (tables, info).
    Tables: ``captions.parquet`` (kept), ``dropped.parquet`` (a caption whose share of the
    language's script is under ``min_share``, with the share: text in the wrong
    language), ``releases.parquet`` (every pair read), ``variants.parquet``."""
    from pipelines.core.stage import value_counts
    from pipelines.lang import language

    language_ = language(lang)
    pairs = read_releases(paths)
    caps, variants = captions_of(pairs)
    share = np.array([language_.script_share(t) for t in caps["text"]])
    caps["script_share"] = share.round(4)
    bad = share < min_share
    dropped = caps[bad].assign(
        reason=language_.script_reason,
        detail=[f"{language_.script_name} share {s:.2f} < {min_share}" for s in share[bad]],
    )
    kept = caps[~bad].reset_index(drop=True)
    info = {
        "files": {p.name: int((pairs["file"] == p.name).sum()) for p in paths},
        "release_pairs": value_counts(pairs["task"] + "-" + pairs["kind"]),
        "captions": len(caps),
        "images": int(caps["image_id"].nunique()),
        "written": int(caps["written"].sum()),
        "kept": len(kept),
        "wrong_language": int(bad.sum()),
        "wrong_language_share": round(float(bad.mean()), 4) if len(caps) else 0.0,
        "variants": len(variants),
        "variant_examples": variants.head(3).to_dict(orient="records"),
        "language": language_.code,
        "dropped": value_counts(dropped["reason"]),
    }
    tables = {
        "captions.parquet": kept,
        "dropped.parquet": dropped.reset_index(drop=True),
        "releases.parquet": pairs,
        "variants.parquet": variants,
    }
    return tables, info
