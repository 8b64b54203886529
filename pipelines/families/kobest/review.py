"""The two reviews of KoBEST (Kim et al. 2022, 3): the linguists' review of every
written item, and the model-driven artifact review.

**Linguist review** (``decide``): each reviewer answers ``decision`` (accept / edit /
reject), a ``reason`` and, for an edit, the item's fields rewritten. An item's decision
is the one ``review_votes`` reviewers agree on (ties go to the stricter: reject, then
edit); an edit that changes nothing counts as accept. Every edit is kept as a new
version (``versions``: the item's fields, the version number, the round and who wrote
it). A rejected or unreviewed item is dropped with the reason.

**Artifact review** (``artifact_review``): the split step's artifact report
(``pipelines.splits.annotation_artifacts.artifact_report``) on the task's *partial input* (COPA's
alternatives only, HellaSwag's endings only, WiC's target word alone, BoolQ's question
alone): a bag-of-features logistic regression trained on train and measured on dev+test
against the majority baseline, PMI of each feature with each label, and the *cues*:
features one label takes more than ``skew_share`` (70%) of, in ``min_count`` items or
more. Features are the morphemes of each partial field tagged by position (``a1:``),
plus patterns: ``<NUM>`` (a number: SN, NR, or a counter NNBC) and ``<NEG>`` (a negation
form). The items that follow a cue (carry the feature and take its label) are sent to
the revision round; the review is run again on the revised items, up to ``iterations``
times.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from pipelines.families.kobest.tasks import KobestTask
from pipelines.lang import Language

DECISIONS = ("accept", "edit", "reject")
STRICTNESS = {"reject": 0, "edit": 1, "accept": 2}
SHORT = {
    "alternative_1": "a1",
    "alternative_2": "a2",
    "ending_1": "e1",
    "ending_2": "e2",
    "ending_3": "e3",
    "ending_4": "e4",
    "question": "q",
    "word": "w",
    "sentence": "s",
    "premise": "p",
    "context": "c",
    "context_1": "c1",
    "context_2": "c2",
}


def answers(annotations: pd.DataFrame) -> dict[str, list[dict]]:
    """Each item's annotations (not skipped), in order: field -> value, and who."""
    done = annotations[~annotations["cancelled"].fillna(False).astype(bool)]
    out: dict[str, dict[int, dict]] = {}
    for r in done.sort_values("annotation_id").itertuples(index=False):
        ann = out.setdefault(str(r.item_id), {}).setdefault(
            int(r.annotation_id), {"annotator": str(r.annotator_id)}
        )
        if r.field:
            ann.setdefault(str(r.field), "" if r.value is None else str(r.value).strip())
    return {item: list(anns.values()) for item, anns in out.items()}


def decide(
    annotations: pd.DataFrame,
    items: pd.DataFrame,
    task: KobestTask,
    votes: int,
    round_name: str,
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """(items after the review, the new versions, dropped rows) of one review round
    (see the module docstring). ``items`` carry ``version``."""
    got = answers(annotations)
    items = items.drop(columns=["decision"], errors="ignore")
    kept, versions, dropped = [], [], []
    for item in items.to_dict("records"):
        anns = got.get(str(item["item_id"]), [])
        decisions = [a.get("decision") for a in anns if a.get("decision") in DECISIONS]
        if not decisions:
            dropped.append(_drop(item, "not_reviewed", f"no decision in round {round_name}"))
            continue
        counts = Counter(decisions)
        top = max(counts.values())
        decision = min((d for d, n in counts.items() if n == top), key=STRICTNESS.get)
        if top < votes:
            dropped.append(_drop(item, "no_review_majority", f"{dict(counts)}, {votes} needed"))
            continue
        reasons = [a.get("reason", "") for a in anns if a.get("decision") == decision]
        reason = next((r for r in reasons if r), "")
        if decision == "reject":
            dropped.append(_drop(item, "rejected", f"{round_name}: {reason or 'no reason'}"))
            continue
        new = dict(item)
        if decision == "edit":
            editor = next(a for a in anns if a.get("decision") == "edit")
            for f in task.written:
                if editor.get(f):
                    new[f] = editor[f]
            if all(new[f] == item[f] for f in task.written):
                decision = "accept"
            else:
                new["version"] = int(item["version"]) + 1
                versions.append(version_row(new, task, round_name, editor["annotator"], reason))
        new["decision"] = decision
        kept.append(new)
    return pd.DataFrame(kept, columns=[*items.columns, "decision"]), pd.DataFrame(versions), dropped


def version_row(item: dict, task: KobestTask, round_name: str, who: str, note: str) -> dict:
    return {
        "item_id": item["item_id"],
        "version": int(item["version"]),
        "round": round_name,
        "annotator": who,
        "note": note,
        **{f: item[f] for f in task.written},
    }


def _drop(item: dict, reason: str, detail: str) -> dict:
    return {"item_id": str(item["item_id"]), "reason": reason, "detail": detail}


# ------------------------------------------------------------------ artifact review


def partial_features(task: KobestTask, lang: Language):  # noqa: ANN201 - a closure
    """``row -> features`` of the task's partial input (see the module docstring)."""
    from pipelines.families.kobest.negation import negation_count

    def features(row: dict) -> list[str]:
        out = []
        for f in task.partial:
            tag = SHORT.get(f, f)
            tagged = lang.tagged(str(row[f]))
            out += [f"{tag}:{s}" for s, _ in tagged]
            firsts = [t.split("+")[0] for _, t in tagged]
            if any(t in ("SN", "NR", "NNBC") for t in firsts):
                out.append(f"{tag}:<NUM>")
            if negation_count(tagged):
                out.append(f"{tag}:<NEG>")
        return out

    return features


def artifact_review(
    items: pd.DataFrame,
    splits: pd.DataFrame,
    task: KobestTask,
    lang: Language,
    skew_share: float,
    min_count: int,
    seed: int,
    cue_margin: float = 0.15,
) -> tuple[dict, pd.DataFrame]:
    """(report, carriers): the artifact report on the partial input, its cues, and the
    items that follow a cue (``item_id``, ``finding``). A skewed feature is a cue only
    when its share is also ``cue_margin`` above its label's share in that part (a
    feature every item has is not a cue of an unbalanced split)."""
    from pipelines.splits.annotation_artifacts import artifact_report

    feats = partial_features(task, lang)
    frame = items.assign(label=items["label"].astype(int).astype(str))
    report = artifact_report(
        frame,
        splits,
        list(task.partial),
        binary_threshold=None,  # KoBEST's labels are classes (HellaSwag: 0-3), not scores
        min_count=min_count,
        skew_share=skew_share,
        seed=seed,
        lang=lang,
        features=feats,
        features_name=f"features of {', '.join(task.partial)} (partial input)",
    )
    cues: dict[str, dict] = {}
    for part in ("train", "dev+test"):
        fig = report.get(part) or {}
        total = sum(fig.get("labels", {}).values()) or 1
        for cue in fig.get("cues", {}).get("skewed", []):
            base = fig["labels"].get(cue["label"], 0) / total
            if cue["share"] < base + cue_margin:
                continue
            key = cue["morpheme"]
            if key not in cues or cue["count"] > cues[key]["count"]:
                cues[key] = {**cue, "part": part}
    report["cues"] = sorted(cues.values(), key=lambda c: (-c["count"], c["morpheme"]))
    rows = []
    for r in frame.to_dict("records"):
        have = set(feats(r))
        hits = [c for c in report["cues"] if c["morpheme"] in have and c["label"] == r["label"]]
        if hits:
            finding = "; ".join(
                f"`{c['morpheme']}` -> label {c['label']} ({c['share']:.0%} of {c['count']} "
                f"items in {c['part']})"
                for c in hits
            )
            rows.append(
                {"item_id": r["item_id"], "finding": finding, "cues": [c["morpheme"] for c in hits]}
            )
    carriers = pd.DataFrame(rows, columns=["item_id", "finding", "cues"])
    only = report.get("last_column_only") or {}
    report["partial_input"] = {
        "accuracy": only.get("accuracy"),
        "majority_baseline": only.get("majority_baseline"),
        # what the model must beat: the highest of train's majority, the evaluation
        # items' own majority and chance (issue 54)
        "eval_majority_baseline": only.get("eval_majority_baseline"),
        "chance": only.get("chance"),
        "reference": only.get("reference"),
        "eval_items": only.get("eval_items"),
    }
    report["carriers"] = len(carriers)
    return report, carriers
