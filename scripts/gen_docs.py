"""Write the docs site's reference pages from the code, so that they cannot drift:

- ``docs/reference/cli.md``: every ``benchforge`` command with its description and
  every option, from the command line parser (``flows.cli.app``);
- ``docs/reference/recipe.md`` and ``docs/reference/recipe.schema.json``: every recipe
  section and setting with its type, default and description, from the whole recipe
  model (the shell and every registered section, ``pipelines.core.recipe``). Editors
  that read JSON Schema (VS Code's YAML extension, for one) validate recipes with it.

    .venv/bin/python scripts/gen_docs.py           # write them
    .venv/bin/python scripts/gen_docs.py --check   # exit 1 when one is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.cli.app import _parser  # noqa: E402
from pipelines.core.recipe import recipe_schema  # noqa: E402

REFERENCE = ROOT / "docs" / "reference"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out.append(((*prefix, name), sub, helps.get(name, "")))
                out.extend(_commands(sub, (*prefix, name)))
    return out


def cli_page() -> str:
    """The command line reference (Markdown)."""
    lines = [
        "# Command line reference",
        "",
        "Written by `scripts/gen_docs.py` from the parser of `benchforge` "
        "(`flows/cli/app.py`); `benchforge COMMAND --help` prints the same.",
        "",
    ]
    for path, parser, short in _commands(_parser()):
        name = "benchforge " + " ".join(path)
        lines += [f"## `{name}`", ""]
        text = parser.description or short
        if text:
            lines += [" ".join(text.split()), ""]
        lines += ["```text", parser.format_usage().strip(), "```", ""]
        rows = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            names = ", ".join(action.option_strings) or action.dest
            default = action.default
            flag = isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction
                              | argparse._StoreConstAction)  # fmt: skip
            shown = "" if flag or default in (None, argparse.SUPPRESS) else f"`{default}`"
            rows.append(f"| `{names}` | {_cell(action.help or '')} | {shown} |")
        if rows:
            lines += ["| option | what it does | default |", "|---|---|---|", *rows, ""]
    return "\n".join(lines).rstrip() + "\n"


def _type(prop: dict, defs: dict) -> str:
    if "$ref" in prop:
        return f"[{prop['$ref'].rsplit('/', 1)[1]}](#{prop['$ref'].rsplit('/', 1)[1].lower()})"
    if "anyOf" in prop:
        return " or ".join(_type(p, defs) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), defs)}"
    if kind == "object" and "additionalProperties" in prop:
        extra = prop["additionalProperties"]
        return f"mapping to {_type(extra, defs) if isinstance(extra, dict) else 'any'}"
    return str(kind)


def _fields(model: dict, defs: dict) -> list[str]:
    required = set(model.get("required", []))
    rows = ["| setting | type | default | description |", "|---|---|---|---|"]
    for name, prop in model.get("properties", {}).items():
        default = "required" if name in required else json.dumps(prop.get("default"))
        default = "" if default == "null" and "default" not in prop else default
        rows.append(
            f"| `{name}` | {_type(prop, defs)} | {_cell(default)} | "
            f"{_cell(prop.get('description', ''))} |"
        )
    return rows


def recipe_page(schema: dict) -> str:
    """The recipe reference (Markdown) from the JSON Schema."""
    defs = schema.get("$defs", {})
    lines = [
        "# Recipe reference",
        "",
        "Written by `scripts/gen_docs.py` from the whole recipe model: the shell of "
        "`pipelines/core/recipe.py` and every section a stage or a family registers "
        "(`pipelines.core.plugins.RECIPE_SECTIONS`). The same schema as JSON Schema: "
        "[recipe.schema.json](recipe.schema.json). Every setting not marked *required* "
        "may be left out; unknown keys are errors.",
        "",
        "## The top level",
        "",
        *_fields(schema, defs),
        "",
    ]
    for name in sorted(defs):
        model = defs[name]
        lines += [f"## {name}", ""]
        if model.get("description"):
            lines += [" ".join(model["description"].split()), ""]
        if model.get("properties"):
            lines += [*_fields(model, defs), ""]
        elif model.get("additionalProperties") is not False:
            lines += ["Any settings (checked by the rule named in `rule`).", ""]
    return "\n".join(lines).rstrip() + "\n"


def pages() -> dict[Path, str]:
    schema = recipe_schema()
    return {
        REFERENCE / "cli.md": cli_page(),
        REFERENCE / "recipe.md": recipe_page(schema),
        REFERENCE / "recipe.schema.json": json.dumps(schema, indent=1, ensure_ascii=False) + "\n",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a page is out of date")  # fmt: skip
    args = parser.parse_args()
    stale = []
    for path, text in pages().items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path.relative_to(ROOT))
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date (run scripts/gen_docs.py): {[str(p) for p in stale]}")
        return 1
    print(f"{'stale' if args.check else 'written'}: {[str(p) for p in stale]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
