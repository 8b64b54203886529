"""A baseline dialogue-state tracker trained on a KLUE-WoS release (issue 58, item 5),
and the all-``none`` reference it is shown beside.

Per user turn the input is the dialogue so far (every turn up to it, the user's marked
apart from the system's). Per domain, a logistic regression over character 1-3-gram
TF-IDF of the input says whether the turn's state has reached it (only its slots are
then predicted). Per slot of the ontology:

- **yes/no slots**: where the user mentions the slot's facility word (``주차`` of
  ``주차 가능``), a logistic regression over character 1-2-grams of what follows it picks
  ``none`` (not in the state), ``yes``, ``no`` or ``dontcare``; never mentioned, out;
- **every other slot**: the value is *copied* from the dialogue: of the slot's values
  (the ontology's and those train gave it), for an open slot the one the user writes
  first after naming the slot (``출발지는 ...``), else the one written last in the
  user's turns (as it is, as the goal's instructions say it, a count only with its
  counter: ``2명``, or in a known paraphrase); for a
  ``이름`` slot a logistic regression also says when a name the system proposed was
  taken, and then the system's turns are searched too; none found, the slot stays out.

A slot train never filled is always out.

The all-``none`` reference predicts the empty state for every turn (joint goal accuracy
is then the share of turns whose gold state is empty). Both are scored by
:mod:`.wos_metrics` (joint goal accuracy, slot micro F1, per domain).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.annotation.values.dialogue_state import slot_of
from pipelines.families.klue.wos_layout import WosRelease
from pipelines.families.klue.wos_ontology import DONTCARE, NONE, Ontology

USER_MARK, SYS_MARK = "[U] ", "[S] "


def turn_inputs(release: WosRelease) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Per user turn of every dialogue: its input text, its gold state, its dialogue's
    domains."""
    texts, states, domains = [], [], []
    for d in release.dialogues:
        so_far = []
        for t in d.turns:
            so_far.append((USER_MARK if t.role == "user" else SYS_MARK) + t.text)
            if t.role == "user":
                texts.append("\n".join(so_far))
                states.append(list(t.state or []))
                domains.append(list(d.domains))
    return texts, states, domains


@dataclass
class SlotTracker:
    """The fitted per-slot models (module docstring)."""

    ontology: Ontology
    vectorizer: object = None
    closed: dict[str, object] = field(default_factory=dict)  # slot -> classifier or value
    filled: dict[str, object] = field(default_factory=dict)  # open slot -> classifier or bool
    seen: dict[str, dict[str, str]] = field(default_factory=dict)  # slot -> form -> value
    domains: dict[str, object] = field(default_factory=dict)  # domain -> active or not

    def predict(self, texts: list[str]) -> list[list[str]]:
        if not texts:
            return []
        x = self.vectorizer.transform(texts)
        out: list[set[str]] = [set() for _ in texts]
        active = [set() for _ in texts]  # the domains each turn talks about
        for domain, model in self.domains.items():
            flags = model.predict(x) if hasattr(model, "predict") else [bool(model)] * len(texts)
            for i, flag in enumerate(flags):
                if flag:
                    active[i].add(domain)
        for slot, model in self.closed.items():
            windows = [facility_window(t, slot) for t in texts]
            at = [i for i, w in enumerate(windows) if w is not None]
            if not at:
                continue
            values = (model.predict([windows[i] for i in at]) if hasattr(model, "predict")
                      else [model] * len(at))  # fmt: skip
            for i, v in zip(at, values, strict=True):
                if v != NONE and slot.split("-", 1)[0] in active[i]:
                    out[i].add(f"{slot}-{v}")
        for slot, forms in self.seen.items():
            model = self.filled.get(slot)
            flags = (model.predict(x) if hasattr(model, "predict")
                     else [bool(model)] * len(texts))  # fmt: skip
            cue = slot.split("-", 1)[1] if self.ontology.is_open(slot) else ""
            for i, flag in enumerate(flags):
                if slot.split("-", 1)[0] not in active[i]:
                    continue
                value = copy_value(texts[i], forms, system=bool(flag), cue=cue)
                if value:
                    out[i].add(f"{slot}-{value}")
        return [sorted(s) for s in out]


def copy_value(
    text: str, candidates: dict[str, str], system: bool = False, cue: str = ""
) -> str | None:
    """The value whose form (``candidates``: form -> value) the user's turns of ``text``
    write first after the last mention of ``cue`` (the slot's name: ``출발지``), else
    last; with ``system``, else the one the system's turns write last (a name the
    system proposed and the user took)."""
    user = "\n".join(line for line in text.split("\n") if line.startswith(USER_MARK))
    at_cue = user.rfind(cue) if cue else -1
    if at_cue >= 0:
        after = [
            (user.find(f, at_cue), -len(f), f) for f in candidates if user.find(f, at_cue) >= 0
        ]
        if after:
            return candidates[min(after)[2]]
    for part in (user, text) if system else (user,):
        best, at = None, -1
        for form in candidates:
            where = part.rfind(form)
            if where > at or (where == at and best is not None and len(form) > len(best)):
                best, at = form, where
        if best is not None and at >= 0:
            return candidates[best]
    return None


def _forms(slot: str, values: set[str]) -> dict[str, str]:
    """How each value of ``slot`` can be written: as it is, as instructions say it, in
    a paraphrase benchforge knows (``wos_dialogues.PARAPHRASES``)."""
    from pipelines.families.klue.wos_dialogues import PARAPHRASES
    from pipelines.families.klue.wos_goals import said
    from pipelines.families.klue.wos_tracker import COUNTED

    name = slot.split("-", 1)[1]
    out = {}
    for v in sorted(values):
        forms = (said(name, v),) if name in COUNTED else (v, said(name, v), PARAPHRASES.get(v, v))
        for form in forms:
            out.setdefault(form, v)
    return out


def facility_window(text: str, slot: str, width: int = 10) -> str | None:
    """What the user wrote right after the last mention of the slot's facility word
    (``주차`` of ``식당-주차 가능``), ``width`` characters; None when never mentioned."""
    from pipelines.families.klue.wos_tracker import facility_word

    word = facility_word(slot.split("-", 1)[1])
    user = "\n".join(line for line in text.split("\n") if line.startswith(USER_MARK))
    at = user.rfind(word)
    return None if at < 0 else user[at + len(word) : at + len(word) + width]


def _window_classifier(windows: list[str], labels: list[str], seed: int) -> object:
    """A logistic regression over character 1-2-grams of the windows (a constant when
    train has one label)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    if len(set(labels)) < 2:
        return labels[0] if labels else NONE
    return make_pipeline(TfidfVectorizer(analyzer="char", ngram_range=(1, 2)),
                         LogisticRegression(max_iter=500, C=4.0, random_state=seed)
                         ).fit(windows, labels)  # fmt: skip


def _classifier(x: object, labels: list, seed: int) -> object:
    from sklearn.linear_model import LogisticRegression

    if len(set(labels)) < 2:
        return labels[0] if labels else NONE
    return LogisticRegression(max_iter=500, C=4.0, random_state=seed).fit(x, labels)


def fit_tracker(release: WosRelease, ontology: Ontology, seed: int = 0) -> SlotTracker:
    """The tracker fitted on ``release``'s user turns (module docstring)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts, states, _ = turn_inputs(release)
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), max_features=20000,
                                 sublinear_tf=True)  # fmt: skip
    x = vectorizer.fit_transform(texts) if texts else None
    tracker = SlotTracker(ontology, vectorizer)
    by_slot = [{slot_of(i): i.split("-", 2)[2] for i in s} for s in states]
    for domain in ontology.domains:  # a domain is talked about once a slot of it is set
        flags = [any(k.split("-", 1)[0] == domain for k in s) for s in by_slot]
        tracker.domains[domain] = _classifier(x, flags, seed) if flags else False
    for slot in ontology.slots:
        labels = [s.get(slot, NONE) for s in by_slot]
        given = {v for v in labels if v not in (NONE, DONTCARE)}
        closed = {v for v in ontology.slots[slot] if v not in (NONE, DONTCARE)}
        if not ontology.is_open(slot) and closed <= {"yes", "no"}:  # yes/no: never copied
            windows = [facility_window(t, slot) for t in texts]
            at = [i for i, w in enumerate(windows) if w is not None]
            tracker.closed[slot] = _window_classifier([windows[i] for i in at],
                                                      [labels[i] for i in at], seed)  # fmt: skip
            continue
        pool = given | (closed if not ontology.is_open(slot) else
                        closed | set(ontology.slots[slot]) - {NONE, DONTCARE})  # fmt: skip
        tracker.seen[slot] = _forms(slot, pool)
        if slot.endswith("-이름"):  # a name the system proposed: taken or not, learnt
            tracker.filled[slot] = _classifier(x, [label != NONE for label in labels], seed)
    return tracker


def all_none(texts: list[str]) -> list[list[str]]:
    """The reference: the empty state for every turn."""
    return [[] for _ in texts]
