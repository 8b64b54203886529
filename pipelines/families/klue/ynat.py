"""KLUE-YNAT (KLUE 3.1): the ``klue-ynat`` task kind, topic classification of news
headlines.

Steps: ``ingest`` -> ``items`` (headlines) -> the Label Studio round (push, simulate,
wait, pull) -> ``agree`` (the ``majority`` rule on the first-ranked topic) -> ``split``
(the ``tc`` rule) -> ``export``.

``title_items`` turns ingested sentences (one headline each) into the items of the
``topic.xml`` interface: ``item_id``, ``title``, ``source``, ``date`` (None when the
corpus is undated), ``license``, drawn as a seeded sample evenly over a column.

Simulated annotators (demos and tests only, ``simulate_truth: topic-keywords``): no
shipped corpus has topic labels, so each headline gets a latent first topic
``sim_topic1`` from a keyword lexicon over its MeCab morphemes (``TOPIC_KEYWORDS``; the
topic with the most hits, ties to the order below, and ``생활문화`` when none hits, which
suits the entertainment headlines shipped here). It is benchforge's assumption, not a
measurement, and never reaches the released data.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from pipelines.core.stage import split_by_reason, value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.evaluation.spec import classification
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.data_card import annotation_round, inline
from pipelines.export.facts import CardFacts
from pipelines.export.records import SPLITS, split_rows
from pipelines.families.klue.hub import hub
from pipelines.families.klue.sampling import sample_evenly
from pipelines.lang import language
from pipelines.rebuild.kinds import ExportInputs, SharedSteps, TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, one_round

TOPICS = ("IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치")  # YNAT's seven
DEFAULT_TOPIC = "생활문화"
# KLUE 3.1.1: "we also present key terms of each topic to annotators. The terms are
# subsections of corresponding topics in NAVER news platform as shown in Table 3". The
# paper prints them in English (Table 3); annotators read them in Korean, as NAVER News
# names its subsections. topic.xml shows them (a legend and each topic's hint);
# tests/unit/families/klue/test_ynat_key_terms.py checks the two agree.
KEY_TERMS: dict[str, tuple[tuple[str, str], ...]] = {
    "정치": (("Blue House", "청와대"), ("Ministry", "행정"), ("Parliament", "국회"),
             ("North Korea", "북한"), ("Political parties", "정당"), ("Defense", "국방"),
             ("Diplomacy", "외교")),
    "경제": (("Stock", "증권"), ("Finance", "금융"), ("Industry Enterprise", "산업/재계"),
             ("Real estate", "부동산")),
    "사회": (("Education", "교육"), ("Labor", "노동"), ("Journalism", "언론"),
             ("Environment", "환경"), ("Human rights", "인권/복지"),
             ("Food and drugs", "식품/의료")),
    "생활문화": (("Health", "건강"), ("Transportation", "교통"), ("Leisure", "레저"),
                 ("Hot places", "맛집/핫플레이스"), ("Fashion", "패션"), ("Beauty", "뷰티"),
                 ("Performance", "공연"), ("Exhibition", "전시"), ("Books", "책"),
                 ("Weather", "날씨")),
    "세계": (("Asia/Australia", "아시아/호주"), ("America", "미국/중남미"), ("Europe", "유럽"),
             ("Middle East/Africa", "중동/아프리카")),
    "IT과학": (("Mobile", "모바일"), ("IT", "IT 일반"), ("Internet Social media", "인터넷/SNS"),
               ("Communication", "통신/뉴미디어"), ("Computer", "컴퓨터"), ("Game", "게임"),
               ("Scientific journalism", "과학 일반")),
    "스포츠": (("Baseball", "야구"), ("Basketball", "농구"), ("Volleyball", "배구"),
               ("E-sports", "e스포츠")),
}  # fmt: skip
_KEYWORDS = {
    "정치": "대통령 국회 의원 정당 선거 장관 청와대 정부 여당 야당 총리 북한 외교",
    "사회": "경찰 검찰 혐의 재판 사고 조사 고소 폭행 사건 구속 법원 기소 피해 논란 마약",
    "스포츠": "축구 야구 농구 배구 선수 경기 올림픽 감독 리그 골 우승 월드컵",
    "경제": "경제 기업 주가 매출 시장 투자 은행 부동산 수출 금리 주식 계약",
    "세계": "미국 중국 일본 영국 해외 외신 세계 할리우드 글로벌 유럽",
    "IT과학": "스마트폰 과학 게임 인터넷 유튜브 앱 AI 로봇 기술 출시",
}
TOPIC_KEYWORDS = {topic: frozenset(words.split(" ")) for topic, words in _KEYWORDS.items()}


def keyword_topic(title: str) -> str:
    """The simulated annotators' latent first topic (see the module docstring)."""
    words = set(language("ko").morphemes(title))  # a Korean lexicon
    hits = {topic: len(words & keys) for topic, keys in TOPIC_KEYWORDS.items()}
    best = max(hits.values())
    if best == 0:
        return DEFAULT_TOPIC
    return next(topic for topic, n in hits.items() if n == best)


def title_item_id(sent_id: str) -> str:
    """The item id of the headline sentence ``sent_id`` (stable across reruns)."""
    return "t-" + hashlib.sha256(str(sent_id).encode()).hexdigest()[:16]


def title_items(
    sentences: pd.DataFrame,
    sample: int | None,
    stratify: str | None,
    seed: int,
    simulate_truth: str | None,
    simulated: bool,
) -> pd.DataFrame:
    """The topic round's items from ingested headlines (``sent_id``, ``text``,
    ``corpus``, ``date``, ``license``)."""
    chosen = sample_evenly(sentences, sample, stratify, seed)
    items = pd.DataFrame(
        {
            "item_id": [title_item_id(s) for s in chosen["sent_id"].astype(str)],
            "title": chosen["text"].astype(str).str.strip(),
            "source": chosen["corpus"].astype(str),
            "date": chosen["date"].astype("string"),
            "license": chosen["license"].astype(str),
        }
    )
    if simulated and simulate_truth == "topic-keywords":
        items["sim_topic1"] = [keyword_topic(t) for t in items["title"]]
    return items.sort_values("item_id", kind="stable").reset_index(drop=True)


@STEPS.register("klue-ynat:items")
@declares(
    reads=out_files("ingest/sentences.parquet"),
    writes=out_files("items/items.parquet", "items/rejects.parquet", "items/items.json"),
    settings=lambda ctx, arg: [ctx.recipe.items.model_dump(), ctx.simulated],
)
def items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The seeded sample of headlines sent to annotators; the others kept in
    items/rejects.parquet (``not_sampled``)."""
    sentences = ctx.out / "ingest" / "sentences.parquet"
    spec = ctx.recipe.items

    def compute() -> tuple[dict, dict]:
        frame = pd.read_parquet(sentences)
        items = title_items(frame, spec.sample, spec.stratify, spec.seed, spec.simulate_truth,
                            ctx.simulated)  # fmt: skip
        chosen = frame["sent_id"].map(title_item_id).isin(set(items["item_id"]))
        rejects = split_by_reason(
            "items", "sentence", frame, chosen.map({True: None, False: "not_sampled"})
        ).rejects()
        info = {
            "items": len(items),
            "sentences": len(frame),
            "dropped": value_counts(rejects["reason"]),
            "spec": spec.model_dump(exclude={"premises"}),
            "per_source": value_counts(items["source"]),
            "dated": int(items["date"].notna().sum()),
            "simulated_truth": (
                value_counts(items["sim_topic1"]) if "sim_topic1" in items.columns else None
            ),
        }
        return {"items.parquet": items, "rejects.parquet": rejects}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} headlines of {info['sentences']:,}",
        Rows("sentence", info["sentences"], info["items"], info["dropped"]),
        after=f": {info['per_source']}",
    )


def _topic_scopes(annotations: pd.DataFrame) -> dict[str, tuple[list[str], dict[str, list]]]:
    """item_id -> (annotators, {scope: topics}) of the completed annotations, in order."""
    rows = annotations
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    rows = rows[rows["field"].isin(["topic1", "topic2", "topic3"])]
    out: dict[str, tuple[list[str], dict[str, list]]] = {}
    order = rows.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")
    for item, group in order.groupby("item_id", sort=False):
        people = list(
            dict.fromkeys(zip(group["annotation_id"], group["annotator_id"], strict=True))
        )
        scopes = {}
        for field, scope in (("topic1", "first-scope"), ("topic2", "second-scope"),
                             ("topic3", "third-scope")):  # fmt: skip
            given = dict(zip(group.loc[group["field"] == field, "annotation_id"],
                             group.loc[group["field"] == field, "value"], strict=True))  # fmt: skip
            scopes[scope] = [str(given.get(a, "해당없음")) for a, _ in people]
        out[str(item)] = ([str(who) for _, who in people], scopes)
    return out


def klue_ynat_records(
    gold: pd.DataFrame,
    items: pd.DataFrame,
    splits: pd.DataFrame,
    annotations: pd.DataFrame,
    prefix: str,
) -> dict[str, list[dict]]:
    """The records of every split in the KLUE-TC (YNAT) v1.1 layout (one object per
    headline)::

        {"guid": "<prefix>_<split>_00000", "title": ..., "label": "생활문화",
         "annotations": {"annotators": ["ls-user-3", ...],
                         "annotations": {"first-scope": [...], "second-scope": [...],
                                         "third-scope": [...]}},
         "url": null, "date": "2016.06.30" or null}

    ``label`` is the gold topic (the majority of the first-ranked topics); each scope
    lists the annotators' first, second and third topics (``해당없음`` where one gave
    none), as the release does. Shipped headlines have no URL, and the demo's no date."""
    scopes = _topic_scopes(annotations)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in split_rows(gold, items, splits):
        annotators, given = scopes.get(str(row.item_id), ([], {}))
        date = getattr(row, "date", None)
        out[split].append(
            {
                "guid": f"{prefix}_{split}_{n:05d}",
                "title": row.title,
                "label": str(row.label),
                "annotations": {"annotators": annotators, "annotations": given},
                "url": None,
                "date": None if date is None or pd.isna(date) else str(date),
            }
        )
    return out


def records(inputs: ExportInputs) -> dict[str, list[dict]]:
    return klue_ynat_records(inputs.gold, inputs.items, inputs.splits, inputs.annotations,
                             inputs.prefix)  # fmt: skip


def card(facts: CardFacts) -> CardSection:
    """The headlines sampled, and the simulated annotators' assumed topics
    (``ynat.card.md.j2``)."""
    t = facts["titles"]
    return from_template(Path(__file__).with_name("ynat.card.md.j2"), {
        "t": t, "truth": t.get("simulated_truth"), "inline": inline,
        "per_source": dict(sorted(t["per_source"].items())),
        "annotation_round": annotation_round, "annotation": facts["annotation"],
    })  # fmt: skip


register_task(TaskKind(
    name="klue-ynat",
    title="YNAT-style topic classification of news headlines (KLUE 3.1)",
    layout="klue-ynat",
    hub=hub("text-classification"),
    steps=["ingest", "items", LabelStudioRound(), "agree", "split", "export"],
    rounds=one_round,
    card=card,
    shared=SharedSteps(
        records=records,
        export_inputs={"titles": "items/items.json"},
        card_json={"titles": "titles"},
        paper_agreement={"level": "nominal", "alpha": 0.713, "source": "KLUE 3.1.1 (YNAT)"},
    ),
    # KLUE 3.1.2: macro-F1 over the seven topics
    evaluation=classification(
        "guid", "label", "title", ["macro_f1"], "KLUE (Park et al. 2021) 3.1.2",
        labels=("IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"),
        prompt="뉴스 제목: {{title}}\n주제:", harness_choices=(
            "IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"),
    ),
))  # fmt: skip
