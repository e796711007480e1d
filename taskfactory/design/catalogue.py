"""The scenarios of the registered families: the file of each family's
question kind, parsed by :mod:`taskfactory.scenarios`, and each scenario as
one family sees it, checked against what that family needs
(:meth:`taskfactory.family.Family.check_scenario`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import ScenarioError
from ..registry import families, get_family
from ..scenarios import Scenario, parse_file, scenario_root
from ..validation import Problems


def siblings(kind: str) -> list[str]:
    """The registered families answering question kind ``kind``, in catalogue order."""
    return [f.name for f in families() if f.question_kind == kind]


@lru_cache(maxsize=None)
def _load_kind(root: str, kind: str) -> tuple[Scenario, ...]:
    path = Path(root) / f"{kind}.yaml"
    if not path.is_file():
        raise ScenarioError(f"{path}: no scenario file for question kind '{kind}'")
    members = [get_family(name) for name in siblings(kind)]
    if len({f.has_data for f in members}) > 1:
        raise ScenarioError(f"{path}: the families of '{kind}' must all have a dataset or all have none")
    fields = tuple(sorted({field for f in members for field in f.prompt_fields}))
    scenarios = parse_file(path, members[0].has_data, fields, {f.name: tuple(f.question_words) for f in members})
    names = {f.name for f in members}
    problems = Problems(str(path), ScenarioError, joiner=", ")
    for scen in scenarios:
        for stranger in sorted(set(scen.dgp) - names):
            problems.add(f"dgp names '{stranger}', which is not a method of '{kind}' ({', '.join(sorted(names))})",
                         f"scenario '{scen.id}'")
    problems.raise_any()
    return tuple(scenarios)


@lru_cache(maxsize=None)
def _load(root: str, method: str) -> tuple[Scenario, ...]:
    family = get_family(method)
    shared = _load_kind(root, family.question_kind)
    scenarios = tuple(s.for_family(method) for s in shared if method in s.dgp)
    if not scenarios:
        raise ScenarioError(f"{Path(root) / family.question_kind}.yaml: no scenario supports method '{method}'")
    problems = Problems(family.scenario_file(scenarios[0]), ScenarioError, joiner=", ")
    for scen in scenarios:
        family.scenario_problems(scen, problems)
    problems.raise_any()
    return scenarios


def load_scenarios(method: str) -> tuple[Scenario, ...]:
    """Every scenario of ``method``, as the family sees it, validated against its needs."""
    return _load(str(scenario_root()), method)


def get_scenario(method: str, scenario_id: str) -> Scenario:
    for scen in load_scenarios(method):
        if scen.id == scenario_id:
            return scen
    allowed = ", ".join(s.id for s in load_scenarios(method))
    raise ScenarioError(f"method '{method}' has no scenario '{scenario_id}'; allowed: {allowed}")
