"""Toy families that exercise the family contract beyond one p-value on one
flat table. They are registered only by the tests that use them (see
:func:`install`), never in the catalogue."""

from __future__ import annotations

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
