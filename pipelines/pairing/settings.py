"""The pairing stage's recipe section, ``pairing:`` (``benchforge pair``): which pairs
to build from which corpus (greedy sentence matching, :mod:`pipelines.pairing.gsm`;
round-trip translation, :mod:`pipelines.pairing.rtt`, through the translators of
:mod:`pipelines.pairing.translate`; pairs from metadata,
:mod:`pipelines.pairing.metapairs`). Registered here
(:data:`pipelines.core.plugins.RECIPE_SECTIONS`); its check against the whole recipe:
every corpus it names is one of the recipe's (unless it reads another ingest's
output, ``input``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Recipe, Strict
from pipelines.core.settings import Seed


class TranslatorSpec(Strict):
    """One translation backend (pipelines.pairing.translate): a local checkpoint or an HTTP API."""

    backend: Literal["transformers", "http"]
    # transformers: a local checkpoint directory (relative to the recipe)
    model: str | None = None
    device: str | None = None
    batch_size: int = Field(default=32, ge=1)
    num_beams: int = Field(default=1, ge=1)
    max_new_tokens: int = Field(default=256, ge=1)
    # http: Papago-style defaults; keys are read from the named environment variables
    endpoint: str | None = None
    key_env: str | None = None
    key_id_env: str | None = None
    key_header: str = "X-NCP-APIGW-API-KEY"
    key_id_header: str = "X-NCP-APIGW-API-KEY-ID"
    response_path: str = "message.result.translatedText"
    honorific: bool | None = None
    requests_per_second: float = Field(default=5.0, ge=0)
    max_retries: int = Field(default=5, ge=0)
    backoff_s: float = Field(default=1.0, ge=0)

    @model_validator(mode="after")
    def _check(self) -> TranslatorSpec:
        if self.backend == "transformers" and not self.model:
            raise ValueError("a transformers translator needs model (a checkpoint directory)")
        if self.backend == "http" and not self.endpoint:
            raise ValueError("an http translator needs endpoint")
        return self


class RttSettings(Strict):
    """Round-trip translation (KLUE 3.2.1) and the checks a round trip must pass."""

    # KLUE 3.2.1 translated through English
    pivot: str = "en"
    forward: TranslatorSpec | None = None
    # default: the forward translator (a multilingual checkpoint such as M2M100 or NLLB)
    backward: TranslatorSpec | None = None
    # SQLite translation cache (relative to the recipe); default OUT/.cache/translations.sqlite
    cache: str | None = None
    # Not in the papers: benchforge's defaults, documented in docs/commands/pair.md.
    min_length_ratio: float = Field(default=0.5, gt=0)
    max_length_ratio: float = Field(default=2.0, gt=0)
    # unrelated Korean sentences share particles and endings: ROUGE-L ~0.2 between them
    min_rouge: float = Field(default=0.3, ge=0, le=1)


class GsmSpec(Strict):
    """Greedy sentence matching over a seeded sample of ``pool`` sentences; ``pairs`` of
    the resulting pairs are kept, evenly spread over the draw order so that the whole
    range of scores survives (default: all)."""

    pool: int | None = Field(default=None, ge=2)
    pairs: int | None = Field(default=None, ge=1)


class RttSpec(Strict):
    sentences: int = Field(ge=1)


class MetadataSpec(Strict):
    """Pairs from metadata (KLUE 3.2.1 on ParaKQC): same group (intent) is similar,
    different group within the same topic is less similar. ``group_field`` and
    ``topic_field`` name document columns or ``keep_fields``; with ``group_block: K`` the
    group is the K-record block of a line number (ParaKQC: 10 paraphrases per intent)."""

    group_field: str
    group_block: int | None = Field(default=None, ge=1)
    topic_field: str | None = None
    similar_per_group: int = Field(default=1, ge=0)
    dissimilar_per_group: int = Field(default=1, ge=0)


class CorpusPairing(Strict):
    corpus: str
    gsm: GsmSpec | None = None
    rtt: RttSpec | None = None
    metadata: MetadataSpec | None = None


class PairingSettings(Strict):
    """Which pairs to build from which corpus (``benchforge pair``)."""

    # an ingest output folder (relative to the recipe); default: ingest into OUT/ingest
    input: str | None = None
    seed: Seed = 0
    metric: Literal["rouge1", "rouge2", "rougeL"] = "rougeL"
    rtt: RttSettings = Field(default_factory=RttSettings)
    corpora: list[CorpusPairing] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> PairingSettings:
        if any(c.rtt for c in self.corpora) and self.rtt.forward is None:
            raise ValueError("rtt pairs are asked for but pairing.rtt.forward is not set")
        return self


def _check(recipe: Recipe, pairing: PairingSettings) -> None:
    """Pairing names only corpora the recipe has, when it ingests them itself."""
    if pairing.input is None:
        unknown = sorted({p.corpus for p in pairing.corpora} - {c.name for c in recipe.corpora})
        if unknown:
            raise ValueError(f"pairing names corpora the recipe does not have: {unknown}")


register_section(RecipeSection(
    "pairing", PairingSettings, "Sentence pairs (benchforge pair): greedy matching, "
    "round-trip translation, metadata", _check,
))  # fmt: skip
