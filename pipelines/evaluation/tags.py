"""The baseline of a character-tagging release (KLUE-NER): the character tagger of
:mod:`pipelines.models.char_tagger` (a small BERT over characters with constrained-BIO
decoding), trained on train with dev for its epochs, tagging dev and test."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pipelines.evaluation.fitters import BaselineSettings, register_fitter
from pipelines.evaluation.spec import Evaluation


@register_fitter("tags")
def fit_tags(ev: Evaluation, data: dict[str, list[dict]], settings: BaselineSettings
             ) -> tuple[dict, list[dict]]:  # fmt: skip
    from pipelines.models.char_tagger import (
        TaggerSettings,
        load_tagger,
        spans_of_tags,
        train_tagger,
    )

    def examples(records: list[dict]) -> list[tuple[str, list]]:
        return [(ev.text(r), spans_of_tags(ev.gold(r))) for r in records]

    types = sorted({t.split("-", 1)[1] for r in data["train"] for t in ev.gold(r) if t != "O"})
    ts = TaggerSettings(hidden=settings.hidden, layers=settings.layers, heads=settings.heads,
                        intermediate=settings.intermediate, epochs=settings.epochs,
                        seed=settings.seed, device=settings.device)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="benchforge-baseline-") as tmp:
        metrics = train_tagger(examples(data["train"]), examples(data["dev"]), ts, Path(tmp),
                               types=types)  # fmt: skip
        tagger = load_tagger(Path(tmp), settings.device)
        out = {s: [{"prediction": tags} for tags in tagger.tag([ev.text(r) for r in data[s]],
                                                               progress=True)]
               for s in ("dev", "test")}  # fmt: skip
    return out, [{k: v for k, v in metrics.items() if k != "fingerprint"}]
