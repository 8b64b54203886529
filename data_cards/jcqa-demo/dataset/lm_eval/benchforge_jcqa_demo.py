"""lm-evaluation-harness loader of a benchforge release (generated; see the YAML)."""

import json
from pathlib import Path

SPEC = json.loads('{"files": {"train": "../train.json", "validation": "../valid.json", "test": "../test.json"}, "target": "choice", "gold": "label", "labels": [], "choices": [], "choice_fields": ["choice0", "choice1", "choice2", "choice3", "choice4"], "threshold": 3.0, "nested": []}')
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
    doc["_choices"] = [str(record[f]) for f in SPEC["choice_fields"]]
    doc["_gold"] = int(_get(record, SPEC["gold"]))
    return doc
