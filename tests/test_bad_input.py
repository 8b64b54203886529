"""Bad input and unusable settings end as a clear error (file, row, problem; exit 2)
before any work starts, or are handled (issue 15): ports, recipes, corpora, over-long
documents, a byte order mark, annotation values out of the interface's range, unreadable
or empty tables."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipelines.annotation import ls_server
from pipelines.core.ports import free_port, port_free
from pipelines.core.recipe import CorpusSpec, NoiseSettings
from pipelines.ingest.readers import InputError, check_corpus_file, read_documents
from pipelines.ingest.shards import process_documents

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", *args],
        cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def corpus(**kw) -> CorpusSpec:
    base = {"name": "c", "path": "x", "license": "CC0-1.0", "domain": "review",
            "style": "colloquial", "format": "jsonl", "text_field": "review"}  # fmt: skip
    return CorpusSpec(**{**base, **kw})


@pytest.fixture
def held_port():
    """A port that another program listens on (as a web server on 8080 would)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


# ------------------------------------------------------------------------------ ports


def test_a_taken_port_is_refused_when_forced_and_avoided_otherwise(held_port, monkeypatch):
    assert not port_free(held_port)
    with pytest.raises(ls_server.LabelStudioError, match=f"port {held_port} .* is taken"):
        ls_server.choose_port(held_port)
    monkeypatch.setenv("BENCHFORGE_LS_PORT", str(held_port))
    chosen = ls_server.choose_port(None)
    assert chosen != held_port and port_free(chosen)
    monkeypatch.setenv("BENCHFORGE_LS_PORT", "eighty")
    with pytest.raises(ls_server.LabelStudioError, match="not a port number"):
        ls_server.choose_port(None)


def test_free_ports_come_from_the_system_not_prefects_range():
    """Prefect's own choice is random in 8000-8999, where Label Studio's 8080 lies."""
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ports = {free_port() for _ in range(20)}
    assert all(low <= p <= high for p in ports)
    if not low <= 8080 <= high:
        assert 8080 not in ports


def test_prefect_server_port_is_chosen_by_benchforge(monkeypatch, tmp_path):
    code = (
        "from flows.runtime import prefect_server\nwith prefect_server() as url:\n    print(url)\n"
    )
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    port = int(proc.stdout.strip().rsplit(":", 1)[1].split("/")[0])
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert low <= port <= high


# ------------------------------------------------------------ recipes and corpora


def _recipe(tmp_path: Path, change) -> Path:  # noqa: ANN001
    recipe = yaml.safe_load((ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8"))
    for c in recipe["corpora"]:
        c["path"] = str((ROOT / "recipes" / c["path"]).resolve())
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "sts.xml")
    change(recipe)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def _fails_before_any_work(tmp_path: Path, recipe: Path, *needles: str) -> None:
    home = tmp_path / "home"
    out = tmp_path / "out"
    proc = cli("rebuild", str(recipe), "--out", str(out),
               env={"BENCHFORGE_HOME": str(home), "BENCHFORGE_CONFIG": str(home / "config"),
                    "LABEL_STUDIO_URL": "", "PREFECT_HOME": str(tmp_path / "prefect")})  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "Error logging to API" not in proc.stderr
    assert not out.exists()  # no step ran
    assert not (home / "labelstudio" / "server.json").exists()  # no server was started


def test_typo_in_the_agreement_section_fails_before_any_work(tmp_path):
    def typo(r: dict) -> None:
        r["agreement"]["pearson_mn"] = r["agreement"].pop("pearson_min")

    recipe = _recipe(tmp_path, typo)
    _fails_before_any_work(tmp_path, recipe, str(recipe), "agreement.pearson_mn: unknown setting")


def test_wrong_type_in_the_split_section_fails_before_any_work(tmp_path):
    recipe = _recipe(tmp_path, lambda r: r["split"].update(eval_fraction="lots"))
    _fails_before_any_work(tmp_path, recipe, "split.eval_fraction")


def test_missing_corpus_fails_before_any_work(tmp_path):
    recipe = _recipe(tmp_path, lambda r: r["corpora"][0].update(path=str(tmp_path / "no.jsonl")))
    _fails_before_any_work(tmp_path, recipe, f"{tmp_path / 'no.jsonl'}: file not found")


def test_undecodable_corpus_fails_before_any_work(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"review": "ok"}\n{"review": "\xff\xfe"}\n')
    recipe = _recipe(tmp_path, lambda r: r["corpora"][0].update(path=str(bad)))
    _fails_before_any_work(tmp_path, recipe, f"{bad}:2: cannot decode as utf-8")


def test_empty_corpus_file_is_an_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty file"):
        check_corpus_file(corpus(), empty)


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "export.jsonl"
    line = json.dumps({"review": "엑셀에서 내보낸 파일이에요"}, ensure_ascii=False)
    path.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\n")
    check_corpus_file(corpus(), path)
    assert read_documents(corpus(), path).kept["text"].tolist() == ["엑셀에서 내보낸 파일이에요"]
    csv_path = tmp_path / "export.csv"
    csv_path.write_bytes("\ufeffid,review\n1,좋아요 정말로\n".encode())
    got = read_documents(corpus(format="csv", id_field="id"), csv_path)
    assert got.kept["text"].tolist() == ["좋아요 정말로"]


def test_an_over_long_document_is_dropped_before_sentence_splitting(tmp_path):
    """A 5 MB line once restarted Dask workers in a loop; now it is dropped with reason
    too_long_document (recipe: filters.noise.max_document_chars)."""
    path = tmp_path / "long.jsonl"
    long_text = "가나다라마바사 아자차카. " * 400_000  # about 5.6 million characters
    lines = [{"review": "짧은 리뷰도 하나 있어요."}, {"review": long_text}]
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n")
    docs = read_documents(corpus(), path).kept
    shard = process_documents(docs, NoiseSettings())
    assert shard.documents["text"].tolist() == ["짧은 리뷰도 하나 있어요."]
    dropped = shard.rejects[shard.rejects["reason"] == "too_long_document"]
    assert len(dropped) == 1 and dropped["detail"].iloc[0].startswith("5,600,000 characters")
    stats = {s["stage"]: s for s in shard.stats.to_dict()["stages"]}
    assert stats["clean"]["dropped"] == {"too_long_document": 1}
    strict = process_documents(docs.iloc[[0]], NoiseSettings(max_document_chars=10))
    assert strict.documents.empty and strict.rejects["reason"].tolist() == ["too_long_document"]


# ------------------------------------------------------------- agreement and split


@pytest.fixture
def ratings(tmp_path) -> Path:
    rows = [  # four annotators who agree closely (one a point higher on every third item)
        {"item_id": f"i{i}", "annotator_id": f"a{a}",
         "value": str(min(5, i % 6 + (a == 0 and i % 3 == 0)))}
        for i in range(12)
        for a in range(4)
    ]  # fmt: skip
    path = tmp_path / "ratings.parquet"
    pd.DataFrame(rows).to_parquet(path)
    return path


@pytest.mark.parametrize("bad", ["7", "-1", "nan", "inf"])
def test_agreement_refuses_values_outside_the_interface(ratings, tmp_path, bad):
    table = pd.read_parquet(ratings)
    table.loc[5, "value"] = bad
    table.to_parquet(ratings)
    config = str(ROOT / "annotation_configs" / "sts.xml")
    proc = cli("agree", str(ratings), "--rule", "mean", "--config", config, "--out",
               str(tmp_path / "gold"))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"{ratings}: row 6: annotator 'a1', item 'i1': value '{bad}'" in proc.stderr
    assert not (tmp_path / "gold" / "gold.parquet").exists()
    if bad in ("nan", "inf"):  # the mean rule needs finite numbers even without a config
        proc = cli("agree", str(ratings), "--rule", "mean", "--out", str(tmp_path / "gold"))
        assert proc.returncode == 2 and "is not a finite number" in proc.stderr


def test_agreement_accepts_the_interface_values(ratings, tmp_path):
    proc = cli("agree", str(ratings), "--rule", "mean", "--values", "0,1,2,3,4,5", "--out",
               str(tmp_path / "gold"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_unreadable_or_empty_tables_are_clear_errors(ratings, tmp_path):
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(ratings.read_bytes()[:300])
    for command in (["agree", str(truncated), "--rule", "mean"],
                    ["split", str(truncated), "--rule", "random"]):  # fmt: skip
        proc = cli(*command, "--out", str(tmp_path / "o"))
        assert proc.returncode == 2, proc.stderr
        assert f"{truncated}: not a readable Parquet file" in proc.stderr
        assert "Traceback" not in proc.stderr
    empty = tmp_path / "empty.parquet"
    pd.DataFrame({"item_id": pd.Series(dtype=str), "label": pd.Series(dtype=float)}).to_parquet(
        empty
    )
    proc = cli("split", str(empty), "--rule", "random", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and f"{empty}: no rows" in proc.stderr
    dup = tmp_path / "dup.parquet"
    pd.DataFrame({"item_id": ["a", "b", "a"], "label": [1.0, 2.0, 3.0]}).to_parquet(dup)
    proc = cli("split", str(dup), "--rule", "random", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and f"{dup}: row 3: item_id 'a' repeats row 1" in proc.stderr


def test_ingest_checks_corpora_before_any_server_or_cluster(tmp_path):
    recipe = yaml.safe_load((ROOT / "recipes" / "ingest-demo.yaml").read_text(encoding="utf-8"))
    for c in recipe["corpora"]:
        c["path"] = str((ROOT / "recipes" / c["path"]).resolve())
    recipe["corpora"][1]["path"] = str(tmp_path / "missing.txt")
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    env = {"PREFECT_HOME": str(tmp_path / "prefect")}
    proc = cli("ingest", str(path), "--out", str(tmp_path / "out"), env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith(f"{tmp_path / 'missing.txt'}: file not found")
    assert "temporary Prefect server" not in proc.stderr  # nothing was started
    assert not (tmp_path / "out").exists()


def test_screening_every_annotator_away_stops_with_the_figures(tmp_path):
    """Issue 16: 3 annotators, overlap 3, 20 STS items of random ratings: KLUE-STS's
    screening drops all three; the step stops naming them and the thresholds."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = [{"item_id": f"i{i}", "annotator_id": f"a{a}", "value": str(int(rng.integers(6)))}
            for i in range(20) for a in range(3)]  # fmt: skip
    path = tmp_path / "three.parquet"
    pd.DataFrame(rows).to_parquet(path)
    proc = cli("agree", str(path), "--rule", "mean", "--out", str(tmp_path / "gold"))
    assert proc.returncode == 2, proc.stderr
    assert "the screening would remove every annotator (3: a0: pearson" in proc.stderr
    assert "pearson_min 0.8 and alpha_min 0.2" in proc.stderr
    assert not (tmp_path / "gold" / "gold.parquet").exists()


def test_no_gold_item_left_stops_before_the_split(tmp_path):
    rows = [{"item_id": f"i{i}", "annotator_id": f"a{a}", "value": ["x", "y"][a % 2]}
            for i in range(4) for a in range(2)]  # fmt: skip
    path = tmp_path / "ties.parquet"
    pd.DataFrame(rows).to_parquet(path)
    proc = cli("agree", str(path), "--rule", "majority", "--min-votes", "2", "--out",
               str(tmp_path / "gold"))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "no item keeps a gold label: all 4 items dropped ({'no_majority': 4}" in proc.stderr
    assert "min_votes 2" in proc.stderr


# ------------------------------------------------------- issue 16: folders and inputs


def test_a_second_run_into_a_locked_folder_fails_clearly(ratings, tmp_path):
    from pipelines.core.io import output_lock

    out = tmp_path / "gold"
    with output_lock(out):
        proc = cli("agree", str(ratings), "--rule", "mean", "--out", str(out))
        assert proc.returncode == 2, proc.stderr
        assert f"{out}: another benchforge run is writing here (pid {os.getpid()} on" in (
            proc.stderr
        )
        assert not (out / "gold.parquet").exists()  # nothing mixed in
    proc = cli("agree", str(ratings), "--rule", "mean", "--out", str(out))
    assert proc.returncode == 0, proc.stderr  # released at the end of the first run


def test_a_stale_lock_is_taken_over_and_temporaries_removed(ratings, tmp_path):
    out = tmp_path / "gold"
    out.mkdir()
    (out / ".benchforge.lock").write_text("pid 999999 on elsewhere, started yesterday\n")
    (out / ".gold.parquet.abc123.tmp").write_bytes(b"")  # a killed write's leftover
    proc = cli("agree", str(ratings), "--rule", "mean", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "taking over the lock of a run that ended without releasing it" in proc.stderr
    assert "pid 999999" in proc.stderr
    assert not list(out.glob(".*.tmp")) and (out / "gold.parquet").is_file()
    assert (out / ".benchforge.lock").read_text() == ""  # released cleanly


def test_a_corpus_without_documents_is_an_error_unless_allowed(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    check_corpus_file(corpus(allow_empty=True), empty)
    blank = tmp_path / "blank.jsonl"
    blank.write_text('{"review": "  "}\n\n')
    with pytest.raises(InputError, match=r"blank.jsonl: no documents with text in 2 lines"):
        read_documents(corpus(), blank)
    assert read_documents(corpus(allow_empty=True), blank).kept.empty


def test_the_card_says_when_few_annotators_remain():
    from pipelines.export.data_card import _limitations

    facts = {
        "annotation": {"simulated": False, "overlap": 3},
        "recipe": {"filters": {"classifiers": {"detectors": {"hate": {}}}}},
        "split": {"splits": {"train": 500, "dev": 100, "test": 100}},
        "agreement": {"annotators": 4, "dropped_annotators": {"low_pearson": 2}},
    }
    assert "**Few annotators**: 2 of 4 annotators remain" in _limitations(facts)
    facts["agreement"]["dropped_annotators"] = {}
    assert "Few annotators" not in _limitations(facts)


def test_an_ingest_that_keeps_nothing_leaves_earlier_outputs_alone(tmp_path):
    """Issue 16: a run whose corpora yield no sentence must not replace good outputs with
    empty tables."""
    import hashlib

    corpus_file = tmp_path / "reviews.jsonl"
    lines = ["배우들의 연기가 정말 좋았어요.", "다시 보고 싶은 영화입니다."]
    corpus_file.write_text("".join(json.dumps({"review": t}, ensure_ascii=False) + "\n"
                                   for t in lines), encoding="utf-8")  # fmt: skip
    recipe = {"name": "tiny", "corpora": [{
        "name": "tiny", "path": str(corpus_file), "format": "jsonl", "text_field": "review",
        "license": "CC0-1.0", "domain": "review", "style": "colloquial"}],
        "runner": {"workers": 1}}  # fmt: skip
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    env = {"PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": ""}
    first = cli("ingest", str(path), "--out", str(out), env=env)
    assert first.returncode == 0, first.stderr[-2000:]

    def digests() -> dict:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.iterdir()
                if p.is_file() and p.suffix in (".parquet", ".json")}  # fmt: skip

    before = digests()
    corpus_file.write_text('{"review": "This movie was great fun to watch."}\n')
    second = cli("ingest", str(path), "--out", str(out), env=env)
    assert second.returncode == 2, second.stderr[-2000:]
    assert "no sentence is left after the filters" in second.stderr
    assert digests() == before
