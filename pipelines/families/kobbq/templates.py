"""KoBBQ templates: reading, slot filling and expansion into samples (Jin et al. 2024, 3).

A template row (``KoBBQ_templates.tsv``) has an ambiguous context, a disambiguating
context, a biased and a counter-biased question and their answers. Person slots ``N1``
and ``N2`` hold the two groups; lexical slots ``W1``... and ``X1``... vary the wording.
The fillers of a slot are listed in ``Names`` (``N1: [손자, 손녀]; N2: [...]``) or
``Lexical_diversity``; each text writes a slot with its forms in place, particle
included (``[N1: 손자와, 손녀와]``), the i-th form belonging to the i-th filler. A bare
slot (``[N1]``) is filled with the filler and the particle of the row's ``*_post``
column for that text (``N1_amb_post``, ``N1_dis_post``, ``N1_ans_post``) in the form that
agrees with the filler (:func:`pipelines.families.kobbq.josa.attach`).

Expansion: every template x context version x filler combination (the product over the
slots, in the order ``Names`` then ``Lexical_diversity`` list them) x ambiguous /
disambiguated context x biased / counter-biased question. Sample ids follow the release:
``{category}-{template:03d}{version}-{n:03d}-{amb|dis}-{bsd|cnt}``, ``n`` the 1-based
index of the combination. Versions ``b`` and ``d`` swap the two persons (N1 <-> N2,
X1 <-> X2), and their ``n`` counts in the swapped order, so that ``n`` names the same
pair of fillers in every version (checked against the release's test file in the tests).

Answers (the release's README): versions ``a`` and ``c`` have a counter-biased
disambiguating context, ``b`` and ``d`` a biased one; the choices are the biased
question's answer, the counter-biased question's answer and "unknown"; the correct answer
is "unknown" in an ambiguous context and the question's answer column in a disambiguated
one; the biased answer of the biased question is the target group's person, of the
counter-biased question the other one.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import dynamic_options
from pipelines.core.errors import BenchforgeError

# the release's categories -> the prefix of their sample ids
CATEGORIES = {
    "Age": "age",
    "Disability_status": "disability_status",
    "Gender_identity": "gender_identity",
    "Physical_appearance": "physical_appearance",
    "Race_ethnicity_nationality": "race_ethnicity_nationality",
    "Religion": "religion",
    "SES": "ses",
    "Sexual_orientation": "sexual_orientation",
    "Domestic_area_of_origin": "domestic_area_of_origin",
    "Family_structure": "family_structure",
    "Political_orientation": "political_orientation",
    "Educational_background": "educational_background",
}
# KoBBQ Table 1: samples per category (the specification of the expansion's counts)
PAPER_SAMPLES = {
    "Age": 3608,
    "Disability_status": 2160,
    "Gender_identity": 768,
    "Physical_appearance": 4040,
    "Race_ethnicity_nationality": 51856,
    "Religion": 688,
    "SES": 6928,
    "Sexual_orientation": 552,
    "Domestic_area_of_origin": 800,
    "Family_structure": 1096,
    "Political_orientation": 312,
    "Educational_background": 3240,
}
# KoBBQ Table 1: templates per class (SR, TM, ST, NC), before the survey -> after it
PAPER_TEMPLATES = {
    "Age": (1, 0, 20, 1, 28, 21),
    "Disability_status": (0, 0, 20, 0, 25, 20),
    "Gender_identity": (0, 0, 25, 0, 29, 25),
    "Physical_appearance": (3, 0, 17, 3, 25, 20),
    "Race_ethnicity_nationality": (17, 33, 0, 10, 46, 43),
    "Religion": (10, 7, 4, 9, 25, 20),
    "SES": (7, 1, 16, 10, 28, 27),
    "Sexual_orientation": (10, 1, 5, 6, 25, 12),
    "Domestic_area_of_origin": (0, 0, 0, 22, 25, 22),
    "Family_structure": (0, 0, 0, 23, 25, 23),
    "Political_orientation": (0, 0, 0, 11, 28, 11),
    "Educational_background": (0, 0, 0, 24, 25, 24),
}
CLASSES = {"ST": "Simply-Transferred", "TM": "Target-Modified", "SR": "Sample-Removed",
           "NC": "Newly-Created"}  # fmt: skip
TEXTS = {
    "amb": "Ambiguous_context",
    "dis": "Disambiguating_context",
    "bsd": "Biased_question",
    "cnt": "Counter-biased_question",
    "bsd_ans": "Biased_question_answer",
    "cnt_ans": "Counter-biased_question_answer",
}
POST_OF = {"amb": "amb", "dis": "dis", "bsd_ans": "ans", "cnt_ans": "ans"}  # *_post columns
REQUIRED = ["Category", "ID", "version", "Label_annotation", "Stereotype", "Names",
            "Lexical_diversity", *TEXTS.values(), "N1_info", "N2_info",
            "Target_group"]  # fmt: skip
VERSIONS = ("a", "b", "c", "d")
BIASED_VERSIONS = ("b", "d")
SLOT = re.compile(r"\[\s*([A-Z]\d+)\s*(?::\s*([^\]]*))?\]")
LOOSE_SLOT = re.compile(r"\[\s*[A-Z]\d+\s*[:\]]")
SLOT_LIST = re.compile(r"\s*([A-Z]\d+)\s*:\s*\[(.*)\]\s*$")
SAMPLE_COLUMNS = ["sample_id", "template_id", "category", "template", "version",
                  "label_annotation", "n", "context_type", "question_type", "context",
                  "question", "choices", "biased_answer", "answer", "unknown", "stereotype",
                  "target_group", "fillers", "bbq_id", "bbq_category", "row"]  # fmt: skip


class TemplateError(BenchforgeError, ValueError):
    """A template that cannot be read or filled; the message names the file and line."""


def _words(text: str) -> list[str]:
    return [" ".join(x.split()) for x in text.split(",")]


def parse_slots(text: str, where: str) -> dict[str, list[str]]:
    """``N1: [a, b]; N2: [c]`` -> {"N1": ["a", "b"], "N2": ["c"]} (blank: {})."""
    out: dict[str, list[str]] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        m = SLOT_LIST.match(part)
        if not m:
            raise TemplateError(f"{where}: {part.strip()!r} is not 'NAME: [filler, ...]'")
        values = _words(m.group(2))
        if not all(values):
            raise TemplateError(f"{where}: slot {m.group(1)} has an empty filler")
        if m.group(1) in out:
            raise TemplateError(f"{where}: slot {m.group(1)} is listed twice")
        out[m.group(1)] = values
    return out


def swap(slot: str) -> str:
    """The other person's slot (N1 <-> N2, X1 <-> X2); lexical W slots stay."""
    if slot[0] in "NX" and slot[1:] in ("1", "2"):
        return slot[0] + ("2" if slot[1:] == "1" else "1")
    return slot


@dataclass
class Template:
    """One row of the template file (one context version of a template)."""

    path: str
    line: int
    category: str
    template: int
    version: str
    label: str
    stereotype: str
    texts: dict[str, str]
    slots: dict[str, list[str]]
    posts: dict[str, str]
    info: dict[str, str]
    target_group: str
    bbq_id: str = ""
    bbq_category: str = ""
    survey_stats: dict | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def template_id(self) -> str:
        return f"{CATEGORIES[self.category]}-{self.template:03d}"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def order(self) -> list[str]:
        """The slots in the order their combinations are counted (persons swapped in the
        biased versions, so that ``n`` is the same pair of fillers in every version)."""
        names = list(self.slots)
        if self.version in BIASED_VERSIONS:
            names = [swap(s) if swap(s) in self.slots else s for s in names]
        return names


def read_templates(path: Path, categories: dict[str, str] | None = None) -> list[Template]:
    """Every row of a KoBBQ template file, checked: a missing column, an unknown
    category, version or class, a slot that does not parse, a slot a text uses but no
    list gives, or fewer forms in a text than the slot has fillers is a
    :class:`TemplateError` naming the file and the line. More forms than fillers (two
    release rows) is kept, with a warning: the extra forms are never used."""
    from pipelines.core.line_files import InputError, iter_rows

    categories = categories or CATEGORIES
    out: list[Template] = []
    try:
        rows = [(line, r) for line, r in iter_rows(Path(path), "tsv") if r is not None]
    except InputError as exc:
        raise TemplateError(str(exc)) from None
    if not rows:
        raise TemplateError(f"{path}: no templates")
    missing = [c for c in REQUIRED if c not in rows[0][1]]
    if missing:
        raise TemplateError(f"{path}: missing columns {missing} (a KoBBQ template file has "
                            f"{REQUIRED})")  # fmt: skip
    seen: set[tuple[str, int, str]] = set()
    for line, r in rows:
        where = f"{path}:{line}"
        if r["Category"] not in categories:
            raise TemplateError(f"{where}: unknown category {r['Category']!r} (known: "
                                f"{sorted(categories)})")  # fmt: skip
        if r["version"] not in VERSIONS:
            raise TemplateError(f"{where}: version {r['version']!r} is not one of {VERSIONS}")
        if r["Label_annotation"] not in CLASSES:
            raise TemplateError(f"{where}: template class {r['Label_annotation']!r} is not "
                                f"one of {sorted(CLASSES)}")  # fmt: skip
        try:
            number = int(r["ID"])
        except ValueError:
            raise TemplateError(f"{where}: template ID {r['ID']!r} is not a number") from None
        key = (r["Category"], number, r["version"])
        if key in seen:
            raise TemplateError(f"{where}: {r['Category']} template {number}{r['version']} "
                                "appears twice")  # fmt: skip
        seen.add(key)
        slots = parse_slots(r["Names"], f"{where}: Names")
        for name, values in parse_slots(r["Lexical_diversity"], f"{where}: "
                                        "Lexical_diversity").items():  # fmt: skip
            if name in slots:
                raise TemplateError(f"{where}: slot {name} is in Names and Lexical_diversity")
            slots[name] = values
        stats = None
        if r.get("Survey_stats"):
            stats = _stats(r["Survey_stats"], where)
        t = Template(
            path=str(path), line=line, category=r["Category"], template=number,
            version=r["version"], label=r["Label_annotation"], stereotype=r["Stereotype"],
            texts={k: r[c] for k, c in TEXTS.items()}, slots=slots,
            posts={k: v for k, v in r.items() if k.endswith("_post") and v},
            info={"N1": r["N1_info"], "N2": r["N2_info"]}, target_group=r["Target_group"],
            bbq_id=r.get("BBQ_id", ""), bbq_category=r.get("BBQ_category", ""),
            survey_stats=stats,
        )  # fmt: skip
        _check_texts(t)
        out.append(t)
    return out


def _stats(text: str, where: str) -> dict:
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise TemplateError(f"{where}: Survey_stats {text[:60]!r} is not a mapping") from None
    if not isinstance(value, dict):
        raise TemplateError(f"{where}: Survey_stats is not a mapping")
    return value


def _check_texts(t: Template) -> None:
    for key, text in t.texts.items():
        for m in SLOT.finditer(text):
            name, forms = m.group(1), m.group(2)
            if name not in t.slots:
                raise TemplateError(
                    f"{t.where}: {TEXTS[key]} uses slot {name}, which neither "
                    f"Names nor Lexical_diversity lists ({list(t.slots)})"
                )
            if forms is None:
                continue
            if "[" in forms:
                raise TemplateError(
                    f"{t.where}: {TEXTS[key]}: a slot does not parse near "
                    f"{text[m.start() : m.start() + 30]!r} (an unclosed bracket)"
                )
            n_forms, n_fill = len(_words(forms)), len(t.slots[name])
            if n_forms < n_fill:
                raise TemplateError(f"{t.where}: {TEXTS[key]}: slot {name} has {n_forms} forms "
                                    f"for its {n_fill} fillers")  # fmt: skip
            if n_forms > n_fill:
                t.warnings.append(f"{TEXTS[key]}: slot {name} has {n_forms} forms for "
                                  f"{n_fill} fillers (the extra ones are not used)")  # fmt: skip
        rest = LOOSE_SLOT.search(SLOT.sub("", text))
        if rest:
            raise TemplateError(f"{t.where}: {TEXTS[key]}: a slot does not parse near "
                                f"{text[rest.start():rest.start() + 30]!r}")  # fmt: skip


def fill(t: Template, key: str, choice: dict[str, int]) -> str:
    """Text ``key`` of ``t`` with each slot replaced by the chosen filler's form."""
    from pipelines.families.kobbq.josa import attach

    def one(m: re.Match) -> str:
        name, forms = m.group(1), m.group(2)
        i = choice[name]
        if forms is not None:
            return _words(forms)[i]
        post = t.posts.get(f"{name}_{POST_OF[key]}_post", "") if key in POST_OF else ""
        return attach(t.slots[name][i], post)

    return SLOT.sub(one, t.texts[key])


def particle_report(templates: list[Template]) -> dict:
    """A lint of the template file: of the written N1/N2 forms that are the filler plus
    its ``*_post`` particle (a two-form one: 은/는, 이/가 ...), how many use the form that
    does not agree with the filler. The written forms are used either way."""
    from pipelines.families.kobbq.josa import PAIRS, attach

    checked = differ = 0
    examples: list[str] = []
    for t in templates:
        for key, part in POST_OF.items():
            for m in SLOT.finditer(t.texts[key]):
                name, forms = m.group(1), m.group(2)
                post = t.posts.get(f"{name}_{part}_post")
                if forms is None or not post or name not in ("N1", "N2"):
                    continue
                if post not in PAIRS:
                    continue
                for filler, form in zip(t.slots[name], _words(forms), strict=False):
                    if form not in (filler + f for f in PAIRS[post]):
                        continue
                    checked += 1
                    if form != attach(filler, post):
                        differ += 1
                        if len(examples) < 5:
                            examples.append(f"{t.where}: {form!r} vs {attach(filler, post)!r}")
    return {"checked": checked, "differ": differ, "examples": examples}


def expand(
    templates: list[Template],
    unknown: str = "알 수 없음",
    allowed: dict[tuple[str, str], dict[str, set[int]]] | None = None,
) -> pd.DataFrame:
    """Every sample of ``templates`` (see the module docstring), one row each
    (``SAMPLE_COLUMNS``). ``allowed`` limits the fillers of a (template id, version)'s
    slots to the given indices (the survey's targets); its other combinations are left
    out (:func:`pipelines.families.kobbq.survey.limit_by_survey` says which and why)."""
    rows: list[tuple] = []
    for t in templates:
        order = t.order
        limit = (allowed or {}).get((t.template_id, t.version), {})
        sizes = [range(len(t.slots[s])) for s in order]
        biased_context = t.version in BIASED_VERSIONS
        prefix = f"{t.template_id}{t.version}"
        for n, combo in enumerate(itertools.product(*sizes), start=1):
            choice = dict(zip(order, combo, strict=True))
            if limit and any(choice[s] not in ok for s, ok in limit.items()):
                continue
            amb, dis = fill(t, "amb", choice), fill(t, "dis", choice)
            ans = {q: fill(t, f"{q}_ans", choice) for q in ("bsd", "cnt")}
            choices = [ans["bsd"], ans["cnt"], unknown]
            fillers = json.dumps({s: t.slots[s][i] for s, i in choice.items()},
                                 ensure_ascii=False)  # fmt: skip
            for ctx, context in (("amb", amb), ("dis", f"{amb} {dis}")):
                for q in ("bsd", "cnt"):
                    other = "cnt" if q == "bsd" else "bsd"
                    biased = ans[q] if biased_context else ans[other]
                    answer = unknown if ctx == "amb" else ans[q]
                    rows.append((f"{prefix}-{n:03d}-{ctx}-{q}", t.template_id, t.category,
                                 t.template, t.version, t.label, n, ctx, q, context,
                                 fill(t, q, choice), choices, biased, answer, unknown,
                                 t.stereotype, t.target_group, fillers, t.bbq_id,
                                 t.bbq_category, t.line))  # fmt: skip
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def counts(samples: pd.DataFrame, templates: list[Template]) -> pd.DataFrame:
    """Per category: templates, template rows, samples (Table 1's unit: every
    combination, as the release counts them), unique (context, question) pairs, and the
    paper's Table 1 count beside them."""
    per = []
    for cat in CATEGORIES:
        s = samples[samples["category"] == cat]
        ts = [t for t in templates if t.category == cat]
        if not ts and not len(s):
            continue
        per.append({
            "category": cat,
            "templates": len({t.template for t in ts}),
            "template_rows": len(ts),
            "samples": len(s),
            "unique_context_question": int(s[["context", "question"]].drop_duplicates()
                                           .shape[0]),
            "paper": PAPER_SAMPLES.get(cat),
        })  # fmt: skip
    frame = pd.DataFrame(per)
    total = {"category": "total", **{c: int(frame[c].sum()) for c in frame.columns[1:]}}
    frame = pd.concat([frame, pd.DataFrame([total])], ignore_index=True)
    frame["difference"] = frame["samples"] - frame["paper"]
    return frame


# KoBBQ 3.1: the versions of a template that make one example (a counter-biased context
# and its biased twin, the persons swapped); a template with versions c and d has a
# second pair of groups
VERSION_PAIRS = (("a", "b"), ("c", "d"))


def table1(samples: pd.DataFrame, templates: list[Template]) -> pd.DataFrame:
    """KoBBQ Table 1 beside this build, category by category: the templates per class
    (TM, ST, NC; SR templates are not in the release) and in all, and the samples, each
    with the paper's figure and the difference (computed from the files, not typed)."""
    have = class_counts(templates)
    per = counts(samples, templates).set_index("category")
    rows = []
    for cat, (_, tm, st, nc, _, after) in PAPER_TEMPLATES.items():
        c = have.get(cat, {})
        row = {"category": cat}
        for name, paper in (("TM", tm), ("ST", st), ("NC", nc)):
            row[name], row[f"{name}_paper"] = c.get(name, 0), paper
        row["templates"] = sum(c.get(x, 0) for x in ("TM", "ST", "NC"))
        row["templates_paper"] = after
        row["samples"] = int(per.at[cat, "samples"]) if cat in per.index else 0
        row["samples_paper"] = PAPER_SAMPLES[cat]
        rows.append(row)
    frame = pd.DataFrame(rows)
    total = {"category": "total", **{c: int(frame[c].sum()) for c in frame.columns[1:]}}
    frame = pd.concat([frame, pd.DataFrame([total])], ignore_index=True)
    frame["templates_difference"] = frame["templates"] - frame["templates_paper"]
    frame["samples_difference"] = frame["samples"] - frame["samples_paper"]
    return frame


def evaluation_set(samples: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """KoBBQ 4.1's evaluation set: "a randomly sampled example from each template",
    drawn with ``seed``: one pair of versions (a/b, or c/d where the template has a
    second pair of groups) and one filler combination ``n`` of it, with its eight
    context-question pairs (3.1: ambiguous / disambiguated x biased / counter-biased
    context x biased / counter-biased question). ``n`` is drawn among the combinations
    both versions of the pair have."""
    rng = np.random.default_rng(seed)
    keep = []
    for _, group in samples.groupby("template_id", sort=True):
        have = set(group["version"])
        pairs = [p for p in VERSION_PAIRS if have & set(p)]
        if len(pairs) > 1:
            pair = pairs[int(rng.integers(len(pairs)))]
        else:
            pair = pairs[0] if pairs else tuple(sorted(have))
        group = group[group["version"].isin(pair)]
        per_version = [set(g["n"]) for _, g in group.groupby("version")]
        common = sorted(set.intersection(*per_version)) or sorted(set(group["n"]))
        n = common[int(rng.integers(len(common)))]
        keep.append(group[group["n"] == n])
    if not keep:
        return samples.head(0)
    return pd.concat(keep).sort_values("sample_id").reset_index(drop=True)


def reading_check_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """The samples of KoBBQ 3.2.5's reading-comprehension task: "counter-biased contexts
    and counter-biased questions" (the disambiguated context of a counter-biased version,
    a or c, with the counter-biased question), one context-question pair per version."""
    pick = (
        ~samples["version"].isin(BIASED_VERSIONS)
        & (samples["context_type"] == "dis")
        & (samples["question_type"] == "cnt")
    )
    return samples[pick].reset_index(drop=True)


def release_records(samples: pd.DataFrame) -> list[dict]:
    """The release's layout (``KoBBQ_all_samples.tsv``): sample_id, label_annotation,
    context, question, choices, biased_answer, answer, bbq_id, bbq_category, prediction
    (empty, for the model's answer)."""
    cols = ["sample_id", "label_annotation", "context", "question", "choices",
            "biased_answer", "answer", "bbq_id", "bbq_category"]  # fmt: skip
    out = samples[cols].copy()
    out["choices"] = [list(c) for c in out["choices"]]
    out["prediction"] = ""
    return out.to_dict(orient="records")


def release_tsv(records: list[dict], spreadsheet_safe: bool = True) -> str:
    """Release records as TSV (``choices`` as the release writes it: a Python list). A
    tab or line break inside a field becomes a space, and, with ``spreadsheet_safe``, a
    cell a spreadsheet would run as a formula gets a leading ``'``
    (``pipelines.core.spreadsheet``); nothing else changes, so that an answer stays one of
    its choices character for character (exactly so in the JSON Lines and Parquet files)."""
    from pipelines.core.spreadsheet import delimited

    if not records:
        return ""
    cols = list(records[0])
    rows = ([str(list(r[c])) if c == "choices" else r[c] for c in cols] for r in records)
    return delimited(rows, cols, spreadsheet_safe=spreadsheet_safe)


def warnings_of(templates: list[Template]) -> list[str]:
    return [f"{t.where}: {w}" for t in templates for w in t.warnings]


def class_counts(templates: list[Template]) -> dict[str, dict[str, int]]:
    """Templates per category and class (ST/TM/NC/SR), counting a template once."""
    seen = {(t.category, t.template): t.label for t in templates}
    out: dict[str, Counter] = {}
    for (cat, _), label in seen.items():
        out.setdefault(cat, Counter())[label] += 1
    return {c: dict(v) for c, v in out.items()}


def check_items(samples: pd.DataFrame) -> pd.DataFrame:
    """Label Studio items of the reading-comprehension check
    (``annotation_configs/kobbq_check.xml``), one per sample: context, question, the
    choices as options, and ``sim_answer`` (the correct answer: simulated readers answer
    it with their accuracy)."""
    return pd.DataFrame({
        "item_id": samples["sample_id"].to_numpy(),
        "context": samples["context"].to_numpy(),
        "question": samples["question"].to_numpy(),
        "options": [dynamic_options(list(ch)) for ch in samples["choices"]],
        "sim_answer": samples["answer"].to_numpy(),
    })  # fmt: skip
