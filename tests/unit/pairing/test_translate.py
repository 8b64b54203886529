"""Translators: a real (tiny, locally trained) Marian checkpoint, an HTTP API on loopback,
the SQLite cache, and the round-trip checks."""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pandas as pd
import pytest
from tiny_translators import EN_KO, KO_EN, build_tiny_multilingual

from pipelines.pairing.rtt import check_round_trip, round_trip
from pipelines.pairing.settings import RttSettings, TranslatorSpec
from pipelines.pairing.translate import (
    CachedTranslator,
    HttpTranslator,
    TransformersTranslator,
    TranslationError,
    make_translator,
)


def test_transformers_checkpoint_translates_in_input_order(marian):
    forward, backward = marian
    ko_en = TransformersTranslator(forward, batch_size=2)  # batches sorted by length
    sources = [s for s, _ in KO_EN][::-1]
    assert ko_en.translate(sources, "ko", "en") == [t for _, t in KO_EN][::-1]
    en_ko = TransformersTranslator(backward, batch_size=3)
    assert en_ko.translate([s for s, _ in EN_KO], "en", "ko") == [t for _, t in EN_KO]
    assert ko_en.device == "cpu" or ko_en.device.startswith("cuda")


def test_not_a_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(TranslationError, match="not a checkpoint directory"):
        TransformersTranslator(tmp_path)


class _Counting:
    """Wraps a translator and records what it was asked to translate."""

    def __init__(self, inner):
        self.inner, self.backend, self.model, self.calls = inner, inner.backend, inner.model, []

    def options(self):
        return self.inner.options()

    def translate(self, texts, src, tgt):
        self.calls.append(list(texts))
        return self.inner.translate(texts, src, tgt)


def test_cache_never_translates_the_same_text_twice(marian, tmp_path):
    counting = _Counting(TransformersTranslator(marian[0]))
    db = tmp_path / "cache" / "translations.sqlite"
    first = CachedTranslator(counting, db, chunk_size=2)
    texts = [KO_EN[0][0], KO_EN[1][0], KO_EN[0][0], KO_EN[2][0]]
    out = first.translate(texts, "ko", "en")
    assert out == [KO_EN[0][1], KO_EN[1][1], KO_EN[0][1], KO_EN[2][1]]
    assert sorted(t for call in counting.calls for t in call) == sorted(set(texts))
    assert (first.hits, first.misses) == (0, 3)
    # a rerun (new process, same file) translates nothing it has seen
    counting.calls.clear()
    again = CachedTranslator(counting, db)
    assert again.translate(texts + [KO_EN[3][0]], "ko", "en") == out + [KO_EN[3][1]]
    assert counting.calls == [[KO_EN[3][0]]]
    assert (again.hits, again.misses) == (3, 1)
    # another target language is another key
    counting.calls.clear()
    again.translate([KO_EN[0][0]], "ko", "ja")
    assert counting.calls == [[KO_EN[0][0]]]


class _Api(BaseHTTPRequestHandler):
    """A Papago-style translation endpoint with a scripted sequence of failures."""

    script: list[int] = []
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        length = int(self.headers["Content-Length"])
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        type(self).seen.append(
            {"form": form, "headers": dict(self.headers), "at": time.monotonic()}
        )
        status = type(self).script.pop(0) if type(self).script else 200
        if status != 200:
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(b"busy")
            return
        text = f"[{form['target']}] {form['text']}"
        body = json.dumps({"message": {"result": {"translatedText": text}}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def api():
    _Api.script, _Api.seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/translation"
    server.shutdown()
    server.server_close()


def test_http_translator_retries_rate_limits_and_keeps_the_key_secret(api, monkeypatch, caplog):
    monkeypatch.setenv("TEST_TRANSLATE_KEY", "s3cret-key")
    monkeypatch.setenv("TEST_TRANSLATE_KEY_ID", "client-id")
    _Api.script = [429, 503]
    translator = HttpTranslator(
        api,
        key_env="TEST_TRANSLATE_KEY",
        key_id_env="TEST_TRANSLATE_KEY_ID",
        honorific=True,
        requests_per_second=20,
        backoff_s=0.01,
    )
    with caplog.at_level(logging.WARNING):
        out = translator.translate(["안녕하세요", "고마워"], "ko", "en")
    assert out == ["[en] 안녕하세요", "[en] 고마워"]
    assert translator.requests == 4  # 429, 503, then two successes
    assert [s["form"]["honorific"] for s in _Api.seen] == ["true"] * 4
    assert _Api.seen[-1]["headers"]["X-NCP-APIGW-API-KEY"] == "s3cret-key"
    assert _Api.seen[-1]["headers"]["X-NCP-APIGW-API-KEY-ID"] == "client-id"
    gaps = [b["at"] - a["at"] for a, b in zip(_Api.seen, _Api.seen[1:], strict=False)]
    # never faster than the rate limit (50 ms apart when sent; a broken limiter sends
    # these within ~10 ms). The server sees arrivals, which a loaded machine delays by
    # a few ms each: 44.5 ms was seen with three test workers on two cores.
    assert min(gaps) >= 1 / 20 - 0.02
    assert "retrying" in caplog.text and "s3cret" not in caplog.text

    _Api.script = [400]
    with pytest.raises(TranslationError, match="HTTP 400") as err:
        translator.translate(["x"], "ko", "en")
    assert "s3cret" not in str(err.value)
    _Api.script = [500, 500, 500]
    flaky = HttpTranslator(api, max_retries=2, backoff_s=0.0, requests_per_second=0)
    with pytest.raises(TranslationError, match="HTTP 500 after 3 attempts"):
        flaky.translate(["x"], "ko", "en")


def test_http_key_must_be_in_the_environment(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(TranslationError, match="NO_SUCH_KEY_VAR is not set"):
        HttpTranslator("http://127.0.0.1:9/", key_env="NO_SUCH_KEY_VAR")


def test_round_trip_checks():
    settings = RttSettings()
    src = "배송이 너무 늦어서 화가 났어요."
    assert check_round_trip(src, "", "아무거나", settings)[0] == "rtt_empty"
    assert check_round_trip(src, "x", "  ", settings)[0] == "rtt_empty"
    assert (
        check_round_trip(src, "x", "배송이 너무 늦어서, 화가 났어요!", settings)[0]
        == "rtt_identical"
    )
    assert check_round_trip(src, "x", "늦어요.", settings)[0] == "rtt_length_ratio"
    assert (
        check_round_trip(src, "x", src + " " + src + " " + src, settings)[0] == "rtt_length_ratio"
    )
    assert check_round_trip(src, "x", "고양이가 지붕 위에서 잠을 잔다.", settings)[0] == "rtt_drift"
    reason, score = check_round_trip(src, "x", "배송이 정말 늦어서 너무 화났어요.", settings)
    assert reason is None and 0.3 <= score < 1.0
    strict = RttSettings(min_rouge=0.99)
    assert check_round_trip(src, "x", "배송이 정말 늦어서 너무 화났어요.", strict)[0] == "rtt_drift"


def test_round_trip_through_real_checkpoints(marian, tmp_path):
    forward, backward = marian
    spec = {"backend": "transformers", "batch_size": 2}
    settings = RttSettings(
        forward=TranslatorSpec(model=str(forward), **spec),
        backward=TranslatorSpec(model=str(backward), **spec),
    )
    cache = tmp_path / "t.sqlite"
    fwd = make_translator(settings.forward, tmp_path, cache)
    bwd = make_translator(settings.backward, tmp_path, cache)
    sentences = pd.DataFrame({"text": [s for s, _ in KO_EN]})
    checked = round_trip(sentences, fwd, bwd, settings)
    assert checked["pivot"].tolist() == [t for _, t in KO_EN]
    assert [r if isinstance(r, str) else None for r in checked["reason"]] == [
        None,
        "rtt_identical",
        "rtt_drift",
        "rtt_length_ratio",
        None,
    ]
    assert (fwd.misses, bwd.misses) == (5, 5)


@pytest.mark.parametrize("flavor", ["m2m100", "nllb"])
def test_multilingual_checkpoint_gets_its_language_codes(tmp_path, flavor):
    """One M2M100 or NLLB checkpoint for both directions: the codes must be set."""
    path = build_tiny_multilingual(tmp_path / flavor, KO_EN, EN_KO, flavor)
    both = TransformersTranslator(path, batch_size=2)
    english = both.translate([s for s, _ in KO_EN], "ko", "en")
    assert english == [t for _, t in KO_EN]
    assert both.translate(english, "en", "ko") == [t for _, t in EN_KO]
