"""KoBEST (issue 23): every guideline check on real Korean (pass and fail), the negation
helper, the swap and near-duplicate review, the linguist decisions, the artifact review
finding a planted cue and reporting it gone, bad written input, and the release layout
of all five tasks loading with ``datasets``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.families.kobest import simulate as sim
from pipelines.families.kobest.checks import CheckContext, checks_of, run_checks
from pipelines.families.kobest.duplicates import copa_swaps, near_duplicates
from pipelines.families.kobest.negation import negation_edit, suggest
from pipelines.families.kobest.prompts import prompts
from pipelines.families.kobest.review import artifact_review, decide
from pipelines.families.kobest.rules import KobestRules
from pipelines.families.kobest.tasks import KOBEST_TASKS, kobest_task
from pipelines.lang import language

ROOT = Path(__file__).resolve().parents[4]
SEEDS = ROOT / "data" / "demo" / "kobest" / "copa_seeds.jsonl"
CTX = CheckContext(language("ko"), KobestRules())


def failed(task: str, item: dict) -> dict[str, str]:
    checks = checks_of(task, kobest_task(task).checks)
    return {name: detail for name, _, detail in run_checks(item, checks, CTX)}


COPA_OK = {
    "premise": "남자는 밤새 술을 마셨다.",
    "alternative_1": "남자는 다음 날 늦잠을 잤다.",
    "alternative_2": "남자는 다음 날 일찍 일어났다.",
}


@pytest.mark.parametrize(
    "task, item, expected",
    [
        ("copa", COPA_OK, set()),
        ("copa", {**COPA_OK, "alternative_2": "남자는 일찍 일어난다."}, {"copa_past_tense"}),
        ("copa", {**COPA_OK, "premise": "다음 날 술을 마셨다."}, {"copa_subject"}),
        ("copa", {**COPA_OK, "alternative_2": "비가 많이 왔다."}, {"copa_keyword"}),
        (
            "hellaswag",
            {"context": "철수는 아침에 일어났다. 그는 세수를 했다. 그리고 밥을 먹었다."},
            set(),
        ),
        (
            "hellaswag",
            {"context": "철수는 아침에 일어났다. 그는 세수를 했다."},
            {"hellaswag_sentences"},
        ),
        (
            "wic",
            {
                "word": "배",
                "context_1": "배가 고파서 밥을 먹었다.",
                "context_2": "배를 타고 섬에 갔다.",
            },
            set(),
        ),
        (
            "wic",
            {"word": "먹", "context_1": "밥을 먹었다.", "context_2": "사과를 먹었다."},
            {"wic_target", "wic_dictionary", "wic_examples"},  # 2.4: no noun of the dictionary
        ),
        (
            "wic",
            {"word": "눈", "context_1": "눈이 내렸다.", "context_2": "그는 고개를 들었다."},
            {"wic_target", "wic_examples"},  # 2.4: no example sentence of the dictionary
        ),
        ("boolq", {"question": "서울은 한국의 수도인가요?"}, set()),
        ("boolq", {"question": "한국의 수도는 어디인가요?"}, {"boolq_yes_no"}),
        ("boolq", {"question": "독도는 한국 땅이다."}, {"boolq_yes_no"}),
        (
            "sentineg",
            {"original": "이 영화 정말 재밌다", "sentence": "이 영화 정말 재미없다"},
            set(),
        ),
        (
            "sentineg",
            {"original": "배우가 연기를 잘 했다", "sentence": "배우가 연기를 잘 안 했다"},
            set(),
        ),
        (
            "sentineg",
            {"original": "이 영화 재밌다", "sentence": "CGV에서 본 이 영화 재미없다"},
            {"sentineg_brand"},
        ),
        (
            "sentineg",
            {"original": "이 영화 재밌다", "sentence": "이 영화 진짜 재밌다"},
            {"sentineg_negated"},
        ),
    ],
)
def test_each_guideline_check_passes_and_fails_on_real_korean(task, item, expected):
    assert set(failed(task, item)) == expected


def test_check_actions_follow_the_recipe_and_a_check_belongs_to_its_task():
    checks = checks_of("copa", ["copa_keyword"])
    item = {**COPA_OK, "alternative_2": "비가 많이 왔다."}
    assert run_checks(item, checks, CTX)[0][1] == "flag"  # the default: for the reviewer
    strict = CheckContext(CTX.lang, KobestRules(actions={"copa_keyword": "drop"}))
    assert run_checks(item, checks, strict)[0][1] == "drop"
    with pytest.raises(ValueError, match="for wic, not copa"):
        checks_of("copa", ["wic_target"])
    with pytest.raises(ValueError, match="drop or flag"):
        KobestRules(actions={"copa_keyword": "maybe"})


@pytest.mark.parametrize(
    "text, method",
    [
        ("이 영화 정말 재밌다", "antonym"),
        ("그는 밥을 먹지 않았다", "remove"),
        ("그녀가 시험에 합격했다", "add"),
        ("스토리가 너무 뻔해서 졸았다", "add"),
    ],
)
def test_the_negation_helper_drafts_a_negation_the_check_accepts(text, method):
    draft = suggest(text)
    assert draft.method == method and draft.draft != text
    assert negation_edit(text, draft.draft).method is not None


def _copa_items(cue: int = 10, swaps: int = 4) -> pd.DataFrame:
    seeds = sim.read_seeds(SEEDS)
    given = sim.copa_given(seeds, swaps, 0)
    latent = sim.copa_latent(prompts(kobest_task("copa"), given, 0), seeds, cue, 0)
    return latent.assign(
        premise=latent["sim_premise"],
        alternative_1=latent["sim_alternative_1"],
        alternative_2=latent["sim_alternative_2"],
    )


def test_the_swap_detector_finds_every_planted_swap_and_nothing_else():
    items = _copa_items()
    found = copa_swaps(items, KobestRules().swap_min)
    planted = set(items.loc[items["sim_plant"].str.contains("swap"), "item_id"])
    assert len(planted) == 4 and set(found["item_b"]) == planted  # the later copy of each
    assert (found["score"] >= 85).all() and (found["kind"] == "copa_swap").all()
    # a near duplicate: one word changed
    twin = items.iloc[[0]].assign(item_id="twin", premise=items.iloc[0]["premise"] + " ")
    near = near_duplicates(
        pd.concat([items, twin]), ("premise", "alternative_1", "alternative_2"), 90.0
    )
    assert ((near["item_a"] == items.iloc[0]["item_id"]) & (near["item_b"] == "twin")).any()


def test_the_artifact_review_finds_the_planted_cue_and_reports_it_gone_after_revision():
    task = kobest_task("copa")
    items = _copa_items(cue=14, swaps=0)
    items = items[items["sim_plant"].isin(["", "cue"])].reset_index(drop=True)
    rng = pd.Series(range(len(items))).sample(frac=1.0, random_state=0).tolist()
    splits = pd.DataFrame(
        {"item_id": items["item_id"], "split": ["train" if i % 10 < 7 else "dev" for i in rng]}
    )
    report, carriers = artifact_review(items, splits, task, language("ko"), 0.7, 3, 0)
    num = [c for c in report["cues"] if c["morpheme"].endswith("<NUM>")]
    assert num, report["cues"]
    cued = set(items.loc[items["sim_plant"] == "cue", "item_id"])
    assert set(carriers["item_id"]) & cued  # the items that follow it go to revision
    assert report["partial_input"]["majority_baseline"] is not None
    # the revisers' edit: the clean answer
    revised = items.copy()
    for i, r in revised.iterrows():
        for field, text in json.loads(r["sim_clean"]).items():
            revised.at[i, field] = text
    after, _ = artifact_review(revised, splits, task, language("ko"), 0.7, 3, 0)
    assert not [c for c in after["cues"] if c["morpheme"].endswith("<NUM>")]


def _review_table(rows: list[tuple]) -> pd.DataFrame:
    out = []
    for _n, (item, who, field, value) in enumerate(rows):
        out.append(
            {
                "item_id": item,
                "task_id": 1,
                "annotation_id": hash((item, who)) % 10**6,
                "annotator_id": who,
                "field": field,
                "value": value,
                "cancelled": False,
            }
        )
    return pd.DataFrame(out)


def test_linguist_decisions_keep_edits_as_versions_and_drop_rejects_with_reasons():
    task = kobest_task("copa")
    items = pd.DataFrame(
        [
            {**COPA_OK, "item_id": i, "question": "결과", "label": 0, "version": 0}
            for i in ("a", "b", "c", "d")
        ]
    )
    ann = _review_table(
        [
            ("a", "u1", "decision", "accept"),
            ("a", "u2", "decision", "accept"),
            ("b", "u1", "decision", "edit"),
            ("b", "u1", "premise", "남자는 밤새 소주를 마셨다."),
            ("b", "u2", "decision", "edit"),
            ("b", "u2", "premise", "남자는 밤새 소주를 마셨다."),
            ("c", "u1", "decision", "reject"),
            ("c", "u1", "reason", "ambiguous"),
            ("c", "u2", "decision", "reject"),
        ]
    )
    kept, versions, dropped = decide(ann, items, task, 2, "review")
    assert list(kept["item_id"]) == ["a", "b"]
    assert kept.set_index("item_id").loc["b", "premise"] == "남자는 밤새 소주를 마셨다."
    assert versions.iloc[0]["version"] == 1 and versions.iloc[0]["round"] == "review"
    assert {d["item_id"]: d["reason"] for d in dropped} == {"c": "rejected", "d": "not_reviewed"}
    assert "ambiguous" in dropped[0]["detail"]


def test_bad_written_input_is_dropped_with_a_reason_never_a_crash():
    from pipelines.families.kobest.writing import written_items

    task = kobest_task("wic")
    given = pd.DataFrame({"word": ["배", "배", "눈", "말"], "label": [0, 1, 7, 1]})
    p = prompts(task, given, 0)
    ids = list(p["item_id"])
    ann = _review_table(
        [
            (ids[0], "w", "context_1", "배가 고팠다."),
            (ids[0], "w", "context_2", "배를 탔다."),
            (ids[1], "w", "context_1", "배가 아팠다."),  # context_2 missing
            (ids[2], "w", "context_1", "눈이 왔다."),
            (ids[2], "w", "context_2", "눈이 부셨다."),
        ]
    )
    items, dropped = written_items(ann, p, task)
    assert [i["item_id"] for i in items] == [ids[0]]
    reasons = {d["item_id"]: d["reason"] for d in dropped}
    assert reasons == {ids[1]: "missing_field", ids[2]: "bad_label", ids[3]: "not_written"}


def test_malformed_seeds_and_rules_are_clear_errors(tmp_path):
    bad = tmp_path / "seeds.jsonl"
    bad.write_text(
        '{"id": "a", "cause": "x", "effect": "y", "wrong_cause": "z", '
        '"wrong_effect": "w"}\n{"id": "b", "cause": \n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"seeds.jsonl:2: malformed JSON"):
        sim.read_seeds(bad)
    from pipelines.families.kobest.section import KobestSpec

    with pytest.raises(ValueError, match="kobest.rules: unknown settings"):
        KobestSpec(rules={"skew": 0.7})


def test_every_task_exports_kobest_layout_loading_with_datasets(tmp_path):
    import datasets

    from pipelines.export.records import jsonl
    from pipelines.families.kobest.export import records_of

    for name in KOBEST_TASKS.names():
        task = kobest_task(name)
        rows = pd.DataFrame(
            [
                {
                    **{f: f"{f} 텍스트 {i}" for f in task.layout},
                    "label": sorted(task.labels)[i % len(task.labels)],
                }
                for i in range(4)
            ]
        )
        path = tmp_path / f"{name}.jsonl"
        path.write_text(jsonl(records_of(rows, task)), encoding="utf-8")
        ds = datasets.load_dataset(
            "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache")
        )
        assert ds.column_names == [*task.layout, "label"] and ds.num_rows == 4
        assert set(ds["label"]) <= set(task.labels)


def test_toxic_detectors_drop_written_items_over_their_threshold(checkpoint):
    """KoBEST 3.5: the recipe's detectors run on every written field (the shared tiny
    detector of the session)."""
    from types import SimpleNamespace

    import numpy as np

    from pipelines.families.kobest.writing import toxic_drops
    from pipelines.models.classifier import SequenceClassifier
    from pipelines.quality.settings import ClassifierSettings

    path = checkpoint[0]
    texts = ["여자는 집에서 살림이나 해야지", "이 영화 정말 재미없다", "배우들 연기가 안 좋았다"]
    scores = SequenceClassifier(path).predict_proba(texts)[:, 1]
    cut = float(np.sort(scores)[1])  # the two higher-scored sentences reach it
    settings = ClassifierSettings.model_validate(
        {"detectors": {"gender_bias": {"model": str(path), "threshold": cut}}}
    )
    recipe = SimpleNamespace(filters=SimpleNamespace(classifiers=settings), resolve=Path)
    items = [{"item_id": f"i{n}", "sentence": t} for n, t in enumerate(texts)]
    drops = toxic_drops(SimpleNamespace(recipe=recipe), items, kobest_task("sentineg"))
    assert set(drops) == {f"i{n}" for n in range(3) if scores[n] >= cut} and len(drops) == 2
    assert all(d["reason"] == "gender_bias" for d in drops.values())
    assert all(d["detail"].startswith("sentence: gender_bias 0.") for d in drops.values())
