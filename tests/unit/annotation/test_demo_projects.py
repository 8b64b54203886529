"""Every Label Studio project a demo recipe makes keeps the settings recorded for it
(``demo_projects.json``: its labeling config's digest and overlap), so that a demo runs
again in a HOME that an earlier version's demo left projects in.

``ensure_project`` refuses a project that exists with another labeling config or
overlap (its tasks and annotations would be mixed with this run's). Someone who ran a
demo, then updated benchforge, keeps that demo's projects in their Label Studio: if the
demo's interface changed under the same project name, the demo stops at its first push.
This happened: KLUE-STS's interface changed (KLUE 3.2.1's scale, issue 52) while its
projects kept their names, and the README's main command stopped at the pilot in a HOME
that held the older ``sts-demo-pilot``. So a demo round whose interface or overlap
changes needs a new project name, and this test says which.

To record a new project (a new demo, a new round, a renamed project), run this file:
``.venv/bin/python tests/unit/annotation/test_demo_projects.py`` adds what is missing
and refuses to change a recorded project's settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RECORD = Path(__file__).with_name("demo_projects.json")

if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))


def demo_projects(scratch: Path) -> dict[str, tuple[str, str]]:
    """project -> (its settings as ``project_settings`` words them, the recipe), for
    every round of every demo recipe whose interface is a file in the repository (a
    round whose interface a run writes, such as a review round's, is left out)."""
    from pipelines.annotation.annotate import project_settings
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.core.recipe import load_recipe
    from pipelines.core.steps import RunContext
    from pipelines.rebuild.kinds import task_kind

    found: dict[str, tuple[str, str]] = {}
    for path in sorted((ROOT / "recipes").glob("*-demo.yaml")):
        recipe = load_recipe(path)
        if not recipe.task:
            continue
        ctx = RunContext(recipe, path, scratch / path.stem, task_kind(recipe.task), True)
        for r in ctx.task.rounds(ctx).values():
            config = Path(r.config)
            if not config.is_file() or not config.resolve().is_relative_to(ROOT):
                continue
            settings = project_settings(parse_label_config(config), r.overlap)
            seen = found.get(r.project)
            assert seen is None or seen[0] == settings, (
                f"recipes/{path.name}: project {r.project!r} is also made by {seen[1]} with "
                f"other settings ({seen[0]} against {settings}); give one a new name"
            )
            found[r.project] = (settings, f"recipes/{path.name}")
    return found


def changed_projects(recorded: dict[str, str], now: dict[str, tuple[str, str]]) -> list[str]:
    """One line per project whose settings now differ from the recorded ones."""
    return [
        f"{where}: project {name!r} was recorded with {recorded[name]} and is now made with "
        f"{settings}; a Label Studio that ran the earlier demo has {name!r} with the old "
        "interface and refuses this run. Give the round a new project name in the recipe "
        "(annotation.project, or the round's project), then record it"
        for name, (settings, where) in sorted(now.items())
        if name in recorded and recorded[name] != settings
    ]


def test_a_demo_project_keeps_its_recorded_settings(tmp_path: Path) -> None:
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    now = demo_projects(tmp_path)
    changed = changed_projects(recorded, now)
    assert not changed, "\n".join(changed)
    missing = sorted(set(now) - set(recorded))
    assert not missing, (
        f"demo projects not recorded in {RECORD.name}: {missing}; run "
        ".venv/bin/python tests/unit/annotation/test_demo_projects.py to record them"
    )


def test_the_record_names_the_sts_demo_projects_an_older_version_left(tmp_path: Path) -> None:
    """The record keeps retired names with the settings they last had: ``sts-demo``,
    ``sts-demo-pilot`` and ``sts-demo-human`` were made with sts.xml as it was before
    issue 52 (commit 62ad744), and ``sts-demo-2...`` before issue 55's hotkeys. Undoing
    a rename (to ``sts-demo`` or to ``sts-demo-2``) is caught."""
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    now = demo_projects(tmp_path)
    for old in ("sts-demo", "sts-demo-2"):
        undone = {n.replace("sts-demo-3", old): v for n, v in now.items()}
        changed = [line.split("'")[1] for line in changed_projects(recorded, undone)]
        assert changed == [old, f"{old}-human", f"{old}-pilot"], changed
    undone = {n.replace("sts-demo-3", "sts-demo"): v for n, v in now.items()}
    changed = changed_projects(recorded, undone)
    assert [line.split("'")[1] for line in changed] == [
        "sts-demo",
        "sts-demo-human",
        "sts-demo-pilot",
    ], changed


def record(scratch: Path) -> int:
    """Add the demo projects that are not yet recorded; refuse a changed one."""
    recorded = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.is_file() else {}
    now = demo_projects(scratch)
    bad = [n for n, (s, _) in now.items() if n in recorded and recorded[n] != s]
    if bad:
        print(f"changed settings under a recorded name, rename them first: {bad}")
        return 1
    added = {n: s for n, (s, _) in now.items() if n not in recorded}
    recorded.update(added)
    tmp = RECORD.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n", "utf-8")
    tmp.replace(RECORD)
    print(f"recorded {len(added)} project(s): {sorted(added)}")
    return 0


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        raise SystemExit(record(Path(d)))
else:
    pytest.importorskip("label_studio_sdk")
