"""The scenarios of the registered families: each family's scenario file,
parsed by :mod:`taskfactory.scenarios` and checked against what the family
needs (:meth:`taskfactory.family.Family.check_scenario`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .errors import ScenarioError
from .registry import get_family
from .scenarios import Scenario, parse_file, scenario_root


@lru_cache(maxsize=None)
def _load(root: str, method: str) -> tuple[Scenario, ...]:
    path = Path(root) / f"{method}.yaml"
    if not path.is_file():
        raise ScenarioError(f"{path}: no scenario file for method '{method}'")
    family = get_family(method)
    scenarios = parse_file(path, family.has_data, family.prompt_fields)
    for scen in scenarios:
        family.check_scenario(scen)
    return tuple(scenarios)


def load_scenarios(method: str) -> tuple[Scenario, ...]:
    """Every scenario of ``method``, validated against the family's needs."""
    return _load(str(scenario_root()), method)


def get_scenario(method: str, scenario_id: str) -> Scenario:
    for scen in load_scenarios(method):
        if scen.id == scenario_id:
            return scen
    allowed = ", ".join(s.id for s in load_scenarios(method))
    raise ScenarioError(f"method '{method}' has no scenario '{scenario_id}'; allowed: {allowed}")
