"""Topic-classification items (KLUE 3.1, YNAT): headlines for the topic round.

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

import pandas as pd

from pipelines.lang.ko import morphemes
from pipelines.tasks.sts import sample_evenly

TOPICS = ("IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치")  # YNAT's seven
DEFAULT_TOPIC = "생활문화"
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
    words = set(morphemes(title))
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
