"""The KorSTS / KorNLI family's part of the data card: the tables, computed here, and
the prose in ``card.md.j2`` beside this module."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.markdown import settings_table, table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.export.warnings import CARD_WARNINGS

TEMPLATE = Path(__file__).with_name("card.md.j2")
# Ham et al. 2020, 3.1.1: BLEU of MT against the post-edit, and the share left unchanged
PAPER = {"korsts": {"bleu": 73.26, "unchanged": 0.53}, "kornli": {"bleu": 63.30, "unchanged": 0.47}}
# Ham et al. 2020, Table 1 (KorNLI) and Table 3 (KorSTS): examples per split and the
# average number of words (blank-separated) of a sentence; KorNLI's per premise (P) and
# hypothesis (H)
PAPER_TABLES = {
    "korsts": {"train": {"pairs": 5749, "words": 7.5}, "dev": {"pairs": 1500, "words": 8.7},
               "test": {"pairs": 1379, "words": 7.6}},
    "kornli": {"train": {"pairs": 942854, "words_p": 13.6, "words_h": 7.2},
               "dev": {"pairs": 2490, "words_p": 13.0, "words_h": 6.8},
               "test": {"pairs": 5010, "words_p": 13.1, "words_h": 6.8}},
}  # fmt: skip
QA_COLUMNS = ["split", "sentences", "BLEU", "chrF", "TER", "unchanged", "median edit distance",
              "paper's BLEU", "paper's unchanged"]  # fmt: skip


@CARD_WARNINGS.register("translation-far-from-paper")
def translation_far_from_paper(facts: CardFacts, settings: dict) -> list[str]:
    """KorSTS/KorNLI (Ham et al. 2020, 3.1.1): BLEU from the MT draft to the final text and
    the share of drafts left unchanged, per split, further than ``max_paper_gap``
    (relative) from the paper's; reviewers who accepted more than ``max_accept_share`` of
    their colleagues' post-edits unchanged (a cross-check that changes nothing)."""
    qa, kind = facts.get("translation_qa"), facts.get("task_kind")
    if not qa or kind not in PAPER:
        return []
    gap, paper, out = settings["max_paper_gap"], PAPER[kind], []
    for split, f in sorted(qa["figures"]["per_split"].items()):
        got = f["mt_vs_final"]
        for name, key, theirs, fmt in (("BLEU", "bleu", paper["bleu"], "{:.1f}"),
                                       ("unchanged share", "unchanged_share",
                                        paper["unchanged"], "{:.0%}")):  # fmt: skip
            value = got.get(key)
            if value is not None and abs(value - theirs) > gap * theirs:
                out.append(
                    f"**Translation far from the paper's**: {split} {name} from MT draft to "
                    f"final {fmt.format(value)} against {fmt.format(theirs)} in Ham et al. "
                    f"2020, 3.1.1 (more than {gap:.0%} apart, `card.max_paper_gap`)."
                )
    limit = settings["max_accept_share"]
    for who, f in sorted(qa["figures"].get("per_reviewer", {}).items()):
        if f["reviewed"] and f["accepted_share"] > limit:
            out.append(
                f"**The cross-check changed almost nothing**: reviewer {who} left "
                f"{f['accepted']} of {f['reviewed']} post-edits unchanged "
                f"({f['accepted_share']:.0%}; more than {limit:.0%}, `card.max_accept_share`)."
            )
    return out


def table_figures(kind: str, records: dict[str, list[dict]]) -> dict[str, dict]:
    """Per split of a release, the figures of Ham et al. 2020's Table 1 (KorNLI) or
    Table 3 (KorSTS): the pairs and the average number of blank-separated words of a
    sentence (KorSTS: over both sentences; KorNLI: the premise's and the hypothesis's),
    rounded to one decimal as the paper prints them."""
    out = {}
    for split, rows in records.items():
        words = {k: [len(str(r[k]).split()) for r in rows] for k in ("sentence1", "sentence2")}
        n = len(rows)
        if not n:
            continue
        if kind == "korsts":
            figures = {"words": round(sum(words["sentence1"] + words["sentence2"]) / (2 * n), 1)}
        else:
            figures = {"words_p": round(sum(words["sentence1"]) / n, 1),
                       "words_h": round(sum(words["sentence2"]) / n, 1)}  # fmt: skip
        out[split] = {"pairs": n, **figures}
    return out


def paper_table(kind: str, figures: dict[str, dict]) -> str:
    """The release's Table 1 / Table 3 figures beside the paper's."""
    paper = PAPER_TABLES[kind]
    keys = ["words"] if kind == "korsts" else ["words_p", "words_h"]
    names = {"words": "avg. words", "words_p": "avg. words (P)", "words_h": "avg. words (H)"}
    head = ["split", "pairs", "paper's pairs"]
    for k in keys:
        head += [names[k], f"paper's {names[k]}"]
    rows = []
    for split, f in figures.items():
        row = [split, f["pairs"], paper.get(split, {}).get("pairs", "")]
        for k in keys:
            row += [f[k], paper.get(split, {}).get(k, "")]
        rows.append(row)
    return table(head, rows)


def _share(x: float | None) -> str:
    return f"{x or 0:.0%}"


def split_rows(t: dict, tr: dict) -> list[list]:
    """Each split of the release: its English dataset, its pairs and who translated it
    (Ham et al. 2020, 3.1 and Tables 1 and 3: train by machine only, dev and test
    machine-translated then post-edited by people)."""
    parts = [{"source": t["source"], "split": t["split"]}, *t.get("other_splits", [])]
    mt_only = set(t.get("mt_only_splits", []))
    per_split = tr.get("per_split", {})
    return [[p["split"], p["source"], per_split.get(p["split"], 0),
             "machine only" if p["split"] in mt_only else "machine, then post-edited"]
            for p in parts]  # fmt: skip


def card(facts: CardFacts) -> CardSection:
    """Translation, post-editing, cross-check and QA; the QA table beside the paper's."""
    from pipelines.export.data_card import annotation_round

    kind = facts["task_kind"]
    qa, tr, t = facts["translation_qa"], facts["items"], facts["recipe"]["translation"]
    figures, paper = qa["figures"], PAPER[kind]
    qa_rows = [[split, f["mt_vs_final"]["sentences"], f["mt_vs_final"].get("bleu"),
                f["mt_vs_final"].get("chrf"), f["mt_vs_final"].get("ter"),
                _share(f["mt_vs_final"].get("unchanged_share", 0)),
                f["mt_vs_final"]["edit_distance"]["p50"], paper["bleu"],
                f"{paper['unchanged']:.0%}"]
               for split, f in figures["per_split"].items()]  # fmt: skip
    editors = table(["post-editor", "half", "sentences", "BLEU MT vs post-edit", "chrF",
                     "unchanged"],
                    [[w, ",".join(f["half"]), f["sentences"], f.get("bleu"), f.get("chrf"),
                      _share(f.get("unchanged_share", 0))]
                     for w, f in figures["per_posteditor"].items()])  # fmt: skip
    reviewers = table(["reviewer", "reviewed", "accepted unchanged", "mean edit distance"],
                      [[w, f["reviewed"], f"{f['accepted']} ({f['accepted_share']:.0%})",
                        f["edit_distance_mean"]]
                       for w, f in figures["per_reviewer"].items()])  # fmt: skip
    backends = table(["translated by", "sentences", "BLEU vs final", "chrF", "unchanged"],
                     [[b, f["sentences"], f.get("bleu"), f.get("chrf"),
                       _share(f.get("unchanged_share", 0))]
                      for b, f in figures["per_backend"].items()])  # fmt: skip
    rounds = [(k, v) for k, v in facts.items()
              if isinstance(v, dict) and "overlap" in v and not v.get("mt_only")]  # fmt: skip
    review_rows = [[r["pair_id"], r["checks"], r["details"], r["en1"], r["en2"], r["ko1"],
                    r["ko2"], r["label"]] for r in facts.get("review", [])]  # fmt: skip
    mt = facts.get("mt_model") or {}
    stages = [[s["stage"], s["unit"], s["in"], s["kept"], s["dropped_total"],
               ", ".join(f"{k}: {v}" for k, v in sorted(s["dropped"].items())) or "none"]
              for s in facts["ingest"]["stages"]]  # fmt: skip
    return from_template(TEMPLATE, {
        "kind": kind, "qa": qa, "tr": tr, "t": t, "mt": mt, "h": mt.get("heldout") or {},
        "simulated": facts["annotation"]["simulated"], "sim": t["postedit"].get("simulate"),
        "rl": facts.get("relabelling") or {},
        "backend_counts": table(["backend", "sentences"], list(tr["per_backend"].items())),
        "settings": settings_table({k: v for k, v in t.items() if k not in ("postedit", "qa")}),
        "round_texts": [annotation_round(v, f"Round `{'postedit-a' if k == 'annotation' else k}`:")
                        for k, v in sorted(rounds, key=lambda kv: kv[1]["project"])],
        "editors": editors, "reviewers": reviewers, "backends": backends,
        "qa_table": table(QA_COLUMNS, qa_rows),
        "flags": dict(sorted(qa["flags"].items())), "dropped": dict(sorted(qa["dropped"].items())),
        "review_table": table(["pair", "checks", "details", "English 1", "English 2",
                               "Korean 1", "Korean 2", "label"], review_rows)
        if review_rows else "",
        "paper_table": paper_table(kind, facts.get("paper_table") or {}),
        "table_no": 3 if kind == "korsts" else 1,
        "splits_table": table(["split", "English dataset", "pairs", "translated by"],
                              split_rows(t, tr)),
        "mt_only": [r[0] for r in split_rows(t, tr) if r[3] == "machine only"],
        "any_postedit": any(r[3] != "machine only" for r in split_rows(t, tr)),
        "split_counts": ", ".join(f"{k} {v} pairs" for k, v in facts["split"]["splits"].items()),
        "filters_table": table(["stage", "unit", "in", "kept", "dropped", "dropped per reason"],
                               stages),
    })  # fmt: skip
