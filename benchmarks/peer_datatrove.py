"""The DataTrove side of ``benchmarks/peer_ingest.py`` (run by it in the peers' own
virtual environment, ``.venv-peers``: DataTrove's pins are not benchforge's).

The closest DataTrove pipeline to benchforge's ingest of NSMC, built from DataTrove's own
steps: ``JsonlReader`` over the input shards; ``LambdaFilter`` steps for benchforge's
noise rules with the same thresholds (length 5-1000 characters, more than 10 Chinese or
Japanese characters, a Hangul share under 0.5 of the letters) and a ``RegexFilter`` for
e-mail addresses, Korean phone numbers and resident registration numbers; then DataTrove's
four-stage MinHash deduplication (signatures, buckets, clusters, filter) on character
3-grams of the same normalised form (NFKC, case-folded, letters and digits), with the
band layout datasketch chooses for benchforge's threshold 0.8 and 128 permutations.
Exact duplicates fall into every band, so MinHash removes them too.

    python benchmarks/peer_datatrove.py --input SHARDS --work DIR --workers 2 \
        --buckets 9 --rows 13

With ``--sentences`` each review is first split into sentences with DataTrove's own
Korean splitter (``SentenceSplit``: Kiwi), so the filters and MinHash see sentences, as
benchforge's ``unit: sentence`` ingest does.

Prints one JSON object: seconds per stage and in all, rows (documents, or sentences with
``--sentences``) read, dropped per filter, removed as duplicates, kept.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import time
import unicodedata
from pathlib import Path

from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.dedup.minhash import (
    MinhashConfig,
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
    MinhashDedupSignature,
)
from datatrove.pipeline.filters import LambdaFilter, RegexFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashing import HashConfig
from datatrove.utils.text import TextNormConfig
from datatrove.utils.typeshelper import Languages
from datatrove.utils.word_tokenizers import WordTokenizer, load_word_tokenizer

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
PII = (
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
    r"|01[016789]-?\d{3,4}-?\d{4}"
    r"|\d{6}-?[1-4]\d{6}"
)


def normalized(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


class Characters(WordTokenizer):
    """Characters of the normalised form as the 'words' of DataTrove's n-grams: its
    shingles are then benchforge's character 3-grams."""

    def word_tokenize(self, text: str) -> list[str]:
        return list(normalized(text))

    def sent_tokenize(self, text: str) -> list[str]:
        return [text]

    def span_tokenize(self, text: str) -> list[tuple[int, int]]:
        return [(0, len(text))]


class SentenceSplit(PipelineStep):
    """One document per sentence, split with DataTrove's own Korean sentence splitter
    (``load_word_tokenizer("kor")``: Kiwi's ``split_into_sents``, the skip-bigram
    model), the way DataTrove's sentence-level steps split Korean text; a sentence keeps
    its document's id with its position. Paragraph breaks are boundaries, as in
    benchforge's kss splitting."""

    name = "sentence split (Kiwi)"
    type = "splitter"

    def __init__(self) -> None:
        super().__init__()
        self.tokenizer = load_word_tokenizer(Languages.korean)

    def run(self, data, rank: int = 0, world_size: int = 1):  # noqa: ANN001, ANN201
        for doc in data:
            self.stat_update("documents")
            k = 0
            for para in doc.text.split("\n"):
                for sent in self.tokenizer.sent_tokenize(para) if para.strip() else []:
                    self.stat_update("sentences")
                    yield Document(text=sent, id=f"{doc.id}:{k}", metadata=dict(doc.metadata))
                    k += 1


def hangul_share(text: str) -> float:
    letters = [ch for ch in text if ch.isalpha()]
    return sum(1 for ch in letters if HANGUL.match(ch)) / len(letters) if letters else 0.0


def _count(folder: Path) -> int:
    n = 0
    for path in folder.rglob("*.jsonl.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            n += sum(1 for _ in f)
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, required=True, help="folder of *.jsonl.gz shards")
    parser.add_argument("--work", type=Path, required=True, help="an empty work folder")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--buckets", type=int, default=9, help="LSH bands (datasketch's b)")
    parser.add_argument("--rows", type=int, default=13, help="hashes per band (datasketch's r)")
    parser.add_argument("--dedup-only", action="store_true", help="MinHash stages only")
    parser.add_argument(
        "--sentences", action="store_true", help="split into sentences (Kiwi) before the filters"
    )
    args = parser.parse_args()
    work = args.work
    shards = len(list(args.input.glob("*.jsonl.gz")))
    config = MinhashConfig(
        hash_config=HashConfig(precision=64),
        n_grams=3,
        num_buckets=args.buckets,
        hashes_per_bucket=args.rows,
        norm_config=TextNormConfig(),
    )
    excluded = {name: work / "excluded" / name for name in
                ("too_short", "too_long", "too_many_cjk", "not_korean", "pii")}  # fmt: skip
    reader = JsonlReader(str(args.input), text_key="review", id_key="review_id",
                         glob_pattern="*.jsonl.gz")  # fmt: skip
    times = {}

    def run(name: str, pipeline: list, tasks: int) -> None:
        start = time.perf_counter()
        LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=min(tasks, args.workers),
                              logging_dir=str(work / "logs" / name)).run()  # fmt: skip
        times[name] = round(time.perf_counter() - start, 2)

    filters = [] if args.dedup_only else [
        LambdaFilter(lambda d: len(d.text) >= 5, JsonlWriter(str(excluded["too_short"]))),
        LambdaFilter(lambda d: len(d.text) <= 1000, JsonlWriter(str(excluded["too_long"]))),
        LambdaFilter(lambda d: len(CJK.findall(d.text)) <= 10,
                     JsonlWriter(str(excluded["too_many_cjk"]))),
        LambdaFilter(lambda d: hangul_share(d.text) >= 0.5,
                     JsonlWriter(str(excluded["not_korean"]))),
        RegexFilter(PII, JsonlWriter(str(excluded["pii"]))),
    ]  # fmt: skip
    splitter = [SentenceSplit()] if args.sentences else []
    run("filters+signatures", [
        reader, *splitter, *filters, JsonlWriter(str(work / "filtered")),
        MinhashDedupSignature(str(work / "signatures"), config=config, language=Characters()),
    ], tasks=shards)  # fmt: skip
    run("buckets", [MinhashDedupBuckets(str(work / "signatures"), str(work / "buckets"),
                                        config=config)], tasks=config.num_buckets)  # fmt: skip
    run("clusters", [MinhashDedupCluster(str(work / "buckets"), str(work / "remove_ids"),
                                         config=config)], tasks=1)  # fmt: skip
    run("filter", [
        JsonlReader(str(work / "filtered"), glob_pattern="*.jsonl.gz"),
        MinhashDedupFilter(str(work / "remove_ids"),
                           exclusion_writer=JsonlWriter(str(work / "excluded" / "duplicate"))),
        JsonlWriter(str(work / "kept")),
    ], tasks=shards)  # fmt: skip
    dropped = {name: _count(folder) for name, folder in excluded.items()}
    dropped["duplicate"] = _count(work / "excluded" / "duplicate")
    kept = _count(work / "kept")
    print(json.dumps({"seconds": times, "total_seconds": round(sum(times.values()), 2),
                      "read": kept + sum(dropped.values()), "dropped": dropped,
                      "kept": kept,
                      "unit": "sentence" if args.sentences else "document"}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
