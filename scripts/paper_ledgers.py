"""Read the papers' ledgers (``docs/papers/<paper>.md``, issue 52) and check them.

A ledger row is a markdown table row of seven cells whose first cell is an id such as
``K12``: id, the paper's words, where (section/footnote/table), code, test, status, why.
``python scripts/paper_ledgers.py`` prints the rows per ledger by status and every
problem found (exit 1 when there is one); ``tests/unit/test_paper_ledgers.py`` runs the
same checks. The format is described in ``docs/papers/index.md``.
"""

from __future__ import annotations

import ast
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEDGERS = ROOT / "docs" / "papers"
PAPERS = ROOT.parent / "shared" / "papers"  # the plain-text copies, where present
# ledger file -> the paper's plain-text copy
PAPER_OF = {
    "klue.md": "klue.txt",
    "kornli-korsts.md": "kornli-korsts.txt",
    "kobbq.md": "kobbq.txt",
    "jglue.md": "jglue.txt",
    "kobest.md": "kobest.txt",
}
STATUSES = ("followed", "departs", "not rebuildable", "not yet")
ROW_ID = re.compile(r"^[A-Z]{1,3}\d+[a-z]?$")
WHERE_PART = re.compile(
    r"^(?:\d+(?:\.\d+)*(?: fn \d+)?|Table \d+[a-z]?|Figure \d+|fn \d+"
    r"|Appendix [A-Z](?:\.\d+)*|[A-Z](?:\.\d+)+(?: fn \d+)?|Abstract|Introduction|Limitations"
    r"|Ethics Statement)$"
)
REF = re.compile(r"`([^`]+)`")
QUOTE = re.compile(r"[\"“]([^\"”]{3,})[\"”]")


@dataclass(frozen=True)
class Row:
    ledger: str
    line: int
    id: str
    says: str
    where: str
    code: str
    test: str
    status: str
    why: str

    @property
    def at(self) -> str:
        return f"docs/papers/{self.ledger}:{self.line} ({self.id})"


def _cells(line: str) -> list[str]:
    body = line.strip()
    if not (body.startswith("|") and body.endswith("|")):
        return []
    cells = re.split(r"(?<!\\)\|", body[1:-1])
    return [c.strip() for c in cells]


def rows(path: Path) -> list[Row]:
    """Every ledger row of one file (table rows whose first cell is an id)."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        cells = _cells(line)
        if not cells or not ROW_ID.match(cells[0].strip("*")):
            continue
        if len(cells) != 7:
            cells = [*cells, *[""] * 7][:7] if len(cells) < 7 else cells
        out.append(Row(path.name, number, cells[0].strip("*"), *cells[1:7]))
    return out


@cache
def _definitions(path: Path) -> frozenset[str]:
    """Dotted names a Python file defines: functions, classes, their methods and
    class-level fields, and module-level assignments."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(prefix + node.name)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        names.add(prefix + target.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(prefix + node.target.id)

    visit(tree.body, "")
    return frozenset(names)


def _yaml_has(path: Path, dotted: str) -> bool:
    import yaml

    node: object = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def check_code(ref: str) -> str | None:
    """None when ``path[:name]`` names something that exists, else the problem."""
    path, _, name = ref.partition(":")
    file = ROOT / path
    if not file.is_file():
        return f"no file {path}"
    if not name:
        return None
    if file.suffix == ".py":
        return None if name in _definitions(file) else f"{path} defines no {name}"
    if file.suffix in (".yaml", ".yml"):
        return None if _yaml_has(file, name) else f"{path} has no key {name}"
    return None if name in file.read_text(encoding="utf-8") else f"{path} holds no {name!r}"


def check_test(ref: str) -> str | None:
    """None when ``tests/...py::[Class::]test_name`` exists, else the problem."""
    path, _, name = ref.partition("::")
    file = ROOT / path
    if not path.startswith("tests/") or not file.is_file():
        return f"no test file {path}"
    if not name:
        return f"{ref} names no test"
    dotted = name.split("[")[0].replace("::", ".")
    return None if dotted in _definitions(file) else f"{path} has no test {name}"


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


@cache
def _paper(name: str) -> str | None:
    file = PAPERS / name
    return _norm(file.read_text(encoding="utf-8")) if file.is_file() else None


def problems(row: Row, check_quotes: bool = True) -> list[str]:
    """What is wrong with one row (empty when nothing is)."""
    out = []
    status = row.status.strip("*_ ").lower()
    if status not in STATUSES:
        out.append(f"status {row.status!r} is not one of {', '.join(STATUSES)}")
    if not row.says:
        out.append("no words from the paper")
    if not row.where or not all(WHERE_PART.match(p.strip()) for p in re.split(r"[,;]", row.where)):
        out.append(f"where {row.where!r} is not a section, footnote or table as printed")
    codes = REF.findall(row.code)
    tests = REF.findall(row.test)
    out += [f"code: {p}" for p in map(check_code, codes) if p]
    out += [f"test: {p}" for p in map(check_test, tests) if p]
    if status == "followed" and not (codes and tests):
        out.append("a followed rule names the code and the test that checks it")
    if status != "followed" and len(row.why.strip(" —-")) < 10:
        out.append(f"a {status!r} row says why")
    paper = _paper(PAPER_OF.get(row.ledger, "")) if check_quotes else None
    if paper is not None:
        for quote in QUOTE.findall(row.says):
            for piece in re.split(r"\.\.\.|…", quote):
                if len(_norm(piece)) >= 4 and _norm(piece) not in paper:
                    out.append(f"the paper does not say {piece.strip()!r}")
    return out


def all_rows() -> list[Row]:
    return [r for name in PAPER_OF if (LEDGERS / name).is_file() for r in rows(LEDGERS / name)]


def main() -> int:
    found = 0
    for name in PAPER_OF:
        file = LEDGERS / name
        if not file.is_file():
            print(f"{name}: missing")
            found += 1
            continue
        ledger = rows(file)
        counts = Counter(r.status.strip("*_ ").lower() for r in ledger)
        print(f"{name}: {len(ledger)} rows; " + ", ".join(f"{s} {counts[s]}" for s in STATUSES))
        seen: set[str] = set()
        for row in ledger:
            issues = problems(row)
            if row.id in seen:
                issues.append("the id is used twice")
            seen.add(row.id)
            for issue in issues:
                print(f"  {row.at}: {issue}")
                found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
