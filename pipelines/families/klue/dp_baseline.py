"""KLUE-DP's baseline (issue 57, item 6): ``benchforge baseline`` on a KLUE-DP release
fine-tunes the head-final biaffine parser (:mod:`pipelines.models.dep_parser`) on its
train split for :data:`PARSER_EPOCHS` parser epochs per ``--epochs``, the epoch with
the best dev LAS kept, and scores dev and test beside the
right-branching rule (every word attached to the next, the root last, each word's
label train's most frequent for its POS string; :func:`right_branching_trees`)."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from pipelines.evaluation.fitters import BaselineSettings, register_fitter
from pipelines.evaluation.spec import Evaluation

REFERENCE_NAME = "right-branching (each word to the next; train's label per POS)"
PARSER_EPOCHS = 4  # parser epochs per baseline epoch (``--epochs``)


def _words(record: dict) -> list:
    from pipelines.families.klue.dp_morph import Word

    return [Word(f, tuple(str(lem).split(" ")), tuple(str(p).split("+")))
            for f, lem, p in zip(record["word_form"], record["lemma"], record["pos"],
                                 strict=True)]  # fmt: skip


def right_branching_trees(train: list[dict], records: list[dict]) -> list[dict]:
    """The reference rule's prediction for each record."""
    by_pos: dict[str, Counter] = {}
    for r in train:
        for p, d in zip(r["pos"], r["deprel"], strict=True):
            by_pos.setdefault(str(p), Counter())[str(d)] += 1
    overall = Counter(str(d) for r in train for d in r["deprel"])
    fallback = overall.most_common(1)[0][0] if overall else "NP"
    out = []
    for r in records:
        n = len(r["head"])
        heads = [i + 2 if i + 1 < n else 0 for i in range(n)]
        labels = [(by_pos.get(str(p)) or Counter({fallback: 1})).most_common(1)[0][0]
                  for p in r["pos"]]  # fmt: skip
        out.append({"head": heads, "deprel": labels})
    return out


@register_fitter("tree")
def fit_trees(ev: Evaluation, data: dict[str, list[dict]], settings: BaselineSettings
              ) -> tuple[dict, list[dict]]:  # fmt: skip
    """The parser fine-tuned on train (dev for the epoch), its trees for dev and test."""
    from pipelines.families.klue.dp_parse import features
    from pipelines.models.dep_parser import ParserSettings, load_parser, train_parser

    def examples(records: list[dict]) -> list:
        return [([features(w) for w in _words(r)], [int(h) for h in r["head"]],
                 [str(d) for d in r["deprel"]]) for r in records]  # fmt: skip

    # a parser epoch over a demo's train split is a few batches: PARSER_EPOCHS of them per
    # baseline epoch (the best dev LAS kept), as 10 would leave it below right-branching
    ps = ParserSettings(epochs=settings.epochs * PARSER_EPOCHS, seed=settings.seed,
                        device=settings.device)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="benchforge-baseline-") as tmp:
        info = train_parser(examples(data["train"]), examples(data["dev"]), ps, Path(tmp))
        parser = load_parser(Path(tmp), settings.device)
        out = {}
        for split in ("dev", "test"):
            parsed = parser.parse([[features(w) for w in _words(r)] for r in data[split]])
            out[split] = [{"prediction": {"head": h, "deprel": lab}} for h, lab in parsed]
    history = [{k: v for k, v in info.items() if k in ("best_epoch", "history", "dev")}]
    history[0]["model"] = (f"benchforge biaffine parser ({ps.encoder}, trained from scratch "
                           "on the release's train split)")  # fmt: skip
    return out, history
