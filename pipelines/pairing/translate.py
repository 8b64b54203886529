"""Machine translation backends for round-trip translation (KLUE 3.2.1, KorSTS 3).

Three backends behind one interface, :class:`Translator` (``translate(texts, src, tgt)``
returns one translation per text, in order):

- :class:`TransformersTranslator`: any local transformers seq2seq checkpoint directory
  (Marian, M2M100, NLLB), batched by length, on the GPU in half precision when there is
  one. Nothing is downloaded: the directory must hold the model and its tokenizer.
- :class:`HttpTranslator`: an HTTP translation API, one text a request, Papago-style by
  default (form fields ``source``, ``target``, ``text``, ``honorific``; the key id and
  key in headers). Keys come from environment variables named in the recipe and are
  never logged, cached or written. Retries with exponential backoff on 429, 5xx and
  network errors (honouring ``Retry-After``), and a rate limit in requests per second.
- :class:`CachedTranslator`: wraps either and keeps every translation in a SQLite file
  keyed by backend, model, languages, options and text, so that a rerun, or a second
  recipe over the same sentences, never translates the same text twice.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx

from pipelines.core.errors import BenchforgeError
from pipelines.core.progress import progress
from pipelines.core.registry import Registry
from pipelines.models.checkpoints import (
    is_checkpoint,
    length_batches,
    load_checkpoint,
    position_limit,
)
from pipelines.pairing.settings import TranslatorSpec

log = logging.getLogger(__name__)

# Language codes of the multilingual checkpoints, from two-letter codes.
NLLB_CODES = {
    "ko": "kor_Hang",
    "en": "eng_Latn",
    "ja": "jpn_Jpan",
    "zh": "zho_Hans",
    "de": "deu_Latn",
    "fr": "fra_Latn",
    "es": "spa_Latn",
}


class TranslationError(BenchforgeError, RuntimeError):
    """A backend that cannot translate; the message names the backend and the problem."""


class Translator(Protocol):
    backend: str
    model: str

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]: ...

    def options(self) -> dict[str, Any]: ...


class TransformersTranslator:
    """A local transformers seq2seq checkpoint; ``model`` is its directory."""

    backend = "transformers"

    def __init__(
        self,
        model: str | Path,
        device: str | None = None,
        batch_size: int = 32,
        max_new_tokens: int = 256,
        num_beams: int = 1,
    ) -> None:
        path = Path(model)
        if not is_checkpoint(path):
            raise TranslationError(
                f"transformers: {path} is not a checkpoint directory (no config.json); "
                "point the recipe at a local Marian, M2M100 or NLLB checkpoint"
            )
        import torch
        from transformers import AutoModelForSeq2SeqLM

        self.model = str(path.resolve())
        self.tokenizer, self.net, self.device = load_checkpoint(path, AutoModelForSeq2SeqLM, device)
        self.batch_size = batch_size
        self.max_new_tokens = position_limit(self.net, max_new_tokens)
        self.num_beams = num_beams
        self._torch = torch

    def options(self) -> dict[str, Any]:
        return {"num_beams": self.num_beams, "max_new_tokens": self.max_new_tokens}

    def _language_args(self, src: str, tgt: str) -> dict[str, Any]:
        """Source and target language settings of multilingual checkpoints."""
        tok = self.tokenizer
        kind = self.net.config.model_type
        if kind == "m2m_100" and hasattr(tok, "get_lang_id"):
            tok.src_lang = src
            return {"forced_bos_token_id": tok.get_lang_id(tgt)}
        if hasattr(tok, "src_lang") and NLLB_CODES.get(tgt) in tok.get_vocab():
            tok.src_lang = NLLB_CODES.get(src, src)
            return {"forced_bos_token_id": tok.convert_tokens_to_ids(NLLB_CODES[tgt])}
        return {}  # a one-direction checkpoint such as Marian opus-mt-ko-en

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        extra = self._language_args(src, tgt)
        out: list[str] = [""] * len(texts)
        batches = list(length_batches(texts, self.batch_size))
        bar = progress(total=len(texts), desc=f"translate {src}->{tgt}", unit="sentence",
                       logger=log)  # fmt: skip
        for idx in batches:
            enc = self.tokenizer(
                [texts[i] for i in idx], return_tensors="pt", padding=True, truncation=True
            ).to(self.device)
            with self._torch.inference_mode():
                generated = self.net.generate(
                    **enc,
                    max_new_tokens=self.max_new_tokens,
                    num_beams=self.num_beams,
                    do_sample=False,
                    **extra,
                )
            if "forced_bos_token_id" in extra:  # the target-language token is no text
                lang = generated == extra["forced_bos_token_id"]
                generated = generated.masked_fill(lang, self.tokenizer.pad_token_id)
            decoded = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
            for i, text in zip(idx, decoded, strict=True):
                out[i] = text.strip()
            bar.update(len(idx))
        bar.close()
        return out


class HttpTranslator:
    """An HTTP translation API (Papago-style by default); see the module docstring."""

    backend = "http"

    def __init__(
        self,
        endpoint: str,
        key_env: str | None = None,
        key_id_env: str | None = None,
        key_header: str = "X-NCP-APIGW-API-KEY",
        key_id_header: str = "X-NCP-APIGW-API-KEY-ID",
        response_path: str = "message.result.translatedText",
        honorific: bool | None = None,
        requests_per_second: float = 5.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        timeout_s: float = 30.0,
        model: str = "",
    ) -> None:
        self.endpoint = endpoint
        self.model = model or endpoint
        self.response_path = response_path.split(".") if response_path else []
        self.honorific = honorific
        self.min_interval = 1.0 / requests_per_second if requests_per_second > 0 else 0.0
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        headers = {}
        for env, header in ((key_env, key_header), (key_id_env, key_id_header)):
            if env:
                value = os.environ.get(env)
                if not value:
                    raise TranslationError(f"http: environment variable {env} is not set")
                headers[header] = value
        self._client = httpx.Client(headers=headers, timeout=timeout_s)
        self._last = 0.0
        self.requests = 0

    def options(self) -> dict[str, Any]:
        return {"honorific": self.honorific}

    def _wait_rate(self) -> None:
        wait = self._last + self.min_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()

    def _extract(self, payload: Any) -> str:
        for key in self.response_path:
            if not isinstance(payload, dict) or key not in payload:
                raise TranslationError(
                    f"http: {self.endpoint}: response has no {'.'.join(self.response_path)}"
                )
            payload = payload[key]
        if not isinstance(payload, str):
            raise TranslationError(f"http: {self.endpoint}: translation is not a string")
        return payload

    def _one(self, text: str, src: str, tgt: str) -> str:
        form = {"source": src, "target": tgt, "text": text}
        if self.honorific is not None:
            form["honorific"] = "true" if self.honorific else "false"
        for attempt in range(self.max_retries + 1):
            self._wait_rate()
            self.requests += 1
            retry_after = None
            try:
                resp = self._client.post(self.endpoint, data=form)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}"
            else:
                if resp.status_code == 200:
                    try:
                        return self._extract(resp.json())
                    except json.JSONDecodeError as exc:
                        raise TranslationError(
                            f"http: {self.endpoint}: response is not JSON"
                        ) from exc
                if resp.status_code != 429 and resp.status_code < 500:
                    raise TranslationError(
                        f"http: {self.endpoint}: HTTP {resp.status_code} {resp.text[:200]!r}"
                    )
                problem = f"HTTP {resp.status_code}"
                retry_after = resp.headers.get("Retry-After")
            if attempt == self.max_retries:
                raise TranslationError(
                    f"http: {self.endpoint}: {problem} after {self.max_retries + 1} attempts"
                )
            delay = self.backoff_s * 2**attempt
            if retry_after and retry_after.replace(".", "", 1).isdigit():
                delay = max(delay, float(retry_after))
            log.warning("http translator: %s, retrying in %.1f s", problem, delay)
            time.sleep(delay)
        raise AssertionError("unreachable")

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        return [
            self._one(t, src, tgt)
            for t in progress(texts, desc=f"translate {src}->{tgt}", unit="text", logger=log)
        ]

    def close(self) -> None:
        self._client.close()


class CachedTranslator:
    """A translator whose every translation is kept in a SQLite file (see module doc)."""

    def __init__(self, inner: Translator, path: str | Path, chunk_size: int = 256) -> None:
        self.inner = inner
        self.chunk_size = chunk_size
        self.backend = inner.backend
        self.model = inner.model
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS translations (backend TEXT, model TEXT, src TEXT,"
                " tgt TEXT, options TEXT, text TEXT, translation TEXT,"
                " PRIMARY KEY (backend, model, src, tgt, options, text))"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def options(self) -> dict[str, Any]:
        return self.inner.options()

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        opts = json.dumps(self.inner.options(), sort_keys=True)
        key = (self.backend, self.model, src, tgt, opts)
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(texts))
        with self._connect() as db:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    "SELECT text, translation FROM translations WHERE backend=? AND model=?"
                    f" AND src=? AND tgt=? AND options=? AND text IN ({marks})",
                    (*key, *chunk),
                )
                found.update(rows.fetchall())
        missing = [t for t in unique if t not in found]
        self.hits += len(unique) - len(missing)
        self.misses += len(missing)
        # over the chunks (each backend shows its own call's progress as well)
        overall = progress(total=len(missing), desc=f"translate {src}->{tgt}, all not cached",
                           unit="sentence", logger=log,
                           show=None if len(missing) > self.chunk_size else False)  # fmt: skip
        for start in range(0, len(missing), self.chunk_size):
            chunk = missing[start : start + self.chunk_size]
            done = self.inner.translate(chunk, src, tgt)
            if len(done) != len(chunk):  # nothing of a short answer is cached
                raise TranslationError(
                    f"{self.backend} {self.model}: returned {len(done)} translations for "
                    f"{len(chunk)} texts (first: {chunk[0][:60]!r})"
                )
            with self._connect() as db:  # committed per chunk: a crash keeps what was done
                db.executemany(
                    "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(*key, t, d) for t, d in zip(chunk, done, strict=True)],
                )
            found.update(zip(chunk, done, strict=True))
            overall.update(len(chunk))
        overall.close()
        return [found[t] for t in texts]


# a translator backend is one registration: a function (recipe entry, base dir) -> a
# Translator; the recipe's ``backend`` names it (the SQLite cache wraps any of them)
TRANSLATORS: Registry = Registry("translator backend", "pipelines.pairing", "machine translation")


@TRANSLATORS.register("transformers")
def transformers_backend(spec: TranslatorSpec, base_dir: str | Path) -> Translator:
    """A local transformers seq2seq checkpoint (Marian, M2M, NLLB, ...), batched."""
    return TransformersTranslator(
        (Path(base_dir) / str(spec.model)).expanduser(),
        device=spec.device,
        batch_size=spec.batch_size,
        max_new_tokens=spec.max_new_tokens,
        num_beams=spec.num_beams,
    )


@TRANSLATORS.register("http")
def http_backend(spec: TranslatorSpec, base_dir: str | Path) -> Translator:
    """An HTTP translation API (Papago-style), keys from the environment, rate-limited."""
    return HttpTranslator(
        str(spec.endpoint),
        key_env=spec.key_env,
        key_id_env=spec.key_id_env,
        key_header=spec.key_header,
        key_id_header=spec.key_id_header,
        response_path=spec.response_path,
        honorific=spec.honorific,
        requests_per_second=spec.requests_per_second,
        max_retries=spec.max_retries,
        backoff_s=spec.backoff_s,
    )


def make_translator(
    spec: TranslatorSpec, base_dir: str | Path, cache: str | Path | None
) -> Translator:
    """The translator a recipe entry describes, behind the SQLite cache when one is given."""
    inner = TRANSLATORS.get(spec.backend)(spec, base_dir)
    return CachedTranslator(inner, cache) if cache else inner
