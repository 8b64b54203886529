"""lm-evaluation-harness loader of a benchforge release (generated; see the YAML)."""

import json
from pathlib import Path

SPEC = json.loads('{"files": {"validation": "../dev.jsonl"}, "target": "score", "gold": "score", "labels": [], "choices": ["0", "1", "2", "3", "4", "5"], "choice_fields": [], "threshold": 3.0, "nested": []}')
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


def _doc(record):
    doc = dict(record)
    doc["_score"] = float(_get(record, SPEC["gold"]))
    doc["_choices"] = SPEC["choices"]  # the scale's points, "0" to "5"
    doc["_gold"] = min(max(int(round(doc["_score"])), 0), len(SPEC["choices"]) - 1)
    return doc


def process_results(doc, results):
    """The predicted similarity: the expectation over the scale's points under the
    model's normalised likelihoods of each; Pearson's r against the gold score and F1
    of both cut at the paraphrase threshold (KLUE 3.2.2)."""
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
