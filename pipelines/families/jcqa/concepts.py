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
variants (the same UniDic lemmas, ``pipelines.quality.jcqa``'s filter, e.g. レンガ and
煉瓦) is dropped as ``spelling_variants``.
"""

from __future__ import annotations

import hashlib
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError


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
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TriplesError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
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
        rows.append((head, relation.removeprefix("/r/"), tail, n))
    return pd.DataFrame(rows, columns=["head", "relation", "tail", "line"])


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
    from pipelines.quality.jcqa import spelling_variants

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
