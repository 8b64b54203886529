"""Issues 17 and 33: the architecture's contracts. A toy family, one package
(``tests/toyfam``) with its own language, recipe section and value type, rebuilds
through the generic orchestrator (a real Prefect run); registries list their members
and name the nearest one for a typo; every rule's settings are a typed union tagged by
``rule``; the CLI's options are checked against the settings classes; no stage imports
the Korean module and no code dispatches on a layout or rule name."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.core.registry import UnknownName
from pipelines.core.steps import Rows

ROOT = Path(__file__).resolve().parents[2]

TOYFAM = ROOT / "tests" / "toyfam"


def test_a_toy_family_package_with_its_own_section_and_value_type_rebuilds(tmp_path):
    """Issue 33: a toy family is one package (``tests/toyfam``) that registers a
    language, its own recipe section, its own value type, three steps and a task kind; a
    recipe names it, and `run_rebuild` runs it through the generic orchestrator (a real
    Prefect run): the section is validated, the simulated annotators, pull's flattening
    and the agreement rule use the family's value type, rows are checked, and a rerun
    resumes. Nothing outside the package is edited for it (the repository is unchanged
    after the run)."""
    status = ["git", "status", "--porcelain", "--untracked-files=no"]
    before = subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout
    (tmp_path / "corpus.txt").write_text("a b | c | d e f\nhello world | x\n", encoding="utf-8")
    (tmp_path / "recipe.yaml").write_text(
        "name: toy-demo\ntask: toy\ncorpora:\n  - name: toy\n    path: corpus.txt\n"
        "    format: txt\n    license: CC0-1.0\n    domain: test\n    style: formal\n"
        "    language: xx\ntoy:\n  min_words: 2\n",
        encoding="utf-8",
    )

    def run() -> tuple[str, dict]:
        proc = subprocess.run(
            [sys.executable, str(TOYFAM / "run.py"), str(tmp_path / "recipe.yaml"),
             str(tmp_path / "out")],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
        return proc.stdout, json.loads(line[len("RESULT ") :])

    out, steps = run()
    assert list(steps) == ["sentences", "keywords", "export"]
    assert steps["sentences"]["rows"] == {
        "unit": "sentence", "in": 5, "kept": 3, "dropped": {"one_word": 2}
    }  # fmt: skip
    # the family's value type decided how the annotations were simulated, read and agreed
    # on: annotator 0 writes the last word, the others write it in capitals, read without case
    assert steps["keywords"]["value_type"] == "toy_keyword"
    assert steps["keywords"]["unanimous_share"] == 1.0
    assert "[1/3] sentences" in out and "[3/3] export" in out
    lines = (tmp_path / "out" / "dataset" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == [
        {"text": "a b", "keyword": "b"}, {"text": "d e f", "keyword": "f"},
        {"text": "hello world", "keyword": "world"},
    ]  # fmt: skip
    record = json.loads((tmp_path / "out" / "rebuild.json").read_text(encoding="utf-8"))
    assert record["task"] == "toy" and list(record["steps"]) == list(steps)
    _, again = run()  # a rerun skips the finished step
    assert again["sentences"]["cached"] is True
    assert subprocess.run(status, cwd=ROOT, capture_output=True, text=True).stdout == before


def test_a_family_registers_its_own_recipe_section_validated_at_load(tmp_path):
    """Issue 33: a family owns its recipe section. Registered from the family's module
    (here, this test), it is validated with the rest of the recipe at load: an unknown
    key with its path, a bad value, and the section's check against the whole recipe;
    it appears in the one JSON Schema of recipes; core imports no family."""
    from pydantic import Field

    from pipelines.core.plugins import RECIPE_SECTIONS, RecipeSection, register_section
    from pipelines.core.recipe import Strict, recipe_schema

    class Toy(Strict):
        """A toy section."""

        min_words: int = Field(default=2, ge=1)
        corpus: str = "toy"

    def check(recipe: object, section: Toy) -> None:
        if section.corpus not in [c.name for c in recipe.corpora]:
            raise ValueError(f"toy.corpus: no corpus named {section.corpus!r}")

    base = ("name: t\ncorpora:\n  - name: toy\n    path: c.txt\n    format: txt\n"
            "    license: CC0-1.0\n    domain: test\n    style: formal\n")  # fmt: skip
    (tmp_path / "c.txt").write_text("a b\n", encoding="utf-8")
    path = tmp_path / "recipe.yaml"
    path.write_text(base + "toy:\n  min_words: 3\n", encoding="utf-8")
    with pytest.raises(RecipeError, match="toy: unknown setting"):
        load_recipe(path)  # not registered yet: an unknown top-level key
    register_section(RecipeSection("toy", Toy, "a toy family's section", check))
    try:
        assert load_recipe(path).toy.min_words == 3
        assert load_recipe(path).agreement is None  # a section the recipe leaves out
        for body, message in [
            ("toy:\n  min_word: 3\n", r"toy\.min_word: unknown setting"),
            ("toy:\n  min_words: 0\n", r"toy\.min_words: Input should be greater than"),
            ("toy:\n  corpus: nsmc\n", r"recipe\.yaml: toy\.corpus: no corpus named 'nsmc'"),
        ]:
            path.write_text(base + body, encoding="utf-8")
            with pytest.raises(RecipeError, match=message):
                load_recipe(path)
        schema = recipe_schema()
        assert {"toy", "agreement", "split", "translation", "kobbq", "jglue", "kobest"} <= set(
            schema["properties"]
        )
    finally:
        RECIPE_SECTIONS.remove("toy")
    assert "toy" not in recipe_schema()["properties"]


def test_a_family_registers_its_own_value_type(tmp_path):
    """Issue 33: a family that needs a new kind of answer registers a value type in its
    own module; pull's rows, the simulated annotators, the agreement measures and a
    recipe's pin all find it, and nothing outside the family is edited."""
    import pandas as pd

    from pipelines.agreement.rules import AgreementSettings, agree
    from pipelines.annotation.annotate import flatten_result
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.simulate import Annotator, simulated_annotation
    from pipelines.annotation.values import (
        VALUE_TYPES,
        ValueType,
        region,
        register_value_type,
        value_type_of,
    )

    class Keyword(ValueType):
        """A toy family's answer: one keyword of the text, compared without case."""

        name = "toy_keyword"
        tags = frozenset({"TextArea"})
        result_types = frozenset()
        rules = ("majority",)
        priority = 5

        def claims(self, control):
            return control.tag == "TextArea" and control.name == "keyword"

        def flatten(self, control, regions, result=()):
            return [r["value"]["text"][0].strip().lower() for r in regions]

        def simulate(self, control, data, who, rng, seed):
            return [region(control, "textarea", {"text": [data["sim_keyword"].upper()]})]

        def measures(self, ratings, context=None):
            per_item = ratings.groupby("item_id")["value"].nunique()
            return {"unanimous_share": round(float((per_item == 1).mean()), 4)}

    config = parse_label_config(
        '<View><Text name="text" value="$text"/><TextArea name="keyword" toName="text"/>'
        '<TextArea name="note" toName="text"/></View>'
    )
    register_value_type(Keyword())
    try:
        assert value_type_of(config.control("keyword")).name == "toy_keyword"
        assert value_type_of(config.control("note")).name == "free_text"
        people = [Annotator(i, f"a{i}@x", 0.0, 0.1, 0.9, False) for i in range(3)]
        rows = []
        for who in people:
            payload = simulated_annotation(
                config, {"item_id": "i1", "text": "t", "sim_keyword": "Seoul"}, who, 1, "i1", False
            )
            pairs = dict(flatten_result(payload["result"], config))
            rows.append({"item_id": "i1", "annotator_id": who.email,
                         "value": pairs["keyword"]})  # fmt: skip
        assert {r["value"] for r in rows} == {"seoul"}
        result = agree(pd.DataFrame(rows), AgreementSettings(rule="majority", min_votes=2),
                       "toy_keyword")  # fmt: skip
        assert result["figures"]["value_type"] == "toy_keyword"
        assert result["figures"]["unanimous_share"] == 1.0
        assert result["gold"]["label"].tolist() == ["seoul"]
        recipe = tmp_path / "recipe.yaml"
        base = ("name: t\ncorpora:\n  - name: c\n    path: c.txt\n    format: txt\n"
                "    license: CC0-1.0\n    domain: d\n    style: formal\n"
                "annotation:\n  config: x.xml\n  value_types: {note: %s}\n")  # fmt: skip
        recipe.write_text(base % "toy_keyword", encoding="utf-8")
        assert load_recipe(recipe).annotation.value_types == {"note": "toy_keyword"}
        recipe.write_text(base % "toy_keywords", encoding="utf-8")
        with pytest.raises(RecipeError, match="did you mean 'toy_keyword'"):
            load_recipe(recipe)
    finally:
        VALUE_TYPES.remove("toy_keyword")


def test_no_import_cycle_in_pipelines_or_flows():
    """Issue 33: no module of ``pipelines`` or ``flows`` reaches itself through imports
    (function-level imports included); import-linter's layers cover the packages, this
    covers the modules inside one layer (``models.pretrain`` and ``train_classifier``
    imported each other)."""
    import grimp

    graph = grimp.build_graph("pipelines", "flows")
    ours = sorted(m for m in graph.modules if m.split(".")[0] in ("pipelines", "flows"))
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in graph.find_modules_directly_imported_by(node):
            if nxt.split(".")[0] not in ("pipelines", "flows"):
                continue
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for module in ours:
        if module not in order:
            visit(module)
    assert cycles == []


def test_rows_that_do_not_add_up_are_refused():
    Rows("item", 5, 3, {"a": 2}).check("ok")
    with pytest.raises(AssertionError, match="5 items in != 3 kept"):
        Rows("item", 5, 3, {"a": 1}).check("bad")


def test_registries_list_their_members_and_name_the_nearest():
    proc = subprocess.run([sys.executable, "-m", "flows.cli", "list"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for kind, members in {
        "task kinds": ["klue-sts", "klue-nli", "klue-ynat"],
        "steps": ["ingest", "push", "agree", "split", "export", "klue-nli:premises"],
        "split rules": ["sts", "nli", "tc", "ner", "random"],
        "agreement rules": ["mean", "majority"],
        "pairing methods": ["gsm", "metadata", "rtt"],
        "translator backends": ["transformers", "http"],
        "annotation configs": ["sts.xml", "topic.xml"],
        "languages": ["ko"],
    }.items():
        block = proc.stdout.split(f"{kind} (")[1].split("\n\n")[0]
        for member in members:
            assert re.search(rf"^  {re.escape(member)}\s", block, flags=re.M), (kind, member)
    from pipelines.rebuild.kinds import task_kind

    with pytest.raises(UnknownName, match="did you mean 'klue-sts'"):
        task_kind("klue-stss")


def _recipe(tmp_path: Path, **sections: str) -> Path:
    text = (ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8")
    for name, body in sections.items():
        text = re.sub(rf"^{name}:.*?(?=^\w|\Z)", f"{name}: {body}\n", text, flags=re.M | re.S)
    path = ROOT / "recipes" / f".test-{tmp_path.name}.yaml"  # relative paths stay valid
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("section", "body", "message"),
    [
        ("agreement", "{rule: mean, pearson_mn: 0.8}", "agreement.pearson_mn: unknown setting; "
         "did you mean 'pearson_min'?"),
        ("agreement", "{rule: mean, min_votes: 3}", "agreement.min_votes: unknown setting"),
        ("split", "{rule: sts, folds: 3}", "split.folds: unknown setting"),
        ("split", "{rule: nli, fold: 3}", "did you mean 'folds'?"),
        ("split", "{rule: stss}", "split.rule: unknown split rule 'stss'; did you mean 'sts'?"),
        ("task", "klue-stss", "did you mean 'klue-sts'?"),
        ("export", "{layout: klue-sts}", "export.layout was replaced by the recipe's task"),
    ],
)  # fmt: skip
def test_recipe_sections_are_typed_unions_checked_at_load(tmp_path, section, body, message):
    path = _recipe(tmp_path, **{section: body})
    try:
        with pytest.raises(RecipeError) as err:
            load_recipe(path)
    finally:
        path.unlink()
    assert message in str(err.value) and str(path) in str(err.value)


def test_cli_options_are_checked_against_the_settings_classes():
    """Every setting of every split and agreement rule is a `benchforge split`/`agree`
    option of the same name, or a recipe-only setting listed here."""
    from flows.cli.app import _parser
    from pipelines.agreement.rules import AGREEMENT_RULES
    from pipelines.core.settings import field_names
    from pipelines.splits.base import SPLIT_RULES

    sub = next(a for a in _parser()._actions if a.dest == "command").choices
    recipe_only = {"rule", "bins", "high_score", "binary_threshold", "decimals", "values",
                   "group_columns", "answer_field"}  # fmt: skip
    for command, registry in (("split", SPLIT_RULES), ("agree", AGREEMENT_RULES)):
        dests = {a.dest for a in sub[command]._actions}
        for name, rule in registry.items():
            missing = [f for f in field_names(rule.settings) if f not in dests | recipe_only]
            assert not missing, f"benchforge {command}: rule {name} settings {missing}"


def test_no_stage_imports_the_korean_module_and_no_dispatch_on_names():
    code = {p: p.read_text(encoding="utf-8") for d in ("pipelines", "flows")
            for p in (ROOT / d).rglob("*.py")}  # fmt: skip
    for path, text in code.items():
        if path.parent.name != "lang":
            assert "lang.ko" not in text, f"{path} imports the Korean module directly"
        for pattern in (r"layout\s*==", r"\.rule\s*==\s*[\"']", r"\[\"rule\"\]\s*==\s*[\"']",
                        r"args\.command\s*==", r"method in \("):  # fmt: skip
            assert not re.search(pattern, text), f"{path}: dispatch by name ({pattern})"


def test_registries_load_once_when_threads_look_up_at_the_same_time():
    """Prefect runs pairing tasks in threads: a second thread must not see a registry whose
    modules the first one is still importing (it once failed: "unknown language 'ko'")."""
    script = textwrap.dedent(
        """
        import threading
        from pipelines.lang import language
        from pipelines.splits.base import SPLIT_RULES
        barrier, errors = threading.Barrier(16), []
        def look():
            barrier.wait()
            try:
                language("ko"); SPLIT_RULES.get("nli")
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=look) for _ in range(16)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print(errors)
        """
    )
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                              text=True)  # fmt: skip
        assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_every_error_is_a_benchforge_error_that_the_cli_catches_once():
    """Issue 33: one error base carrying its exit code, caught once by the command line;
    a module's new error class needs no edit of the CLI (it had imported 21 classes)."""
    import ast

    builtin = {"Exception", "ValueError", "RuntimeError", "KeyError", "OSError", "TypeError"}
    found = {}
    for path in sorted(p for d in ("pipelines", "flows") for p in (ROOT / d).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if bases & (builtin | {"BenchforgeError"}):
                    found[node.name] = (path.relative_to(ROOT).as_posix(), bases)
    outside = {name: where for name, (where, bases) in found.items()
               if "BenchforgeError" not in bases
               and name not in ("AnnotationsPending", "BenchforgeError")}  # fmt: skip
    assert outside == {}, "errors that are not BenchforgeError"
    assert len(found) >= 25
    app = (ROOT / "flows" / "cli" / "app.py").read_text(encoding="utf-8")
    assert "except BenchforgeError" in app
    imported = re.findall(r"^from \S+ import (.+)$", app, re.M)
    assert not [n for line in imported for n in line.split(", ")
                if n in found and n not in ("BenchforgeError", "RecipeError")]  # fmt: skip


def test_every_test_file_has_its_own_name():
    """The test folders have no ``__init__.py``: pytest imports a test file by its
    basename, so two files of one name in two folders break collection in a full run
    (issue 37: tests/e2e/test_marc.py and tests/unit/families/marc/test_marc.py)."""
    from collections import Counter

    tests = Path(__file__).resolve().parents[1]
    names = Counter(p.name for p in tests.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
