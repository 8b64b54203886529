"""Warnings of the data card: rules that read the run's figures and say, with the figure
and the setting that triggered them, what a data steward must not miss.

A warning rule is one registration (``@CARD_WARNINGS.register("name")``): a function
``rule(facts, settings) -> list[str]`` over the facts the export step gathered (the
card's ``card.json``). The thresholds are the recipe's ``card`` section
(:class:`pipelines.export.settings.CardSpec`); the agreement the paper reports comes from the
task kind (``TaskKind.paper_agreement``).

Every rule runs on every family's card: a rule reads only the facts it needs and says
nothing when a card has none of them (a family release has no ingest statistics). A
family adds warnings of its own (its template's ``warnings`` block, listed after these);
it never replaces them, and a family package may register rules here too (KorNLU's
``translation-far-from-paper`` reads only its translation figures).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pipelines.core.markdown import code
from pipelines.core.registry import Registry
from pipelines.export.facts import CardFacts

Rule = Callable[[dict, dict], list[str]]
# the families register rules of their own (KorNLU's translation rule): they are
# imported on the first lookup
CARD_WARNINGS: Registry[Rule] = Registry("card warning", "pipelines.families",
                                         "data card warnings")  # fmt: skip


def card_warnings(facts: CardFacts, settings: dict) -> list[str]:
    """Every registered rule's warnings, in rule-name order."""
    out: list[str] = []
    for _, rule in CARD_WARNINGS.items():
        out += rule(facts, settings)
    return out


_CAUSE = re.compile(r"^\*\*(?P<title>[^*]+)\*\*:? ?(?P<rest>.*)$", re.S)


def cause_of(line: str) -> str | None:
    """A warning line's cause: its leading bold title (None for a line without one)."""
    m = _CAUSE.match(line)
    return m.group("title") if m else None


def one_per_cause(lines: list[str]) -> list[str]:
    """One warning per cause (issue 54): lines whose bold title is the same (the same
    rule on two splits, two sources) become one line, the title once and each line's
    detail after it, in the order first seen; a line without a bold title stays as it
    is."""
    order: list[str] = []
    lines_of: dict[str, list[str]] = {}
    for line in lines:
        m = _CAUSE.match(line)
        key = m.group("title") if m else line
        if key not in lines_of:
            order.append(key)
            lines_of[key] = []
        lines_of[key].append(line)
    out = []
    for key in order:
        same = lines_of[key]
        if len(same) == 1 or not _CAUSE.match(same[0]):  # (an untitled line: said once)
            out.append(same[0])
            continue
        rests = [_CAUSE.match(x).group("rest").strip().rstrip(".").strip() for x in same]
        out.append(f"**{key}** ({len(same)}): " + "; ".join(r for r in rests if r) + ".")
    return out


@CARD_WARNINGS.register("agreement-below-paper")
def agreement_below_paper(facts: CardFacts, settings: dict) -> list[str]:
    """Krippendorff's alpha below ``alpha_ratio_min`` times the paper's figure."""
    paper = facts.get("paper_agreement")
    if not paper:
        return []
    level, figure, source = paper["level"], paper["alpha"], paper["source"]
    # a figure the paper reports after screening annotators (KLUE 3.2.1) is compared
    # with the rebuild's after screening
    key = "krippendorff_alpha_after_screening" if paper.get("after_screening") else None
    measured = ((facts.get("agreement") or {}).get(key or "krippendorff_alpha") or {}).get(level)
    if key:
        level += ", after screening annotators"
    ratio = settings["alpha_ratio_min"]
    if measured is None or measured >= ratio * figure:
        return []
    return [
        f"**Agreement far below the paper's**: Krippendorff's alpha ({level}) {measured} "
        f"against {figure} in {source} (below {ratio:.0%} of it; `card.alpha_ratio_min`)."
    ]


def _gold_labels(facts: CardFacts) -> dict[str, int]:
    split = facts.get("split") or {}
    out: dict[str, int] = {}
    for part in ("train", "dev+test"):
        for label, n in (split.get(part) or {}).get("labels", {}).items():
            out[label] = out.get(label, 0) + n
    return out


@CARD_WARNINGS.register("dominant-label")
def dominant_label(facts: CardFacts, settings: dict) -> list[str]:
    """One gold label holds more than ``max_label_share`` of the released items."""
    labels = _gold_labels(facts)
    total = sum(labels.values())
    if not total:
        return []
    label, n = max(labels.items(), key=lambda kv: kv[1])
    limit = settings["max_label_share"]
    if n / total <= limit:
        return []
    return [
        f"**One label dominates**: {label} is {n} of {total} gold labels ({n / total:.0%}, "
        "as the artifact report groups them; "
        f"more than {limit:.0%}, `card.max_label_share`)."
    ]


@CARD_WARNINGS.register("heavy-filter")
def heavy_filter(facts: CardFacts, settings: dict) -> list[str]:
    """A filter stage removed more than ``max_drop_share`` of one source's rows."""
    limit = settings["max_drop_share"]
    out = []
    for stage in (facts.get("ingest") or {}).get("stages") or []:
        for corpus, c in (stage.get("corpora") or {}).items():
            if not c.get("in"):
                continue
            dropped = c["in"] - c["kept"]
            if dropped / c["in"] > limit:
                reasons = ", ".join(f"{k} {v}" for k, v in sorted(c.get("dropped", {}).items()))
                out.append(
                    f"**A filter removed most of a source**: {code(stage['stage'])} dropped "
                    f"{dropped:,} of {c['in']:,} {stage['unit']}s of {code(corpus)} "
                    f"({dropped / c['in']:.0%}: {reasons}; more than {limit:.0%}, "
                    "`card.max_drop_share`)."
                )
    return out


@CARD_WARNINGS.register("split-criterion")
def split_criterion(facts: CardFacts, settings: dict) -> list[str]:
    """The unseen-term criterion of the tc rule gives the same share in train and
    dev+test, so it did not tell them apart."""
    shares = ((facts.get("split") or {}).get("rule_figures") or {}).get("unseen_term_share") or {}
    values = list(shares.values())
    if len(values) < 2 or len(set(values)) > 1:
        return []
    return [
        f"**The split criterion does not discriminate**: the share of terms unseen elsewhere "
        f"is {values[0]} in every part ("
        + ", ".join(f"{k} {v}" for k, v in shares.items())
        + "), so dev and test were not chosen for "
        "novelty (KLUE 3.1.1's second criterion)."
    ]


@CARD_WARNINGS.register("quota-not-met")
def quota_not_met(facts: CardFacts, settings: dict) -> list[str]:
    """A per-source quota of the split rule that dev+test does not meet."""
    figures = (facts.get("split") or {}).get("rule_figures") or {}
    quotas, got = figures.get("source_quotas") or {}, figures.get("dev_test_per_source") or {}
    short = {s: (q, got.get(s, 0)) for s, q in quotas.items() if got.get(s, 0) < round(q)}
    if not short:
        return []
    styles = figures.get("source_styles") or {}
    text = ", ".join(f"{s}{f' ({styles[s]})' if s in styles else ''} {n} of {q:g} items"
                     for s, (q, n) in sorted(short.items()))  # fmt: skip
    shares = ((facts.get("split") or {}).get("settings") or {}).get("style_shares")
    target = (" against the style shares the rule aims at ("
              + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()) + ", `split.style_shares`)"
              if shares and styles else "")  # fmt: skip
    return [f"**Split quota not met**: dev+test per source{target}: {text}."]


@CARD_WARNINGS.register("single-source-split")
def single_source_split(facts: CardFacts, settings: dict) -> list[str]:
    """An evaluation split drawn from one source while the dataset has several."""
    per = (facts.get("labels") or {}).get("sources_per_split") or {}
    sources = {s for counts in per.values() for s in counts}
    if len(sources) < 2:
        return []
    return [
        f"**An evaluation split comes from one source**: {split} is 100% {code(next(iter(c)))} "
        f"({sum(c.values())} items) while the dataset draws on {len(sources)} sources."
        for split, c in per.items()
        if split != "train" and len(c) == 1
    ]


@CARD_WARNINGS.register("annotator-far-from-gold")
def annotator_far_from_gold(facts: CardFacts, settings: dict) -> list[str]:
    """An annotator who chose the gold label on fewer than ``min_annotator_agreement``
    of their items (rules that screen no annotator)."""
    limit = settings["min_annotator_agreement"]
    table = (facts.get("agreement") or {}).get("annotator_label_agreement") or []
    return [
        f"**An annotator disagrees with the gold labels**: {a['annotator_id']} chose the gold "
        f"label on {a['gold_agreement']:.0%} of {a['gold_items']} items (below "
        f"{limit:.0%}, `card.min_annotator_agreement`); rule `{facts['agreement']['rule']}` "
        "screens no annotator, so their votes count."
        for a in table
        if a.get("gold_agreement") is not None and a["gold_agreement"] < limit
    ]


@CARD_WARNINGS.register("simulated-round")
def simulated_round(facts: CardFacts, settings: dict) -> list[str]:
    """Any annotation round answered by simulated annotators or writers."""
    from pipelines.export.rounds import round_states

    names = [name for name, simulated in round_states(facts) if simulated]
    if not names:
        return []
    return [
        f"**Simulated rounds** ({', '.join(names)}): their answers and agreement figures "
        "describe the simulator's noise settings, not people."
    ]


def _categorical(facts: CardFacts) -> dict | None:
    labels = facts.get("labels") or {}
    return None if labels.get("numeric") or not labels.get("per_split") else labels


@CARD_WARNINGS.register("label-absent-from-split")
def label_absent_from_split(facts: CardFacts, settings: dict) -> list[str]:
    """A label of the dataset that an evaluation split (dev, test) does not hold."""
    labels = _categorical(facts)
    if labels is None:
        return []
    per_split = labels["per_split"]
    known = [k for k in labels.get("order", []) if any(k in c for c in per_split.values())]
    unit = _unit(labels)
    out = []
    for split, counts in per_split.items():
        missing = [k for k in known if k not in counts]
        if split != "train" and missing:
            out.append(
                f"**A label is absent from an evaluation split**: {split} ({sum(counts.values())} "
                f"{unit}) has no {', '.join(code(k) for k in missing)}; a model is not tested "
                "on it there."
            )
    return out


def _unit(labels: dict) -> str:
    """What the label counts count: items, or the elements of structured gold (spans)."""
    return "elements" if labels.get("elements") else "items"


@CARD_WARNINGS.register("split-label-share")
def split_label_share(facts: CardFacts, settings: dict) -> list[str]:
    """One label holds more than ``max_split_label_share`` of one split; a dataset of
    one label (JSQuAD: every question answerable) has no share to skew."""
    labels = _categorical(facts)
    if labels is None or len(labels.get("order") or []) < 2:
        return []
    limit, out = settings["max_split_label_share"], []
    for split, counts in labels["per_split"].items():
        total = sum(counts.values())
        if not total:
            continue
        label, n = max(counts.items(), key=lambda kv: kv[1])
        if n / total > limit:
            out.append(
                f"**One label fills a split**: {code(label)} is {n} of {total} {_unit(labels)} of "
                f"{split} "
                f"({n / total:.0%}; more than {limit:.0%}, `card.max_split_label_share`)."
            )
    return out


def _nodes(facts: CardFacts, depth: int) -> Iterator[tuple[str, dict]]:
    """Every mapping of the facts (the recipe's settings left out) down to ``depth``
    keys deep, with its path (``split/last_column_only``; the facts themselves: "")."""
    stack: list[tuple[list[str], object]] = [([], facts)]
    while stack:
        path, node = stack.pop(0)
        if not isinstance(node, dict) or len(path) > depth:
            continue
        yield "/".join(path), node
        stack[:0] = [([*path, k], v) for k, v in node.items() if k != "recipe"]


def _partial_inputs(facts: CardFacts) -> list[tuple[str, float, float, int | None]]:
    """Every partial-input model the card's facts record, as (where, accuracy, majority
    baseline, items): the artifact report's last-column-only model, the split rule's
    hypothesis-only model, and a family's review (KoBEST's ``artifacts-N``: only the last
    round, which describes the released items)."""
    found: dict[str, tuple[str, float, float, int | None]] = {}
    for where, node in _nodes(facts, 4):
        acc, base = node.get("accuracy"), node.get("majority_baseline")
        if acc is None:
            acc, base = node.get("accuracy_dev_test"), node.get("majority_baseline_dev_test")
        if isinstance(node.get("reference"), int | float):  # max(majority, eval's, chance)
            base = node["reference"]
        if isinstance(acc, int | float) and isinstance(base, int | float):
            # one entry per review, whatever its round: later rounds replace earlier ones
            found[re.sub(r"-\d+(?=/|$)", "", where)] = (where, acc, base, node.get("eval_items"))
    return list(found.values())


@CARD_WARNINGS.register("partial-input-above-baseline")
def partial_input_above_baseline(facts: CardFacts, settings: dict) -> list[str]:
    """A model that sees only part of an item (the hypothesis, the alternatives) scores
    more than ``max_partial_input_gain`` above always answering the majority label on
    the evaluation items: the labels can be guessed without the whole item (Gururangan
    et al. 2018; KLUE 3.3; JGLUE reported 0.658 against 0.553 on JNLI). Where the report
    records its ``reference`` (the highest of train's majority, the evaluation items'
    own majority and chance; issue 54), the model is measured against that."""
    limit, out = settings["max_partial_input_gain"], []
    for where, acc, base, n in _partial_inputs(facts):
        gain = round(acc - base, 4)  # the figures are rounded to 4 places
        if gain > limit:
            items = f" on {n} evaluation items" if n else " on the evaluation items"
            out.append(
                f"**A partial-input model beats the baseline**: `{where}` scores {acc:.2f}"
                f"{items} against a majority baseline of {base:.2f} (+{gain:.2f}; more "
                f"than {limit:.2f}, `card.max_partial_input_gain`): part of each item gives "
                "its label away."
            )
    return out


@CARD_WARNINGS.register("source-predicts-label")
def source_predicts_label(facts: CardFacts, settings: dict) -> list[str]:
    """One source supplies at least ``max_label_source_share`` of a label's items (a
    label with ``min_label_items`` or more) while it supplies less than that share of
    the dataset: a model can learn the source (its style, its length) for the label."""
    per_source = (facts.get("labels") or {}).get("per_source") or {}
    if len(per_source) < 2:
        return []
    limit, least = settings["max_label_source_share"], settings["min_label_items"]
    total = sum(sum(c.values()) for c in per_source.values())
    by_source: dict[str, list[tuple[str, int, int]]] = {}
    for label in (facts.get("labels") or {}).get("order", []):
        counts = {s: c.get(label, 0) for s, c in per_source.items()}
        n = sum(counts.values())
        if n < least:
            continue
        source, top = max(counts.items(), key=lambda kv: kv[1])
        if top / n >= limit and sum(per_source[source].values()) / total < limit:
            by_source.setdefault(source, []).append((label, top, n))
    out = []
    for source, labels in sorted(by_source.items()):
        share = sum(per_source[source].values()) / total
        text = ", ".join(f"{code(label)} {top} of {n}" for label, top, n in labels)
        out.append(
            f"**The source predicts the label**: {code(source)} supplies {share:.0%} of the items "
            f"but {text} ({limit:.0%} or more of each, `card.max_label_source_share`); a "
            "model can learn the source for these labels."
        )
    return out


def _agreement_figures(facts: CardFacts) -> list[tuple[str, str, float]]:
    """Every agreement figure the facts record: (where, measure, value); Krippendorff's
    alpha at the first level of interval, ordinal, nominal it was measured at. Fleiss'
    kappa is a nominal measure: on a scale measured at an ordinal or interval level (a
    0-5 similarity) it counts 4 against 5 as a full disagreement, so it is not judged
    there (issue 54: the STS demo's kappa 0.28 beside its interval alpha 0.80)."""
    out = []
    for where, node in _nodes(facts, 3):
        alphas = node.get("krippendorff_alpha")
        level = None
        if isinstance(alphas, dict):
            level = next((lv for lv in ("interval", "ordinal", "nominal")
                          if isinstance(alphas.get(lv), int | float)), None)  # fmt: skip
            if level:
                out.append((where, f"alpha ({level})", alphas[level]))
        kappa = node.get("fleiss_kappa")
        if level in ("interval", "ordinal"):
            continue
        if isinstance(kappa, dict) and isinstance(kappa.get("kappa"), int | float):
            out.append((where, "Fleiss' kappa", kappa["kappa"]))
    return out


@CARD_WARNINGS.register("low-agreement")
def low_agreement(facts: CardFacts, settings: dict) -> list[str]:
    """An agreement figure of any round below the conventional floor: Krippendorff's
    alpha under ``min_alpha`` (0.667, Krippendorff 2004, 12.2: the least for tentative
    conclusions), Fleiss' kappa under ``min_kappa`` (0.41, Landis and Koch 1977: below
    "moderate")."""
    out = []
    for where, measure, value in _agreement_figures(facts):
        limit, name = ((settings["min_alpha"], "card.min_alpha") if measure.startswith("alpha")
                       else (settings["min_kappa"], "card.min_kappa"))  # fmt: skip
        if value < limit:
            out.append(
                f"**Low agreement**: {measure} {value:.2f} in `{where or 'agreement'}` (below "
                f"{limit}, `{name}`): the annotators of that round often disagreed."
            )
    return out


@CARD_WARNINGS.register("duplicate-records")
def duplicate_records(facts: CardFacts, settings: dict) -> list[str]:
    """Records of a release file that ask what another record asks (every field but ids,
    labels, answers and provenance), more than ``max_duplicate_share`` of the file, and
    evaluation records that ask what a train record asks (``card_facts.duplicate_facts``)."""
    dup = facts.get("duplicates") or {}
    limit, out = settings["max_duplicate_share"], []
    for name, f in sorted((dup.get("files") or {}).items()):
        repeats = f["records"] - f["unique"]
        if f["records"] and repeats / f["records"] > limit:
            out.append(
                f"**Duplicate records**: {repeats:,} of {f['records']:,} records of `{name}` "
                f"repeat another's input ({f['unique']:,} unique; fields compared: "
                f"{', '.join(dup.get('fields') or [])}; more than {limit:.0%}, "
                "`card.max_duplicate_share`)."
            )
    for split, n in sorted((dup.get("in_train") or {}).items()):
        if n:
            out.append(
                f"**Evaluation records also in train**: {n} record(s) of {split} ask what a "
                "train record asks (same input fields)."
            )
    return out


@CARD_WARNINGS.register("degenerate-release")
def degenerate_release(facts: CardFacts, settings: dict) -> list[str]:
    """What the release guards (``pipelines.export.guards``) found and the recipe allowed
    (``export.allow_degenerate``): an empty split, a single class, a degenerate model. A
    figure of such a part is not a result."""
    return [
        f"**Degenerate release, allowed by the recipe** ({d['guard']}, "
        f"`export.allow_degenerate`): {d['what']}: {d['detail']}. Its figures are not results."
        for d in facts.get("degenerate") or []
    ]


@CARD_WARNINGS.register("baseline-learned-nothing")
def baseline_learned_nothing(facts: CardFacts, settings: dict) -> list[str]:
    """A fine-tuned baseline whose predictions collapsed (one answer, or scores that do
    not spread) or that does not beat always answering train's majority, per split
    (``benchforge baseline``; :mod:`pipelines.evaluation.references`)."""
    from pipelines.export.card_baseline import baseline_notes

    return baseline_notes(facts.get("baseline") or {})


@CARD_WARNINGS.register("written-answer-agreement")
def written_answer_agreement(facts: CardFacts, settings: dict) -> list[str]:
    """The writers' and the validators' answers to written questions (JGLUE 3.3.1, KLUE
    3.7) agree by exact match less than ``min_answer_agreement_ratio`` of the figure the
    same measure gives on the source release's questions, or, without them, under
    ``min_answer_exact_match`` (issue 54: JSQuAD's 0.37 beside 0.865 raised nothing)."""
    family = facts.get("family") or {}
    answers = family.get("answers") or {}
    em = answers.get("exact_match")
    if not isinstance(em, int | float) or isinstance(em, bool):
        return []
    ref = ((family.get("written") or {}).get("reference") or {}).get("exact_match")
    if isinstance(ref, int | float) and ref > 0:
        ratio = settings["min_answer_agreement_ratio"]
        if em < ratio * ref:
            return [
                f"**Written answers disagree**: the writers' and the validators' answers "
                f"match exactly for {em:.2f} of the pairs, against {ref:.2f} for the source "
                f"release's own questions (under {ratio:.0%} of it, "
                "`card.min_answer_agreement_ratio`): the questions or their answer spans "
                "are unclear, or the validators were careless."
            ]
        return []
    floor = settings["min_answer_exact_match"]
    if em < floor:
        return [
            f"**Written answers disagree**: the writers' and the validators' answers match "
            f"exactly for {em:.2f} of the pairs (under {floor}, `card.min_answer_exact_match`)."
        ]
    return []


@CARD_WARNINGS.register("public-eval-rows")
def public_eval_rows(facts: CardFacts, settings: dict) -> list[str]:
    """Rows of a public evaluation set in the release (``export.public_eval``): in train
    a model trained on the release has seen the published evaluation data; in dev or
    test a model tuned on the public set has seen the items it is scored on."""
    out = []
    for stem, corpora in sorted((facts.get("public_eval") or {}).items()):
        for name, o in sorted(corpora.items()):
            ids = ", ".join(code(i) for i in o["ids"])
            more = o["items"] - len(o["ids"])
            risk = ("a model trained on it has seen that evaluation data" if stem.endswith("train")
                    else "a model tuned on the public set has seen these items")  # fmt: skip
            out.append(
                f"**Rows of a public evaluation set**: {code(stem)} holds {o['items']} of its "
                f"{o['records']} records from {code(name)} ({code(o['file'])}, {o['why']}): "
                f"{risk}; ids {ids}" + (f" and {more} more" if more > 0 else "") + "."
            )
    return out
