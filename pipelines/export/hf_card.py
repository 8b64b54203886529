"""The release folder as a Hugging Face dataset: ``dataset/README.md`` with the Hub's YAML
header, so that ``datasets.load_dataset(RUN_DIR/dataset)`` with no other argument loads
every split, and the folder can be pushed to the Hub as it is.

The header (the Hub's dataset card metadata, https://huggingface.co/docs/hub/datasets-cards):
``license`` (the resolved release licence as a Hub licence id), ``language``,
``multilinguality``, ``task_categories`` (the task kind's ``hub``), ``size_categories``,
``pretty_name``, ``tags``, ``configs`` (``data_files`` per split, the release's Parquet
files; a second group of files, such as JNLI's ``jsts-c_train``, is a config of its own)
and ``dataset_info`` (features, derived from the Parquet schema with
``datasets.Features.from_arrow_schema``, and the records per split). The body gives the
``load_dataset`` snippet, the field table, an example record, the BibTeX of the paper and
of benchforge, then the data card itself.

``validate_readme`` checks the header offline as far as the libraries allow:
``huggingface_hub`` parses it (``DatasetCard``), ``datasets`` reads its configs and
features (``MetadataConfigs``, ``DatasetInfosDict``), and every value of a closed
vocabulary is one the libraries ship (languages, size categories, multilinguality, task
categories) or one of the Hub's licence ids (``HUB_LICENSES``, from the Hub's licence
page). The Hub's own validation (``RepoCard.validate``) needs the network and is not run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import yaml

from pipelines.export.facts import CardFacts

# the Hub's licence identifiers (https://huggingface.co/docs/hub/repositories-licenses)
HUB_LICENSES = frozenset({
    "apache-2.0", "mit", "openrail", "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd",
    "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0",
    "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
    "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0",
    "epl-1.0", "epl-2.0", "etalab-2.0", "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl",
    "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "lppl-1.3c", "ms-pl",
    "mpl-2.0", "odc-by", "odbl", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense",
    "zlib", "pddl", "unknown", "other",
})  # fmt: skip
SPLIT_NAMES = ("train", "dev", "valid", "validation", "test")
# the Hub's name of an evaluation split (issue 54: datasets and the Hub's viewer know
# "validation"); the files keep the papers' names (KLUE's dev, JGLUE's valid)
HUB_SPLITS = {"dev": "validation", "valid": "validation"}
BENCHFORGE_BIBTEX = """@software{benchforge,
  title = {benchforge: rebuilding Korean and Japanese NLU benchmarks end to end},
  year = {2026},
  note = {commit %s}
}"""


def hub_licence(release: str) -> str:
    """The Hub's id of a release licence (``CC-BY-SA-4.0`` -> ``cc-by-sa-4.0``);
    ``other`` when the Hub has none."""
    candidate = release.strip().lower()
    return candidate if candidate in HUB_LICENSES else "other"


def size_category(n: int) -> str:
    """The Hub's size category of ``n`` records."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):  # fmt: skip
        if n < limit:
            return name
    return "10M<n<100M"


def _config_of(stem: str) -> tuple[str, str]:
    """(config, split) of a release file's stem: ``train`` -> (default, train),
    ``jsts-c_train`` -> (jsts-c, train), ``all_samples`` -> (default, all_samples)."""
    if stem in SPLIT_NAMES:
        return "default", stem
    m = re.fullmatch(r"(.+)_(train|dev|valid|validation|test)", stem)
    if m and not re.fullmatch(r"\w+", m.group(1)):  # jsts-c_train; all_samples stays a split
        return m.group(1), m.group(2)
    return "default", stem


def _example(record: dict) -> dict:
    """A record for the card: long strings cut at 200 characters, arrays as lists."""
    out = {}
    for key, value in record.items():
        if hasattr(value, "tolist"):
            value = value.tolist()
        if isinstance(value, str) and len(value) > 200:
            value = value[:200] + "…"
        out[key] = value
    return out


def release_layout(tables: dict[str, pd.DataFrame], files: dict[str, int]) -> dict:
    """The release as the Hub reads it: per config, each split's Parquet file, its
    records, the features (from the Parquet schema) and an example record. ``files``:
    the release's file names (each has a Parquet table of the same stem)."""
    import pyarrow as pa
    from datasets import Features

    from pipelines.export.records import release_tables

    configs: dict[str, dict] = {}
    for stem, table in release_tables(tables, files).items():
        name = f"{stem}.parquet"
        config, split = _config_of(stem)
        split = HUB_SPLITS.get(split, split)
        c = configs.setdefault(config, {"data_files": {}, "splits": {}, "bytes": {},
                                        "features": None, "examples": {}})  # fmt: skip
        arrow = pa.Table.from_pandas(table, preserve_index=False)
        c["data_files"][split] = name
        c["splits"][split] = len(table)
        c["bytes"][split] = int(arrow.nbytes)
        features = Features.from_arrow_schema(arrow.schema)._to_yaml_list()
        if c["features"] is None:
            c["features"] = features
        if len(table):
            c["examples"][split] = _example(table.iloc[0].to_dict())
    order = {s: k for k, s in enumerate(SPLIT_NAMES)}
    for c in configs.values():
        for key in ("data_files", "splits", "bytes", "examples"):
            c[key] = dict(sorted(c[key].items(), key=lambda kv: (order.get(kv[0], 99), kv[0])))
        # the first record of the first split (train before dev and test)
        c["example"] = next(iter(c.pop("examples").values()), None)
    return dict(sorted(configs.items(), key=lambda kv: (kv[0] != "default", kv[0])))


def metadata(facts: CardFacts) -> dict:
    """The YAML header's fields (see the module docstring)."""
    release, hub = facts["release"], facts.get("hub") or {}
    licence = facts["export"]["licence"]["release"]
    total = sum(release["default"]["splits"].values()) if "default" in release else 0
    simulated = bool((facts.get("annotation") or {}).get("simulated")) or any(
        (r or {}).get("simulated") for r in (facts.get("rounds") or {}).values()
    )
    out: dict = {
        "license": hub_licence(licence),
        "language": [facts["recipe"].get("language", "ko")],
        "multilinguality": ["monolingual"],
        "task_categories": list(hub.get("task_categories") or []),
        "size_categories": [size_category(total)],
        "pretty_name": facts.get("task") or facts["recipe"]["name"],
        "tags": ["benchforge", *(["simulated-annotations"] if simulated else [])],
    }
    if out["license"] == "other":
        out["license_name"] = licence
    from pipelines.export.field_origins import hub_creators

    out.update(hub_creators(facts))  # issue 54: from the fields' declared origins
    out["configs"] = [
        {"config_name": name, "data_files": [{"split": s, "path": p}
                                             for s, p in c["data_files"].items()]}
        for name, c in release.items()
    ]  # fmt: skip
    out["dataset_info"] = [
        {"config_name": name, "features": class_labels(c["features"], facts),
         "splits": [{"name": s, "num_bytes": c["bytes"][s], "num_examples": n}
                    for s, n in c["splits"].items()]}
        for name, c in release.items()
    ]  # fmt: skip
    return out


CLASS_COLUMNS = ("label", "gold_label")


def class_labels(features: list[dict], facts: CardFacts) -> list[dict]:
    """``features`` with the gold column of a class task as a ``ClassLabel`` (issue 54:
    the Hub's convention; ``datasets`` maps the files' strings to the class ids on
    load), its names the card's labels in order. Scores, span sets and integer columns
    stay as they are."""
    labels = facts.get("labels") or {}
    names = [str(x) for x in labels.get("order") or []]
    if not names or labels.get("numeric") or labels.get("elements"):
        return features
    out = []
    for f in features:
        if f.get("name") in CLASS_COLUMNS and f.get("dtype") in ("string", "large_string"):
            classes = {str(i): n for i, n in enumerate(names)}
            f = {"name": f["name"], "dtype": {"class_label": {"names": classes}}}
        out.append(f)
    return out


def _field_table(features: list[dict], example: dict | None) -> str:
    from pipelines.core.markdown import table

    def kind(f: dict) -> str:
        if isinstance(f.get("dtype"), dict) and "class_label" in f["dtype"]:
            names = f["dtype"]["class_label"]["names"]
            return "ClassLabel: " + ", ".join(f"{k} {v}" for k, v in names.items())
        if "dtype" in f:
            return str(f["dtype"])
        if "list" in f:
            inner = f["list"]
            if isinstance(inner, list):  # a list of structs: their fields
                return "list of {" + ", ".join(f"{x['name']}: {kind(x)}" for x in inner) + "}"
            return f"list of {inner if isinstance(inner, str) else kind(inner)}"
        return json.dumps({k: v for k, v in f.items() if k != "name"}, ensure_ascii=False)

    rows = []
    for f in features:
        value = (example or {}).get(f["name"])
        shown = json.dumps(value, ensure_ascii=False, default=str)
        rows.append([f["name"], kind(f), shown[:80] + ("…" if len(shown) > 80 else "")])
    return table(["field", "type", "first record"], rows)


def readme(facts: CardFacts, card_markdown: str) -> str:
    """``dataset/README.md``: the Hub's YAML header, how to load the folder, its fields,
    an example record, the BibTeX, then the data card. Data (field values, the example)
    is text, and the body goes through the card's last pass
    (``pipelines.core.markdown.neutralize``), as the Hub renders raw HTML."""
    from pipelines.core.markdown import code_block, escape, neutralize

    meta = metadata(facts)
    header = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=1000)
    release, hub = facts["release"], facts.get("hub") or {}
    title = escape(meta["pretty_name"])
    lines = [f"# {title}", "", "## Loading", "", "```python", "from datasets import load_dataset",
             "", '# this folder, or the Hub repository it is pushed to',
             'ds = load_dataset("path/to/dataset")']  # fmt: skip
    for name in release:
        if name != "default":
            lines.append(f'{name.replace("-", "_")} = load_dataset("path/to/dataset", "{name}")')
    lines += ["```", ""]
    splits = "; ".join(
        f"`{name}`: " + ", ".join(f"{s} {n:,}" for s, n in c["splits"].items())
        for name, c in release.items()
    )
    lines += [f"Configs and records per split: {splits}.", ""]
    renamed = sorted({f"`{s}` is `{f}`" for c in release.values()
                      for s, f in c["data_files"].items()
                      if Path(f).stem != s and not Path(f).stem.endswith(f"_{s}")})  # fmt: skip
    if renamed:
        lines += [f"Split names are the Hub's; the files keep the paper's: {', '.join(renamed)}.",
                  ""]  # fmt: skip
    for name, c in release.items():
        heading = "## Fields" if name == "default" else f"## Fields of config `{name}`"
        lines += [heading, "", _field_table(class_labels(c["features"], facts), c["example"]), ""]
        if c["example"] is not None:
            shown = json.dumps(c["example"], ensure_ascii=False, indent=2, default=str)
            lines += ["Example record:", "", *code_block(shown, "json"), ""]
    commit = (facts.get("provenance") or {}).get("git commit", "unknown")
    bib = [hub["citation"].strip()] if hub.get("citation") else []
    lines += ["## Citation", "", "```bibtex", *bib, *([""] if bib else []),
              BENCHFORGE_BIBTEX % commit, "```", ""]  # fmt: skip
    body = re.sub(r"\A# [^\n]*\n+", "", card_markdown)  # the card's own title: said above
    lines += ["## Data card", "", re.sub(r"^(#+) ", r"#\1 ", body, flags=re.M)]
    return f"---\n{header}---\n\n" + neutralize("\n".join(lines).rstrip() + "\n")


def validate_readme(text: str, folder: Path | None = None) -> list[str]:
    """Problems with a README's Hub metadata (empty: none found); ``folder``: check that
    every data file it names exists there."""
    from importlib import resources

    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs, known_task_ids
    from huggingface_hub import DatasetCard

    problems: list[str] = []
    try:
        card = DatasetCard(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is the finding
        return [f"the YAML header does not parse: {exc}"]
    data = card.data.to_dict()
    shipped = resources.files("datasets.utils.resources")

    def vocabulary(name: str) -> set[str]:
        values = json.loads((shipped / name).read_text(encoding="utf-8"))
        return set(values) if isinstance(values, list | dict) else set()

    checks = {
        "language": vocabulary("languages.json"),
        "size_categories": vocabulary("size_categories.json"),
        "multilinguality": vocabulary("multilingualities.json"),
        "task_categories": set(known_task_ids),
    }
    for key, allowed in checks.items():
        values = data.get(key)
        if not values:
            problems.append(f"`{key}` is missing or empty")
            continue
        for value in values if isinstance(values, list) else [values]:
            if value not in allowed:
                problems.append(f"`{key}`: {value!r} is not a value the Hub knows")
    if data.get("license") not in HUB_LICENSES:
        problems.append(f"`license`: {data.get('license')!r} is not a Hub licence id")
    if not str(data.get("pretty_name") or "").strip():
        problems.append("`pretty_name` is missing")
    import logging

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:  # the library warns, not raises
            problems.append(f"`dataset_info`: {record.getMessage()}")

    handler, logger = Collect(logging.WARNING), logging.getLogger("datasets")
    logger.addHandler(handler)
    try:
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        configs.get_default_config_name()
        DatasetInfosDict.from_dataset_card_data(card.data)
    except Exception as exc:  # noqa: BLE001 - the library's own message is the finding
        problems.append(f"`configs`/`dataset_info`: {exc}")
        configs = {}
    finally:
        logger.removeHandler(handler)
    if folder is not None:
        for name, config in configs.items():
            for entry in config.get("data_files") or []:
                if not (folder / entry["path"]).is_file():
                    problems.append(f"config `{name}`: {entry['path']} is not in {folder}")
    return problems
