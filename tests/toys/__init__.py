"""Toy families that exercise the family contract beyond one p-value on one
flat table, and toy families that misbehave on purpose. They are registered
only by the tests that use them (see :func:`install`, and :func:`process_env`
for the processes a test starts), never in the catalogue."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from taskfactory import registry
from taskfactory.scenarios import scenario_root

HERE = Path(__file__).resolve().parent


def install(monkeypatch, tmp_path: Path, *families) -> Path:
    """Register ``families`` and point TASKFACTORY_SCENARIOS at a copy of the
    shipped scenarios plus the toys' own files; returns that folder."""
    root = tmp_path / "scenarios"
    shutil.copytree(scenario_root(), root)
    for family in families:
        shutil.copyfile(HERE / f"{family.question_kind}.yaml", root / f"{family.question_kind}.yaml")
        monkeypatch.setitem(registry._REGISTRY, family.name, family)
    monkeypatch.setenv("TASKFACTORY_SCENARIOS", str(root))
    return root


def process_env(monkeypatch, tmp_path: Path, *families) -> dict:
    """:func:`install` ``families``, and return the environment of a process
    for the test to start in which they are registered too, as in every
    worker process that one starts: a ``sitecustomize`` module (which Python
    imports as it starts) that registers them, first on ``PYTHONPATH``."""
    install(monkeypatch, tmp_path, *families)
    hook = tmp_path / "registers-toys"
    hook.mkdir()
    lines = ["from taskfactory import registry"]
    for family in families:
        lines += [f"from {type(family).__module__} import {type(family).__name__}",
                  f"registry.register({type(family).__name__}())"]
    (hook / "sitecustomize.py").write_text("\n".join(lines) + "\n")
    paths = [str(hook), str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
