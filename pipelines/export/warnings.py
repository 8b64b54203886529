"""Warnings of the data card: rules that read the run's figures and say, with the figure
and the setting that triggered them, what a data steward must not miss.

A warning rule is one registration (``@CARD_WARNINGS.register("name")``): a function
``rule(facts, settings) -> list[str]`` over the facts the export step gathered (the
card's ``card.json``). The thresholds are the recipe's ``card`` section
(:class:`pipelines.core.recipe.CardSpec`); the agreement the paper reports comes from the
task kind (``TaskKind.paper_agreement``).

Every rule runs on every family's card: a rule reads only the facts it needs and says
nothing when a card has none of them (a family release has no ingest statistics). A
family adds warnings of its own (its template's ``warnings`` block, listed after these);
it never replaces them.
"""

from __future__ import annotations

from collections.abc import Callable

from pipelines.core.registry import Registry

Rule = Callable[[dict, dict], list[str]]
CARD_WARNINGS: Registry[Rule] = Registry("card warning", None, "data card warnings")


def card_warnings(facts: dict, settings: dict) -> list[str]:
    """Every registered rule's warnings, in rule-name order."""
    out: list[str] = []
    for _, rule in CARD_WARNINGS.items():
        out += rule(facts, settings)
    return out


@CARD_WARNINGS.register("agreement-below-paper")
def agreement_below_paper(facts: dict, settings: dict) -> list[str]:
    """Krippendorff's alpha below ``alpha_ratio_min`` times the paper's figure."""
    paper = facts.get("paper_agreement")
    if not paper:
        return []
    level, figure, source = paper["level"], paper["alpha"], paper["source"]
    measured = ((facts.get("agreement") or {}).get("krippendorff_alpha") or {}).get(level)
    ratio = settings["alpha_ratio_min"]
    if measured is None or measured >= ratio * figure:
        return []
    return [
        f"**Agreement far below the paper's**: Krippendorff's alpha ({level}) {measured} "
        f"against {figure} in {source} (below {ratio:.0%} of it; `card.alpha_ratio_min`)."
    ]


def _gold_labels(facts: dict) -> dict[str, int]:
    split = facts.get("split") or {}
    out: dict[str, int] = {}
    for part in ("train", "dev+test"):
        for label, n in (split.get(part) or {}).get("labels", {}).items():
            out[label] = out.get(label, 0) + n
    return out


@CARD_WARNINGS.register("dominant-label")
def dominant_label(facts: dict, settings: dict) -> list[str]:
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
def heavy_filter(facts: dict, settings: dict) -> list[str]:
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
                    f"**A filter removed most of a source**: `{stage['stage']}` dropped "
                    f"{dropped:,} of {c['in']:,} {stage['unit']}s of `{corpus}` "
                    f"({dropped / c['in']:.0%}: {reasons}; more than {limit:.0%}, "
                    "`card.max_drop_share`)."
                )
    return out


@CARD_WARNINGS.register("split-criterion")
def split_criterion(facts: dict, settings: dict) -> list[str]:
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
def quota_not_met(facts: dict, settings: dict) -> list[str]:
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
def single_source_split(facts: dict, settings: dict) -> list[str]:
    """An evaluation split drawn from one source while the dataset has several."""
    per = (facts.get("labels") or {}).get("sources_per_split") or {}
    sources = {s for counts in per.values() for s in counts}
    if len(sources) < 2:
        return []
    return [
        f"**An evaluation split comes from one source**: {split} is 100% `{next(iter(c))}` "
        f"({sum(c.values())} items) while the dataset draws on {len(sources)} sources."
        for split, c in per.items()
        if split != "train" and len(c) == 1
    ]


@CARD_WARNINGS.register("annotator-far-from-gold")
def annotator_far_from_gold(facts: dict, settings: dict) -> list[str]:
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
def simulated_round(facts: dict, settings: dict) -> list[str]:
    """Any annotation round answered by simulated annotators or writers."""
    from pipelines.export.card_facts import round_states

    names = [name for name, simulated in round_states(facts) if simulated]
    if not names:
        return []
    return [
        f"**Simulated rounds** ({', '.join(names)}): their answers and agreement figures "
        "describe the simulator's noise settings, not people."
    ]


def _categorical(facts: dict) -> dict | None:
    labels = facts.get("labels") or {}
    return None if labels.get("numeric") or not labels.get("per_split") else labels


@CARD_WARNINGS.register("label-absent-from-split")
def label_absent_from_split(facts: dict, settings: dict) -> list[str]:
    """A label of the dataset that an evaluation split (dev, test) does not hold."""
    labels = _categorical(facts)
    if labels is None:
        return []
    per_split = labels["per_split"]
    known = [k for k in labels.get("order", []) if any(k in c for c in per_split.values())]
    out = []
    for split, counts in per_split.items():
        missing = [k for k in known if k not in counts]
        if split != "train" and missing:
            out.append(
                f"**A label is absent from an evaluation split**: {split} ({sum(counts.values())} "
                f"items) has no {', '.join(f'`{k}`' for k in missing)}; a model is not tested "
                "on it there."
            )
    return out


@CARD_WARNINGS.register("split-label-share")
def split_label_share(facts: dict, settings: dict) -> list[str]:
    """One label holds more than ``max_split_label_share`` of one split."""
    labels = _categorical(facts)
    if labels is None:
        return []
    limit, out = settings["max_split_label_share"], []
    for split, counts in labels["per_split"].items():
        total = sum(counts.values())
        if not total:
            continue
        label, n = max(counts.items(), key=lambda kv: kv[1])
        if n / total > limit:
            out.append(
                f"**One label fills a split**: `{label}` is {n} of {total} items of {split} "
                f"({n / total:.0%}; more than {limit:.0%}, `card.max_split_label_share`)."
            )
    return out
