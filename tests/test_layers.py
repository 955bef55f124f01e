"""The package's module map, held: each folder is a stage, and a stage imports only the stages
below it. `verify/` imports nothing from the generator side, so a bug in the generator cannot
hide itself in the checker.

The map here is the README's module map; a new module lands in a folder or this test fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Where each source folder's modules live in the import namespace.
SOURCES = {"contrastgen": REPO / "contrastgen", "contrastgen.api": REPO / "api",
           "contrastgen.mturk": REPO / "mturk", "contrastgen.rules": REPO / "rules"}

# Stage -> the stages it may import (itself always). Order is the README's, lowest first.
CORE = "core"  # the root modules of contrastgen/ (errors, jsonio, collector, ...) and contrastgen/files/
GENERATOR = ("language", "scene", "perturb", "templates", "programs", "engine", "results", "clevr", "groups",
             "families", "run", "writers", "captions")
ALLOWED: dict[str, set[str]] = {
    CORE: set(),
    "datasets": {CORE},
    "parallel": {CORE},
    "verify": {CORE, "datasets", "parallel"},
    "language": {CORE},
    "scene": {CORE, "datasets", "language"},
    "perturb": {CORE},
    "templates": {CORE, "datasets", "language", "scene", "perturb"},
    "programs": {CORE, "datasets", "language", "scene", "perturb"},
    "engine": {CORE, "datasets", "language", "scene", "perturb", "templates", "programs"},
    "results": {CORE, "datasets", "perturb"},
    "clevr": {CORE, "datasets", "perturb"},
    "groups": {CORE, "datasets", "language", "scene", "perturb", "programs", "clevr"},
    "writers": {CORE, "datasets", "results"},
    "families": {CORE, "datasets", "language", "scene", "perturb", "templates", "programs", "engine", "results",
                 "clevr", "groups", "writers", "parallel"},
    "run": {CORE, "datasets", "language", "scene", "perturb", "templates", "programs", "engine", "results",
            "clevr", "groups", "families", "writers", "parallel"},
    "captions": {CORE, "datasets", "language", "scene", "perturb", "parallel"},
    "mturk": {CORE},
    "export": {CORE},
    "ood": {CORE, "datasets", "language", "scene", "perturb", "programs", "clevr", "parallel"},
    "evaluation": {CORE, "datasets", "language", "scene", "perturb", "templates", "programs", "engine", "results",
                   "families", "run", "verify", "clevr"},
    "viewer": {CORE, "datasets", "evaluation"},
    "api": {CORE, "datasets", "language", "scene", "perturb", "templates", "programs", "engine", "results",
            "families", "run", "writers", "verify", "evaluation", "viewer", "clevr"},
    "cli": {CORE, "datasets", "language", "scene", "perturb", "templates", "programs", "engine", "results",
            "families", "run",
            "writers", "verify", "evaluation", "ood", "mturk", "api", "viewer", "clevr", "export", "parallel", "captions"},
    "data": set(), "rules": set(),
}
CORE_MODULES = {"__init__", "__main__", "answers", "gc_policy", "errors", "jsonio", "records", "registry",
                "resources"}
CORE_PACKAGES = {"files", "terminal"}  # reading inputs within limits, writing outputs whole, temporary
# files; the progress bar on a terminal


def stage_of(module: str) -> str:
    """The stage of a dotted module name inside contrastgen."""
    parts = module.split(".")
    assert parts[0] == "contrastgen", module
    if len(parts) == 1:
        return CORE
    head = parts[1]
    if head == "engine":
        return "engine"
    if head in CORE_PACKAGES:
        return CORE
    if head in CORE_MODULES:
        return "cli" if head == "__main__" else CORE
    assert head in ALLOWED, f"{module} is in no stage of the module map"
    return head


def modules() -> list[tuple[str, Path]]:
    found = []
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found.append((".".join([package, *parts]), path))
    return found


def imports_of(path: Path, module: str) -> list[str]:
    """Every contrastgen module a source file imports, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.append(base)
            out += [f"{base}.{a.name}" for a in node.names]
    return [m for m in out if m == "contrastgen" or m.startswith("contrastgen.")]


def known(module: str) -> bool:
    """Whether a dotted name is a real module or package (not `package.some_function`)."""
    return module in MODULE_NAMES


MODULE_NAMES = {name for name, _ in modules()}


def test_every_module_is_in_a_stage():
    for name, _ in modules():
        stage_of(name)


def test_the_root_of_the_package_is_small():
    root = sorted(p.name for p in (REPO / "contrastgen").glob("*.py"))
    assert len(root) < 10, root


@pytest.mark.parametrize("name,path", modules(), ids=[n for n, _ in modules()])
def test_a_stage_imports_only_the_stages_below_it(name, path):
    stage = stage_of(name)
    for target in imports_of(path, name):
        if not known(target):
            continue
        other = stage_of(target)
        assert other == stage or other in ALLOWED[stage], f"{name} ({stage}) imports {target} ({other})"


def test_the_verifier_imports_nothing_of_the_generator():
    """Spelled out on its own because it is the point of the verifier, not a matter of tidiness."""
    checked = 0
    for name, path in modules():
        if stage_of(name) != "verify" and name != "contrastgen.cli.verify_cmds":
            continue
        checked += 1
        for target in imports_of(path, name):
            assert not known(target) or stage_of(target) not in GENERATOR, f"{name} imports {target}"
    assert checked >= 9


def imported_modules(path: Path, module: str) -> set[str]:
    """The contrastgen modules a source file imports, at module level, inside a function or
    under `if TYPE_CHECKING:`: `from package import name` is the module `package.name` when there
    is one, else the package. A typing-only import counts: two modules that name each other's
    types are still each unreadable without the other, whichever of them imports at run time."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                out.add(f"{base}.{a.name}" if known(f"{base}.{a.name}") else base)
    return {m for m in out if known(m) and m != module}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a module graph: its strongly connected parts of two or more modules
    (Tarjan's algorithm, iterative: the graph is deep enough to overflow a recursive one)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        cycles.append(sorted(part))
    return cycles


def module_graph() -> dict[str, set[str]]:
    return {name: imported_modules(path, name) for name, path in modules()}


def test_no_import_cycles():
    """No two modules import each other, directly or around a circle, whether the import is at
    the top of the file, inside a function or for typing only: a circle makes import order
    matter and each module unreadable without the other."""
    assert import_cycles(module_graph()) == []


def test_the_cycle_test_sees_a_planted_cycle(tmp_path):
    """Two real modules made to import each other, one of them inside a function, are found; so
    are they when that import is for typing only."""
    planted = tmp_path / "errors.py"
    planted.write_text("def late():\n    from contrastgen.files import atomic\n    return atomic\n")
    graph = module_graph()
    graph["contrastgen.errors"] = imported_modules(planted, "contrastgen.errors")
    assert "contrastgen.files.atomic" in graph["contrastgen.errors"]
    found = import_cycles(graph)
    assert any({"contrastgen.errors", "contrastgen.files.atomic"} <= set(c) for c in found), found
    typing_only = tmp_path / "typed.py"
    typing_only.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                           "    from contrastgen.files import atomic\n")
    graph["contrastgen.errors"] = imported_modules(typing_only, "contrastgen.errors")
    assert graph["contrastgen.errors"] == {"contrastgen.files.atomic"}
    found = import_cycles(graph)
    assert any({"contrastgen.errors", "contrastgen.files.atomic"} <= set(c) for c in found), found


def test_the_layer_test_sees_a_violation(tmp_path):
    """The scan must resolve relative imports; a planted upward import is caught."""
    planted = tmp_path / "bad.py"
    planted.write_text("from ..engine import Engine\nfrom contrastgen.templates import registry\n")
    found = imports_of(planted, "contrastgen.verify.bad")
    assert "contrastgen.engine" in found and "contrastgen.templates.registry" in found
    assert {stage_of(m) for m in found if known(m)} & set(GENERATOR)


def test_data_files_are_reached_only_through_resources():
    """One way to find rules/ and the bundled data, so a wheel install finds them as a checkout does."""
    for name, path in modules():
        if name == "contrastgen.resources":
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("resources.files(", "import files", "__file__"):
            assert needle not in text, f"{name} finds files with {needle!r}; use contrastgen.resources"


def test_the_readme_module_map_names_every_folder():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Inside contrastgen", 1)[1].split("\n## ", 1)[0]
    folders = sorted(p.name for p in (REPO / "contrastgen").iterdir()
                     if p.is_dir() and (p / "__init__.py").exists() and p.name != "data")
    assert folders and all(f"`{name}/`" in section for name in folders), folders
    assert all(f"`{p.name}`" in section or p.name in ("__init__.py", "__main__.py")
               for p in (REPO / "contrastgen").glob("*.py"))


def test_every_package_is_in_the_wheel():
    """pyproject.toml lists packages by hand (rules/, api/ and mturk/ are mapped into contrastgen):
    a folder missing from the list would work in a checkout and be absent from the wheel, and a
    data folder missing from it makes setuptools warn on every install."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    roots = {"contrastgen": REPO / "contrastgen", **{k: REPO / v for k, v in config["package-dir"].items()}}
    found = set()
    for package, root in roots.items():
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir() and folder.name != "__pycache__" and any(f.is_file() for f in folder.iterdir()):
                found.add(".".join((package, *folder.relative_to(root).parts)))
    assert {"contrastgen.rules.lexicon", "contrastgen.data.sample", "contrastgen.viewer.static"} <= found
    assert found <= listed, sorted(found - listed)
