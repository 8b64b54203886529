"""KLUE-WoS's round items (issue 58): the writing round's (one task a goal) and the
state round's (one task a user turn of a kept dialogue), as the task data Label Studio
shows and, with simulated people, their latent answers.

Writing items (:func:`writing_items`): ``item_id`` (the goal's id), ``goal`` (its Korean
instructions), ``rows`` (the matching database rows, escaped HTML), ``goal_json`` (the
goal itself, for the checks after the round), ``domains`` and, simulated,
``sim_dialogue``: the simulated writer's dialogue as the lines a person types; a
``careless_share`` of the goals get a careless writer's dialogue instead (a constraint
forgotten, a venue invented), which the checks then drop.

State items (:func:`state_items`): ``item_id`` (``<dialogue>-t<n>``, n the user turn
from 1), ``dialogue_id``, ``turn``, ``dialogue`` (the turns up to this user turn, as
``{author, text}`` with 사용자 / 시스템), ``domains``, ``ls_prediction`` (the tracker's
state pre-loaded: closed items in the taxonomy, open ones typed) and, simulated,
``sim_state`` (the state the writer expressed).
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pandas as pd

from pipelines.families.klue.wos_dialogues import SYS, USER, written_dialogue
from pipelines.families.klue.wos_goals import Goal, Venue, instruction
from pipelines.families.klue.wos_interfaces import rows_html
from pipelines.families.klue.wos_ontology import DONTCARE, NONE, Ontology
from pipelines.families.klue.wos_tracker import track


def dialogue_text(turns: list[tuple[str, str]]) -> str:
    """The lines a writer types: ``사용자: ...`` / ``시스템: ...``."""
    return "\n".join(f"{USER if r == 'user' else SYS}: {t}" for r, t in turns)


def writing_items(
    goals: list[Goal], venues: list[Venue], seed: int, simulated: bool, careless_share: float
) -> pd.DataFrame:
    """One writing task per goal (module docstring)."""
    rng = np.random.default_rng(seed)
    rows = []
    for goal in goals:
        row = {"item_id": goal.goal_id, "goal": instruction(goal), "rows": rows_html(goal, venues),
               "goal_json": json.dumps(asdict(goal), ensure_ascii=False),
               "domains": goal.domains}  # fmt: skip
        if simulated:
            careless = bool(rng.random() < careless_share)
            turns, _ = written_dialogue(goal, venues, rng, careless=careless)
            row["sim_dialogue"] = dialogue_text(turns)
            row["sim_careless_writer"] = careless
        rows.append(row)
    return pd.DataFrame(rows)


def taxonomy_leaves(ontology: Ontology) -> frozenset[str]:
    """The state items the state interface's taxonomy offers: every closed slot's
    values and ``dontcare`` for every slot (``wos_interfaces.state_config``)."""
    out = set()
    for key, values in ontology.slots.items():
        out.add(f"{key}-{DONTCARE}")
        if not ontology.is_open(key):
            out.update(f"{key}-{v}" for v in values if v != NONE)
    return frozenset(out)


def state_prediction(state: list[str], ontology: Ontology, version: str) -> str:
    """A Label Studio prediction of ``state``: closed slots' items chosen in the
    ``state`` taxonomy, open slots' typed in ``state_typed``."""
    leaves = taxonomy_leaves(ontology)
    closed = [i for i in state if i in leaves]
    typed = [i for i in state if i not in leaves]
    result = []
    if closed:
        result.append({"id": "tracker-state", "from_name": "state", "to_name": "dialogue",
                       "type": "taxonomy",
                       "value": {"taxonomy": [i.split("-", 2) for i in closed]}})  # fmt: skip
    if typed:
        result.append({"id": "tracker-typed", "from_name": "state_typed", "to_name": "dialogue",
                       "type": "textarea", "value": {"text": typed}})  # fmt: skip
    return json.dumps({"model_version": version, "result": result}, ensure_ascii=False)


def state_items(
    dialogues: list[tuple[str, list[tuple[str, str]], Goal, list[list[str]] | None]],
    ontology: Ontology,
) -> pd.DataFrame:
    """One state task per user turn of each ``(dialogue_id, turns, goal, truth)``
    (module docstring; ``truth`` None with real writers)."""
    rows = []
    for dialogue_id, turns, goal, truth in dialogues:
        tracked = track(turns, goal, ontology)
        n = 0
        for i, (role, _) in enumerate(turns):
            if role != "user":
                continue
            shown = [{"author": USER if r == "user" else SYS, "text": t} for r, t in turns[: i + 1]]
            row = {"item_id": f"{dialogue_id}-t{n + 1}", "dialogue_id": dialogue_id,
                   "turn": n + 1, "dialogue": shown, "domains": goal.domains,
                   "tracker": json.dumps(tracked[n], ensure_ascii=False)}  # fmt: skip
            row["ls_prediction"] = state_prediction(tracked[n], ontology, "rule-tracker")
            if truth is not None:
                row["sim_state"] = json.dumps(truth[n], ensure_ascii=False)
            rows.append(row)
            n += 1
    return pd.DataFrame(rows)
