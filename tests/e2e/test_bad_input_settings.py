"""Recipe settings that cannot work fail at load, through ``benchforge rebuild`` (issue
51, items 3, 4, 8, 9 and 10): a copy of a committed demo recipe with one change each
exits 2 before any step or server, with an error naming the dotted setting and the
problem, and no traceback. Before, these released empty evaluation sets, switched a
privacy rule off, trained a degenerate tagger, normalised shares silently, raised a
rapidfuzz ``TypeError`` or waited a minute to say "run the same command again"."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from refused_rebuild import refused_rebuild

ROOT = Path(__file__).resolve().parents[2]


def _copy(tmp_path: Path, demo: str, change: Callable[[dict], None]) -> Path:
    """``recipes/<demo>.yaml`` changed by ``change``, written where its ``../data`` and
    ``../annotation_configs`` paths still resolve (links to the repository's)."""
    for name in ("data", "annotation_configs"):
        (tmp_path / name).symlink_to(ROOT / name)
    recipe = yaml.safe_load((ROOT / "recipes" / f"{demo}.yaml").read_text(encoding="utf-8"))
    change(recipe)
    folder = tmp_path / "recipes"
    folder.mkdir()
    path = folder / f"{demo}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


_refused = refused_rebuild


def _set(path: str, value: object) -> Callable[[dict], None]:
    """A change writing ``value`` at the dotted ``path`` (``.0``: a list's first)."""

    def change(recipe: dict) -> None:
        keys = path.split(".")
        node = recipe
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        node[keys[-1]] = value

    return change


CASES = [
    # item 4: an unknown PII type matched no entity and turned the PII rule off
    ("klue-ner-demo", _set("ner.pii_types", ["XX"]),
     ["ner.pii_types", "unknown types ['XX']", "'PS'"]),
    ("klue-ner-demo", _set("ner.pii_types", ["PS", "PS"]), ["ner.pii_types", "named twice"]),
    # item 8: tracebacks deep in a step
    ("kobest-copa-demo", _set("kobest.rules.near_duplicate_min", 150),
     ["kobest.rules.near_duplicate_min", "less than or equal to 100"]),
    ("klue-mrc-demo", _set("reading.question_types.paraphrase", math.inf),
     ["reading.question_types.paraphrase", "finite number"]),
    ("klue-ner-demo", _set("ner.tagger.settings.lr", math.nan),
     ["ner.tagger.settings.lr", "finite number"]),
    ("klue-ner-demo", _set("ner.tagger.settings", {"hidden": 130, "heads": 4}),
     ["ner.tagger.settings.hidden 130 is not a multiple of heads 4"]),
    ("klue-ner-demo", _set("ner.tagger.settings.epochs", "twelve"),
     ["ner.tagger.settings.epochs", "valid integer"]),
    ("klue-ner-demo", _set("ner.tagger.settings.epochs", -1),
     ["ner.tagger.settings.epochs", "greater than or equal to 1"]),
    ("klue-re-demo", _set("re.taggers.0.settings.lr", math.inf), ["settings.lr", "finite number"]),
    # item 10: wrongly accepted
    ("klue-mrc-demo", _set("reading.question_types",
                           {"paraphrase": 0.5, "multi_sentence": 0.5, "unanswerable": 0.5}),
     ["reading.question_types", "sum to 1.5, not 1"]),
    ("jsquad-demo", _set("reading.simulation", {"copy_rate": 0.7, "statement_rate": 0.5}),
     ["reading.simulation.copy_rate 0.7 + statement_rate 0.5 > 1"]),
    ("klue-ner-demo", _set("split.unseen_test_share", 2.0),
     ["split.unseen_test_share", "less than or equal to 1"]),
    ("jcqa-demo", _set("jcqa.relations", ["AtLocation", "Causes", "AtLocation"]),
     ["jcqa.relations", "['AtLocation']"]),
    ("marc-ja-demo", _set("marc.labels", {"negative": [1, 2], "Negative": [3], "positive": [4, 5]}),
     ["marc.labels", "'Negative' and 'negative' differ only in case"]),
    ("marc-ja-demo", _set("marc.labels.negative", []), ["marc.labels.negative: no rating"]),
    ("klue-re-demo", _set("re.subject_types", ["PER", "PER"]), ["re.subject_types", "['PER']"]),
    ("sts-demo", _set("agreement.values", ["0", "1", "1"]), ["agreement.values", "'1' and '1'"]),
    # item 3: a threshold no item can reach (dev and test came out empty)
    ("jsquad-demo", _set("reading.min_validator_answers", 5),
     ["reading.min_validator_answers 5 > reading.validation_round.people 2"]),
    # item 9: rounds simulated people could never finish (exit 3 after a minute, "resume")
    ("jsquad-demo", _set("reading.validation_round.people", 7),
     ["reading.validation_round.simulate.annotators 6 < people 7"]),
    ("sts-demo", _set("annotation.pilot.applicants", 11),
     ["annotation.pilot.applicants 11 > simulate.annotators 10"]),
    ("jnli-demo", _set("jglue.rules.nli_min_votes", 11),
     ["jglue.rules.nli_min_votes 11 > jglue.nli_round.raters 10"]),
]  # fmt: skip


@pytest.mark.parametrize(("demo", "change", "needles"), CASES,
                         ids=[f"{c[0]}:{c[2][0][:40]}" for c in CASES])  # fmt: skip
def test_a_setting_that_cannot_work_fails_at_load(tmp_path, demo, change, needles):
    stderr = _refused(tmp_path, _copy(tmp_path, demo, change), *needles)
    assert "run the same command again" not in stderr


def test_the_unchanged_demo_copies_load():
    """The copies differ from the demos by the one change only: each demo loads as is."""
    from pipelines.core.recipe import load_recipe

    for demo in sorted({c[0] for c in CASES}):
        load_recipe(ROOT / "recipes" / f"{demo}.yaml")
