"""MeCab with mecab-ko-dic is wired so that kss uses it, and sentence splitting works."""

import pandas as pd

from pipelines.ingest.segment import segment_documents
from pipelines.lang.ko import count_cjk, hangul_share, kss_backend, morphemes, split_sentences


def test_kss_runs_on_mecab():
    assert kss_backend() == "mecab"


def test_split_sentences_without_punctuation():
    text = (
        "회사 동료 분들과 다녀왔는데 분위기도 좋고 음식도 맛있었어요 다만, 강남 토끼정이 강남 "
        "쉑쉑버거 골목길로 쭉 올라가야 하는데 다들 쉑쉑버거의 유혹에 넘어갈 뻔 했답니다 "
        "강남역 맛집 토끼정의 외부 모습."
    )
    assert split_sentences([text]) == [
        [
            "회사 동료 분들과 다녀왔는데 분위기도 좋고 음식도 맛있었어요",
            "다만, 강남 토끼정이 강남 쉑쉑버거 골목길로 쭉 올라가야 하는데 다들 쉑쉑버거의 "
            "유혹에 넘어갈 뻔 했답니다",
            "강남역 맛집 토끼정의 외부 모습.",
        ]
    ]
    assert split_sentences(["", "첫 문단입니다.\n둘째 문단입니다."]) == [
        [],
        ["첫 문단입니다.", "둘째 문단입니다."],
    ]


def test_morphemes_and_script_counts():
    assert morphemes("아버지가 방에 들어가신다") == ["아버지", "가", "방", "에", "들어가", "신다"]
    assert hangul_share("abc 가나다") == 0.5
    assert count_cjk("漢字 かな カナ 한글") == 6


def test_segment_keeps_provenance_and_document_unit():
    docs = pd.DataFrame(
        {
            "doc_id": ["n:1", "n:2", "p:1"],
            "corpus": ["n", "n", "p"],
            "text": ["재밌어요. 또 볼래요.", "", "불 좀 꺼줘\n지금"],
            "license": ["CC0-1.0", "CC0-1.0", "CC-BY-SA-4.0"],
            "domain": ["review", "review", "smart-home"],
            "style": ["colloquial"] * 3,
            "date": ["2015-08-25", "2015-08-26", None],
            "unit": ["sentence", "sentence", "document"],
            "edits": [None, None, None],
        }
    )
    sentences, result = segment_documents(docs)
    assert sentences["sent_id"].tolist() == ["n:1:0", "n:1:1", "p:1:0"]
    assert sentences["text"].tolist() == ["재밌어요.", "또 볼래요.", "불 좀 꺼줘 지금"]
    assert sentences["date"].tolist()[:2] == ["2015-08-25", "2015-08-25"]
    assert pd.isna(sentences["date"][2])
    assert sentences["license"].tolist() == ["CC0-1.0", "CC0-1.0", "CC-BY-SA-4.0"]
    assert result.dropped["doc_id"].tolist() == ["n:2"]
    assert result.dropped["reason"].tolist() == ["no_sentences"]


def test_morphemes_from_many_threads_at_once():
    """Prefect runs the pairing tasks in threads; a MeCab tagger shared between them
    crashed the process (segmentation fault), so each thread has its own."""
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    script = textwrap.dedent(
        """
        import threading
        from pipelines.lang import language
        ko = language("ko")
        texts = ["배우들의 연기가 정말 좋았어요. 다시 보고 싶은 영화입니다.",
                 "오늘 날씨가 좋네요 산책하러 갈까요"] * 50
        barrier = threading.Barrier(8)
        def work():
            barrier.wait()
            for _ in range(40):
                for t in texts:
                    assert ko.morphemes(t)
        threads = [threading.Thread(target=work) for _ in range(8)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.returncode


LEAN = """
import json, sys
from pipelines.lang.ko import split_sentences
texts = ["회사 동료 분들과 다녀왔는데 분위기도 좋고 음식도 맛있었어요 다만, 강남 토끼정이 강남 "
         "쉑쉑버거 골목길로 쭉 올라가야 하는데 다들 쉑쉑버거의 유혹에 넘어갈 뻔 했답니다",
         "오늘 날씨가 좋네요. 내일은 비가 온대요?"]
lean = split_sentences(texts)
loaded = "kss._modules.spacing.correct_spacing" in sys.modules
import kss  # the whole kss, on first use of an attribute
whole = [[s.strip() for s in kss.split_sentences(t, backend="mecab")] for t in texts]
print(json.dumps({"lean": lean, "whole": whole, "loaded": loaded,
                  "spacing": callable(kss.correct_spacing)}))
"""


def test_sentences_split_without_kss_whole_import_as_kss_splits_them():
    """pipelines.lang.ko imports kss's sentence splitter without kss's __init__ (which
    loads every kss tool: 10 s per process); the sentences are kss's own, and the rest
    of kss is still there on first use."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", LEAN], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["lean"] == got["whole"] and len(got["lean"][0]) == 2
    assert got["loaded"] is False  # the spacing tool was not imported to split sentences
    assert got["spacing"] is True
