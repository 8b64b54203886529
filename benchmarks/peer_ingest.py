"""Benchmark: benchforge's ingest side by side with DataTrove (issue 38, item 2), and
near-duplicate removal alone against datasketch and DataTrove's MinHash.

The same NSMC reviews (the first ``--limit`` of the crawl; all 712,404 by default), the
same machine, the same run, the same number of worker processes (``--workers``):

- **benchforge**, twice: as the demo recipes ingest NSMC (``unit: sentence``: kss
  sentence splitting, KLUE 2.3's cleaning and noise rules, PII, exact and MinHash
  near-duplicate removal, a reason for every dropped row, Parquet out), and with
  ``unit: document`` (no sentence splitting: the same work DataTrove does);
- **DataTrove**, twice: on documents, and splitting each review into sentences first
  with its own Korean splitter (Kiwi's ``split_into_sents``, what
  ``load_word_tokenizer("kor")`` gives; ``--sentences``), the same work as benchforge's
  ``unit: sentence`` (``benchmarks/peer_datatrove.py``, in a virtual environment of its own,
  ``.venv-peers``, made here with uv from ``benchmarks/peers-requirements.txt``): its
  JSON Lines reader over the same reviews cut into one shard per worker, lambda and regex
  filters with benchforge's thresholds, and its four-stage MinHash deduplication on the
  same character 3-grams with the band layout datasketch picks for threshold 0.8 and 128
  permutations.

Then near-duplicate removal alone on the same texts: benchforge's batch MinHash
(``pipelines.quality.dedup``), datasketch (one MinHash per text and a MinHashLSH, the
reference of ``benchmarks/dedup.py``) and DataTrove's MinHash stages.

Prints documents per second of each, the ratios (benchforge / DataTrove: above 1 is
faster), and kept and dropped counts side by side.

    .venv/bin/python benchmarks/peer_ingest.py --corpus PATH/TO/nsmc/reviews.jsonl.gz \
        [--limit N] [--workers 2] [--sentences-only]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from nsmc_corpus import add_corpus_argument  # noqa: E402

PEERS = ROOT / ".venv-peers"
REQUIREMENTS = ROOT / "benchmarks" / "peers-requirements.txt"


def peers_python() -> Path:
    """The peers' virtual environment, made (or brought up to its pins) with uv."""
    python = PEERS / "bin" / "python"
    stamp = PEERS / ".benchforge-stamp"
    want = REQUIREMENTS.read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == want:
        return python
    uv = ROOT / ".venv" / "bin" / "uv"
    subprocess.run([str(uv), "venv", "-q", "--allow-existing", str(PEERS), "--python",
                    sys.executable], check=True)  # fmt: skip
    subprocess.run([str(uv), "pip", "install", "-q", "--python", str(python), "-r",
                    str(REQUIREMENTS)], check=True)  # fmt: skip
    stamp.write_text(want)
    return python


def write_inputs(corpus: Path, limit: int | None, shards: int, work: Path) -> tuple[Path, Path]:
    """One file for benchforge (it shards by itself) and ``shards`` files for DataTrove
    (it parallelises over files), the same reviews in the same order."""
    whole = work / "reviews.jsonl.gz"
    folder = work / "shards"
    folder.mkdir(parents=True)
    with gzip.open(corpus, "rt", encoding="utf-8") as src:
        lines = [line for line, _ in zip(src, range(limit or 10**9), strict=False)]
    with gzip.open(whole, "wt", encoding="utf-8", compresslevel=1) as dst:
        dst.writelines(lines)
    per = -(-len(lines) // shards)
    for i in range(shards):
        with gzip.open(folder / f"{i:05d}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as f:
            f.writelines(lines[i * per : (i + 1) * per])
    return whole, folder


def benchforge_ingest(whole: Path, unit: str, workers: int, work: Path) -> dict:
    from flows.ingest import run_ingest

    recipe = {
        "name": f"peer-nsmc-{unit}",
        "corpora": [{"name": "nsmc", "path": str(whole), "format": "jsonl",
                     "text_field": "review", "id_field": "review_id", "license": "CC0-1.0",
                     "domain": "review", "style": "colloquial", "unit": unit}],
        "runner": {"workers": workers},
    }  # fmt: skip
    path = work / f"{recipe['name']}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    start = time.perf_counter()
    report = run_ingest(path, work / recipe["name"])
    seconds = time.perf_counter() - start
    stages = report["stats"]["stages"]
    dropped: dict[str, int] = {}
    for stage in stages:
        for reason, n in (stage.get("dropped") or {}).items():
            dropped[reason] = dropped.get(reason, 0) + n
    return {"seconds": seconds, "documents": stages[0]["in"], "stages": stages,
            "dropped": dropped, "kept": stages[-1].get("kept", stages[-1].get("out"))}  # fmt: skip


def datatrove(python: Path, shards: Path, workers: int, work: Path, dedup_only: bool,
              sentences: bool = False) -> dict:  # fmt: skip
    from datasketch.lsh import _optimal_param

    b, r = _optimal_param(0.8, 128, 0.5, 0.5)
    cmd = [str(python), str(ROOT / "benchmarks" / "peer_datatrove.py"), "--input", str(shards),
           "--work", str(work), "--workers", str(workers), "--buckets", str(b),
           "--rows", str(r)]  # fmt: skip
    if dedup_only:
        cmd.append("--dedup-only")
    if sentences:
        cmd.append("--sentences")
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"DataTrove failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = seconds
    result["bands"] = (b, r)
    return result


def near_dedup_alone(whole: Path) -> dict:
    """benchforge's batch MinHash and datasketch on the same texts, in this process
    (``benchmarks/dedup.py``'s comparison)."""
    from dedup import timed_near_dedup

    with gzip.open(whole, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["review"] for line in fh]
    timed = timed_near_dedup(texts)
    (ref_s, ref), (got_s, got) = timed["datasketch"], timed["benchforge"]
    return {"texts": len(texts), "datasketch": (ref_s, len(ref)),
            "benchforge": (got_s, len(got.dropped))}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_argument(parser)
    parser.add_argument("--limit", type=int, default=None,
                        help="the first N reviews (default: the whole crawl)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="worker processes of both tools (default: all cores)")  # fmt: skip
    parser.add_argument("--keep", type=Path, default=None, help="keep the work folder here")
    parser.add_argument("--sentences-only", action="store_true",
                        help="only the sentence-level pair: benchforge (kss) and DataTrove "
                        "with its Korean splitter (Kiwi)")  # fmt: skip
    args = parser.parse_args()
    if not args.corpus.is_file():
        parser.error(f"{args.corpus}: not found")
    python = peers_python()
    work = args.keep or Path(tempfile.mkdtemp(prefix="peer-ingest-"))
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    whole, shards = write_inputs(args.corpus, args.limit, args.workers, work)

    from flows.runtime import prefect_server

    with prefect_server():
        sent = benchforge_ingest(whole, "sentence", args.workers, work)
        doc = None if args.sentences_only else benchforge_ingest(whole, "document", args.workers,
                                                                 work)  # fmt: skip
    dt_sent = datatrove(python, shards, args.workers, work / "datatrove-sentences",
                        dedup_only=False, sentences=True)  # fmt: skip
    n = sent["documents"]
    sentence_ratio = (n / sent["seconds"]) / (n / dt_sent["wall_seconds"])
    print(f"\nsentence level, same {n:,} NSMC reviews, {args.workers} worker processes each:")
    print(f"  benchforge ingest, kss sentences   {sent['seconds']:8.1f} s "
          f"{n / sent['seconds']:9,.0f} reviews/s  {sent['kept']:,} sentences kept; "
          f"dropped {sent['dropped']}")  # fmt: skip
    print(f"  DataTrove, Kiwi sentences         {dt_sent['wall_seconds']:8.1f} s "
          f"{n / dt_sent['wall_seconds']:9,.0f} reviews/s  {dt_sent['kept']:,} sentences kept "
          f"of {dt_sent['read']:,}; dropped {dt_sent['dropped']}")  # fmt: skip
    print(f"ratio (benchforge sentences / DataTrove sentences, reviews/s): {sentence_ratio:.2f}x")
    if args.sentences_only:
        record = {"benchforge_sentences": sent, "datatrove_sentences": dt_sent}
        (work / "peer_ingest.json").write_text(json.dumps(record, indent=2, default=str))
        return 0
    dt = datatrove(python, shards, args.workers, work / "datatrove", dedup_only=False)
    dt_dedup = datatrove(python, shards, args.workers, work / "datatrove-dedup", dedup_only=True)
    alone = near_dedup_alone(whole)

    dt_rate = dt["read"] / dt["wall_seconds"]
    print(f"\nsame {n:,} NSMC reviews, {args.workers} worker processes each "
          f"(DataTrove's MinHash: {dt['bands'][0]} bands x {dt['bands'][1]} rows)")  # fmt: skip
    rows = [("benchforge ingest, sentences (kss)", sent["seconds"], sent["documents"]),
            ("benchforge ingest, documents", doc["seconds"], doc["documents"]),
            ("DataTrove pipeline, documents", dt["wall_seconds"], dt["read"])]  # fmt: skip
    for name, seconds, docs in rows:
        rate = docs / seconds
        print(f"  {name:<36} {seconds:8.1f} s {rate:9,.0f} docs/s  ratio to DataTrove "
              f"{rate / dt_rate:5.2f}x")  # fmt: skip
    print("  kept / dropped:")
    print(f"    benchforge, sentences: {sent['kept']:,} sentences kept; dropped {sent['dropped']}")
    print(f"    benchforge, documents: {doc['kept']:,} documents kept; dropped {doc['dropped']}")
    print(f"    DataTrove, documents : {dt['kept']:,} documents kept; dropped {dt['dropped']}")
    ds_s, ds_n = alone["datasketch"]
    bf_s, bf_n = alone["benchforge"]
    m = alone["texts"]
    dtd_s = dt_dedup["wall_seconds"]
    print(f"\nnear-duplicate removal alone, {m:,} reviews (threshold 0.8, 128 permutations, "
          "character 3-grams):")  # fmt: skip
    print(f"  datasketch (1 process)     {ds_s:8.1f} s {m / ds_s:9,.0f} texts/s  {ds_n:,} removed")
    print(f"  DataTrove ({args.workers} processes)     {dtd_s:8.1f} s {m / dtd_s:9,.0f} texts/s  "
          f"{dt_dedup['dropped']['duplicate']:,} removed")  # fmt: skip
    print(f"  benchforge (1 process)     {bf_s:8.1f} s {m / bf_s:9,.0f} texts/s  {bf_n:,} removed")
    print(f"  ratio: benchforge {ds_s / bf_s:.1f}x datasketch, {dtd_s / bf_s:.1f}x DataTrove")
    print(f"ratio (benchforge documents / DataTrove docs/s): "
          f"{(doc['documents'] / doc['seconds']) / dt_rate:.2f}x")  # fmt: skip
    record = {"benchforge_sentences": sent, "benchforge_documents": doc, "datatrove": dt,
              "datatrove_sentences": dt_sent, "datatrove_dedup": dt_dedup,
              "near_dedup_alone": alone}  # fmt: skip
    (work / "peer_ingest.json").write_text(json.dumps(record, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
