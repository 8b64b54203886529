"""NLI items (KLUE 3.3.1): premises for the writing round, hypotheses for validation.

KLUE-NLI built its pairs in two rounds: a writer reads a premise and writes one
hypothesis that is true (entailment), one that is false (contradiction) and one that
may be either (neutral), or skips and reports the premise; four validators then label
every premise-hypothesis pair, and the writer's label counts as a fifth vote.

- ``premise_items``: the writing round's items (``item_id``, ``premise``, the sentence's
  provenance).
- ``hypothesis_items``: the validation round's items from the pulled writing round,
  three per written premise (``item_id`` = premise item id + ``-e``/``-c``/``-n``), with
  the writer (``author_id``) and the writer's label (``author_label``); every premise
  without hypotheses is returned with its reason (skipped, reported, empty field).
- ``with_authors``: the validation round's long table plus one ``role = author`` row
  per item holding the writer's label, the input of the ``majority`` rule (KLUE: 3 of 5
  votes including the author's).

Simulated writers (demos and tests only, ``simulate_truth: nli-templates``): each
premise item carries ``sim_entailment``, ``sim_contradiction`` and ``sim_neutral``, a
few templated rewrites of the premise per label (``templated_hypotheses``), of which a
simulated writer picks one. Templates are not people: they are often stilted, and
they plant exactly the label cues (a negating phrase in contradictions, a hedge in
neutrals) that KLUE's hypothesis-only split rule and the artifact report exist to
catch, so the demo's report shows them. The columns never reach the released data.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd

LABELS = ("entailment", "contradiction", "neutral")
SUFFIX = {"entailment": "e", "contradiction": "c", "neutral": "n"}
_TRAILING = re.compile(r"[\s.!~…\"'”’」』)\]]+$")

TEMPLATES = {
    "entailment": ["{plain}고 한다.", "{plain}는 이야기다.", "{plain}는 내용이다."],
    "contradiction": [
        "{plain}는 것은 사실이 아니다.",
        "{plain}는 말은 거짓이다.",
        "{plain}는 일은 결코 없었다.",
    ],
    "neutral": [
        "{plain}고 어제 한 친구가 말했다.",
        "많은 사람이 {plain}고 생각한다.",
        "{plain}는 소식이 다음 주에 또 나올 것이다.",
    ],
}


def plain_form(sentence: str) -> str:
    """The premise without its closing marks, in the plain ``-다`` style where the
    polite ``-습니다``/``-ㅂ니다`` ending can be turned back (``살겠습니다`` -> ``살겠다``,
    ``합니다`` -> ``한다``); other endings are left as written."""
    core = _TRAILING.sub("", sentence.strip())
    if core.endswith("습니다"):
        return core[: -len("습니다")] + "다"
    if core.endswith("니다") and len(core) >= 3:
        syllable = ord(core[-3]) - 0xAC00
        if 0 <= syllable < 11172 and syllable % 28 == 17:  # final consonant ㅂ
            return core[:-3] + chr(0xAC00 + syllable - 17 + 4) + "다"  # ㅂ -> ㄴ, + 다
    return core


def templated_hypotheses(premise: str) -> dict[str, list[str]]:
    """The simulated writers' variants per label (see the module docstring)."""
    plain = plain_form(premise)
    return {label: [t.format(plain=plain) for t in TEMPLATES[label]] for label in LABELS}


def _short_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def premise_items(
    premises: pd.DataFrame, simulate_truth: str | None, simulated: bool
) -> pd.DataFrame:
    """The writing round's items from selected premise sentences (``sent_id``, ``text``,
    ``corpus``, ``doc_id``, ``style``, ``domain``, ``license``)."""
    items = pd.DataFrame(
        {
            "item_id": ["p-" + _short_id(s) for s in premises["sent_id"].astype(str)],
            "premise": premises["text"].astype(str).str.strip(),
            "source": premises["corpus"].astype(str),
            "style": premises["style"].astype(str),
            "domain": premises["domain"].astype(str),
            "license": premises["license"].astype(str),
            "doc_id": premises["doc_id"].astype(str),
            "sent_id": premises["sent_id"].astype(str),
        }
    )
    if simulated and simulate_truth == "nli-templates":
        variants = [templated_hypotheses(p) for p in items["premise"]]
        for label in LABELS:
            items[f"sim_{label}"] = [v[label] for v in variants]
    return items.sort_values("item_id", kind="stable").reset_index(drop=True)


def _flags(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def hypothesis_items(
    writing: pd.DataFrame, premises: pd.DataFrame, simulated: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, dropped): three validation items per premise that its writer wrote all
    three hypotheses for; ``dropped`` has one row per other premise with ``reason``
    (``skipped``, ``report:<flag>``, ``empty_hypothesis``, ``not_written``)."""
    rows, dropped = [], []
    done = writing[~writing["cancelled"].fillna(False).astype(bool)]
    by_item = {k: g for k, g in done.groupby(done["item_id"].astype(str), sort=False)}
    skipped = set(writing.loc[writing["cancelled"].fillna(False).astype(bool), "item_id"])
    for premise in premises.itertuples(index=False):
        group = by_item.get(premise.item_id)
        if group is None:
            reason = "skipped" if premise.item_id in skipped else "not_written"
            dropped.append({"item_id": premise.item_id, "reason": reason, "detail": ""})
            continue
        first = group[group["annotation_id"] == group["annotation_id"].min()]
        flags = _flags(first["report_flags"].iloc[0])
        if flags:
            dropped.append({"item_id": premise.item_id, "reason": f"report:{flags.split('|')[0]}",
                            "detail": flags})  # fmt: skip
            continue
        texts = {f: str(v).strip() for f, v in zip(first["field"], first["value"], strict=True)
                 if f in LABELS and v is not None}  # fmt: skip
        missing = [label for label in LABELS if not texts.get(label)]
        if missing:
            dropped.append({"item_id": premise.item_id, "reason": "empty_hypothesis",
                            "detail": ",".join(missing)})  # fmt: skip
            continue
        for label in LABELS:
            rows.append(
                {
                    "item_id": f"{premise.item_id}-{SUFFIX[label]}",
                    "premise_id": premise.item_id,
                    "premise": premise.premise,
                    "hypothesis": texts[label],
                    "author_label": label,
                    "author_id": str(first["annotator_id"].iloc[0]),
                    "author_simulated": bool(first["simulated"].iloc[0]),
                    "source": premise.source,
                    "style": premise.style,
                    "license": premise.license,
                }
            )
    items = pd.DataFrame(rows)
    if simulated and len(items):
        items["sim_label"] = items["author_label"]
    return items, pd.DataFrame(dropped, columns=["item_id", "reason", "detail"])


def with_authors(validation: pd.DataFrame, hypotheses: pd.DataFrame) -> pd.DataFrame:
    """The validation round's table (``role = validator``) plus one ``role = author``
    row per item with the writer's label (KLUE-NLI counts it as a vote)."""
    validators = validation.assign(role="validator")
    authors = pd.DataFrame(
        {
            "item_id": hypotheses["item_id"].astype(str),
            "annotator_id": hypotheses["author_id"].astype(str),
            "field": "label",
            "value": hypotheses["author_label"].astype(str),
            "cancelled": False,
            "report_flags": "",
            "simulated": hypotheses["author_simulated"].astype(bool),
            "role": "author",
        }
    )
    return pd.concat([validators, authors], ignore_index=True)
