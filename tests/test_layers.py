"""The package's layers (docs/architecture.md): a module imports only modules
of its own layer or of a layer below it, even inside a function."""

import ast
from pathlib import Path

import taskfactory

PACKAGE = Path(taskfactory.__file__).parent
#: The layers in order; ``audit`` and ``use`` share a rank and do not import each other.
RANKS = {"design": 1, "make": 2, "store": 3, "audit": 4, "use": 4}
TOP = {"taskfactory", "taskfactory.cli"}


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["taskfactory", *path.relative_to(PACKAGE).with_suffix("").parts]
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported(name: str, path: Path, names: dict) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target not in names and "." in target:
                target = target.rpartition(".")[0]
            if target in names and target != name:
                found.add(target)
    return found


def layer(name: str) -> tuple[str, int]:
    if name in TOP:
        return "top", 9
    phase = name.split(".")[1] if name.count(".") else ""
    return (phase, RANKS[phase]) if phase in RANKS else ("root", 0)


def test_no_module_imports_a_layer_above_its_own():
    names = module_names()
    upward = []
    for name, path in sorted(names.items()):
        own, rank = layer(name)
        for target in sorted(imported(name, path, names)):
            other, other_rank = layer(target)
            if other_rank > rank or (other_rank == rank and other != own):
                upward.append(f"{name} imports {target}")
    assert upward == []


def test_the_layers_are_the_packages_folders():
    """Every folder under the package is a layer, the families' ``methods``, or
    a part of a layer; a new top-level folder must be given its place here."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == {*RANKS, "methods"}


def test_the_checker_resolves_relative_imports():
    """What the first test reads: ``from ..make.task import``, ``from .. import
    kit`` and a function's ``from ..family import``."""
    names = module_names()
    assert "taskfactory.make.task" in imported("taskfactory.store.build", names["taskfactory.store.build"], names)
    assert "taskfactory.kit" in imported("taskfactory.make.task", names["taskfactory.make.task"], names)
    assert "taskfactory.family" in imported("taskfactory.make.columns", names["taskfactory.make.columns"], names)
    assert layer("taskfactory.use.agent.sandbox") == ("use", 4)
    assert layer("taskfactory.kit") == ("root", 0)
