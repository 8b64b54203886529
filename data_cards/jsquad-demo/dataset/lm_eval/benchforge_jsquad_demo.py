"""lm-evaluation-harness loader of a benchforge release (generated; see the YAML)."""

import json
from pathlib import Path

SPEC = json.loads('{"files": {"train": "../train.jsonl", "validation": "../valid.jsonl", "test": "../test.jsonl"}, "target": "answer", "gold": "", "labels": [], "choices": [], "choice_fields": [], "threshold": 3.0, "nested": []}')
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
    """The release's splits as a DatasetDict (train, validation, test)."""
    import datasets

    out = {}
    for split, name in SPEC["files"].items():
        path = (HERE / name).resolve()
        if path.is_file():
            out[split] = datasets.Dataset.from_list([_plain(_doc(r)) for r in _records(path)])
    return datasets.DatasetDict(out)


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
    text = re.sub(r"\b(a|an|the)\b", " ", text)
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
    pred = results[0].strip().split("\n")[0].strip()
    answers = doc["_answers"]
    if not answers:
        em = f1 = float(not pred)
    else:
        em = max(float(_normalize(a) == _normalize(pred)) for a in answers)
        f1 = max(_char_f1(a, pred) for a in answers)
    return {"exact_match": em, "char_f1": f1}
