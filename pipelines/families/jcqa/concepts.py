"""JCommonsenseQA's question sets from concept triples (JGLUE 3.4.2, step 1, after
CommonsenseQA 3.1): a source concept and three target concepts that have the same
relation to it, on either side (``source -r-> target`` or ``target -r-> source``).

:func:`read_triples` reads a triples file: a TSV of ``head<TAB>relation<TAB>tail`` (a
header line ``head relation tail`` may come first; ``#`` comments), or a ConceptNet
assertions CSV export (five tab-separated columns: the edge URI, ``/r/<Relation>``, the
start and end concepts ``/c/<lang>/<text>/...``, a JSON object), whose edges between
two concepts of the recipe's language are kept. A line with another number of fields
is a :class:`TriplesError` naming the file and the line.

:func:`question_sets` groups the triples by (source, relation, side) and draws
``sets_per_group`` sets of three distinct targets from each group (seeded); every group
that gives none has a row with its reason (``relation_not_used``,
``fewer_than_three_targets``), and every set with two targets that are spelling
variants (the same UniDic lemmas, ``pipelines.families.jcqa.filters``'s filter, e.g. レンガ and
煉瓦) is dropped as ``spelling_variants``.
"""

from __future__ import annotations

import hashlib
import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, control_character_line, read_text


class TriplesError(BenchforgeError, ValueError):
    """A triples file that cannot be read; the message names the file and the line."""


def _concept(uri: str, language: str) -> str | None:
    parts = uri.split("/")
    if len(parts) < 4 or parts[1] != "c" or parts[2] != language:
        return None
    return parts[3].replace("_", " ")


def read_triples(path: Path, language: str = "ja") -> pd.DataFrame:
    """``head``, ``relation``, ``tail`` and ``line`` of every triple (see the module
    docstring)."""
    try:
        lines = read_text(path).splitlines()
    except TextFileError as exc:  # names the line of a byte that is not UTF-8
        raise TriplesError(str(exc)) from None
    rows = []
    seen: dict[tuple[str, str, str], int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if control_character_line(line):
            raise TriplesError(f"{path}: line {n}: a control character (such as NUL)")
        fields = line.split("\t")
        if len(fields) == 5 and fields[1].startswith("/r/"):  # a ConceptNet assertion
            head, tail = _concept(fields[2], language), _concept(fields[3], language)
            if head and tail:
                rows.append((head, fields[1][3:], tail, n))
            continue
        if len(fields) != 3:
            raise TriplesError(
                f"{path}: line {n}: expected head<TAB>relation<TAB>tail (or a "
                f"ConceptNet assertion's 5 columns), got {len(fields)} "
                "field(s)"
            )
        head, relation, tail = (f.strip() for f in fields)
        if (head, relation, tail) == ("head", "relation", "tail"):  # a header line
            continue
        if not head or not relation or not tail:
            raise TriplesError(f"{path}: line {n}: an empty field")
        triple = (head, relation.removeprefix("/r/"), tail)
        if triple in seen:
            raise TriplesError(f"{path}: line {n}: the triple {' '.join(triple)} repeats "
                               f"line {seen[triple]}")  # fmt: skip
        seen[triple] = n
        rows.append((*triple, n))
    return pd.DataFrame(rows, columns=["head", "relation", "tail", "line"])


def check_triples(triples: pd.DataFrame, relations: list[str], path: Path) -> None:
    """Before any work (issue 51: a triples file that yields nothing failed deep in a
    step): at least one (source, relation, side) group of ``relations`` has three
    distinct targets, so that a question set can be drawn; a :class:`TriplesError`
    names the file and what it holds otherwise."""
    frame = triples[triples["relation"].isin(relations) & (triples["head"] != triples["tail"])]
    for source_col, target_col in (("head", "tail"), ("tail", "head")):
        targets = frame.drop_duplicates([source_col, "relation", target_col])
        if len(targets) and targets.groupby([source_col, "relation"]).size().max() >= 3:
            return
    used = sorted(set(triples["relation"]) & set(relations))
    raise TriplesError(
        f"{path}: no question set can be drawn: {len(triples)} triple(s), "
        f"{len(frame)} of the relations used ({used or 'none'}; jcqa.relations), and no "
        "concept with three targets by one relation"
    )


def read_writers(path: Path) -> dict[tuple, dict]:
    """The simulated writers' file (``jcqa.writers``, JSON Lines): ``(source, relation,
    target) -> row``; a missing file, a line that is not JSON with ``source``,
    ``relation`` and ``target``, a repeated key or an empty file is a
    :class:`TriplesError` naming the file and the line."""
    try:
        lines = read_text(path).splitlines()
    except TextFileError as exc:
        raise TriplesError(str(exc)) from None
    out: dict[tuple, dict] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = (row["source"], row["relation"], row["target"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise TriplesError(
                f"{path}: line {n}: expected JSON with source, relation, target"
            ) from None
        if key in out:
            raise TriplesError(f"{path}: line {n}: {' '.join(map(str, key))} is given twice")
        out[key] = row
    if not out:
        raise TriplesError(f"{path}: no writers' lines")
    return out


def set_id(source: str, relation: str, side: str, targets: tuple[str, ...]) -> str:
    key = "\x1f".join([source, relation, side, *sorted(targets)])
    return "s-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def question_sets(
    triples: pd.DataFrame,
    relations: list[str],
    per_group: int,
    seed: int,
    max_sets: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(sets, dropped): ``set_id``, ``source``, ``relation``, ``side`` (``head``: the
    source is the head, the targets its tails; ``tail``: the other way), ``targets``
    (three); dropped groups and sets with their reason (module docstring)."""
    from pipelines.families.jcqa.filters import spelling_variants

    rng = np.random.default_rng(seed)
    sets, dropped = [], []
    frame = triples.drop_duplicates(["head", "relation", "tail"])
    frame = frame[frame["head"] != frame["tail"]]
    for side, source_col, target_col in (("head", "head", "tail"), ("tail", "tail", "head")):
        for (source, relation), group in frame.groupby([source_col, "relation"], sort=True):
            targets = sorted(set(group[target_col]))
            where = f"{source} {relation} ({side}): {len(targets)} target(s)"
            if relation not in relations:
                if side == "head":  # one row per triple group, not two
                    dropped.append(
                        {
                            "kind": "group",
                            "id": where,
                            "reason": "relation_not_used",
                            "detail": ", ".join(targets),
                        }
                    )
                continue
            if len(targets) < 3:
                dropped.append(
                    {
                        "kind": "group",
                        "id": where,
                        "reason": "fewer_than_three_targets",
                        "detail": ", ".join(targets),
                    }
                )
                continue
            combos = list(combinations(targets, 3))
            picks = rng.choice(len(combos), size=min(per_group, len(combos)), replace=False)
            for k in sorted(picks.tolist()):
                chosen = combos[k]
                sid = set_id(source, relation, side, chosen)
                q = {f"choice{i}": t for i, t in enumerate([*chosen, "", ""])}
                why = spelling_variants(q)
                if why:
                    dropped.append(
                        {"kind": "set", "id": sid, "reason": "spelling_variants", "detail": why}
                    )
                    continue
                sets.append(
                    {
                        "set_id": sid,
                        "source": source,
                        "relation": relation,
                        "side": side,
                        "targets": list(chosen),
                    }
                )
    out = pd.DataFrame(sets, columns=["set_id", "source", "relation", "side", "targets"])
    if max_sets is not None and len(out) > max_sets:
        keep = set(rng.choice(len(out), size=max_sets, replace=False).tolist())
        for n, row in enumerate(out.itertuples()):
            if n not in keep:
                dropped.append(
                    {
                        "kind": "set",
                        "id": row.set_id,
                        "reason": "not_drawn",
                        "detail": f"{row.source} {row.relation}",
                    }
                )
        out = out.iloc[sorted(keep)].reset_index(drop=True)
    return out, pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
