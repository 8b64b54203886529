"""The import graph against the layers of ``pyproject.toml`` (issue 53, item 6).

``python scripts/import_layers.py [--pyproject PATH]`` reads the ``layers`` contract of
``[tool.importlinter]`` (the one whose container is ``pipelines``), builds the import
graph of its root packages with grimp and prints:

- the imports running from a lower layer to a higher one, counted per module-level
  importer -> imported pair (``flows`` sits above every layer of ``pipelines``); and
  the imports between two siblings of a layer declared independent (``a | b``), which
  the contract forbids as well (siblings joined by ``:`` may import each other);
- the package cycles: every set of packages (``pipelines.<name>`` and ``flows``) that
  reach each other through their imports, with the pairs that import each other
  directly, ``flows`` <-> ``pipelines`` included;
- the packages of ``pipelines`` that no layer names;
- the ten largest modules of the root packages by lines.

Exit status 1 when an import runs upward or between independent siblings, or a cycle
exists. ``--pyproject`` checks the tree against another file's layers (e.g. an order the
code should reach). ``tests/unit/test_import_layers.py`` runs the same functions.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Layers:
    """The layers contract: ``layers[0]`` is the top; each layer's sibling packages
    (names inside the container) and whether they are independent (``|``)."""

    container: str
    layers: list[list[str]]
    independent: list[bool]
    roots: list[str] = field(default_factory=list)

    def level(self, package: str) -> int | None:
        """The layer index of ``pipelines.<name>`` (0: the top), -1 for another root
        package (``flows``: above every layer), None for a package no layer names."""
        if package.split(".")[0] != self.container:
            return -1
        name = package[len(self.container) + 1 :]
        return next((i for i, layer in enumerate(self.layers) if name in layer), None)


def read_layers(pyproject: Path) -> Layers:
    """The ``layers`` contract of ``[tool.importlinter]`` whose container is ``pipelines``,
    and the root packages."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["type"] == "layers" and c.get("containers"))
    layers, independent = [], []
    for line in contract["layers"]:
        sep = "|" if "|" in line else ":"
        layers.append([name.strip().strip("()") for name in line.split(sep)])
        independent.append(sep == "|" or len(layers[-1]) == 1)
    roots = config.get("root_packages") or [config["root_package"]]
    return Layers(contract["containers"][0], layers, independent, list(roots))


def package_of(module: str, container: str) -> str:
    """``pipelines.<name>`` for a module of the container, else its root package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == container and len(parts) > 1 else parts[0]


def package_imports(layers: Layers) -> Counter:
    """(importer, imported) module pairs between two packages of the root packages."""
    import grimp

    graph = grimp.build_graph(*layers.roots, cache_dir=None)
    pairs = Counter()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.split(".")[0] not in layers.roots:
                continue
            a, b = package_of(module, layers.container), package_of(imported, layers.container)
            if a != b and a != layers.container and b != layers.container:
                pairs[(module, imported)] += 1
    return pairs


def upward(layers: Layers, pairs: Counter) -> tuple[list, list]:
    """The module pairs importing a higher layer, and those between independent siblings."""
    up, siblings = [], []
    for module, imported in sorted(pairs):
        a = layers.level(package_of(module, layers.container))
        b = layers.level(package_of(imported, layers.container))
        if a is None or b is None:
            continue
        if b < a:
            up.append((module, imported))
        elif a == b >= 0 and layers.independent[a]:
            siblings.append((module, imported))
    return up, siblings


def cycles(layers: Layers, pairs: Counter) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """The package cycles (strongly connected sets of more than one package, among the
    packages of ``pipelines`` and the other root packages), and the package pairs that
    import each other directly (``flows`` against ``pipelines`` as a whole included)."""
    edges: dict[str, set[str]] = {}
    for module, imported in pairs:
        a, b = package_of(module, layers.container), package_of(imported, layers.container)
        edges.setdefault(a, set()).add(b)
        edges.setdefault(b, set())
    two_way = sorted((a, b) for a in edges for b in edges[a] if a < b and a in edges[b])
    roots = {p.split(".")[0] for p in edges}
    top = {r: {q.split(".")[0] for p in edges if p.split(".")[0] == r for q in edges[p]}
           for r in roots}  # fmt: skip
    two_way += sorted((a, b) for a in top for b in top[a] if a < b and a in top[b])
    return _components(edges), two_way


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one node, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def unlayered(layers: Layers, pairs: Counter) -> list[str]:
    """The packages of the container that take part in imports but no layer names."""
    packages = {package_of(m, layers.container) for pair in pairs for m in pair}
    return sorted(p for p in packages if layers.level(p) is None)


def largest_modules(layers: Layers, n: int = 10) -> list[tuple[int, str]]:
    """The ``n`` largest ``.py`` files of the root packages by lines."""
    files = [p for root in layers.roots for p in (ROOT / root).rglob("*.py")]
    sizes = [(len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT)))
             for p in files]  # fmt: skip
    return sorted(sizes, key=lambda s: (-s[0], s[1]))[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyproject", type=Path, default=ROOT / "pyproject.toml",
                        help="the file whose layers contract to check against")  # fmt: skip
    args = parser.parse_args(argv)
    layers = read_layers(args.pyproject)
    pairs = package_imports(layers)
    up, siblings = upward(layers, pairs)
    groups, two_way = cycles(layers, pairs)
    print("layers (top first):")
    for layer, free in zip(layers.layers, layers.independent, strict=True):
        print("  " + (" | " if free else " : ").join(layer))
    print(f"imports from a lower layer to a higher one: {len(up)}")
    for module, imported in up:
        print(f"  {module} -> {imported}")
    print(f"imports between independent siblings: {len(siblings)}")
    for module, imported in siblings:
        print(f"  {module} -> {imported}")
    print(f"package cycles: {len(groups)}")
    for group in groups:
        print("  {" + ", ".join(group) + "}")
    print(f"package pairs that import each other: {len(two_way)}")
    for a, b in two_way:
        print(f"  {a} <-> {b}")
    missing = unlayered(layers, pairs)
    print(f"packages no layer names: {', '.join(missing) or 'none'}")
    print("largest modules (lines):")
    for lines, path in largest_modules(layers):
        print(f"  {lines:5d} {path}")
    return 1 if up or siblings or groups else 0


if __name__ == "__main__":
    sys.exit(main())
