"""JGLUE's last filter (3.2.2): "Finally, we filtered out 12 sentence pairs from JSTS
and 44 pairs from JNLI based on automatic matching and manual checking."

The paper names neither the patterns nor the checkers. benchforge reads the sentence as
two stages and makes both visible:

- ``check-items`` (automatic matching): every pair about to be released goes through
  the matchers of :data:`MATCHERS`, benchforge's (the paper prints none): ``same_sentences``
  (the two sentences are the same text after NFKC and without spaces) and
  ``repeated_pair`` (the same two sentences as a pair met before: in either order for
  JSTS, in this direction for JNLI). The matched pairs are the check round's items.
- the ``check`` round (manual checking, ``annotation_configs/jglue_check.xml``): a
  person sees a matched pair, its label and what matched, and keeps or removes it;
- ``check``: a pair is removed (reason ``manual_check``, the match in ``detail``) when
  most of its checkers say remove (a tie keeps it); a pair nothing matched is kept.

``jglue.final_check: false`` skips the three (a departure the card states).
Simulated checkers (demos and tests) remove a matched pair unless the release holds the
same two sentences with the same label: a released pair passed JGLUE's own check.
"""

from __future__ import annotations

import unicodedata

import pandas as pd

from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.families.jglue.rounds import rounds

DECISIONS = ("keep", "remove")
MATCHERS = ("same_sentences", "repeated_pair")
ITEM_COLUMNS = ["item_id", "sentence1", "sentence2", "label", "kind", "match"]


def _text(s: str) -> str:
    return "".join(unicodedata.normalize("NFKC", str(s)).split())


def automatic_matches(items: pd.DataFrame, directed: bool) -> pd.Series:
    """What matched each pair (``item_id`` order kept), ``""`` for nothing:
    ``same_sentences``, else ``repeated_pair`` (the same two texts as an earlier pair;
    ``directed``: in the same order)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in items.itertuples(index=False):
        a, b = _text(r.sentence1), _text(r.sentence2)
        key = (a, b) if directed else tuple(sorted((a, b)))
        out.append("same_sentences" if a == b else "repeated_pair" if key in seen else "")
        seen.add(key)
    return pd.Series(out, index=items.index, dtype=object)


def check_items(
    items: pd.DataFrame, directed: bool, release: dict[tuple[str, str], object] | None = None
) -> pd.DataFrame:
    """The check round's items: the matched pairs with their label (as text) and the
    match. With ``release`` (simulated checkers: the release's label per pair of texts),
    ``sim_decision``: keep when the release holds the pair with this label, else remove."""
    match = automatic_matches(items, directed)
    picked = items[match != ""].assign(match=match[match != ""])
    out = pd.DataFrame(
        {
            "item_id": picked["item_id"].astype(str),
            "sentence1": picked["sentence1"],
            "sentence2": picked["sentence2"],
            "label": [str(v) for v in picked["label"]],
            "kind": picked["kind"],
            "match": picked["match"],
        },
        columns=ITEM_COLUMNS,
    ).reset_index(drop=True)
    if release is not None:
        out["sim_decision"] = [
            "keep" if _same(release.get((a, b)), label) else "remove"
            for a, b, label in zip(out["sentence1"], out["sentence2"], out["label"], strict=True)
        ]
    return out


def _same(released: object, label: str) -> bool:
    if released is None:
        return False
    try:
        return abs(float(released) - float(label)) < 1e-9
    except ValueError:
        return str(released) == label


def checked(annotations: pd.DataFrame, items: pd.DataFrame) -> tuple[set[str], list[dict]]:
    """(removed item ids, dropped rows): a checked pair is removed when more of its
    checkers say ``remove`` than ``keep``; reason ``manual_check``, the match and the
    votes in ``detail``."""
    if items.empty:
        return set(), []
    done = annotations[~annotations["cancelled"].fillna(False).astype(bool)]
    done = done[done["field"] == "decision"]
    votes = done.groupby("item_id")["value"].apply(lambda v: list(map(str, v))).to_dict()
    removed, dropped = set(), []
    for r in items.itertuples(index=False):
        said = votes.get(r.item_id, [])
        n_remove, n_keep = said.count("remove"), said.count("keep")
        if n_remove > n_keep:
            removed.add(r.item_id)
            dropped.append(
                {
                    "kind": "item",
                    "id": r.item_id,
                    "reason": "manual_check",
                    "detail": f"matched {r.match}; {n_remove} of {len(said)} checkers say remove",
                }
            )
    return removed, dropped


def final_items(ctx: RunContext) -> pd.DataFrame:
    """The released pairs before the split: ``item_id`` (the ``yjcaptions_id``),
    ``sentence1``, ``sentence2``, ``label``, ``kind``, ``images``."""
    cols = ["item_id", "sentence1", "sentence2", "label", "kind", "images"]
    if ctx.task.name == "jsts":
        return pd.read_parquet(ctx.out / "sts" / "gold.parquet")[cols]
    nli = pd.read_parquet(ctx.out / "nli" / "gold.parquet")[cols]
    c = pd.read_parquet(ctx.out / "validation" / "contradictions.parquet")
    c = c.rename(columns={"pair_id": "item_id"})[cols]
    return pd.concat([nli, c], ignore_index=True)


def _final(ctx: RunContext) -> pd.DataFrame:
    return final_items(ctx)


def _final_reads(ctx: RunContext, arg: str) -> dict:
    out = ctx.out
    files = {"sts/gold.parquet": out / "sts" / "gold.parquet",
             "captions/releases.parquet": out / "captions" / "releases.parquet"}  # fmt: skip
    if ctx.task.name == "jnli":
        files["nli/gold.parquet"] = out / "nli" / "gold.parquet"
        files["validation/contradictions.parquet"] = out / "validation" / "contradictions.parquet"
    return files


@declares(
    reads=_final_reads,
    writes=out_files("check-items/items.parquet", "check-items/items.json"),
    settings=lambda ctx, arg: [list(MATCHERS), ctx.simulated],
)
def check_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE 3.2.2's automatic matching over the pairs about to be released: the matched
    pairs (``same_sentences``, ``repeated_pair``) are the check round's items."""
    from pipelines.families.jglue.release import labels_by_texts
    from pipelines.families.jglue.steps import _releases

    def compute() -> tuple[dict, dict]:
        final = _final(ctx)
        directed = ctx.task.name == "jnli"
        release = None
        if ctx.simulated:
            release = labels_by_texts(_releases(ctx), ctx.task.name, directed)
        items = check_items(final, directed, release)
        info = {"pairs": len(final), "matched": value_counts(items["match"])}
        return {"items.parquet": items}, info

    done = cached(ctx, compute)
    info = done.info
    n = sum(info["matched"].values())
    return done.outcome(
        f"{n} of {info['pairs']:,} pairs matched for the manual check"
        + (f" {info['matched']}" if n else ""),
    )


def _check_reads(ctx: RunContext, arg: str) -> dict:
    r = rounds(ctx)["check"]
    return {"check items": r.items, "check annotations": r.annotations}


@declares(
    reads=_check_reads,
    writes=out_files("check/dropped.parquet", "check/check.json"),
    settings=lambda ctx, arg: [list(DECISIONS)],
)
def check_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE 3.2.2's manual checking: a matched pair most of whose checkers say remove is
    dropped (``manual_check``); the rest are released."""
    r = rounds(ctx)["check"]

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(r.items)
        annotations = pd.read_parquet(r.annotations) if len(items) else pd.DataFrame()
        removed, dropped = checked(annotations, items)
        frame = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        info = {
            "checked": len(items),
            "removed": len(removed),
            "dropped": value_counts(frame["reason"]),
            "matched": value_counts(items["match"]),
            "paper": {"jsts": 12, "jnli": 44}[ctx.task.name],
        }
        return {"dropped.parquet": frame}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['removed']} of {info['checked']} checked pairs removed",
        Rows("pair", info["checked"], info["checked"] - info["removed"], info["dropped"]),
    )


def removed_ids(ctx: RunContext) -> set[str]:
    """The pairs the check removed (none when the recipe skips the check)."""
    path = ctx.out / "check" / "dropped.parquet"
    if not (ctx.recipe.jglue.final_check and path.is_file()):
        return set()
    return set(pd.read_parquet(path)["id"].astype(str))
