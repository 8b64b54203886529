"""Topic items without a server: the simulated annotators' keyword topic, headline
items, and the YNAT export layout."""

from __future__ import annotations

import pandas as pd

from pipelines.families.klue.ynat import (
    DEFAULT_TOPIC,
    keyword_topic,
    klue_ynat_records,
    title_items,
)


def test_keyword_topic():
    assert keyword_topic("강지환 긴급체포…경찰 “성폭행 혐의, 구속영장도 검토”") == "사회"
    assert keyword_topic("홍진영, 걸그룹 출신 꺾고 최종 우승…축구 선수도 응원") == "스포츠"
    assert keyword_topic("유인나 “결혼은 3년 후쯤 했으면…노력해보겠다”") == DEFAULT_TOPIC


def test_title_items_and_ynat_records():
    sentences = pd.DataFrame(
        {
            "sent_id": ["a", "b", "c"],
            "text": [" 경찰, 배우 A씨 폭행 혐의 조사 ", "새 영화 개봉", "대통령 선거 유세"],
            "corpus": ["news"] * 3,
            "date": [None, "2019-03-01", None],
            "license": ["CC-BY-SA-4.0"] * 3,
        }
    )
    items = title_items(sentences, None, "corpus", 0, "topic-keywords", simulated=True)
    assert items["item_id"].is_unique and items["item_id"].str.startswith("t-").all()
    truth = dict(zip(items["title"], items["sim_topic1"], strict=True))
    assert truth == {"경찰, 배우 A씨 폭행 혐의 조사": "사회", "새 영화 개봉": DEFAULT_TOPIC,
                     "대통령 선거 유세": "정치"}  # fmt: skip
    plain = title_items(sentences, 2, "corpus", 0, "topic-keywords", simulated=False)
    assert len(plain) == 2 and "sim_topic1" not in plain.columns

    item = items.loc[items["title"] == "새 영화 개봉", "item_id"].iloc[0]
    stamp = pd.Timestamp("2026-01-01", tz="UTC")
    rows = []
    for k, (first, second) in enumerate([("생활문화", "사회"), ("생활문화", None), ("세계", None)]):
        for field, value in (("topic1", first), ("topic2", second)):
            if value is not None:
                rows.append({"item_id": item, "annotation_id": k, "annotator_id": f"ls-user-{k}",
                             "field": field, "value": value, "cancelled": False,
                             "created_at": stamp + pd.Timedelta(seconds=k)})  # fmt: skip
    gold = pd.DataFrame({"item_id": [item], "label": ["생활문화"]})
    splits = pd.DataFrame({"item_id": [item], "split": ["dev"]})
    records = klue_ynat_records(gold, items, splits, pd.DataFrame(rows), "y")
    (row,) = records["dev"]
    assert row["guid"] == "y_dev_00000" and row["label"] == "생활문화"
    assert row["date"] == "2019-03-01" and row["url"] is None
    assert row["annotations"] == {
        "annotators": ["ls-user-0", "ls-user-1", "ls-user-2"],
        "annotations": {"first-scope": ["생활문화", "생활문화", "세계"],
                        "second-scope": ["사회", "해당없음", "해당없음"],
                        "third-scope": ["해당없음", "해당없음", "해당없음"]},
    }  # fmt: skip
