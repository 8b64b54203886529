"""Simulated annotators, for demos and tests only.

``simulate`` posts annotations to a Label Studio project from K distinct user accounts
(``annotator-NN@simulated.benchforge.local``, created through the API), so that the rest
of the pipeline meets real Label Studio data. Everything pulled from these accounts has
``simulated = True``, and the flag travels into the gold labels and the data card.

The noise model (seeded, reproducible):

- Each item has a latent true answer per control: the item's ``sim_<field>`` value when
  the items carry one (e.g. ``sim_similarity`` for STS), else one drawn from the seed and
  the item id, uniformly over the control's options.
- Annotator ``a`` has a bias ``b_a ~ N(0, 0.3)`` and a noise ``s_a ~ U(0.3, 0.8)`` on
  ordinal controls (options that are all numbers: the answer is the truth plus
  ``b_a + N(0, s_a)``, rounded and clipped to the scale), and an accuracy
  ``p_a ~ U(0.75, 0.95)`` on nominal controls (the truth with probability ``p_a``, else
  another option uniformly).
- At least one annotator is careless (``max(1, round(0.15 K))`` of them, unless the
  round's ``careless`` says how many): uniform random answers and a lead time under 3 s.
- ``unqualified`` annotators (issue 35, 0 unless the round says) cannot do the task:
  they answer at random in the qualification (pilot) round and fail it, where the
  careless ones still take care (a test is taken seriously; the care goes later). In
  the main round they answer at random too, as an applicant who failed a pilot but can
  still open the project would (Label Studio's community edition shows every project
  to every member of the organization); their annotations come on top of the
  overlap, since the rebuild excludes them (reason ``not_qualified``).
- ``accepting`` annotators (0 unless the round says) trust the model: outside a pilot,
  on a task with a pre-loaded prediction they submit its regions unchanged in 2-6 s
  (automation bias, issue 55); elsewhere they answer as careful annotators do.
- Each annotation is skipped (cancelled, no result) with probability 0.02, and reports a
  random report flag with probability 0.01 (0.9 when the item has ``sim_report``).
- A control whose ``sim_<field>`` is a list of latent answers answers as one of them,
  drawn per annotator: on a multiple-choice control each is a list of choices or their
  ``|``-joined text (a survey's respondents), on a single-choice control one option (an
  ambiguous pair: the drawn answer is then the annotator's truth, noise as above);
  dynamic choices (``<Choices value="$options">``) take their options from the task.
- Each control is answered by its value type (``pipelines.annotation.values``): the
  choice and rating rules above; text fields (``TextArea``) get the item's
  ``sim_<field>`` text (one of them at random when it is a list of variants), else the
  first data field with a simulated-edit marker; span sets, relations, answer spans and
  trees take the item's ``sim_<field>`` structure with the annotator's accuracy (a span
  missed, cut short or relabelled; an arc attached elsewhere). A value type that
  ``corrects_suggestion`` (the dependency tree) starts from the task's pre-loaded
  prediction outside a pilot and corrects it against the truth (its docstring).
- Which annotators label a task: the K accounts in a seeded order per item, until the
  task has ``overlap`` annotations that were not skipped (a skip passes the task on to the
  next annotator, as Label Studio does); an account never annotates a task twice. An
  annotator skips only while enough accounts are left to finish the task, so every task
  gets its ``overlap`` (with K == overlap, nobody skips).

Two ways to deliver them, with the same annotations for the same seed (``plan``):
``with_simulated`` attaches them to new tasks in ``annotate.push``'s bulk import (one
request per 2,000 tasks: the rebuild uses this), and ``simulate`` posts the ones still
missing from existing tasks, one request per annotation, several tasks at a time.
"""

from __future__ import annotations

import json
import logging
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
from tqdm.auto import tqdm

from pipelines.annotation.annotate import (
    SIM_DOMAIN,
    AnnotationError,
    AttachAnnotations,
    client,
    export_tasks,
    find_project,
    user_id_of,
    with_retries,
)
from pipelines.annotation.label_config import LabelConfig, parse_label_config
from pipelines.annotation.values import region, seed_of, value_type_of

log = logging.getLogger(__name__)

SKIP_RATE = 0.02
REPORT_RATE = 0.01


@dataclass(frozen=True)
class Annotator:
    user_id: int
    email: str
    bias: float
    noise: float
    accuracy: float
    careless: bool
    unqualified: bool = False
    accepts: bool = False  # submits every pre-loaded suggestion as it is (issue 55)

    def in_phase(self, phase: str) -> Annotator:
        """How this account answers in a ``pilot`` or a ``main`` round (see the module
        docstring): at random when unqualified, and when careless outside a pilot."""
        careless = self.unqualified or (self.careless and phase != "pilot")
        return replace(self, careless=careless)


def ensure_annotators(
    ls,
    k: int,
    seed: int,
    pool: str = "annotator",
    careless: int | None = None,  # noqa: ANN001
    unqualified: int = 0,
    accepting: int = 0,
) -> list[Annotator]:
    """K simulated accounts ``<pool>-NN@simulated.benchforge.local`` (created when
    missing) with their noise parameters; pools keep e.g. NLI writers apart from the
    validators of their hypotheses. ``careless``: how many of them answer at random
    (None: ``max(1, round(0.15 K))``), the last ones; ``unqualified``: how many fail
    the pilot, the ones just before them; ``accepting``: how many submit every pre-loaded
    suggestion unchanged outside a pilot, the ones before those."""
    if k < 1:
        raise AnnotationError(f"--annotators must be 1 or more, got {k}")
    users = {u.email: u for u in with_retries(lambda: list(ls.users.list()), "list users")}
    rng = np.random.default_rng(seed_of("annotators", seed))
    careless = max(1, round(0.15 * k)) if careless is None else min(max(careless, 0), k)
    out = []
    for i in range(k):
        email = f"{pool}-{i + 1:02d}@{SIM_DOMAIN}"
        user = users.get(email)
        if user is None:
            user = with_retries(
                lambda e=email, n=i: ls.users.create(
                    username=f"sim-{pool}-{n + 1:02d}",
                    email=e,
                    password=secrets.token_urlsafe(16),
                    first_name="Simulated",
                    last_name=f"{pool.capitalize()} {n + 1}",
                ),
                "create user",
                recheck=lambda e=email: next((u for u in ls.users.list() if u.email == e), None),
            )
        out.append(
            Annotator(
                user_id=int(user.id),
                email=email,
                bias=float(rng.normal(0, 0.3)),
                noise=float(rng.uniform(0.3, 0.8)),
                accuracy=float(rng.uniform(0.75, 0.95)),
                careless=i >= k - careless,
                unqualified=k - careless - unqualified <= i < k - careless,
                accepts=k - careless - unqualified - accepting <= i < k - careless - unqualified,
            )
        )
    return out


def simulated_annotation(
    config: LabelConfig,
    data: dict,
    who: Annotator,
    seed: int,
    task_key: object,
    can_skip: bool = True,
    suggestion: list[dict] | None = None,
) -> dict:
    """The payload of one simulated annotation (result, lead_time, was_cancelled); a skip
    only when ``can_skip`` (another account is left to take the task over). An account
    that ``accepts`` submits the task's pre-loaded ``suggestion`` (its prediction's
    regions) as it is, in a few seconds."""
    rng = np.random.default_rng(seed_of(seed, who.email, task_key))
    if who.accepts and not who.careless and suggestion is not None:
        answers = {c.name for c in config.answer_controls}
        result = [dict(r) for r in suggestion if r.get("from_name") in answers]
        return {"result": result, "lead_time": float(rng.uniform(2.0, 6.0)),
                "was_cancelled": False}  # fmt: skip
    lead = float(rng.uniform(0.5, 3.0) if who.careless else rng.lognormal(3.0, 0.5))
    if rng.random() < SKIP_RATE and can_skip:
        return {"result": [], "lead_time": lead, "was_cancelled": True}
    result = []
    kinds = {c.name: value_type_of(c, config.pinned(c.name)) for c in config.answer_controls}
    answered_by_others = {n for c in config.answer_controls
                          for n in kinds[c.name].companions(c)}  # fmt: skip
    for control in config.answer_controls:  # each control's value type answers it
        if control.name in answered_by_others:
            continue  # a companion box its owner's value type answers
        kind = kinds[control.name]
        if kind.corrects_suggestion and suggestion is not None:
            result.extend(kind.simulate(control, data, who, rng, seed, suggestion=suggestion))
        else:
            result.extend(kind.simulate(control, data, who, rng, seed))
    report_rate = 0.9 if data.get("sim_report") else REPORT_RATE
    for control in config.report_controls:
        if control.options and rng.random() < report_rate:
            flag = data.get("sim_report")
            if flag not in control.options:
                flag = control.options[int(rng.integers(len(control.options)))]
            result.append(region(control, "choices", {"choices": [flag]}))
    return {"result": result, "lead_time": lead, "was_cancelled": False}


def plan(
    config: LabelConfig,
    tasks: list[dict],
    people: list[Annotator],
    overlap: int,
    seed: int,
    phase: str = "main",
) -> list[tuple[int, Annotator, dict]]:
    """The simulated annotations that ``tasks`` (each with ``data`` and its existing
    ``annotations``) still need, as ``(task index, annotator, payload)``: each task gets
    ``overlap`` completed annotations, from the accounts in a seeded order per item, an
    account never twice. Depends only on the seed, the item and what the task holds, so
    posting them one by one or importing them with their tasks gives the same ones.
    Outside a pilot an unqualified account's annotation does not count towards the
    overlap (the rebuild excludes it)."""
    people = [p.in_phase(phase) for p in people]
    extra = {p.user_id for p in people if p.unqualified and phase != "pilot"}
    jobs = []
    for index, task in enumerate(tasks):
        anns = task.get("annotations", [])
        done = {user_id_of(a.get("completed_by")) for a in anns}
        need = overlap - sum(
            1
            for a in anns
            if not a.get("was_cancelled") and user_id_of(a.get("completed_by")) not in extra
        )
        key = task["data"].get("item_id", task.get("id"))
        order = np.random.default_rng(seed_of(seed, "assign", key)).permutation(len(people))
        candidates = [people[int(i)] for i in order if people[int(i)].user_id not in done]
        for position, who in enumerate(candidates):
            if need <= 0:
                break
            # someone who counts can take a skip over
            spare = sum(c.user_id not in extra for c in candidates[position + 1 :]) >= need
            predictions = task.get("predictions") or []
            suggestion = (predictions[-1].get("result") or []) if predictions else None
            payload = simulated_annotation(config, task["data"], who, seed, key, spare,
                                           suggestion if phase != "pilot" else None)  # fmt: skip
            jobs.append((index, who, payload))
            need -= 0 if payload["was_cancelled"] or who.user_id in extra else 1
    return jobs


def _prepare(
    ls,
    proj,
    annotators: int,
    seed: int,
    pool: str,  # noqa: ANN001
    careless: int | None = None,
    unqualified: int = 0,
    accepting: int = 0,
    value_types: tuple[tuple[str, str], ...] = (),
) -> tuple[LabelConfig, list[Annotator], int]:
    """The project's config (read with the recipe's pinned ``value_types``), the
    simulated accounts and the overlap; the project is marked simulated."""
    config = parse_label_config(proj.label_config)
    if value_types:
        config = replace(config, value_types=tuple(value_types))
    overlap = int(proj.maximum_annotations or 1)
    people = ensure_annotators(ls, annotators, seed, pool, careless, unqualified, accepting)
    if annotators < overlap:
        log.warning(
            "%d annotators for an overlap of %d: tasks stay unfinished", annotators, overlap
        )
    if "simulated" not in (proj.description or ""):
        with_retries(
            lambda: ls.projects.update(
                id=proj.id, description="benchforge project; annotations simulated"
            ),
            "mark project simulated",
        )
    return config, people, overlap


def with_simulated(
    annotators: int,
    seed: int = 0,
    pool: str = "annotator",
    careless: int | None = None,
    unqualified: int = 0,
    phase: str = "main",
    accepting: int = 0,
    value_types: tuple[tuple[str, str], ...] = (),
) -> AttachAnnotations:
    """For ``annotate.push``: attach each new task's simulated annotations to its import
    record, so that tasks and annotations arrive in one bulk request per chunk (Label
    Studio's import keeps each annotation's ``completed_by``, ``lead_time`` and
    ``was_cancelled``) instead of one request per annotation. The annotations are those
    ``simulate`` would post for the same seed (``plan``)."""

    def attach(ls, proj, records: list[dict]) -> int:  # noqa: ANN001
        config, people, overlap = _prepare(ls, proj, annotators, seed, pool, careless,
                                           unqualified, accepting, value_types)  # fmt: skip
        # the data as Label Studio will hand it back (JSON): the same input to the noise
        # model as when the task is read from the server
        tasks = [{"data": json.loads(json.dumps(r["data"])), "annotations": [],
                  "predictions": r.get("predictions") or []} for r in records]  # fmt: skip
        for record in records:
            record["annotations"] = []
        jobs = plan(config, tasks, people, overlap, seed, phase)
        for index, who, payload in jobs:
            records[index]["annotations"].append(
                {**payload, "completed_by": who.user_id, "ground_truth": False}
            )
        return len(jobs)

    return attach


def simulate(
    project: str,
    annotators: int,
    seed: int = 0,
    ls=None,  # noqa: ANN001
    workers: int = 8,
    progress: bool | None = None,
    pool: str = "annotator",
    careless: int | None = None,
    unqualified: int = 0,
    phase: str = "main",
    complete: bool = False,
    accepting: int = 0,
    value_types: tuple[tuple[str, str], ...] = (),
) -> dict:
    """Post the simulated annotations that are missing (a rerun posts nothing twice):
    each task gets ``overlap`` completed annotations, from the K accounts in a seeded
    order (``plan``). Tasks pushed with ``with_simulated`` have theirs already.
    ``complete``: the caller knows every task of the project was created with its
    simulated annotations (the same run's push created them all): the accounts are
    prepared, and the whole-project export that would find nothing missing is skipped
    (about 50 s for 14,694 tasks and 115,394 annotations, issue 38)."""
    from pipelines.annotation.annotate import _base_url, project_lock

    ls = ls or client()
    with project_lock(project, _base_url(ls)):  # one writer per project (issue 32)
        return _simulate(project, annotators, seed, ls, workers, progress, pool, careless,
                         unqualified, phase, complete, accepting, value_types)  # fmt: skip


def _simulate(project, annotators, seed, ls, workers, progress, pool, careless,  # noqa: ANN001
              unqualified, phase, complete=False, accepting=0, value_types=()) -> dict:  # fmt: skip
    proj = find_project(ls, project)
    if proj is None:
        raise AnnotationError(f"no Label Studio project named {project!r}")
    config, people, overlap = _prepare(ls, proj, annotators, seed, pool, careless, unqualified,
                                       accepting, value_types)  # fmt: skip
    tasks = [] if complete else export_tasks(ls, proj.id)
    jobs = [
        (tasks[index]["id"], who, payload)
        for index, who, payload in plan(config, tasks, people, overlap, seed, phase)
    ]

    by_task: dict[int, list[tuple]] = {}
    for job in jobs:
        by_task.setdefault(job[0], []).append(job)

    def post(task_jobs: list[tuple]) -> int:
        # one task's annotations in sequence: Label Studio updates a task's "labeled" state
        # per annotation, and concurrent posts to one task race on it
        for task_id, who, payload in task_jobs:
            with_retries(
                lambda t=task_id, w=who, p=payload: ls.annotations.create(
                    id=t, completed_by=w.user_id, **p
                ),
                "post annotation",
                recheck=lambda t=task_id, w=who: _saved_annotation(ls, t, w.user_id),
            )
        return len(task_jobs)

    bar = tqdm(total=len(jobs), desc=f"simulate {project}", unit="annotation", disable=progress)
    with ThreadPoolExecutor(max_workers=workers) as executor:
        for n in executor.map(post, by_task.values()):
            bar.update(n)
    bar.close()
    return {
        "project": project,
        "annotators": [p.email for p in people],
        "careless": [p.email for p in people if p.careless],
        "unqualified": [p.email for p in people if p.unqualified],
        "accepting": [p.email for p in people if p.accepts],
        "posted": len(jobs),
        "overlap": overlap,
        "seed": seed,
        "payloads": [
            {"task_id": task_id, "annotator": who.email, **payload}
            for task_id, who, payload in jobs
        ],
    }


def _saved_annotation(ls, task_id: int, user_id: int) -> object | None:  # noqa: ANN001
    """The task's annotation by ``user_id`` if one is saved (a simulated account
    annotates a task at most once: its (item, annotator, round) key)."""
    for ann in ls.annotations.list(id=task_id):
        if user_id_of(ann.completed_by) == user_id:
            return ann
    return None


def noise_parameters(people: list[Annotator]) -> str:
    """The annotators' parameters as JSON (for logs and the data card)."""
    return json.dumps([p.__dict__ for p in people], ensure_ascii=False)
