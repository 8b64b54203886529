"""Where each released field comes from (issue 54): real source data, a public
release, templates, people's (or the simulator's) work in Label Studio, a machine, or
benchforge's own computation, and what that means in this build.

A task kind declares its fields' origins in its ``hub`` metadata, ``fields``: field ->
origin, or field -> {split: origin} where the origin differs by split (MARC-ja: train's
labels are the source's ratings, dev's and test's the raters'). An undeclared release
keeps the default: a gold field (:data:`GOLD`: ``label``, ``answers``, ...) is
``annotated``, an id ``derived`` and every other field ``source``. The origins:

- ``source``: the source corpus's own text or label, as ingested;
- ``public``: copied from a public release of the benchmark itself (JGLUE's valid
  records), which ``export.public_eval`` finds row by row;
- ``template``: fixed by templates (KoBBQ's answers, KoBEST's prompt-assigned labels);
- ``annotated``: written or labelled in the Label Studio rounds, by people or by the
  simulator, as the rounds record (``rounds.round_states``);
- ``machine``: a model's output (a translation, a tagger's spans) people may have edited;
- ``derived``: computed by benchforge from the others (ids, a binarised label).

:func:`field_rows` gives the card's table; :func:`simulated_fields` the fields the
banner names; :func:`hub_creators` the Hub's ``annotations_creators``,
``language_creators`` and ``source_datasets``.
"""

from __future__ import annotations

from pipelines.export.facts import CardFacts

ORIGINS = {
    "source": "the source corpus's own",
    "public": "copied from a public release of the benchmark",
    "template": "fixed by templates",
    "annotated": "written or labelled in Label Studio",
    "machine": "a model's output",
    "derived": "computed by benchforge",
}
NOT_FIELDS = {"license"}
GOLD = {"label", "labels", "gold_label", "answers", "answer", "entities", "score", "relation"}


def _state(facts: CardFacts) -> str:
    """Who answered the rounds: ``simulated``, ``people``, ``mixed`` or ``none``."""
    from pipelines.export.rounds import round_states

    states = {s for _, s in round_states(facts)}
    if not states:
        return "none"
    return "mixed" if len(states) == 2 else ("simulated" if True in states else "people")


def _release_fields(facts: CardFacts) -> list[str]:
    default = (facts.get("release") or {}).get("default") or next(
        iter((facts.get("release") or {}).values()), {}
    )
    return [f["name"] for f in default.get("features") or [] if f["name"] not in NOT_FIELDS]


def declared(facts: CardFacts) -> dict[str, dict[str, str]]:
    """Each released field's origin per split (``*``: every split)."""
    fields = _release_fields(facts)
    own = (facts.get("hub") or {}).get("fields")
    out: dict[str, dict[str, str]] = {}
    for name in fields:
        origin = (own or {}).get(name)
        if origin is None:
            origin = "annotated" if name in GOLD else (
                "derived" if name.endswith(("_id", "id", "guid")) else "source")  # fmt: skip
        out[name] = origin if isinstance(origin, dict) else {"*": origin}
    return out


def _public_share(facts: CardFacts) -> tuple[int, int]:
    """Records of the release found in a public evaluation set, and its records."""
    found = total = 0
    sizes = (facts.get("split") or {}).get("splits") or {}
    total = sum(sizes.values())
    for stem, corpora in (facts.get("public_eval") or {}).items():
        if "_" in stem:  # a second group of files (JNLI's jsts-c_train): not the release's
            continue
        found += max((o["items"] for o in corpora.values()), default=0)
    return found, total


def _said(origin: str, state: str) -> str:
    if origin == "annotated":
        return {"simulated": "simulated annotators", "people": "people",
                "mixed": "people and simulated annotators",
                "none": "no round in this build"}[state]  # fmt: skip
    return "as released" if origin == "public" else ""


def field_rows(facts: CardFacts) -> list[list[str]]:
    """The card's rows: field, origin (per split where it differs), who in this build."""
    from pipelines.core.markdown import code

    state = _state(facts)
    rows = []
    for name, per in declared(facts).items():
        origin, who = [], []
        for split, o in per.items():
            where = "" if split == "*" else f"{split}: "
            origin.append(where + ORIGINS.get(o, o))
            if said := _said(o, state):
                who.append(where + said)
        rows.append([code(name, table=True), "; ".join(origin), "; ".join(who)])
    return rows


def public_note(facts: CardFacts) -> str:
    """The sentence on records that are a public evaluation set's own, or ``""``."""
    found, total = _public_share(facts)
    if not found:
        return ""
    return (f"{found} of the {total} records match a record of a public evaluation set "
            "field for field: theirs are that release's values, whatever the table "
            "declares (*Warnings* names them).")  # fmt: skip


def simulated_fields(facts: CardFacts) -> list[str]:
    """The fields (``field`` or ``field (split, split)``) the simulated rounds wrote or
    labelled, in some split or all."""
    if _state(facts) not in ("simulated", "mixed"):
        return []
    out = []
    for name, per in declared(facts).items():
        splits = [s for s, o in per.items() if o == "annotated"]
        if splits:
            out.append(name if splits == ["*"] else f"{name} ({', '.join(splits)})")
    return out


_ANNOTATIONS = {"source": "found", "public": "found", "template": "expert-generated",
                "machine": "machine-generated", "derived": "machine-generated"}  # fmt: skip


def hub_creators(facts: CardFacts) -> dict[str, list[str]]:
    """The Hub's ``annotations_creators`` (from the gold fields' origins),
    ``language_creators`` (from the text fields') and ``source_datasets``."""
    state = _state(facts)
    people = {"simulated": "machine-generated", "people": "crowdsourced",
              "mixed": "crowdsourced", "none": "other"}[state]  # fmt: skip
    fields = declared(facts)
    annotations: set[str] = set()
    language: set[str] = set()
    for name, per in fields.items():
        for origin in per.values():
            kind = people if origin == "annotated" else _ANNOTATIONS.get(origin, "other")
            (annotations if name in GOLD else language).add(kind)
    corpora = [c["name"] for c in facts["recipe"].get("corpora") or []]
    return {
        "annotations_creators": sorted(annotations) or ["no-annotation"],
        "language_creators": sorted(language) or ["found"],
        "source_datasets": ["original"] + [f"extended|{c}" for c in corpora],
    }
