"""The README documents every command and every recipe section (issue 15: a docs
deletion once removed four commands' sections and nothing failed)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from flows.cli.app import _parser
from pipelines.core.recipe import FilterSettings, NoiseSettings, Recipe

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple]:
    """Every command path (``("annotate", "push")``...) with its parser."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append(((*prefix, name), sub))
                out.extend(commands(sub, (*prefix, name)))
    return out


def test_every_command_and_its_options_are_in_the_readme():
    found = commands(_parser())
    assert len(found) >= 15  # ingest, pair, classifiers x2, labelstudio x3, annotate x4, ...
    for path, parser in found:
        name = "benchforge " + " ".join(path)
        assert name in README, f"README does not document `{name}`"
        leaf = not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        if not leaf:
            continue
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag not in ("--help", "--json"):
                    assert flag in README, f"README does not mention {flag} of `{name}`"


def test_every_recipe_section_is_in_the_readme():
    sections = [n for n in Recipe.model_fields if n != "base_dir"]
    sections += list(FilterSettings.model_fields) + list(NoiseSettings.model_fields)
    for name in sections:
        assert re.search(rf"^\s*(?:#\s*)?{name}:", README, re.M), f"README lacks `{name}:`"
