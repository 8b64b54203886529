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
from pipelines.core.line_files import InputError
from pipelines.core.ports import free_port, port_free
from pipelines.core.recipe import CorpusSpec
from pipelines.ingest.readers import check_corpus_file, read_documents
from pipelines.ingest.shards import process_documents
from pipelines.quality.settings import NoiseSettings

ROOT = Path(__file__).resolve().parents[2]


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
    recipe["annotation"]["pilot"]["gold"] = str(ROOT / "data/demo/people/sts-pilot.jsonl")
    recipe["annotation"]["controls"]["items"] = str(ROOT / "data/demo/people/sts-controls.jsonl")
    recipe["annotation"]["guideline"] = str(ROOT / "annotation_configs/guidelines/sts.md")
    change(recipe)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def _fails_before_any_work(tmp_path: Path, recipe: Path, *needles: str) -> None:
    home = tmp_path / "home"
    out = tmp_path / "out"
    proc = cli("rebuild", str(recipe), "--out", str(out),
               env={"BENCHFORGE_HOME": str(home), "BENCHFORGE_CONFIG": str(home / "config"),
                    "LABEL_STUDIO_URL": "", "PREFECT_HOME": str(tmp_path / "prefect"),
                    "PREFECT_API_URL": ""})  # fmt: skip
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


@pytest.mark.parametrize(("xml", "message"), [
    ("<View><Text name='a' value='$sentence1'/>", "not valid XML"),
    ("<View><Text name='a' value='$sentence1'/></View>", "no control tag"),
])  # fmt: skip
def test_a_broken_labeling_config_fails_before_any_server(tmp_path, xml, message):
    """Issue 32, case 13: bad XML or no answer control was found after pairs, items and
    three push retries (64-69 s)."""
    config = tmp_path / "broken.xml"
    config.write_text(xml, encoding="utf-8")
    recipe = _recipe(tmp_path, lambda r: r["annotation"].update(config=str(config)))
    _fails_before_any_work(tmp_path, recipe, f"annotation.config: {config}", message)


def _bad_gold(tmp_path: Path) -> Path:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"item_id": "g1", "sentence1": "가", "sentence2": "나", "value": 3}\n'
                    '{"item_id": "g2", "sentence1": "가", "sentence2": "나", "value": 7}\n',
                    encoding="utf-8")  # fmt: skip
    return gold


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        (lambda r, t: r["annotation"]["controls"].update(share=0.6),
         ["annotation.controls.share"]),
        (lambda r, t: r["annotation"]["pilot"].update(rule={"kind": "min_correct",
                                                            "threshold": 25}),
         ["annotation.pilot.rule: at least 25 of all gold items right can never be met with "
          "the 20 gold items"]),
        (lambda r, t: r["annotation"]["pilot"].update(gold=str(_bad_gold(t))),
         ["annotation.pilot: ", "gold.jsonl: line 2: value 7 is outside the scale 0-5"]),
        (lambda r, t: r["annotation"]["controls"].update(items=str(_bad_gold(t))),
         ["annotation.controls: ", "gold.jsonl: line 2: value 7 is outside the scale 0-5"]),
        (lambda r, t: r["annotation"].pop("pilot"),
         ["simulate.unqualified needs a qualification round (annotation.pilot)"]),
    ],
)  # fmt: skip
def test_a_bad_pilot_or_control_set_fails_before_any_work(tmp_path, change, needles):
    """Issue 35's bad input: a control share above 50%, a pass rule no one can meet, a
    known answer the interface does not allow: errors naming the key (and the line)
    before any step or server."""
    recipe = _recipe(tmp_path, lambda r: change(r, tmp_path))
    _fails_before_any_work(tmp_path, recipe, *needles)


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
    env = {"PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": ""}
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
    env = {}  # the session's Prefect server (a temporary one per call took a minute each)
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


# ------------------------------------------- issue 32: cases 10, 12 and 13 of the probe


@pytest.fixture
def sts_tables(tmp_path) -> tuple[Path, Path]:
    """A small STS gold table and its items (texts, source) as agree and pair write them."""
    texts = ["배우들의 연기가 정말 좋았어요.", "다시 보고 싶은 영화입니다.",
             "음악이 아름다웠다.", "줄거리가 조금 지루했다.", "결말이 인상 깊었습니다.",
             "감독의 연출이 돋보였다."]  # fmt: skip
    gold = pd.DataFrame({"item_id": [f"i{i}" for i in range(24)],
                         "label": [float(i % 6) for i in range(24)]})  # fmt: skip
    items = pd.DataFrame({
        "item_id": gold["item_id"],
        "sentence1": [f"{texts[i % 6]} {i}" for i in range(24)],
        "sentence2": [f"{texts[(i + 1) % 6]} ({i})" for i in range(24)],
        "source": ["nsmc" if i % 2 else "parakqc" for i in range(24)],
    })  # fmt: skip
    gold.to_parquet(tmp_path / "gold.parquet")
    items.to_parquet(tmp_path / "items.parquet")
    return tmp_path / "gold.parquet", tmp_path / "items.parquet"


def test_split_names_the_columns_it_cannot_find(sts_tables, tmp_path):
    """Case 10: a missing ``sentence1``, ``--text-columns nosuch`` and ``--rule tc`` on
    STS gold were pandas KeyErrors; case 12: ``--source-column nosuch`` was ignored."""
    from pipelines.splits.base import SplitError, SplitSettings
    from pipelines.splits.run import run_split

    gold, items = sts_tables
    no_s1 = tmp_path / "no_s1.parquet"
    pd.read_parquet(items).drop(columns=["sentence1"]).to_parquet(no_s1)
    out = tmp_path / "out"
    cases = [
        (SplitSettings(rule="sts"), no_s1, (), r"no_s1.parquet: no column \['sentence1'\]"),
        (SplitSettings(rule="sts", text_columns=["nosuch"]), items, (),
         r"no column \['nosuch'\] .*name yours with --text-columns"),
        (SplitSettings(rule="tc"), items, (), r"no column \['title'\]"),
        (SplitSettings(rule="sts", source_column="nosuch"), items, ("nosuch",),
         r"no column \['nosuch'\]"),
    ]  # fmt: skip
    for settings, table, require, message in cases:
        with pytest.raises(SplitError, match=message):
            run_split(gold, settings, out, table, require=require)
        assert not out.exists()  # nothing written, not even the lock's folder
    proc = cli("split", str(gold), "--rule", "sts", "--items", str(items), "--source-column",
               "nosuch", "--out", str(out))  # fmt: skip
    assert proc.returncode == 2 and "no column ['nosuch']" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    ok = run_split(gold, SplitSettings(rule="sts"), out, items)  # the default source: used
    assert sum(ok["splits"].values()) == 24 and ok["warnings"] == []


def test_a_split_with_an_empty_evaluation_set_says_so(sts_tables, tmp_path):
    """Case 12: a one-item gold table gave ``{'train': 1}`` without a word."""
    gold, items = sts_tables
    one = tmp_path / "one.parquet"
    pd.read_parquet(gold).head(1).to_parquet(one)
    proc = cli("split", str(one), "--rule", "sts", "--items", str(items), "--out",
               str(tmp_path / "out"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "benchforge: warning: dev and test are empty: 1 item(s) are too few" in proc.stderr
    report = json.loads((tmp_path / "out" / "artifacts.json").read_text(encoding="utf-8"))
    assert report["warnings"] and "**Warning:** dev and test are empty" in (
        tmp_path / "out" / "artifacts.md").read_text(encoding="utf-8")  # fmt: skip


def test_agreement_thresholds_out_of_range_are_refused():
    """Case 12: ``pearson_min: -2`` and ``--pearson-min nan`` turned screening off
    silently; null (or ``off``) still does, on purpose. KLUE 3.2.1's 0.80 and 0.20 hold."""
    import math

    from pipelines.agreement.rules import AgreementError, AgreementSettings

    for bad in ({"pearson_min": -2.0}, {"pearson_min": math.nan}, {"alpha_min": 1.01},
                {"sd_max": math.nan}, {"variance_max": -0.5}, {"binary_threshold": math.inf},
                {"min_shared_items": 0}):  # fmt: skip
        with pytest.raises(AgreementError, match=f"{next(iter(bad))} must"):
            AgreementSettings(rule="mean", **bad)
    for fine in ({"pearson_min": -1.0}, {"pearson_min": 1.0}, {"pearson_min": None},
                 {"alpha_min": None, "sd_max": None, "variance_max": 0.0}):  # fmt: skip
        AgreementSettings(rule="mean", **fine)
    paper = AgreementSettings(rule="mean")
    assert (paper.pearson_min, paper.alpha_min, paper.sd_max) == (0.80, 0.20, 2.0)


def test_agree_cli_takes_off_and_refuses_nan(ratings, tmp_path):
    bad = cli("agree", str(ratings), "--rule", "mean", "--pearson-min", "nan", "--out",
              str(tmp_path / "o"))  # fmt: skip
    assert bad.returncode == 2 and "pearson_min must be in [-1, 1]" in bad.stderr
    assert not (tmp_path / "o").exists()
    off = cli("agree", str(ratings), "--rule", "mean", "--pearson-min", "off", "--alpha-min",
              "off", "--json", "--out", str(tmp_path / "o"))  # fmt: skip
    assert off.returncode == 0, off.stderr
    settings = json.loads(off.stdout)["settings"]
    assert settings["pearson_min"] is None and settings["alpha_min"] is None


def test_an_annotation_without_a_value_is_a_recorded_drop_not_a_silent_one():
    """Case 12: a float NaN value vanished from the counts without a record."""
    from pipelines.agreement.rules import AgreementSettings, agree

    frame = pd.DataFrame({"item_id": ["i1", "i1", "i1", "i2", "i2", "i2"],
                          "annotator_id": ["a", "b", "c", "a", "b", "c"],
                          "value": ["3", float("nan"), "4", "1", "2", ""]})  # fmt: skip
    result = agree(frame, AgreementSettings(rule="mean", pearson_min=None, alpha_min=None))
    blanks = result["dropped"][result["dropped"]["kind"] == "rating"]
    assert blanks["id"].tolist() == ["i1/b", "i2/c"]
    assert blanks["reason"].unique().tolist() == ["empty_value"]
    assert blanks["detail"].iloc[0].startswith("row 2:")
    figures = result["figures"]
    assert figures["ratings"] == 4 and figures["dropped_ratings"] == {"empty_value": 2}
    assert any("2 annotation(s) have no value" in w for w in figures["warnings"])
    assert result["gold"]["n_annotations"].tolist() == [2, 2]


def test_one_annotator_under_the_mean_rule_is_warned():
    """Case 12: ``--rule mean`` with one annotator gave gold labels with no word that no
    agreement was measured."""
    from pipelines.agreement.rules import AgreementSettings, agree

    frame = pd.DataFrame({"item_id": ["i1", "i2", "i3"], "annotator_id": ["a"] * 3,
                          "value": ["1", "2", "5"]})  # fmt: skip
    figures = agree(frame, AgreementSettings(rule="mean"))["figures"]
    assert figures["warnings"] == [
        "every item has a single rating (1 annotator(s) in all): no agreement can be "
        "measured, no annotator screened and no disagreement dropped; each gold label is "
        "one person's"
    ]
    frame.loc[3] = ["i1", "b", "2"]
    figures = agree(frame, AgreementSettings(rule="mean"))["figures"]
    assert figures["warnings"] == ["2 of 3 items have a single rating (no agreement on them)"]


def test_ratings_too_large_to_average_are_an_error_not_an_infinite_label():
    """Hypothesis found it: two finite ratings of 1.7e308 averaged to inf."""
    from pipelines.agreement.rules import AgreementError, AgreementSettings, agree

    frame = pd.DataFrame({"item_id": ["i1", "i1"], "annotator_id": ["a", "b"],
                          "value": ["1.7e308", "1.7e308"]})  # fmt: skip
    with pytest.raises(AgreementError, match="item 'i1': the mean or variance of its ratings"):
        agree(frame, AgreementSettings(rule="mean"))


def test_kobbq_survey_thresholds_out_of_range_are_refused():
    """Case 12: ``kobbq.rules.target_ratio: -2`` dropped every question (KoBBQ 3.2.5's
    2.0 and 0.5 are the defaults)."""
    import math

    from pipelines.families.kobbq.survey import SurveySettings

    for bad, message in (({"target_ratio": -2.0}, "target_ratio must be a number > 0"),
                         ({"non_target_ratio": 3.0}, "non_target_ratio must be >= 0 and below"),
                         ({"type2_share": 1.5}, "type2_share is a share"),
                         ({"no_stereo_max": math.nan}, "no_stereo_max is a share")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            SurveySettings(**bad)
    paper = SurveySettings()
    assert (paper.target_ratio, paper.non_target_ratio, paper.type2_share) == (2.0, 0.5, 2 / 3)


@pytest.mark.parametrize("content", [
    '{"id": "1", "text": "첫 문장입니다."}\n{"id": "1", "text": "둘째 문장입니다."}\n',
    '{"id": "1", "text": "첫 문장입니다."}\n{"id": \n',
    '{"id": "1", "text": "첫 문장입니다."}\n{"id": "2", "body": "본문"}\n',
])  # fmt: skip
def test_ingest_finds_bad_records_before_any_server(tmp_path, content):
    """Case 13: malformed JSON and a repeated id were found after the Prefect server and
    Dask had started (21 s), leaving the lock with a dead pid."""
    path = tmp_path / "c.jsonl"
    path.write_text(content, encoding="utf-8")
    spec = corpus(path=str(path), text_field="text", id_field="id")
    with pytest.raises(InputError, match=rf"{path}:2: "):
        check_corpus_file(spec, path)
    recipe = {"name": "bad", "corpora": [{**spec.model_dump(exclude_none=True)}]}
    recipe_path = tmp_path / "r.yaml"
    recipe_path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    proc = cli("ingest", str(recipe_path), "--out", str(tmp_path / "out"),
               env={"PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": ""})  # fmt: skip
    assert proc.returncode == 2 and f"{path}:2: " in proc.stderr, proc.stderr
    assert "Starting temporary server" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("recipe", ["kobbq-demo", "jsts-demo", "kobest-copa-demo"])
def test_every_kind_with_rounds_checks_label_studio_before_its_first_step(tmp_path, recipe):
    """Case 10: these kinds keep their rounds in their own recipe sections; they ran
    their first step, then retried a dead server for up to 305 s and ended in a
    traceback."""
    from pipelines.core.recipe import load_recipe
    from pipelines.rebuild.kinds import task_kind

    loaded = load_recipe(ROOT / "recipes" / f"{recipe}.yaml")
    assert task_kind(loaded.task).uses_label_studio(loaded)
    with socket.socket() as sock:  # a port nothing answers on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    proc = cli("rebuild", f"recipes/{recipe}.yaml", "--out", str(tmp_path / "out"),
               env={"LABEL_STUDIO_URL": dead, "LABEL_STUDIO_API_KEY": "x",
                    "PREFECT_HOME": str(tmp_path / "prefect")})  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().endswith(f"LABEL_STUDIO_URL {dead} does not answer")
    assert not (tmp_path / "out").exists()  # no step ran


def _broken_label_studio(base: Path) -> Path:
    """A Label Studio install that looks complete (its stamp, its programs) but whose
    server exits at once, as a broken environment would."""
    from pipelines.annotation import ls_server

    venv = base / "ls-venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("label-studio", "python"):
        exe = venv / "bin" / name
        exe.write_text("#!/bin/sh\necho 'broken on purpose' >&2\nexit 1\n")
        exe.chmod(0o755)
    (venv / ".benchforge-stamp").write_text(
        f"{ls_server.LS_VERSION} {ls_server._constraints_digest()}"
    )
    template = ls_server.database_template(venv)
    template.parent.mkdir(parents=True)
    (template.parent / "failed").write_text("no template for this test\n")
    return venv


def test_a_label_studio_started_in_the_background_that_fails_stops_the_run(tmp_path):
    """Issue 38: the rebuild starts the local Label Studio while Prefect starts and the
    first steps run; when that start fails, the run stops at the next step's end with
    the server's error (exit 2, the command's last line) instead of going on or
    hanging."""
    venv = _broken_label_studio(tmp_path)
    home = tmp_path / "home"
    proc = cli("rebuild", "recipes/sts-demo.yaml", "--out", str(tmp_path / "out"),
               env={"BENCHFORGE_HOME": str(home), "BENCHFORGE_CONFIG": str(home / "config"),
                    "BENCHFORGE_LS_VENV": str(venv), "LABEL_STUDIO_URL": "",
                    "PREFECT_HOME": str(tmp_path / "prefect")})  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]  # Prefect logs the flow's failure above it
    assert last.startswith("benchforge: error: Label Studio exited with code 1 while starting")
    record = json.loads((tmp_path / "out" / "rebuild.json").read_text(encoding="utf-8"))
    assert list(record["steps"]) == ["pairs"]  # stopped after the first step, before a push


def test_background_start_errors_reach_whoever_waits(tmp_path, monkeypatch):
    """``connection`` (what every Label Studio step calls) raises the background start's
    error; ``start_error`` tells the orchestrator between steps."""
    from pipelines.annotation import ls_server

    venv = _broken_label_studio(tmp_path)
    monkeypatch.setenv("BENCHFORGE_LS_VENV", str(venv))
    monkeypatch.setenv("BENCHFORGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BENCHFORGE_CONFIG", str(tmp_path / "config"))
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    reached = []
    try:
        ls_server.start_in_background(None, then=reached.append)
        with pytest.raises(ls_server.LabelStudioError, match="exited with code 1"):
            ls_server.connection()
        assert isinstance(ls_server.start_error(), ls_server.LabelStudioError)
        assert reached == []  # `then` runs only after a start that worked
    finally:
        ls_server.forget_start()
    assert ls_server.start_error() is None
