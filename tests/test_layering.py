"""The package's import graph flows one way: kernels <- model <- seam <- studies <- top.

The graph is read with ``ast`` from every file of ``moga/`` and ``decoders/``, imports made
inside functions included; a name taken from a package's ``__init__`` is followed to the
module that defines it (as the architecture reviews count). The checks:

* no circle between files;
* no circle between moga's subpackages (each subpackage one node, the top-level modules
  each their own);
* no import running back up the layers of :data:`LAYERS`;
* the seam (``moga/sim/``) imports no study, and the kernels (``decoders/``) nothing of
  ``moga``.

Run as a script, it prints the counts.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("moga", "decoders")

#: Layer of each part, lowest first: a module may import its own layer and those below.
#: Keys are dotted prefixes; the longest match decides.
LAYERS = {
    "decoders": 0,                          # kernels
    "moga.errors": 1, "moga.version": 1, "moga.validation": 1, "moga.bounds": 1,
    "moga.outputs": 1, "moga.progress": 1,
    "moga.metrics": 1, "moga.model": 1, "moga.data": 1,
    "moga.plot": 1, "moga.results": 1,      # views: records, plots, files
    "moga.sim": 2,                          # the seam
    "moga.evolution": 3, "moga.baselines": 3, "moga.powercap": 3, "moga.realtime": 3,
    "moga.value": 3, "moga.rl": 3, "moga.experiments": 3,   # studies
    "moga": 4,                              # the top: catalogue, CLI, warmup, package
}
#: The studies the seam must not know.
STUDIES = ("moga.powercap", "moga.realtime", "moga.value", "moga.evolution", "moga.rl",
           "moga.baselines", "moga.experiments")


def modules() -> dict[str, Path]:
    """Every module of the packages: dotted name -> file."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def _is_package(name: str, mods: dict[str, Path]) -> bool:
    return name in mods and mods[name].name == "__init__.py"


def _raw_imports(name: str, file: Path, mods: dict[str, Path]):
    """``(module, imported name or None)`` of every import statement of ``file``."""
    tree = ast.parse(file.read_text(), str(file))
    pkg = name if _is_package(name, mods) else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                yield target, a.name


def _defined_in(package: str, attr: str, mods, seen=None) -> str:
    """The module that defines ``attr`` re-exported by ``package``'s ``__init__``."""
    seen = set() if seen is None else seen
    if package in seen:
        return package
    seen.add(package)
    for target, name in _raw_imports(package, mods[package], mods):
        if name == attr and target in mods:
            if _is_package(target, mods) and f"{target}.{attr}" not in mods:
                return _defined_in(target, attr, mods, seen)
            return f"{target}.{attr}" if f"{target}.{attr}" in mods else target
    return package


def graph() -> dict[str, set[str]]:
    """module -> the project modules it imports."""
    mods = modules()
    g = {m: set() for m in mods}
    for m, f in mods.items():
        for target, name in _raw_imports(m, f, mods):
            if target.split(".")[0] not in PACKAGES:
                continue
            if name is not None and f"{target}.{name}" in mods:
                dest = f"{target}.{name}"
            elif name is not None and _is_package(target, mods):
                dest = _defined_in(target, name, mods)
            else:
                dest = target
                while dest not in mods and "." in dest:
                    dest = dest.rpartition(".")[0]
            if dest in mods and dest != m:
                g[m].add(dest)
    return g


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(g):
        if v not in index:
            visit(v)
    return out


def package_of(m: str) -> str:
    """A module's node in the package graph: its subpackage (``moga.sim``, ``decoders``), or
    itself for a top-level module of moga."""
    parts = m.split(".")
    if parts[0] == "decoders":
        return "decoders"
    if len(parts) >= 2 and _is_package(".".join(parts[:2]), modules()):
        return ".".join(parts[:2])
    return m


def package_graph(g) -> dict[str, set[str]]:
    pg: dict[str, set[str]] = {}
    for m, deps in g.items():
        a = package_of(m)
        pg.setdefault(a, set())
        for d in deps:
            b = package_of(d)
            if a != b:
                pg[a].add(b)
    return pg


def layer(m: str) -> int:
    key = max((k for k in LAYERS if m == k or m.startswith(k + ".")), key=len)
    return LAYERS[key]


def upward(g) -> list[tuple[str, str]]:
    """Imports from a lower layer into a higher one."""
    return sorted((m, d) for m, deps in g.items() for d in deps if layer(d) > layer(m))


def seam_to_studies(g) -> list[tuple[str, str]]:
    return sorted((m, d) for m, deps in g.items() if m.startswith("moga.sim")
                  for d in deps if d.startswith(STUDIES))


def kernels_to_moga(g) -> list[tuple[str, str]]:
    return sorted((m, d) for m, deps in g.items() if m.startswith("decoders")
                  for d in deps if d.split(".")[0] == "moga")


# ---------------------------------------------------------------------------- tests

def test_the_graph_sees_the_package():
    g = graph()
    assert "moga.sim.session" in g and "decoders.federated" in g
    assert "moga.model.schedule" in g["moga.sim.session"]  # a relative import, resolved
    # a name from a package __init__ is followed to its module
    assert "moga.model.jobset" in g["moga.policies"] or "moga.model.jobset" in g["moga.cli"]


def test_no_file_circles():
    assert circles(graph()) == []


def test_no_package_circles():
    assert circles(package_graph(graph())) == []


def test_no_import_runs_back_up():
    assert upward(graph()) == []


def test_the_seam_imports_no_study():
    assert seam_to_studies(graph()) == []


def test_the_kernels_import_nothing_of_moga():
    assert kernels_to_moga(graph()) == []


def test_the_checks_can_fail():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(g) == [["a", "b", "c"]]
    assert upward({"decoders.x": {"moga.sim.session"}}) == [("decoders.x", "moga.sim.session")]


if __name__ == "__main__":
    g = graph()
    for title, found in (("file circles", circles(g)),
                         ("package circles", circles(package_graph(g))),
                         ("imports running back up", upward(g)),
                         ("seam -> study imports", seam_to_studies(g)),
                         ("kernels -> moga imports", kernels_to_moga(g))):
        print(f"{title}: {len(found)}")
        for item in found:
            print("   ", item)


def test_no_call_passes_more_than_12_positional_arguments():
    """Long argument lists go by keyword (or in a named bundle), in the kernels too."""


    long = []
    for top in ("moga", "decoders"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and len(node.args) > 12:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert long == []


def _type_names(path: Path) -> list[str]:
    """Classes and named tuples (``X = namedtuple(...)``) defined at a module's top level."""
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and getattr(node.value.func, "id", None) == "namedtuple"):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def test_no_two_types_share_a_name():
    """One concept, one type: no class or named tuple name is defined twice in the package."""
    where: dict[str, list[str]] = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            for name in _type_names(path):
                where.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert {n: w for n, w in where.items() if len(w) > 1} == {}


def test_the_seam_forwards_nothing_from_above():
    """``moga.sim`` names nothing of the catalogue above it, not even through a module
    ``__getattr__`` or ``importlib`` (imports the graph above cannot see)."""
    import pytest

    import moga.sim

    for name in ("simulate", "POLICIES", "policy_info"):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(moga.sim, name)
    for path in sorted((ROOT / "moga" / "sim").rglob("*.py")):
        text = path.read_text()
        top = [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
        assert "__getattr__" not in top and "import_module" not in text, path
