"""The KoBBQ survey rules (Jin et al. 2024, 3.2.5): which stereotypes stay, and which
groups are a template's targets and non-targets.

Each survey question names a category, a stereotype and the groups offered, with the
votes of its respondents (100 per question in the release) and ``no_stereo`` (those who
said no such stereotype exists in Korean society). Two kinds of question:

- **type 1** (target and non-target groups to be chosen, "select all that apply"): a
  group is a **target** when it has at least ``target_ratio`` (2) times the votes it
  would get under an equal split of the respondents who saw a stereotype over the
  groups offered, ``E = (respondents - no_stereo) / groups``; a **non-target** when it
  has at most ``non_target_ratio`` (0.5) times ``E``; a question with no target or no
  non-target group is dropped. For race/ethnicity/nationality (footnote 13), ``E``
  divides by the number of offered options that name a region (``region_options``),
  since all 38 options would make the threshold too low;
- **type 2** (a fixed target, the stereotype to validate, one choice): kept when more
  than ``type2_share`` (2/3) of the respondents who did not pick "no stereotype" chose
  the target;
- both, after the rule of the question's type (3.2.5, Data Filtering: "we additionally
  eliminate"): dropped when more than ``no_stereo_max`` (half) of the respondents picked
  "no stereotype exists". A question that fails both is counted under its type's rule.

The rules run in the order 3.2.5 gives them (:data:`RULE_ORDER`); the reading check
(3.2.5, last paragraph) comes after them, on the samples
(``pipelines.families.kobbq.templates.reading_check_samples``).

Which type a question is: the recipe's ``types`` when it names the question; else, from
the template file, type 1 when a template of the question is Target-Modified (TM) or its
category is one where the paper let the survey choose the groups (religion, domestic area
of origin, race/ethnicity/nationality), and the question offers more than two groups (a
two-group question is the type-2 questionnaire: one group against the other); a question
no template uses is read by its format (type 2 when it offers two groups whose votes and
``no_stereo`` add up to the respondents: one choice each).

The survey comes from the release's JSON or from Label Studio annotations of the survey
interface (``annotation_configs/kobbq_survey.xml``), tallied by :func:`tally`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipelines.annotation.label_config import dynamic_options
from pipelines.core.errors import BenchforgeError
from pipelines.families.kobbq.templates import CATEGORIES, Template, TemplateError

NO_STEREO = "no_stereo"
# what the template file is: the release's (already through the survey) or templates
# written before it (the rules choose their fillers)
STAGES = ("released", "before-survey")
NO_STEREO_LABEL = "한국 사회에 관련된 고정관념 없음"  # the survey's option (the release's README)
TYPE1_CATEGORIES = ["Religion", "Domestic_area_of_origin", "Race_ethnicity_nationality"]
# KoBBQ footnote 13: for race/ethnicity/nationality, E counts only the options that name
# a region (with all 38 options the threshold would be too low). The survey does not
# mark them; these are the options of the released survey that name a world region
# rather than a nation, a race or an ethnic group (benchforge's reading of the footnote).
REGION_OPTIONS = [
    "동남아시아인", "동양인", "러시아·중앙아시아인", "북미인", "사하라 이남 아프리카인",
    "서남아시아인", "오세아니아인", "유럽인", "중남미인", "중동·북아프리카인",
]  # fmt: skip
# KoBBQ 3.2.5's rules in its order: (rule, reason of a drop, the paragraph that gives it)
RULE_ORDER = [
    # (rule, the reasons of its drops, the paragraph, the questions it judges: a survey
    # type, "kept" (what the type rules kept) or "round" (samples, by a check round))
    ("target modification (type 1)", ("no_target", "no_non_target"), "Target Modification", 1),
    ("stereotype validation (type 2)", ("weak_stereotype",), "Stereotype Validation", 2),
    ("no-stereotype count", ("no_stereotype",), "Data Filtering", "kept"),
    ("reading comprehension", ("low_reader_accuracy",), "Data Filtering", "round"),
]
# the samples of a type-1 template whose fillers' groups lack the slot's role
GROUP_ROLE = "survey:group_role"
PAPER_DROPPED = {1: 0.083, 2: 0.136}  # KoBBQ 3.2.5: stereotypes the survey removed, per type


class SurveyError(BenchforgeError, ValueError):
    """A survey that cannot be read; the message names the file and the entry or line."""


@dataclass
class SurveySettings:
    """The survey rules' thresholds (KoBBQ 3.2.5's values as defaults)."""

    respondents: int = 100  # per question of the released JSON
    target_ratio: float = 2.0
    non_target_ratio: float = 0.5
    type2_share: float = 2 / 3
    no_stereo_max: float = 0.5
    type1_categories: list[str] = field(default_factory=lambda: list(TYPE1_CATEGORIES))
    type1_classes: list[str] = field(default_factory=lambda: ["TM"])
    # "Category/stereotype" -> 1 or 2, over the rule above
    types: dict[str, int] = field(default_factory=dict)
    # footnote 13: in these categories E divides by the region options offered only
    region_categories: list[str] = field(default_factory=lambda: ["Race_ethnicity_nationality"])
    region_options: list[str] = field(default_factory=lambda: list(REGION_OPTIONS))

    def __post_init__(self) -> None:
        import math

        # issue 32: target_ratio -2 made every group a target and kept no question
        if not (math.isfinite(self.target_ratio) and self.target_ratio > 0):
            raise ValueError(f"target_ratio must be a number > 0, got {self.target_ratio}")
        if not (math.isfinite(self.non_target_ratio)
                and 0 <= self.non_target_ratio < self.target_ratio):  # fmt: skip
            raise ValueError(
                f"non_target_ratio must be >= 0 and below target_ratio {self.target_ratio}, "
                f"got {self.non_target_ratio}"
            )
        for name in ("type2_share", "no_stereo_max"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0 <= value <= 1):
                raise ValueError(f"{name} is a share, in [0, 1]; got {value}")
        if self.respondents < 1:
            raise ValueError(f"respondents must be >= 1, got {self.respondents}")
        for key, value in self.types.items():
            if value not in (1, 2):
                raise ValueError(f"types.{key}: type {value} is not 1 or 2")
        unknown = sorted(set(self.type1_categories) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"survey type1_categories: unknown categories {unknown}")


@dataclass
class Question:
    """One survey question: its votes per group (in the order offered) and no_stereo."""

    question_id: str
    category: str
    stereotype: str
    votes: dict[str, int]
    no_stereo: int
    respondents: int
    where: str

    @property
    def stats(self) -> dict[str, int]:
        return {**self.votes, NO_STEREO: self.no_stereo}


def read_survey(path: Path, settings: SurveySettings | None = None) -> list[Question]:
    """The questions of the release's ``KoBBQ_survey_result.json`` (a JSON list) or of a
    JSON Lines file with the same entries. An entry without category, stereotype or
    ``survey_stats``, without ``no_stereo``, with a vote that is not a whole number >= 0,
    or an unknown category is a :class:`SurveyError` naming the file and the entry."""
    settings = settings or SurveySettings()
    path = Path(path)
    if not path.is_file():
        raise SurveyError(f"{path}: file not found")
    text = path.read_text(encoding="utf-8-sig")
    entries: list[tuple[str, object]] = []
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SurveyError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
        entries = [(f"{path}: entry {i}", e) for i, e in enumerate(data, start=1)]
    else:
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entries.append((f"{path}:{lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise SurveyError(f"{path}:{lineno}: malformed JSON: {exc.msg}") from None
    if not entries:
        raise SurveyError(f"{path}: no survey questions")
    out = []
    for i, (where, e) in enumerate(entries, start=1):
        if not isinstance(e, dict):
            raise SurveyError(f"{where}: expected an object, got {type(e).__name__}")
        for key in ("category", "stereotype", "survey_stats"):
            if key not in e:
                raise SurveyError(f"{where}: no {key!r} (keys: {sorted(e)})")
        out.append(_question(e, i, where, e.get("respondents") or settings.respondents))
    return out


def _question(e: dict, index: int, where: str, respondents: int) -> Question:
    where = f"{where} ({e['category']} / {e['stereotype']})"
    if e["category"] not in CATEGORIES:
        raise SurveyError(f"{where}: unknown category {e['category']!r} (known: "
                          f"{sorted(CATEGORIES)})")  # fmt: skip
    stats = e["survey_stats"]
    if not isinstance(stats, dict):
        raise SurveyError(f"{where}: survey_stats is not a mapping")
    if NO_STEREO not in stats:
        raise SurveyError(f"{where}: survey_stats has no {NO_STEREO!r} count (groups: "
                          f"{sorted(stats)})")  # fmt: skip
    for group, v in stats.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise SurveyError(f"{where}: votes for {group!r} are {v!r}, not a count")
    votes = {g: v for g, v in stats.items() if g != NO_STEREO}
    if len(votes) < 2:
        raise SurveyError(f"{where}: {len(votes)} group(s) offered; a question compares two "
                          "or more")  # fmt: skip
    if stats[NO_STEREO] > respondents:
        raise SurveyError(f"{where}: no_stereo {stats[NO_STEREO]} > {respondents} respondents")
    return Question(f"{CATEGORIES[e['category']]}-q{index:03d}", e["category"], e["stereotype"],
                    votes, stats[NO_STEREO], int(respondents), where)  # fmt: skip


def _stats_key(stats: dict) -> str:
    return json.dumps(stats, ensure_ascii=False, sort_keys=True)


def link(questions: list[Question], templates: list[Template], respondents: int = 100
         ) -> tuple[list[Question], dict[str, list[Template]]]:  # fmt: skip
    """The questions and the templates of each. A template that records its survey votes
    (``Survey_stats``) belongs to the question with the same category, stereotype and
    votes (two questions can share a stereotype); when the survey file has none, the
    template's own votes are a question of their own (id ``<category>-t<template>``,
    ``where``: the template file). A template without votes belongs to the first question
    with its category and stereotype."""
    questions = list(questions)
    by_exact = {(q.category, q.stereotype, _stats_key(q.stats)): q.question_id for q in questions}
    by_name: dict[tuple, str] = {}
    for q in questions:
        by_name.setdefault((q.category, q.stereotype), q.question_id)
    out: dict[str, list[Template]] = {q.question_id: [] for q in questions}
    for t in templates:
        if t.survey_stats:
            key = (t.category, t.stereotype, _stats_key(t.survey_stats))
            if key not in by_exact:
                e = {"category": t.category, "stereotype": t.stereotype,
                     "survey_stats": t.survey_stats}  # fmt: skip
                try:
                    q = _question(e, t.template, f"{t.where}: Survey_stats", respondents)
                except SurveyError as exc:
                    raise TemplateError(str(exc)) from None
                q.question_id = f"{CATEGORIES[t.category]}-t{t.template:03d}"
                questions.append(q)
                by_exact[key] = q.question_id
                out[q.question_id] = []
            out[by_exact[key]].append(t)
        elif (t.category, t.stereotype) in by_name:
            out[by_name[(t.category, t.stereotype)]].append(t)
    return questions, out


def question_type(q: Question, linked: list[Template], settings: SurveySettings
                  ) -> tuple[int, str]:  # fmt: skip
    """(type, what decided it): see the module docstring."""
    key = f"{q.category}/{q.stereotype}"
    if key in settings.types:
        return settings.types[key], "recipe"
    if linked:
        chooses = any(t.label in settings.type1_classes for t in linked) or (
            q.category in settings.type1_categories
        )
        return (1 if chooses and len(q.votes) > 2 else 2), "templates"
    one_choice = len(q.votes) == 2 and sum(q.votes.values()) + q.no_stereo == q.respondents
    return (2 if one_choice else 1), "survey format"


def first_per_category(questions: list[Question], n: int) -> list[Question]:
    """The first ``n`` questions of each category, in file order (0: all of them)."""
    if not n:
        return list(questions)
    seen: dict[str, int] = {}
    picked = []
    for q in questions:
        seen[q.category] = seen.get(q.category, 0) + 1
        if seen[q.category] <= n:
            picked.append(q)
    return picked


def with_item_types(settings: SurveySettings, items: pd.DataFrame) -> SurveySettings:
    """``settings`` with each survey item's question fixed to the type it was asked as
    (its ``survey_type``): a round's tally is judged as the release question was."""
    from dataclasses import replace

    keys = zip(items["category"], items["stereotype"], items["survey_type"], strict=True)
    return replace(settings, types={**settings.types, **{f"{c}/{s}": int(t) for c, s, t in keys}})


def fixed_target(q: Question, linked: list[Template]) -> str:
    """The type-2 target: the templates' target group when it is offered, else the
    group with the most votes."""
    for t in linked:
        if t.target_group in q.votes:
            return t.target_group
    return max(q.votes, key=lambda g: q.votes[g])


def options_counted(q: Question, settings: SurveySettings) -> int:
    """The number of options ``E`` divides by: every group offered, or, in a category of
    ``region_categories`` (KoBBQ footnote 13), the offered groups that name a region
    (all of them when none does)."""
    if q.category in settings.region_categories:
        regions = [g for g in q.votes if g in set(settings.region_options)]
        if regions:
            return len(regions)
    return len(q.votes)


def apply_rules(questions: list[Question], templates: list[Template],
                settings: SurveySettings) -> pd.DataFrame:  # fmt: skip
    """One row per question: category, stereotype, type (and what decided it),
    respondents, no_stereo and its share, every group with its votes, share and role
    (``groups``: JSON), the targets and non-targets, ``kept``, ``reason`` when dropped,
    and the templates that use it."""
    questions, linked = link(questions, templates, settings.respondents)
    rows = []
    for q in questions:
        ts = linked[q.question_id]
        kind, source = question_type(q, ts, settings)
        saw = q.respondents - q.no_stereo
        expected = saw / options_counted(q, settings)
        roles: dict[str, str] = {}
        reason = None
        if kind == 1:
            for g, v in q.votes.items():
                roles[g] = ("target" if v >= settings.target_ratio * expected
                            else "non-target" if v <= settings.non_target_ratio * expected
                            else "neither")  # fmt: skip
        else:
            target = fixed_target(q, ts)
            roles = {g: "target" if g == target else "non-target" for g in q.votes}
        share_no = q.no_stereo / q.respondents if q.respondents else 0.0
        stereo_votes = sum(q.votes.values())
        # KoBBQ 3.2.5's order: the question's own rule first (Target Modification for
        # type 1, Stereotype Validation for type 2), then Data Filtering's "no stereotype
        # exists" count, which "additionally" removes what the first rule kept
        if kind == 1 and "target" not in roles.values():
            reason = "no_target"
        elif kind == 1 and "non-target" not in roles.values():
            reason = "no_non_target"
        elif kind == 2:
            target = next(g for g, r in roles.items() if r == "target")
            if not stereo_votes or q.votes[target] / stereo_votes <= settings.type2_share:
                reason = "weak_stereotype"
        if reason is None and share_no > settings.no_stereo_max:
            reason = "no_stereotype"
        groups = [
            {
                "group": g,
                "votes": v,
                "share": round(v / q.respondents, 4) if q.respondents else 0.0,
                "role": roles[g],
            }
            for g, v in q.votes.items()
        ]
        rows.append({
            "question_id": q.question_id, "category": q.category, "stereotype": q.stereotype,
            # the file's name, not where this checkout keeps it: a release names no local path
            "source": Path(q.where.split(":")[0].split(" (")[0]).name, "type": kind,
            "type_source": source, "respondents": q.respondents,
            "no_stereo": q.no_stereo, "no_stereo_share": round(share_no, 4),
            "expected_votes": round(expected, 3) if kind == 1 else None,
            "groups": json.dumps(groups, ensure_ascii=False),
            "targets": [g for g, r in roles.items() if r == "target"],
            "non_targets": [g for g, r in roles.items() if r == "non-target"],
            "kept": reason is None, "reason": reason,
            "templates": sorted({t.template_id for t in ts}),
        })  # fmt: skip
    return pd.DataFrame(rows)


def slot_groups(t: Template, slot: str, offered: dict[str, int] | list[str]) -> list[str | None]:
    """The survey group of each filler of person slot ``slot``: the slot's ``*_info``
    names one group (all its fillers), or one per filler; None where it cannot tell."""
    info = t.info.get(slot, "")
    n = len(t.slots.get(slot, []))
    if info in offered:
        return [info] * n
    parts = [p.strip() for p in info.split(",")]
    if len(parts) == n and all(p in offered for p in parts):
        return parts
    return [None] * n


def template_roles(t: Template, row: dict) -> dict[str, list[tuple[str, str, str]]]:
    """Per person slot of a type-1 template: (filler, group, the survey's role) where the
    role contradicts the slot (the target's slot needs targets, the other non-targets)."""
    groups = {g["group"]: g["role"] for g in json.loads(row["groups"])}
    targets = {p.strip() for p in t.target_group.split(",")} | {t.target_group}
    out: dict[str, list[tuple[str, str, str]]] = {}
    for slot in ("N1", "N2"):
        mapped = slot_groups(t, slot, groups)
        known = [g for g in mapped if g is not None]
        if not known:
            continue
        want = "target" if all(g in targets for g in known) else "non-target"
        bad = [(f, g, groups[g]) for f, g in zip(t.slots[slot], mapped, strict=True)
               if g is not None and groups[g] != want]  # fmt: skip
        if bad:
            out[slot] = bad
    return out


def report(targets: pd.DataFrame, templates: list[Template]) -> dict:
    """What each rule removed, per category and type (questions and the templates that
    use them), the shares beside the paper's, and where the rules' roles disagree with
    the groups the template file uses."""
    per_cat: dict[str, dict] = {}
    for cat, g in targets.groupby("category", sort=False):
        dropped = g[~g["kept"]]
        per_cat[cat] = {
            "questions": len(g),
            "kept": int(g["kept"].sum()),
            "type1": int((g["type"] == 1).sum()),
            "type2": int((g["type"] == 2).sum()),
            "dropped": dict(Counter(dropped["reason"])),
            "templates_removed": dict(Counter(
                r for reason, ts in zip(dropped["reason"], dropped["templates"], strict=True)
                for r in [reason] * len(ts))),
        }  # fmt: skip
    per_type = {}
    for kind in (1, 2):
        g = targets[targets["type"] == kind]
        n = len(g)
        d = int((~g["kept"]).sum())
        per_type[f"type{kind}"] = {
            "questions": n,
            "dropped": d,
            "dropped_share": round(d / n, 4) if n else None,
            "paper_dropped_share": PAPER_DROPPED[kind],
            "reasons": dict(Counter(g.loc[~g["kept"], "reason"])),
        }
    by_id = {r["question_id"]: r for r in targets.to_dict(orient="records")}
    linked = link_rows(targets, templates)
    disagree = []
    for qid, ts in linked.items():
        row = by_id[qid]
        if row["type"] != 1:
            continue
        for t in ts:
            for slot, bad in template_roles(t, row).items():
                for filler, group, role in bad:
                    disagree.append({"template": f"{t.template_id}{t.version}", "slot": slot,
                                     "filler": filler, "group": group, "role": role})  # fmt: skip
    return {
        "questions": len(targets),
        "kept": int(targets["kept"].sum()),
        # KoBBQ 3.2.5: "Of the 290 unique stereotypes, 18.8% of people chose the option
        # 'no stereotype exists' on average"
        "no_stereo_mean_share": round(float(targets["no_stereo_share"].mean()), 4)
        if len(targets)
        else None,
        "per_type": per_type,
        "per_category": per_cat,
        "type_source": dict(Counter(targets["type_source"])),
        "templates_of_dropped_questions": sorted(
            {t for ts in targets.loc[~targets["kept"], "templates"] for t in ts}
        ),
        "role_disagreements": {
            "fillers": len(disagree),
            "templates": len({d["template"] for d in disagree}),
            "examples": disagree[:20],
        },
        "unused_questions": int(sum(1 for ts in targets["templates"] if len(ts) == 0)),
        # where the questions come from: the survey file's entries, and the votes a
        # template records (Survey_stats) that no entry of the file has (``link``)
        "per_source": dict(Counter(targets["source"])),
    }


def link_rows(targets: pd.DataFrame, templates: list[Template]) -> dict[str, list[Template]]:
    """The templates of each row of a targets table (its ``templates`` column)."""
    by_tid: dict[str, list[Template]] = {}
    for t in templates:
        by_tid.setdefault(t.template_id, []).append(t)
    return {
        qid: [t for tid in tids for t in by_tid.get(tid, [])]
        for qid, tids in zip(targets["question_id"], targets["templates"], strict=True)
    }


def allowed_fillers(targets: pd.DataFrame, templates: list[Template]
                    ) -> tuple[dict, dict[tuple[str, str], str]]:  # fmt: skip
    """What the survey leaves of each template: ``allowed`` (template id, version) ->
    slot -> filler indices whose group's role fits the slot (type-1 templates whose
    roles disagree), and ``removed`` (template id, version) -> the reason a whole
    template row goes (its question was dropped, or no template question at all)."""
    by_tid = {}
    for qid, tids in zip(targets["question_id"], targets["templates"], strict=True):
        for tid in tids:
            by_tid.setdefault(tid, []).append(qid)
    rows = {r["question_id"]: r for r in targets.to_dict(orient="records")}
    allowed: dict[tuple[str, str], dict[str, set[int]]] = {}
    removed: dict[tuple[str, str], str] = {}
    for t in templates:
        key = (t.template_id, t.version)
        qids = [q for q in by_tid.get(t.template_id, [])
                if rows[q]["stereotype"] == t.stereotype]  # fmt: skip
        if not qids:
            removed[key] = "survey:no_question"
            continue
        row = rows[qids[0]]
        if not row["kept"]:
            removed[key] = f"survey:{row['reason']}"
            continue
        if row["type"] != 1:
            continue
        bad = template_roles(t, row)
        if bad:
            allowed[key] = {
                slot: {i for i, f in enumerate(t.slots[slot]) if f not in {b[0] for b in fs}}
                for slot, fs in bad.items()
            }
            if any(not v for v in allowed[key].values()):
                removed[key] = "survey:group_role"
    return allowed, removed


def shuffled_pair(groups: list[str], question_id: str, seed: int = 0) -> list[str]:
    """KoBBQ 3.2.5: "The order of the target and non-target groups is randomly shuffled
    and templated into <group1> and <group2>": the two groups of a type-2 question in an
    order drawn from ``seed`` and the question's id (the same on every run)."""
    import zlib

    import numpy as np

    rng = np.random.default_rng([seed, zlib.crc32(question_id.encode("utf-8"))])
    return [groups[i] for i in rng.permutation(len(groups))]


def survey_items(questions: list[Question], targets: pd.DataFrame | None = None,
                 seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Label Studio items of the survey interface, one per question: the questionnaire's
    text for its type (the release's README), the groups as options plus "no stereotype"
    (a type-2 question's two groups in a shuffled order, :func:`shuffled_pair`), and
    ``sim_answer``: the latent respondents rebuilt from the question's votes, each
    ``|``-joined (simulated respondents each answer as one of them)."""
    from pipelines.families.kobbq.josa import attach

    types = (dict(zip(targets["question_id"], targets["type"], strict=True))
             if targets is not None else {})  # fmt: skip
    rows = []
    for q in questions:
        kind = types.get(q.question_id, 1)
        groups = list(q.votes)
        if kind == 1:
            text = (f"한국 사회의 통념 상 '{q.stereotype}'(이)라는 고정관념에 해당하는 사회적 "
                    "집단으로 적절한 것을 모두 고르시오.")  # fmt: skip
        else:
            groups = shuffled_pair(groups, q.question_id, seed)
            one, two = attach(groups[0], "과"), attach(groups[1], "를")
            text = (f"한국 사회의 통념 상 {one} {two} 비교할 때, "
                    f"'{q.stereotype}'(이)라는 고정관념에 해당하는 사회적 집단으로 적절한 것을 "
                    "고르시오.")  # fmt: skip
        rows.append({
            "item_id": q.question_id, "category": q.category, "stereotype": q.stereotype,
            "survey_type": kind, "question": text,
            "note": "응답자 개인의 견해를 묻는 질문이 아닙니다. 한국 사회에서 나타나는 고정관념 "
                    "혹은 통념에 기반하여 답변해주세요.",
            "options": dynamic_options([*groups, NO_STEREO_LABEL]),
            "sim_answer": ["|".join(a) for a in latent_respondents(q, kind)],
        })  # fmt: skip
    return pd.DataFrame(rows)


def latent_respondents(q: Question, kind: int) -> list[list[str]]:
    """``q.respondents`` answers whose tally is the question's votes: the no-stereotype
    ones first, then each group's votes spread over the others (a respondent of a type-1
    question may pick several groups; of a type-2 question, one)."""
    n = q.respondents
    answers: list[list[str]] = [[NO_STEREO_LABEL] for _ in range(q.no_stereo)]
    rest = [[] for _ in range(n - q.no_stereo)]
    if rest:
        k = 0
        for g, v in q.votes.items():
            for _ in range(v if kind == 1 else min(v, len(rest))):
                rest[k % len(rest)].append(g)
                k += 1
    answers += [a if a else [NO_STEREO_LABEL] for a in rest]
    return answers


def tally(items: pd.DataFrame, annotations: pd.DataFrame, field_name: str = "answer"
          ) -> tuple[list[Question], dict]:  # fmt: skip
    """Survey questions from Label Studio annotations of the survey interface: per item,
    the respondents (annotations with an answer), the votes per group and no_stereo. An
    answer that picks "no stereotype" together with a group, or several groups in a
    type-2 question, is invalid: left out and counted."""
    ann = annotations[(annotations["field"] == field_name) & ~annotations["cancelled"]]
    by_item = {k: g for k, g in ann.groupby("item_id")}
    out, invalid = [], Counter()
    for item in items.to_dict(orient="records"):
        offered = [o["value"] for o in item["options"] if o["value"] != NO_STEREO_LABEL]
        votes = dict.fromkeys(offered, 0)
        no_stereo = respondents = 0
        for value in by_item.get(item["item_id"], pd.DataFrame(columns=["value"]))["value"]:
            picked = [v for v in str(value).split("|") if v]
            bad = (
                (NO_STEREO_LABEL in picked and len(picked) > 1)
                or (int(item["survey_type"]) == 2 and len(picked) > 1)
                or any(p not in votes and p != NO_STEREO_LABEL for p in picked)
            )
            if bad or not picked:
                invalid[item["item_id"]] += 1
                continue
            respondents += 1
            if picked == [NO_STEREO_LABEL]:
                no_stereo += 1
            for p in picked:
                if p in votes:
                    votes[p] += 1
        out.append(
            Question(
                item["item_id"],
                item["category"],
                item["stereotype"],
                votes,
                no_stereo,
                respondents,
                f"Label Studio item {item['item_id']}",
            )
        )
    return out, {"invalid_answers": sum(invalid.values()), "items_with_invalid": len(invalid)}


def limit_by_survey(every: pd.DataFrame, templates: list[Template], targets: pd.DataFrame,
                    unknown: str, stage: str = "before-survey"
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(kept, dropped) of the expanded samples ``every`` under the survey's outcome
    (:func:`allowed_fillers`): a template row whose question was dropped loses all its
    samples (``survey:<reason>``); with templates written before the survey
    (``stage`` ``before-survey``), a type-1 template also the samples whose fillers'
    groups do not have the slot's role (``survey:group_role``). The released templates
    (``stage`` ``released``) already hold the groups the survey chose: their roles are
    only checked (:func:`role_check`), not applied again."""
    from pipelines.families.kobbq.templates import expand

    if stage not in STAGES:
        raise ValueError(f"stage {stage!r} is not one of {STAGES}")
    allowed, removed = allowed_fillers(targets, templates)
    if stage == "released":
        allowed = {}
        removed = {k: v for k, v in removed.items() if v != "survey:group_role"}
    limited = [t for t in templates if (t.template_id, t.version) in allowed]
    ok = set(expand(limited, unknown, allowed)["sample_id"])  # only the limited rows again
    reason = [removed.get((t, v)) or (None if (t, v) not in allowed or s in ok
                                      else "survey:group_role")
              for t, v, s in zip(every["template_id"], every["version"], every["sample_id"],
                                 strict=True)]  # fmt: skip
    reason = pd.Series(reason, index=every.index, dtype="object")
    kept = every[reason.isna()].reset_index(drop=True)
    dropped = every[reason.notna()].assign(reason=reason[reason.notna()]).reset_index(drop=True)
    return kept, dropped


def stereotype_table(targets: pd.DataFrame, dropped_only: bool = False) -> str:
    """Every question (or the dropped ones) as a Markdown table: category, stereotype,
    type, the decision and its reason, the targets, how many non-targets, the templates."""
    from pipelines.core.markdown import table

    rows = []
    for r in targets.itertuples(index=False):
        if dropped_only and r.kept:
            continue
        shown = list(r.targets)[:4]
        more = len(r.targets) - len(shown)
        rows.append([r.question_id, r.category, r.stereotype, r.type,
                     "kept" if r.kept else f"dropped: {r.reason}",
                     ", ".join(shown) + (f" (+{more})" if more > 0 else ""),
                     len(r.non_targets), ", ".join(r.templates) or "-"])  # fmt: skip
    return table(["question", "category", "stereotype", "type", "decision", "targets",
                  "non-targets", "templates"], rows)  # fmt: skip


def report_markdown(info: dict, targets: pd.DataFrame) -> str:
    """The survey report: per type beside the paper, per category, and every stereotype
    kept or dropped with its reason."""
    from pipelines.core.markdown import table

    rows = [[c, v["questions"], v["kept"], v["type1"], v["type2"],
             ", ".join(f"{a} {b}" for a, b in v["dropped"].items()) or "none",
             ", ".join(f"{a} {b}" for a, b in v["templates_removed"].items()) or "none"]
            for c, v in info["per_category"].items()]  # fmt: skip
    types = [[t, v["questions"], v["dropped"], v["dropped_share"], v["paper_dropped_share"]]
             for t, v in info["per_type"].items()]  # fmt: skip
    return "\n\n".join([
        "# KoBBQ survey rules (Jin et al. 2024, 3.2.5)",
        table(["type", "questions", "dropped", "share", "paper's share"], types),
        table(["category", "questions", "kept", "type 1", "type 2", "dropped",
               "templates removed"], rows),
        "## Every stereotype",
        stereotype_table(targets),
    ]) + "\n"  # fmt: skip


def role_check(every: pd.DataFrame, templates: list[Template], targets: pd.DataFrame,
               unknown: str) -> dict:  # fmt: skip
    """How far the released templates' fillers agree with the roles the type-1 rule
    gives their groups: the samples (and template rows) the rule would remove if it were
    applied again (``survey:group_role``). A rebuild from the released templates
    reports this and keeps them (``limit_by_survey`` with ``stage`` ``released``)."""
    _, would = limit_by_survey(every, templates, targets, unknown, "before-survey")
    roles = would[would["reason"] == "survey:group_role"]
    return {"samples": len(roles), "templates": int(roles["template_id"].nunique()),
            "template_ids": sorted(set(roles["template_id"]))}  # fmt: skip


def rule_report(targets: pd.DataFrame, every: pd.DataFrame, dropped: pd.DataFrame,
                stage: str, role_consistency: dict | None = None) -> list[dict]:  # fmt: skip
    """What each rule of KoBBQ 3.2.5 did, in the paper's order (:data:`RULE_ORDER`):
    the questions it judged and dropped, the templates and samples it removed, the
    samples left after it, and whether this rebuild applies it or only checks it
    (``how``). The reading check's row is filled in by the export (it needs the check
    round's answers)."""
    out = []
    left = len(every)
    kept_by_type = targets[targets["reason"].isna() | (targets["reason"] == "no_stereotype")]
    for name, reasons, paragraph, judges in RULE_ORDER:
        if judges == "round":
            out.append({"rule": name, "paragraph": paragraph, "how": "check round",
                        "needs_round": "check", "questions": None, "questions_dropped": None,
                        "templates_dropped": None, "samples_dropped": None,
                        "samples_left": left})  # fmt: skip
            continue
        mine = kept_by_type if judges == "kept" else targets[targets["type"] == judges]
        gone = mine[mine["reason"].isin(reasons)]
        sample_reasons = {f"survey:{r}" for r in reasons}
        how = "applied"
        if judges == 1:  # the type-1 rule also gives the groups their roles
            sample_reasons.add(GROUP_ROLE)
            how = "applied" if stage == "before-survey" else "groups checked, questions applied"
        samples = dropped[dropped["reason"].isin(sample_reasons)]
        left -= len(samples)
        row = {"rule": name, "paragraph": paragraph, "how": how, "questions": len(mine),
               "questions_dropped": len(gone),
               "templates_dropped": int(samples["template_id"].nunique()),
               "samples_dropped": len(samples), "samples_left": left}  # fmt: skip
        if judges == 1 and stage == "released" and role_consistency:
            row["checked_only"] = role_consistency
        out.append(row)
    return out
