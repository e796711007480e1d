"""The clipping probe: a scenario whose plausible ranges clip more than
:data:`~taskfactory.scenarios.SCENARIO_CLIPPED_SHARE` of a column's generated
values is refused before a build, since its released data would pile up at
the range's ends (a scenario's checks on its text are
:mod:`taskfactory.scenarios`'; this one draws data).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import lru_cache

import numpy as np

from .. import kit
from ..design.catalogue import get_scenario
from ..design.grid import Grid
from ..effects import EffectLevel
from ..errors import ScenarioError
from ..registry import get_family
from ..scenarios import DESIGN_TYPES, NUMERIC_TYPES, SCENARIO_CLIPPED_SHARE, scenario_root, scenario_setting
from .workers import enter_worker

# The clipping probe: PROBE_DRAWS datasets of PROBE_N rows at each of
# PROBE_EFFECTS, clean, from fixed streams of PROBE_SEED. It runs once per
# (method, scenario) of the grid, whatever its N, effects, perturbations and
# seeds (none of which it reads), so its cost is bounded by the catalogue.
PROBE_N = 1000
PROBE_DRAWS = 3
PROBE_EFFECTS = ("null", "medium")
PROBE_SEED = 20260101


def check_clipping(g: Grid, parallel=None, parent_pid: int | None = None) -> None:
    """Raise :class:`ScenarioError` for the first scenario of ``g`` whose
    plausible ranges clip too many generated values (see :func:`probe_clipping`).
    With ``parallel`` (a joblib Parallel) the scenarios are probed in its
    workers, which stop when the process ``parent_pid`` dies (when given; see
    :func:`taskfactory.make.workers.enter_worker`)."""
    root = str(scenario_root())
    pairs = [(method, scenario) for method in g.methods if get_family(method).has_data   # no dataset: no clipping
             for scenario in g.scenarios[method]]
    if parallel is None:
        for method, scenario in pairs:
            probe_clipping(root, method, scenario)
        return
    from joblib import delayed

    setting = scenario_setting()
    found = dict(parallel(delayed(_probe_problem)(setting, parent_pid, method, scenario)
                          for method, scenario in pairs))
    for pair in pairs:   # the first in the grid's order, whichever worker finished first
        if found[pair] is not None:
            raise ScenarioError(found[pair])


def _probe_problem(setting: str | None, parent_pid: int | None, method: str,
                   scenario: str) -> tuple[tuple[str, str], str | None]:
    """``((method, scenario), what the probe refused or None)``, for a build
    worker (see :func:`taskfactory.make.workers.enter_worker`)."""
    enter_worker(setting, parent_pid)
    try:
        probe_clipping(str(scenario_root()), method, scenario)
    except ScenarioError as exc:
        return (method, scenario), str(exc)
    return (method, scenario), None


@lru_cache(maxsize=None)
def probe_clipping(root: str, method: str, scenario: str) -> None:
    """Draw clean datasets of ``PROBE_N`` rows (or the family's maximum N) at the null and the medium effect
    and raise :class:`ScenarioError` when a numeric column's plausible range
    clips more than ``SCENARIO_CLIPPED_SHARE`` of its values, or when drawing
    meets a data problem (:func:`~taskfactory.make.task.data_problems`; any other
    exception is a bug, and propagates). ``root`` (the scenario folder) keys
    the cache only."""
    from .task import data_problems, draw_condition, warnings_as_errors

    family, scen = get_family(method), get_scenario(method, scenario)
    where = f"{scen.source or f'scenarios/{family.question_kind}.yaml'}, scenario '{scen.id}' ({method})"
    ranges = scen.ranges()
    n = PROBE_N if family.max_n is None else min(PROBE_N, family.max_n)
    columns = _probe_columns(scen.columns())
    for effect in PROBE_EFFECTS:
        clipped, rows = Counter(), 0
        for draw in range(PROBE_DRAWS):
            rng = np.random.default_rng(np.random.SeedSequence(PROBE_SEED, spawn_key=(draw,)))
            try:
                with warnings_as_errors():
                    cond = draw_condition(family, scen, n, EffectLevel(effect), "none", 0.05, rng)
                    table = family.generate(dataclasses.replace(cond, columns=columns), rng)
            except data_problems(family) as exc:
                raise ScenarioError(f"{where}: drawing a dataset of {n} rows at the {effect} effect fails "
                                    f"({type(exc).__name__}: {' '.join(str(exc).split())})") from None
            clipped.update(kit.clipped_counts(table, columns))
            rows += kit.row_count(table)
        for name, (lo, hi) in ranges.items():
            share = clipped[name] / rows
            if share > SCENARIO_CLIPPED_SHARE:
                raise ScenarioError(f"{where}: the plausible range [{lo:g}, {hi:g}] of '{name}' clips "
                                    f"{100 * share:.3g} % of values drawn at the {effect} effect (at most "
                                    f"{100 * SCENARIO_CLIPPED_SHARE:g} %); widen the range or move the dgp")


def _probe_columns(columns: list[dict]) -> list[dict]:
    """The column specifications the probe draws with: those of the dataset,
    less the id column, and with cluster and unit numbers left as numbers
    rather than labels. Neither draws from the stream (the family assembles
    them from the rows' order, see :func:`taskfactory.kit.finish`) and
    neither is clipped, so the probe draws the same values and counts the
    same clipped ones; only the text of the labels, most of its time, is not made."""
    kept = [spec for spec in columns if spec["type"] != "id"]
    if not any(spec["type"] in NUMERIC_TYPES for spec in kept):
        return columns
    return [{**spec, "type": "period"} if spec["type"] in DESIGN_TYPES else spec for spec in kept]
