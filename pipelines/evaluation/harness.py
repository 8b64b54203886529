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
- ``score``: the paraphrase question at KLUE's 3.0 (KLUE 3.2.2's binarisation) as a yes/no
  choice; accuracy and F1 (a log-likelihood model gives no real-valued similarity);
- ``choice``: the item's own options; accuracy, and macro-F1 for KoBEST;
- ``answer``: generation until a line break, scored by exact match and character F1
  with the SQuAD script's normalisation (the module carries its own copy: lm-eval runs
  without benchforge installed).

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
YES_NO = {"ko": ["아니오", "예"], "ja": ["いいえ", "はい"]}
PARAPHRASE_QUESTION = {"ko": "두 문장의 뜻이 같은가?", "ja": "二つの文は同じ意味か？"}


def task_name(recipe_name: str) -> str:
    """The harness task's name: ``benchforge_`` and the recipe name as an identifier."""
    return "benchforge_" + re.sub(r"\W", "_", recipe_name).strip("_").lower()


def supported(ev: Evaluation | None) -> bool:
    return ev is not None and ev.target in HARNESS_TARGETS and ev.scorer is None


MODULE = '''"""lm-evaluation-harness loader of a benchforge release (generated; see the YAML)."""

import json
import re
import string
import unicodedata
from collections import Counter
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


def _doc(record):
    gold = _get(record, SPEC["gold"]) if SPEC["gold"] else None
    target = SPEC["target"]
    doc = {k: v for k, v in record.items()}
    if target == "label":
        doc["_choices"] = SPEC["choices"]
        doc["_gold"] = SPEC["labels"].index(str(gold))
    elif target == "score":
        doc["_choices"] = SPEC["choices"]
        doc["_gold"] = int(float(gold) >= SPEC["threshold"])
    elif target == "choice":
        doc["_choices"] = [str(record[f]) for f in SPEC["choice_fields"]]
        doc["_gold"] = int(gold)
    else:
        answers = (record.get("answers") or {}).get("text") or []
        answers = [] if record.get("is_impossible") else list(answers)
        doc["_answers"] = [str(a) for a in answers]
        doc["_gold"] = doc["_answers"][0] if doc["_answers"] else ""
    # nested fields a prompt does not name are kept as JSON text (one Arrow type)
    keep = SPEC["nested"]
    return {k: (json.dumps(v, ensure_ascii=False)
                if isinstance(v, (dict, list)) and not k.startswith("_") and k not in keep
                else v)
            for k, v in doc.items()}


def load(**kwargs):
    """The release's splits as a DatasetDict (train, validation, test)."""
    import datasets

    out = {}
    for split, name in SPEC["files"].items():
        path = (HERE / name).resolve()
        if path.is_file():
            out[split] = datasets.Dataset.from_list([_doc(r) for r in _records(path)])
    return datasets.DatasetDict(out)


def macro_f1(items):
    from sklearn.metrics import f1_score

    golds, preds = zip(*items)
    return f1_score(golds, preds, average="macro")


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
    """Exact match and character F1 of the generated answer (best over the accepted
    answers; an unanswerable question scores an empty answer 1)."""
    pred = results[0].strip().split("\\n")[0].strip()
    answers = doc["_answers"]
    if not answers:
        em = f1 = float(not pred)
    else:
        em = max(float(_normalize(a) == _normalize(pred)) for a in answers)
        f1 = max(_char_f1(a, pred) for a in answers)
    return {"exact_match": em, "char_f1": f1}
'''


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
        prompt = (
            f"{prompt.rstrip()}\n{PARAPHRASE_QUESTION.get(language, PARAPHRASE_QUESTION['ko'])}"
        )
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
    else:
        metrics: list[dict] = [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]
        if "macro_f1" in ev.metrics:
            metrics.append({"metric": "f1", "aggregation": "__MACRO__", "higher_is_better": True})
        elif ev.target == "score":
            metrics.append({"metric": "f1", "aggregation": "f1", "higher_is_better": True})
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
    )


def harness_files(recipe_name: str, language: str, ev: Evaluation, dataset: Path
                  ) -> dict[str, str]:  # fmt: skip
    """The harness task's two files (name -> text) for the release in ``dataset``."""
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
        else YES_NO.get(language, YES_NO["ko"]),
        "choice_fields": list(ev.choice_fields),
        "threshold": 3.0,
        "nested": sorted(set(re.findall(r"\{\{\s*(\w+)\.", ev.prompt))),
    }  # fmt: skip
    version = release_version(dataset, files)
    return {f"{name}.yaml": _yaml(name, ev, language, files, version),
            f"{name}.py": MODULE % {"spec": json.dumps(spec, ensure_ascii=False)}}  # fmt: skip
