"""Stage ``segment``: documents become sentences.

A corpus with ``unit: sentence`` is split with kss on its MeCab backend (KLUE 2.3 split
its corpora into sentences with kss); ``unit: document`` keeps each document whole as
one row (KLUE kept NSMC reviews whole for NER). Every sentence keeps its document's
provenance (corpus, license, domain, style, date) and its position in the document.
A document that yields no sentence is dropped with reason ``no_sentences``.
"""

from __future__ import annotations

import pandas as pd

from pipelines.core.stage import StageResult, split_by_reason
from pipelines.lang import DEFAULT_LANGUAGE, language

SENTENCE_COLUMNS = [
    "sent_id",
    "doc_id",
    "sent_index",
    "corpus",
    "text",
    "license",
    "domain",
    "style",
    "date",
    "unit",
    "edits",
]


def segment_documents(
    docs: pd.DataFrame, lang: str = DEFAULT_LANGUAGE
) -> tuple[pd.DataFrame, StageResult]:
    """Split documents into sentences with the language's splitter (Korean: kss on
    MeCab).

    Returns the ``sentences`` table and the stage result over documents (kept documents
    produced at least one sentence).
    """
    texts = docs["text"].tolist()
    units = docs["unit"].tolist()
    split_idx = [i for i, u in enumerate(units) if u == "sentence"]
    pieces: list[list[str]] = [[" ".join(t.split())] if t.strip() else [] for t in texts]
    if split_idx:
        for i, sents in zip(
            split_idx, language(lang).split_sentences([texts[i] for i in split_idx]), strict=True
        ):
            pieces[i] = sents
    counts = [len(p) for p in pieces]
    rows = docs.loc[docs.index.repeat(counts)].reset_index(drop=True)
    sentences = pd.DataFrame(
        {
            "doc_id": rows["doc_id"],
            "sent_index": [k for n in counts for k in range(n)],
            "text": [s for p in pieces for s in p],
        }
    )
    sentences["sent_index"] = sentences["sent_index"].astype("int64")
    sentences["sent_id"] = sentences["doc_id"] + ":" + sentences["sent_index"].astype(str)
    for col in ("corpus", "license", "domain", "style", "date", "unit", "edits"):
        sentences[col] = rows.get(col)
    sentences = sentences[SENTENCE_COLUMNS]
    reasons = pd.Series(counts, index=docs.index).eq(0).map({True: "no_sentences", False: None})
    return sentences, split_by_reason("segment", "document", docs, reasons)
