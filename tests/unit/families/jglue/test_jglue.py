"""JSTS and JNLI construction rules (issue 21, JGLUE 3.2) on the shipped JGLUE v1.3
release files: reading them (file and line of a bad record), captions per image, the
pairs, the latent truth of simulated people, the STS variance rule, JNLI's both-direction
gold, the edit-distance rule, the validation, the reverse direction. The two demo
recipes run end to end through Label Studio in tests/e2e/test_rebuild_families.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.families.jglue import construct, release
from pipelines.families.jglue.construct import JglueRules

ROOT = Path(__file__).resolve().parents[4]
JGLUE = ROOT / "data" / "demo" / "jglue"
JSTS = JGLUE / "jsts-v1.3_valid-v1.3.json"
JNLI = JGLUE / "jnli-v1.3_valid-v1.3.json"


@pytest.fixture(scope="module")
def releases() -> pd.DataFrame:
    return release.read_releases([JNLI, JSTS])


@pytest.fixture(scope="module")
def captions(releases) -> pd.DataFrame:
    return release.captions_of(releases)[0]


def test_release_files_read_with_their_kinds(releases):
    sts = releases[releases["task"] == "jsts"]
    assert len(sts) == 1457 and sts["kind"].value_counts().to_dict() == {
        "A": 1050, "B": 300, "C": 107
    }  # fmt: skip
    nli = releases[releases["task"] == "jnli"]
    assert len(nli) == 2434 and (nli.loc[nli["kind"] == "C", "label"] == "contradiction").all()
    first = release.parse_pair_id("100312_421853-104611-31624")
    assert first == {"image1": "100312", "image2": "421853", "caption1": "104611",
                     "caption2": "31624", "kind": "B"}  # fmt: skip
    assert release.parse_pair_id("105282-g3452-109303")["kind"] == "C"


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"sentence_pair_id": "0", "yjcaptions_id": "1-2-3"', "malformed JSON"),
        ('{"sentence_pair_id": "0", "sentence1": "a", "sentence2": "b", "label": 1}',
         "no .'yjcaptions_id'."),
        ('{"sentence_pair_id": "0", "yjcaptions_id": "1-2", "sentence1": "犬", '
         '"sentence2": "猫", "label": 1}', "is not <image>"),
        ('{"sentence_pair_id": "0", "yjcaptions_id": "1-2-3", "sentence1": "犬", '
         '"sentence2": "猫", "label": 7}', "neither 0-5"),
        ('{"sentence_pair_id": "0", "yjcaptions_id": "1-2-3", "sentence1": "", '
         '"sentence2": "猫", "label": "neutral"}', "sentence1 is empty"),
    ],
)  # fmt: skip
def test_a_bad_release_line_names_the_file_and_line(tmp_path, line, problem):
    good = JSTS.read_text(encoding="utf-8").splitlines()[:3]
    path = tmp_path / "jsts.json"
    path.write_text("\n".join([*good, line]) + "\n", encoding="utf-8")
    with pytest.raises(release.ReleaseError, match=f"jsts.json:4: .*{problem}"):
        release.read_release(path)


def test_captions_per_image_with_the_variants_of_two_files(releases, captions):
    caps, variants = release.captions_of(releases)
    assert not caps.duplicated(["image_id", "caption_id"]).any()
    assert caps["written"].sum() > 300  # JNLI's written contradictions (g<n>)
    # JNLI v1.3 writes some captions with a closing 。 that JSTS v1.3 leaves out
    same = [
        v.rstrip("。") == t.rstrip("。")
        for t, v in zip(variants["text"], variants["variant"], strict=True)
    ]
    assert len(variants) and all(same)  # fmt: skip


def test_cli_captions_drop_the_wrong_language_and_exit_2_on_a_bad_line(tmp_path):
    lines = JSTS.read_text(encoding="utf-8").splitlines()[:5]
    korean = json.loads(lines[0]) | {"yjcaptions_id": "9-1-2", "sentence1": "개가 공원에서 달린다."}
    good = tmp_path / "good.json"
    good.write_text("\n".join([*lines, json.dumps(korean, ensure_ascii=False)]) + "\n",
                    encoding="utf-8")  # fmt: skip
    cmd = [sys.executable, "-m", "flows.cli", "jglue", "captions"]
    ok = subprocess.run([*cmd, str(good), "--out", str(tmp_path / "out")], cwd=ROOT,
                        capture_output=True, text=True)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    dropped = pd.read_parquet(tmp_path / "out" / "dropped.parquet")
    assert dropped["text"].tolist() == ["개가 공원에서 달린다."]
    assert dropped["reason"].tolist() == ["not_japanese"]
    assert "Japanese script share 0.00" in dropped["detail"].iloc[0]
    info = json.loads((tmp_path / "out" / "captions.json").read_text(encoding="utf-8"))
    assert info["wrong_language"] == 1 and info["kept"] == info["captions"] - 1
    # issue 32: a rerun with another threshold rewrites the files it reports on ...
    again = subprocess.run([*cmd, str(good), "--out", str(tmp_path / "out"), "--min-share",
                            "0"], cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert again.returncode == 0, again.stderr
    info = json.loads((tmp_path / "out" / "captions.json").read_text(encoding="utf-8"))
    assert info["wrong_language"] == 0 and info["kept"] == info["captions"]
    assert f"{info['kept']:,} of {info['captions']:,} captions" in again.stdout
    # ... and a share out of [0, 1] (5 kept nothing, exit 0) is refused
    over = subprocess.run([*cmd, str(good), "--out", str(tmp_path / "out"), "--min-share",
                           "5"], cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert over.returncode == 2 and "--min-share is a share of letters, in [0, 1]" in over.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("\n".join([*lines, "{not json"]) + "\n", encoding="utf-8")
    failed = subprocess.run([*cmd, str(bad), "--out", str(tmp_path / "out2")], cwd=ROOT,
                            capture_output=True, text=True)  # fmt: skip
    assert failed.returncode == 2 and "bad.json:6: malformed JSON" in failed.stderr
    assert not (tmp_path / "out2").exists()


def test_one_image_and_two_image_pairs(captions):
    a = construct.same_image_pairs(captions, 0, 0)
    assert (a["image1"] == a["image2"]).all() and (a["kind"] == "A").all()
    assert not a["caption1"].str.startswith("g").any()  # written sentences are no caption
    sample = construct.same_image_pairs(captions, 40, 1)
    assert len(sample) == 40 and set(sample["pair_id"]) <= set(a["pair_id"])
    for method in ("random", "gsm"):
        b = construct.other_image_pairs(captions.head(400), 30, 0, method)
        assert len(b) == 30 and (b["image1"] != b["image2"]).all()
        used = pd.concat([b["image1"] + b["caption1"], b["image2"] + b["caption2"]])
        assert not used.duplicated().any()  # no caption twice
    gsm = construct.other_image_pairs(captions.head(400), 30, 0, "gsm")
    rnd = construct.other_image_pairs(captions.head(400), 30, 0, "random")
    assert construct.rouge(gsm).mean() > construct.rouge(rnd).mean()  # GSM matches words


def test_latent_similarity_is_the_release_label_else_the_fitted_line(releases, captions):
    from pipelines.families.jglue.steps import _reference

    known = release.labels_by_texts(releases, "jsts", False)
    ref = _reference(releases)
    pairs = construct.same_image_pairs(captions, 0, 0).rename(columns={"pair_id": "item_id"})
    truth, source = construct.latent_similarity(pairs, known, ref, 0)
    source = np.array(source)
    assert {"release", "model"} <= set(source)
    texts = zip(pairs["sentence1"], pairs["sentence2"], source, strict=True)
    in_release = [known[(a, b)] for a, b, s in texts if s == "release"]
    assert np.allclose(truth[source == "release"], in_release)
    assert truth.min() >= 0 and truth.max() <= 5
    a = ref[ref["kind"] == "A"]
    slope = np.polyfit(a["rouge"], a["label"], 1)[0]
    assert slope > 0  # more shared morphemes, more similar: what the model assumes


def test_sts_variance_rule():
    from pipelines.agreement.rules import agree
    from pipelines.families.jglue.steps import sts_settings

    rows = []
    ratings = {"keep": [3, 3, 4, 3, 4], "edge": [2, 2, 4, 3, 4], "drop": [0, 5, 2, 3, 1]}
    for item, values in ratings.items():
        rows += [{"item_id": item, "annotator_id": f"a{i}", "field": "similarity",
                  "value": str(v), "cancelled": False} for i, v in enumerate(values)]  # fmt: skip
    result = agree(pd.DataFrame(rows), sts_settings(JglueRules()))
    gold = result["gold"].set_index("item_id")
    # sample variance: keep 0.3 (kept, label = mean 3.4); edge 1.0 (dropped: "1.0 or more")
    assert list(gold.index) == ["keep"] and gold.at["keep", "label"] == 3.4
    reasons = result["dropped"].set_index("id")["reason"].to_dict()
    assert reasons == {"edge": "high_variance", "drop": "high_variance"}


def test_jnli_both_directions_and_the_six_of_ten_gold(captions):
    from pipelines.agreement.rules import agree
    from pipelines.families.jglue.nli import _majority

    pairs = construct.same_image_pairs(captions, 3, 0)
    items = construct.nli_items(pairs)
    assert len(items) == 6 and (items.groupby("pair_id")["direction"].nunique() == 2).all()
    fwd, rev = items.iloc[0], items.iloc[1]
    assert (fwd.sentence1, fwd.sentence2) == (rev.sentence2, rev.sentence1)
    votes = {items.item_id[0]: ["entailment"] * 6 + ["neutral"] * 4,
             items.item_id[1]: ["neutral"] * 5 + ["entailment"] * 5,
             items.item_id[2]: ["contradiction"] * 7 + ["neutral"] * 3}  # fmt: skip
    rows = [{"item_id": i, "annotator_id": f"a{k}", "field": "label", "value": v,
             "cancelled": False} for i, vs in votes.items() for k, v in enumerate(vs)]  # fmt: skip
    rules = JglueRules()
    result = agree(pd.DataFrame(rows), _majority(rules, rules.nli_min_votes))
    gold, dropped = construct.nli_gold(result["gold"], rules)
    assert gold["item_id"].tolist() == [items.item_id[0]]
    assert gold["label"].tolist() == ["entailment"]
    reasons = {d["id"]: d["reason"] for d in [*result["dropped"].to_dict("records"), *dropped]}
    assert reasons == {items.item_id[1]: "no_majority", items.item_id[2]: "contradiction_majority"}


def _writing(items: pd.DataFrame, texts: dict[str, list[str]]) -> pd.DataFrame:
    rows = []
    for n, (item, written) in enumerate(texts.items()):
        rows += [{"item_id": item, "annotation_id": n, "annotator_id": "w1",
                  "field": f"contradiction_{k + 1}", "value": t, "cancelled": False}
                 for k, t in enumerate(written)]  # fmt: skip
    return pd.DataFrame(rows)


def test_edit_distance_rule_on_the_release_contradictions(releases, captions):
    written = release.contradictions_by_caption(releases)
    # every contradiction the release kept is under 0.75 from its caption
    distances = [construct.normalised_distance(c, w) for c, ws in written.items() for w in ws]
    assert len(distances) == 367 and max(distances) < 0.75
    items = construct.writing_items(captions, set(), 6, 0, set(written), written)
    assert len(items) == 6 and all(c in written for c in items["caption"])
    texts = {r.item_id: [getattr(r, f"sim_contradiction_{k}") for k in range(1, 5)]
             for r in items.itertuples()}  # fmt: skip
    first = items.item_id[0]
    texts[first] = [
        written[items.caption[0]][0],
        items.caption[0],
        "",
        written[items.caption[0]][0],
    ]
    texts.pop(items.item_id[1])  # the writer skipped this caption
    pairs, dropped = construct.written_pairs(_writing(items, texts), items, JglueRules())
    reasons = dropped.groupby("item_id")["reason"].apply(list).to_dict()
    assert reasons[first] == ["same_as_caption", "empty", "repeated"]
    assert reasons[items.item_id[1]] == ["skipped"]
    released = {w for ws in written.values() for w in ws}
    fillers = dropped[dropped["reason"] == "edit_distance"]
    assert len(fillers) and not set(fillers["written"]) & released  # only the fillers
    assert (pairs["edit_distance"] < 0.75).all() and pairs["written_id"].is_unique


def test_validation_keeps_six_of_ten_contradictions_and_adds_the_reverse():
    items = pd.DataFrame({"item_id": ["1-2-g0", "1-2-g1"], "image_id": "1", "caption_id": "2",
                          "written_id": ["g0", "g1"], "sentence1": "犬が走っている。",
                          "sentence2": ["犬が寝ている。", "犬が走り回っている。"]})  # fmt: skip
    gold = pd.DataFrame({"item_id": ["1-2-g0", "1-2-g1"], "label": ["contradiction", "neutral"],
                         "votes": [6, 7], "n_annotations": [10, 10]})  # fmt: skip
    kept, dropped = construct.validated(gold, items)
    assert kept["item_id"].tolist() == ["1-2-g0"] and dropped[0]["reason"] == "not_contradiction"
    both = construct.with_reverse(kept)
    assert both["pair_id"].tolist() == ["1-2-g0", "1-g0-2"]
    assert both["sentence1"].tolist() == ["犬が走っている。", "犬が寝ている。"]
    assert (both["label"] == "contradiction").all()


def test_simulated_single_choice_answers_as_one_of_several_latent_labels():
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.simulate import Annotator
    from pipelines.annotation.values.choice import simulated_choice as _answer

    config = parse_label_config(ROOT / "annotation_configs" / "jnli_judgement.xml")
    control = config.answer_control("label")
    who = Annotator(1, "a@x", 0.0, 0.5, 1.0, careless=False)
    rng = np.random.default_rng(0)
    one = {_answer(control, {"sim_label": ["neutral"], "item_id": "x"}, who, rng, 0)
           for _ in range(30)}  # fmt: skip
    many = {_answer(control, {"sim_label": list(release.NLI_LABELS), "item_id": "x"}, who, rng, 0)
            for _ in range(60)}  # fmt: skip
    assert one == {"neutral"} and many == set(release.NLI_LABELS)
