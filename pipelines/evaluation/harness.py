"""The release's lm-evaluation-harness task (issue 39): ``dataset/lm_eval/`` holds
``<task>.yaml`` and ``<task>.py`` so that ::

    lm_eval --model hf --model_args pretrained=MODEL --tasks <task> \\
        --include_path RUN/dataset/lm_eval

runs the built dataset (and ``--tasks benchforge_kobest``, the tag of its benchmark,
every release of that benchmark in the include path; ``metadata.version`` is the
release files' hash). The YAML names the splits, the prompt (a Jinja template over a
release record's fields, as the task kind declares it), the answer options and the
metrics; the module beside it loads the release files relative to itself (the folder
can be moved or published) and gives each record its options and gold answer:

- ``label``: a multiple-choice task over the verbalised classes; accuracy, and macro-F1
  where the paper reports it (KoBEST, KLUE-TC);
- ``score``: the similarity on the papers' 0-5 scale: the model's likelihood of each
  point "0" to "5" after the question, the prediction their expectation; Pearson's r
  (the papers' metric) and F1 at KLUE 3.2.2's paraphrase threshold 3.0 (issue 54: it was
  a yes/no accuracy);
- ``choice``: the item's own options; accuracy, and macro-F1 for KoBEST;
- ``answer``: generation until a line break, scored by exact match and character F1
  with the SQuAD script's normalisation (the module carries its own copy: lm-eval runs
  without benchforge installed). Each module holds only its target's code.

Character tagging (KLUE-NER) and KoBBQ's bias scores have no harness form here: a
tagger's output is not one answer per prompt, and KoBBQ's diff-bias needs the
template's context types; ``benchforge evaluate`` scores both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pipelines.evaluation.spec import Evaluation

HARNESS_TARGETS = ("label", "score", "choice", "answer")
# a similarity task asks for a point of the papers' 0-5 scale (KLUE 3.2.1, JGLUE 3.2.1)
SCALE_QUESTION = {"ko": "두 문장의 뜻이 얼마나 비슷한가? (0-5):",
                  "ja": "二つの文の意味はどのくらい近いか（0〜5）："}  # fmt: skip


def task_name(recipe_name: str) -> str:
    """The harness task's name: ``benchforge_`` and the recipe name as an identifier."""
    return "benchforge_" + re.sub(r"\W", "_", recipe_name).strip("_").lower()


def supported(ev: Evaluation | None) -> bool:
    return ev is not None and ev.target in HARNESS_TARGETS and ev.scorer is None


HEAD = """\"""lm-evaluation-harness loader of a benchforge release (generated; see the YAML).\"""

import json
from pathlib import Path

SPEC = json.loads(%(spec)r)
HERE = Path(__file__).resolve().parent


def _get(record, dotted):
    value = record
    for part in dotted.split("."):
        value = value[part]
    return value


def _records(path):
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _plain(doc):
    # nested fields a prompt does not name are kept as JSON text (one Arrow type)
    keep = SPEC["nested"]
    return {k: (json.dumps(v, ensure_ascii=False)
                if isinstance(v, (dict, list)) and not k.startswith("_") and k not in keep
                else v)
            for k, v in doc.items()}


def load(**kwargs):
    \"""The release's splits as a DatasetDict (train, validation, test).\"""
    import datasets

    out = {}
    for split, name in SPEC["files"].items():
        path = (HERE / name).resolve()
        if path.is_file():
            out[split] = datasets.Dataset.from_list([_plain(_doc(r)) for r in _records(path)])
    return datasets.DatasetDict(out)
"""

# each target's own part of the module: how a record becomes a doc, and its scoring
DOCS = {
    "label": """

def _doc(record):
    doc = dict(record)
    doc["_choices"] = SPEC["choices"]
    doc["_gold"] = SPEC["labels"].index(str(_get(record, SPEC["gold"])))
    return doc
""",
    "choice": """

def _doc(record):
    doc = dict(record)
    doc["_choices"] = [str(record[f]) for f in SPEC["choice_fields"]]
    doc["_gold"] = int(_get(record, SPEC["gold"]))
    return doc
""",
    "score": """

def _doc(record):
    doc = dict(record)
    doc["_score"] = float(_get(record, SPEC["gold"]))
    doc["_choices"] = SPEC["choices"]  # the scale's points, "0" to "5"
    doc["_gold"] = min(max(int(round(doc["_score"])), 0), len(SPEC["choices"]) - 1)
    return doc


def process_results(doc, results):
    \"""The predicted similarity: the expectation over the scale's points under the
    model's normalised likelihoods of each; Pearson's r against the gold score and F1
    of both cut at the paraphrase threshold (KLUE 3.2.2).\"""
    import math

    lls = [ll for ll, _ in results]
    top = max(lls)
    weights = [math.exp(ll - top) for ll in lls]
    pred = sum(i * w for i, w in enumerate(weights)) / sum(weights)
    gold = doc["_score"]
    cut = SPEC["threshold"]
    return {"pearson": (gold, pred), "f1": (int(gold >= cut), int(pred >= cut))}


def pearson(items):
    from scipy.stats import pearsonr

    golds, preds = zip(*items, strict=True)
    if len(set(golds)) < 2 or len(set(preds)) < 2:
        return float("nan")
    return float(pearsonr(golds, preds)[0])


def binary_f1(items):
    from sklearn.metrics import f1_score

    golds, preds = zip(*items, strict=True)
    return f1_score(golds, preds, zero_division=0.0)
""",
    "answer": """

import re
import string
import unicodedata
from collections import Counter


def _doc(record):
    doc = dict(record)
    answers = (record.get("answers") or {}).get("text") or []
    answers = [] if record.get("is_impossible") else list(answers)
    doc["_answers"] = [str(a) for a in answers]
    doc["_gold"] = doc["_answers"][0] if doc["_answers"] else ""
    return doc


def _normalize(text):
    text = unicodedata.normalize("NFKC", str(text)).lower()
    text = "".join(ch for ch in text if ch not in string.punctuation
                   and not unicodedata.category(ch).startswith("P"))
    text = re.sub(r"\\b(a|an|the)\\b", " ", text)
    return " ".join(text.split())


def _char_f1(gold, pred):
    g = [c for c in _normalize(gold) if not c.isspace()]
    p = [c for c in _normalize(pred) if not c.isspace()]
    if not g or not p:
        return float(g == p)
    same = sum((Counter(g) & Counter(p)).values())
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def process_results(doc, results):
    \"""Exact match and character F1 of the generated answer (best over the accepted
    answers; an unanswerable question scores an empty answer 1).\"""
    pred = results[0].strip().split("\\n")[0].strip()
    answers = doc["_answers"]
    if not answers:
        em = f1 = float(not pred)
    else:
        em = max(float(_normalize(a) == _normalize(pred)) for a in answers)
        f1 = max(_char_f1(a, pred) for a in answers)
    return {"exact_match": em, "char_f1": f1}
""",
}
MACRO_F1 = """

def macro_f1(items):
    from sklearn.metrics import f1_score

    golds, preds = zip(*items, strict=True)
    return f1_score(golds, preds, average="macro")
"""


def module_text(ev: Evaluation, spec: dict) -> str:
    """The loader module of a task of ``ev``'s target: the shared loader, the target's
    own doc builder and scoring, and macro-F1 where the paper reports it (issue 54: a
    class task's module no longer carries the SQuAD scorer)."""
    text = HEAD % {"spec": json.dumps(spec, ensure_ascii=False)} + DOCS[ev.target]
    return text + (MACRO_F1 if "macro_f1" in ev.metrics and ev.target != "score" else "")


def tag_of(ev: Evaluation) -> str:
    """The harness tag of the task's benchmark (issue 54): ``benchforge_`` and the first
    word of the paper its metrics come from (``JGLUE (Kurihara et al. 2022) 3.2.3`` ->
    ``benchforge_jglue``), so ``--tasks benchforge_kobest`` runs every KoBEST release of
    an include path in one call."""
    word = re.split(r"[\s/(,]", ev.source.strip(), maxsplit=1)[0]
    return "benchforge_" + (re.sub(r"\W", "_", word).lower() or "release")


def release_version(dataset: Path, files: dict[str, str]) -> str:
    """The task's ``metadata.version``: the first 12 hex digits of the SHA-256 over the
    release files it reads (by split, in order), so a score names the release it was
    measured on."""
    import hashlib

    from pipelines.core.io import sha256_file

    digest = hashlib.sha256()
    for split, name in sorted(files.items()):
        digest.update(f"{split}:{name}:{sha256_file(dataset / name)}\n".encode())
    return digest.hexdigest()[:12]


def _yaml(name: str, ev: Evaluation, language: str, files: dict[str, str], version: str) -> str:
    import yaml

    splits = {"train": "training_split", "validation": "validation_split", "test": "test_split"}
    config: dict = {
        "task": name,
        "tag": [tag_of(ev)],
        "custom_dataset": "__LOAD__",
        **{key: split for split, key in splits.items() if split in files},
    }
    prompt = ev.prompt or "{{" + (ev.id_field or "text") + "}}"
    if ev.target == "score":
        prompt = f"{prompt.rstrip()}\n{SCALE_QUESTION.get(language, SCALE_QUESTION['ko'])}"
    config["doc_to_text"] = prompt
    if ev.target == "answer":
        config.update({
            "output_type": "generate_until",
            "doc_to_target": "{{_gold}}",
            "generation_kwargs": {"until": ["\n"], "max_gen_toks": 32, "do_sample": False},
            "process_results": "__PROCESS__",
            "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True}
                            for m in ("exact_match", "char_f1")],
        })  # fmt: skip
    elif ev.target == "score":  # Pearson's r, as the papers score similarity
        config.update({
            "output_type": "multiple_choice",
            "doc_to_choice": "{{_choices}}",
            "doc_to_target": "{{_gold}}",
            "process_results": "__PROCESS__",
            "metric_list": [
                {"metric": "pearson", "aggregation": "__PEARSON__", "higher_is_better": True},
                {"metric": "f1", "aggregation": "__BINARY_F1__", "higher_is_better": True},
            ],
        })  # fmt: skip
    else:
        metrics: list[dict] = [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]
        metrics += [{"metric": m, "aggregation": "mean", "higher_is_better": True}
                    for m in ev.harness_metrics]  # fmt: skip
        if "macro_f1" in ev.metrics:
            metrics.append({"metric": "f1", "aggregation": "__MACRO__", "higher_is_better": True})
        config.update({
            "output_type": "multiple_choice",
            "doc_to_choice": "{{_choices}}",
            "doc_to_target": "{{_gold}}",
            "metric_list": metrics,
        })  # fmt: skip
    config["metadata"] = {"version": version, "source": ev.source}
    text = yaml.safe_dump(config, allow_unicode=True, sort_keys=False, width=100)
    return (
        text.replace("'__LOAD__'", f"!function {name}.load")
        .replace("__LOAD__", f"!function {name}.load")
        .replace("__PROCESS__", f"!function {name}.process_results")
        .replace("__MACRO__", f"!function {name}.macro_f1")
        .replace("__PEARSON__", f"!function {name}.pearson")
        .replace("__BINARY_F1__", f"!function {name}.binary_f1")
    )


def harness_files(recipe_name: str, language: str, ev: Evaluation, dataset: Path
                  ) -> dict[str, str]:  # fmt: skip
    """The harness task's two files (name -> text) for the release in ``dataset``; the
    task kind's prompt in the recipe's language where it declares one."""
    import dataclasses

    if language in ev.harness_languages:
        prompt, choices = ev.harness_languages[language]
        ev = dataclasses.replace(ev, prompt=prompt, harness_choices=tuple(choices))
    name = task_name(recipe_name)
    files = {"train": ev.files["train"], "validation": ev.files["dev"], "test": ev.files["test"]}
    files = {k: v for k, v in files.items() if (dataset / v).is_file()}
    labels = list(ev.labels)
    if ev.target == "label" and not labels:
        raise ValueError(f"{recipe_name}: a harness task of classes needs the labels in order")
    spec = {
        "files": {k: f"../{v}" for k, v in files.items()},
        "target": ev.target,
        "gold": ev.gold_field,
        "labels": labels,
        # a class task's options: its verbalised classes, else the class names themselves
        "choices": list(ev.harness_choices or labels) if ev.target == "label"
        else [str(k) for k in range(6)] if ev.target == "score" else [],
        "choice_fields": list(ev.choice_fields),
        "threshold": 3.0,
        "nested": sorted(set(re.findall(r"\{\{\s*(\w+)\.", ev.prompt))),
    }  # fmt: skip
    version = release_version(dataset, files)
    return {f"{name}.yaml": _yaml(name, ev, language, files, version),
            f"{name}.py": module_text(ev, spec)}  # fmt: skip
