"""The ``translation:`` section of a recipe (KorSTS / KorNLI, Ham et al. 2020; the
family in ``kornlu.py``): the English source, the translator, post-editing, QA and the
relabel round. Registered with :data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import Seed
from pipelines.pairing.settings import TranslatorSpec
from pipelines.quality.translation_qa import TRANSLATION_CHECKS

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class MemorySpec(Strict):
    """A translation memory (pipelines.pairing.memory): a TSV or CSV of source -> target."""

    path: str  # relative to the recipe
    source_column: str = "source"
    target_column: str = "target"
    # rapidfuzz fuzz.ratio (0-100) a fuzzy match needs; 100: exact matches only
    fuzzy_threshold: float = Field(default=90.0, ge=0, le=100)


class MtTrainSpec(Strict):
    """Train the machine translator here (pipelines.models.train_mt), into OUT/mt-model."""

    parallel: str  # a TSV/CSV of source and target sentences, relative to the recipe
    source_column: str = "source"
    target_column: str = "target"
    vocab_size: int = Field(default=2000, ge=50)
    d_model: int = Field(default=128, ge=8)
    layers: int = Field(default=2, ge=1)
    heads: int = Field(default=4, ge=1)
    ffn_dim: int = Field(default=512, ge=8)
    epochs: int = Field(default=20, ge=1)
    batch_size: int = Field(default=32, ge=1)
    lr: float = Field(default=1e-3, gt=0)
    heldout: int = Field(default=100, ge=0)
    seed: Seed = 0
    limit: int | None = Field(default=None, ge=2)
    device: str | None = None  # None: cuda when present
    # decoding of the trained model
    batch_size_translate: int = Field(default=64, ge=1)
    num_beams: int = Field(default=1, ge=1)


class PostEditSimulation(Strict):
    """Simulated post-editors (demos and tests): their latent target is the reference
    corpus's human translation; a draft close to it (chrF at least ``close_chrf``) is
    left unchanged with probability ``keep_close_rate``."""

    seed: Seed = 0
    keep_close_rate: float = Field(default=0.5, ge=0, le=1)
    close_chrf: float = Field(default=60.0, ge=0, le=100)


class PostEditSpec(Strict):
    """The post-editing round and its cross-check (KorSTS/KorNLI: two translators each
    post-edit half and review the other's half)."""

    # None: benchforge's annotation_configs/mt_postedit.xml and mt_crosscheck.xml
    config: str | None = None
    crosscheck_config: str | None = None
    project: str | None = None  # prefix of the four projects; default: the recipe's name
    simulate: PostEditSimulation | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class RelabelSpec(Strict):
    """The relabel round of flagged translated pairs: annotators label the Korean pair
    (STS: 0-5, ``sts.xml``; NLI: ``nli_validation.xml``) and their mean (STS) or
    majority (NLI) replaces the English label."""

    config: str | None = None  # None: annotation_configs/sts.xml or nli_validation.xml
    overlap: int = Field(default=3, ge=1)
    project: str | None = None  # default: "<recipe name>-relabel"
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class TranslationQaSpec(Strict):
    """Translation QA (pipelines.quality.translation_qa): which label-risk checks run,
    their thresholds, and what happens to a flagged pair."""

    checks: list[str] | None = None  # None: the task kind's default checks
    near_identical: float = Field(default=0.95, gt=0, le=1)
    latin_min_words: int = Field(default=2, ge=1)
    length_ratio_z: float = Field(default=3.5, gt=0)
    # drop: flagged pairs leave the release; keep: they stay, listed for review;
    # relabel: they go to a relabel round in Label Studio (``relabel``) for a new label
    on_flag: Literal["drop", "keep", "relabel"] = "drop"
    relabel: RelabelSpec = Field(default_factory=RelabelSpec)

    @field_validator("checks")
    @classmethod
    def _known(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            TRANSLATION_CHECKS.get(name)
        return names


Split = Literal["train", "dev", "test"]


class SplitSource(Strict):
    """One more English dataset of the same recipe, making one more release split (Ham
    et al. 2020, 3.1 translates STS-B's train, dev and test sets, and SNLI and MNLI's
    train with XNLI's dev and test, in one process)."""

    source: str
    reference: str | None = None
    split: Split


class TranslationSpec(Strict):
    """Translate an English dataset (KorSTS/KorNLI, Ham et al. 2020): ``source`` names
    the corpus holding the English pairs; ``reference`` (optional) an aligned corpus of
    the same rows (the KorSTS release): its metadata columns are exported and its
    translations are the simulated post-editors' latent target. ``other_splits`` adds
    English datasets of other splits; ``mt_only_splits`` (Ham et al. 2020, 3.1: "the
    translation results of the development and test sets are post-edited", the training
    sets are machine translated only) are the splits whose pairs never go to the
    post-editing rounds."""

    source: str
    reference: str | None = None
    split: Split = "dev"  # the release split the pairs make
    other_splits: list[SplitSource] = Field(default_factory=list)
    # Ham et al. 2020, 3.1 and Table 1/3: train "Translated by Machine", dev and test
    # "Human" (post-edited); [] sends every split to post-editing (benchforge before
    # issue 52)
    mt_only_splits: list[Split] = Field(default_factory=lambda: ["train"])
    source_lang: str = "en"
    target_lang: str = "ko"
    memory: MemorySpec | None = None
    translator: TranslatorSpec | None = None
    train: MtTrainSpec | None = None
    cache: str | None = None  # SQLite translation cache; default OUT/translate/cache.sqlite
    postedit: PostEditSpec = Field(default_factory=PostEditSpec)
    qa: TranslationQaSpec = Field(default_factory=TranslationQaSpec)

    @model_validator(mode="after")
    def _one_translator(self) -> TranslationSpec:
        if self.translator and self.train:
            raise ValueError("translation: give translator (an existing model) or train, not both")
        if not (self.translator or self.train or self.memory):
            raise ValueError("translation: needs translator, train or memory")
        splits = [p.split for p in self.parts()]
        if len(set(splits)) != len(splits):
            raise ValueError(f"translation: one English dataset per split, not {splits}")
        return self

    def parts(self) -> list[SplitSource]:
        """Every English dataset of the recipe with its split: ``source`` first, then
        ``other_splits``."""
        first = SplitSource(source=self.source, reference=self.reference, split=self.split)
        return [first, *self.other_splits]

    def postedited(self, split: str) -> bool:
        """Whether the pairs of ``split`` go to the post-editing rounds (Ham et al. 2020,
        3.1: dev and test do, train is machine translated only)."""
        return split not in self.mt_only_splits

    @property
    def any_postedit(self) -> bool:
        """Whether any split of the recipe is post-edited (else no Label Studio round)."""
        return any(self.postedited(p.split) for p in self.parts())


def _check(recipe: Recipe, spec: TranslationSpec) -> None:
    names = [c.name for c in recipe.corpora]
    for n, part in enumerate(spec.parts()):
        where = "translation." + (f"other_splits[{n - 1}]." if n else "")
        for field in ("source", "reference"):
            name = getattr(part, field)
            if name is not None and name not in names:
                raise ValueError(f"{where}{field}: no corpus named {name!r} ({names})")


register_section(RecipeSection(
    "translation", TranslationSpec,
    "Translate an English dataset (KorSTS, KorNLI; tasks korsts, kornli)", _check,
))  # fmt: skip
