"""A toy dataset family, one package: split each line of a text file into "sentences"
with a toy language, keep those of at least two words, have three simulated annotators
give each a keyword (its own value type, agreed by majority), and write them out. It
registers its language, its recipe section (``toy:``), its value type, its steps and its
task kind, and no file outside this package changes. With ``toy.round: true`` the
keywords come from a Label Studio round of its own (``keyword.xml``, simulated people):
one :class:`LabelStudioRound` entry in its plan, which the shared steps run."""

import json
from pathlib import Path

import pandas as pd
from pydantic import Field

from pipelines.agreement.rules import AgreementSettings, agree
from pipelines.annotation.annotate import flatten_result
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.rounds import Round
from pipelines.annotation.settings import SimulateSpec
from pipelines.annotation.simulate import Annotator, simulated_annotation
from pipelines.annotation.values import ValueType, region, register_value_type
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.steps import STEPS, Rows, StepOutcome, cached, declares, out_files
from pipelines.lang import Language, language, register_language
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound

HERE = Path(__file__).resolve().parent

register_language(
    Language(
        code="xx",
        name="toy: sentences end with |, words split on spaces",
        split_sentences=lambda texts: [
            [s.strip() for s in t.split("|") if s.strip()] for t in texts
        ],
        tagged=lambda text: [(w, "W") for w in text.split()],
        script_share=lambda text: 1.0,
        foreign_chars=lambda text: 0,
        script_reason="not_xx",
    )
)


class ToySection(Strict):
    """The toy family's own recipe section (``toy:``)."""

    min_words: int = Field(default=2, ge=1)
    corpus: str = "toy"
    round: bool = False  # the keywords from a Label Studio round of the family's own


def check_toy(recipe, section):
    if section.corpus not in [c.name for c in recipe.corpora]:
        raise ValueError(f"toy.corpus: no corpus named {section.corpus!r}")


register_section(RecipeSection("toy", ToySection, "the toy family", check_toy))


class Keyword(ValueType):
    """The toy family's answer: one keyword of the sentence, compared without case."""

    name = "toy_keyword"
    tags = frozenset({"TextArea"})
    result_types = frozenset()
    rules = ("majority",)
    priority = 5

    def claims(self, control):
        return control.tag == "TextArea" and control.name == "keyword"

    def flatten(self, control, regions, result=()):
        return [r["value"]["text"][0].strip().lower() for r in regions]

    def simulate(self, control, data, who, rng, seed):
        word = data["text"].split()[-1]
        return [region(control, "textarea", {"text": [word.upper() if who.user_id else word]})]

    def measures(self, ratings, context=None):
        per_item = ratings.groupby("item_id")["value"].nunique()
        return {"unanimous_share": round(float((per_item == 1).mean()), 4)}


register_value_type(Keyword())
INTERFACE = parse_label_config(
    '<View><Text name="text" value="$text"/><TextArea name="keyword" toName="text"/></View>'
)


@STEPS.register("toy:sentences")
@declares(
    reads=lambda ctx, arg: {"corpus": ctx.recipe.corpus_path(ctx.recipe.corpora[0])},
    writes=out_files("sentences/kept.parquet", "sentences/dropped.parquet",
                     "sentences/sentences.json"),
    settings=lambda ctx, arg: [ctx.recipe.corpora[0].language, ctx.recipe.toy.model_dump()],
)  # fmt: skip
def sentences(ctx, arg=""):
    corpus = ctx.recipe.corpora[0]
    path = ctx.recipe.corpus_path(corpus)
    lang = language(ctx.recipe.corpus_language(corpus))

    def compute():
        lines = path.read_text(encoding="utf-8").splitlines()
        sents = [s for parts in lang.split_sentences(lines) for s in parts]
        frame = pd.DataFrame({"item_id": [str(n) for n in range(len(sents))], "text": sents})
        frame["words"] = [len(lang.morphemes(s)) for s in sents]
        keep = frame["words"] >= ctx.recipe.toy.min_words
        info = {
            "in": len(frame),
            "kept": int(keep.sum()),
            "dropped": {"one_word": int((~keep).sum())} if (~keep).any() else {},
        }
        return {"kept.parquet": frame[keep], "dropped.parquet": frame[~keep]}, info

    info, hit = cached(ctx, compute)
    return StepOutcome(
        f"{info['kept']} sentences" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("sentence", info["in"], info["kept"], info["dropped"]),
    )


def keyword_round(ctx) -> dict[str, Round]:
    """The family's own round, when the recipe asks for it: three simulated people give
    each kept sentence a keyword in ``keyword.xml``."""
    if not ctx.recipe.toy.round:
        return {}
    return {"keywords": Round(
        ctx.out / "sentences" / "kept.parquet", HERE / "keyword.xml",
        f"{ctx.recipe.name}-keywords", 3, SimulateSpec(annotators=3, seed=0),
        "annotator", ctx.out / "annotate" / "keywords.parquet", timeout=120.0, poll=1.0,
    )}  # fmt: skip


def _simulated_votes(kept: pd.DataFrame) -> pd.DataFrame:
    people = [Annotator(i, f"a{i}@toy", 0.0, 0.1, 0.9, False) for i in range(3)]
    rows = []
    for n, text in zip(kept["item_id"], kept["text"], strict=True):
        for who in people:
            payload = simulated_annotation(INTERFACE, {"item_id": n, "text": text}, who, 1, n,
                                           False)  # fmt: skip
            for _field, value in flatten_result(payload["result"], INTERFACE):
                rows.append({"item_id": n, "annotator_id": who.email, "value": value})
    return pd.DataFrame(rows)


@STEPS.register("toy:keywords")
def keywords(ctx, arg=""):
    kept = pd.read_parquet(ctx.out / "sentences" / "kept.parquet")
    rounds = ctx.task.rounds(ctx)
    if "keywords" in rounds:  # the round's pulled annotations
        votes = pd.read_parquet(rounds["keywords"].annotations)
        votes = votes[votes["field"] == "keyword"][["item_id", "annotator_id", "value"]]
    else:
        votes = _simulated_votes(kept)
    result = agree(votes, AgreementSettings(rule="majority", min_votes=2), "toy_keyword")
    gold = result["gold"]
    (ctx.out / "keywords").mkdir(exist_ok=True)
    gold.to_parquet(ctx.out / "keywords" / "gold.parquet")
    figures = result["figures"]
    return StepOutcome(
        f"{len(gold)} keywords",
        {"value_type": figures["value_type"], "unanimous_share": figures["unanimous_share"],
         "annotators": int(votes["annotator_id"].nunique())},
        Rows("sentence", len(kept), len(gold)),
    )  # fmt: skip


@STEPS.register("toy:export")
def export(ctx, arg=""):
    kept = pd.read_parquet(ctx.out / "sentences" / "kept.parquet")
    gold = pd.read_parquet(ctx.out / "keywords" / "gold.parquet").set_index("item_id")
    (ctx.out / "dataset").mkdir(exist_ok=True)
    rows = [{"text": t, "keyword": gold.loc[n, "label"]}
            for n, t in zip(kept["item_id"], kept["text"], strict=True)]  # fmt: skip
    (ctx.out / "dataset" / "train.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return StepOutcome(
        f"{len(rows)} rows", {"rows": len(rows)}, Rows("sentence", len(kept), len(rows))
    )


register_task(
    TaskKind(
        name="toy",
        title="a toy family",
        layout="toy",
        steps=["sentences", "keywords", "export"],
        plan=lambda recipe: [
            "sentences",
            *([LabelStudioRound("keywords")] if recipe.toy.round else []),
            "keywords",
            "export",
        ],
        simulated=lambda recipe: recipe.toy.round,
        needs=[],
        rounds=keyword_round,
        card=lambda facts: None,
    )
)
