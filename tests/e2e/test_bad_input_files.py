"""Input files named by a recipe, with one bad change each (issue 51, items 8-10):
``benchforge rebuild`` of a copy of a demo recipe stops before any work (no step, no
server) with exit 2 and one line naming the setting, the file, the line or entry and
the problem: a relation-list entry without ``subject`` or ``label``, a bad or empty
knowledge base, a repeated pair, a KMOU, JSQuAD or public-figure file that is not
UTF-8, a triples file that yields no question set, a missing writers' or seeds file, a
pilot gold answer outside its item's options. Each failed late, with a traceback, or
was accepted before."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from refused_rebuild import refused_rebuild

ROOT = Path(__file__).resolve().parents[2]


def _demo(tmp_path: Path, name: str, edit: Callable[[str], str] = lambda s: s) -> Path:
    """A copy of ``recipes/<name>.yaml`` whose relative paths still reach the shipped
    data (``data`` and ``annotation_configs`` linked beside it), with ``edit`` applied
    to its text."""
    for folder in ("data", "annotation_configs"):
        link = tmp_path / folder
        if not link.exists():
            link.symlink_to(ROOT / folder)
    (tmp_path / "recipes").mkdir(exist_ok=True)
    text = (ROOT / "recipes" / f"{name}.yaml").read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text or edit.__name__ == "<lambda>"
    path = tmp_path / "recipes" / f"{name}.yaml"
    path.write_text(changed, encoding="utf-8")
    return path


def _replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new)

    return edit


_fails_before_any_work = refused_rebuild


# ------------------------------------------------------------------------- KLUE-RE


def _relations(tmp_path: Path, change: Callable[[list], None]) -> Path:
    shipped = ROOT / "pipelines/families/klue/re_relations.json"
    data = json.loads(shipped.read_text(encoding="utf-8"))
    change(data["relations"])
    path = tmp_path / "relations.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


KB = "  kb: ../data/demo/klue-re/kb.tsv\n"


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda rs: rs[3].pop("subject"), "relations[3]: no subject"),
        (lambda rs: rs[7].pop("label"), "relations[7]: no label"),
        (lambda rs: rs.append(dict(rs[9])), "relations[30]: label 'org:founded_by' repeats "
                                            "relations[9]"),
        (lambda rs: rs.__setitem__(slice(1, None), []), "no relation besides no_relation"),
    ],
)  # fmt: skip
def test_a_bad_relation_list_fails_before_the_taggers_train(tmp_path, change, needle):
    """A ``KeyError`` after the taggers' training (item 8); a repeated relation or a list
    with nothing to annotate was accepted (items 9, 10)."""
    path = _relations(tmp_path, change)
    recipe = _demo(tmp_path, "klue-re-demo", _replace(KB, f"{KB}  relations: {path}\n"))
    _fails_before_any_work(tmp_path, recipe, f"re.relations: {path}: ", needle)


@pytest.mark.parametrize(
    ("append", "needle"),
    [
        ("김무성\tper:employee_of\n", "expected subject<TAB>relation<TAB>object, got 2 field(s)"),
        ("김무성\tper:employee_of\t새누리당\n", "repeats the triple on line 5"),
        ("김무성\tper:origin\t새누리당\n", "gives the pair a second relation ('per:employee_of') "
                                         "on line 5"),
        ("김무성\tper:origin\t한\x00국\n", "a control character"),
    ],
)  # fmt: skip
def test_a_bad_knowledge_base_line_fails_before_the_taggers_train(tmp_path, append, needle):
    """A ``ValueError`` after the taggers' training (item 8); a repeated pair (item 10)."""
    kb = tmp_path / "kb.tsv"
    shipped = (ROOT / "data/demo/klue-re/kb.tsv").read_text(encoding="utf-8")
    kb.write_text(shipped + append, encoding="utf-8")
    line = len(shipped.splitlines()) + 1
    recipe = _demo(tmp_path, "klue-re-demo", _replace(KB, f"  kb: {kb}\n"))
    _fails_before_any_work(tmp_path, recipe, f"re.kb: {kb}:{line}: ", needle)


def test_a_knowledge_base_without_triples_fails_before_any_work(tmp_path):
    """Item 9: a file that yields nothing failed deep in a step."""
    kb = tmp_path / "kb.tsv"
    kb.write_text("# subject<TAB>relation<TAB>object\n\n", encoding="utf-8")
    recipe = _demo(tmp_path, "klue-re-demo", _replace(KB, f"  kb: {kb}\n"))
    _fails_before_any_work(tmp_path, recipe, f"re.kb: {kb}: no triples")


def test_a_kmou_file_that_is_not_utf8_fails_before_any_tagger_trains(tmp_path):
    """Item 8: a ``UnicodeDecodeError`` traceback, after the first tagger's training
    when the second tagger's file was the bad one."""
    shipped = ROOT / "data/demo/kmou-ner/morph-ner.dev.tagged.gz"
    raw = gzip.decompress(shipped.read_bytes())
    bad = tmp_path / "morph-ner.dev.tagged.gz"
    cut = raw.index(b"\n", len(raw) // 2) + 1
    bad.write_bytes(gzip.compress(raw[:cut] + b"\xed\xa0\x80\n" + raw[cut:]))
    line = raw[:cut].count(b"\n") + 1
    recipe = _demo(
        tmp_path,
        "klue-re-demo",
        _replace("../data/demo/kmou-ner/morph-ner.dev.tagged.gz", str(bad)),
    )
    _fails_before_any_work(
        tmp_path, recipe, f"re.taggers[kmou-morph].dev: {bad}:{line}: cannot decode as utf-8"
    )


def test_a_pilot_gold_answer_outside_its_options_fails_before_any_work(tmp_path):
    """Item 10: KLUE-RE's pilot answer ``org:dissolved`` for a PER-LOC pair, whose
    options do not list it, was accepted."""
    pilot = ROOT / "data/demo/klue-re/pilot.jsonl"
    rows = [json.loads(x) for x in pilot.read_text(encoding="utf-8").splitlines()]
    rows[1]["value"] = "org:dissolved"
    gold = tmp_path / "pilot.jsonl"
    gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    recipe = _demo(
        tmp_path, "klue-re-demo", _replace("../data/demo/klue-re/pilot.jsonl", str(gold))
    )
    _fails_before_any_work(
        tmp_path,
        recipe,
        "annotation.pilot: ",
        f"{gold}: line 2: value 'org:dissolved' is not one of its options in 'relation_options'",
    )


# ------------------------------------------------------------------------- KLUE-NER


def test_an_undecodable_ner_tagger_file_or_public_figure_list_fails_before_any_work(tmp_path):
    """Item 8: the NER demo's KMOU files and its public-figure list."""
    raw = gzip.decompress((ROOT / "data/demo/kmou-ner/ner.dev.tagged.gz").read_bytes())
    bad = tmp_path / "ner.dev.tagged.gz"
    bad.write_bytes(gzip.compress(raw[:3] + b"\xff" + raw[3:]))
    recipe = _demo(
        tmp_path, "klue-ner-demo", _replace("../data/demo/kmou-ner/ner.dev.tagged.gz", str(bad))
    )
    _fails_before_any_work(tmp_path, recipe, f"ner.tagger.dev: {bad}:1: cannot decode")
    figures = tmp_path / "figures.txt"
    figures.write_text("# nobody\n", encoding="utf-8")
    recipe = _demo(
        tmp_path,
        "klue-ner-demo",
        _replace("../data/demo/kmou-ner/public_figures.txt", str(figures)),
    )
    _fails_before_any_work(tmp_path, recipe, f"ner.public_figures: {figures}: no names")


# -------------------------------------------------------------- JSQuAD, JCQA, KoBEST


def test_a_jsquad_file_that_is_not_utf8_fails_before_any_work(tmp_path):
    """Item 8: a ``UnicodeDecodeError`` traceback."""
    shipped = ROOT / "data/demo/jglue/jsquad-v1.3_valid-v1.3.demo.json"
    raw = shipped.read_bytes()
    bad = tmp_path / "jsquad.json"
    bad.write_bytes(raw[:200] + b"\x80" + raw[200:])
    line = raw[:200].count(b"\n") + 1
    recipe = _demo(
        tmp_path,
        "jsquad-demo",
        _replace("../data/demo/jglue/jsquad-v1.3_valid-v1.3.demo.json", str(bad)),
    )
    _fails_before_any_work(tmp_path, recipe, f"{bad}:{line}: cannot decode as utf-8")


def test_a_triples_file_without_a_question_set_fails_before_any_work(tmp_path):
    """Item 9: ``writing/items.parquet: no item_id column`` deep in a step."""
    triples = tmp_path / "triples.tsv"
    triples.write_text("台所\tAtLocation\t冷蔵庫\n台所\tAtLocation\t包丁\n"
                       "夏\tRelatedTo\t海\n夏\tRelatedTo\t花火\n夏\tRelatedTo\t祭り\n",
                       encoding="utf-8")  # fmt: skip
    recipe = _demo(tmp_path, "jcqa-demo", _replace("../data/demo/jcqa/triples.tsv", str(triples)))
    _fails_before_any_work(tmp_path, recipe, f"jcqa.triples (demo-triples): {triples}: "
                           "no question set can be drawn: 5 triple(s)")  # fmt: skip


def test_a_repeated_triple_fails_before_any_work(tmp_path):
    """Item 10: a duplicate in an input file was dropped silently."""
    shipped = (ROOT / "data/demo/jcqa/triples.tsv").read_text(encoding="utf-8")
    first = next(x for x in shipped.splitlines() if "\tAtLocation\t" in x)
    triples = tmp_path / "triples.tsv"
    triples.write_text(shipped + first + "\n", encoding="utf-8")
    recipe = _demo(tmp_path, "jcqa-demo", _replace("../data/demo/jcqa/triples.tsv", str(triples)))
    _fails_before_any_work(tmp_path, recipe, f"line {len(shipped.splitlines()) + 1}: the triple")


def test_a_missing_writers_or_seeds_file_is_one_clear_line(tmp_path):
    """Item 9: JCommonsenseQA's gave ``[Errno None] None`` after three steps; KoBEST's
    seeds a ``ValueError`` traceback."""
    missing = tmp_path / "writers.jsonl"
    recipe = _demo(tmp_path, "jcqa-demo", _replace("../data/demo/jcqa/writers.jsonl", str(missing)))
    _fails_before_any_work(tmp_path, recipe, f"jcqa.writers: {missing}: file not found")
    seeds = tmp_path / "seeds.jsonl"
    recipe = _demo(
        tmp_path, "kobest-copa-demo", _replace("../data/demo/kobest/copa_seeds.jsonl", str(seeds))
    )
    _fails_before_any_work(tmp_path, recipe, f"kobest.simulation.seeds (copa-seeds): {seeds}: "
                           "file not found")  # fmt: skip


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ("한라산은\u0000 높다.", "field 'paragraph' holds the control character U+0000"),
        ("한라산은 높다. " * 40_000, "field 'paragraph' is 360,000 characters long"),
    ],
)  # fmt: skip
def test_a_source_field_with_a_nul_or_360000_characters_fails_before_any_work(
    tmp_path, bad, needle
):
    """Item 10: NUL bytes and 360,000-character fields were carried into releases."""
    shipped = ROOT / "data/demo/kobest/boolq_seeds.jsonl"
    rows = [json.loads(x) for x in shipped.read_text(encoding="utf-8").splitlines() if x]
    rows[2]["paragraph"] = bad
    source = tmp_path / "boolq.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    recipe = _demo(
        tmp_path,
        "kobest-boolq-demo",
        _replace("../data/demo/kobest/boolq_seeds.jsonl", str(source)),
    )
    _fails_before_any_work(tmp_path, recipe, f"{source}:3: {needle}")
