"""Perturbations: the mess real datasets carry, injected on purpose.

``missing`` blanks 3-15 % of the cells of the test's columns, MCAR or MAR
(the chance of a blank grows with an observed extra column of the row, one that relates
to a test column when the scenario has one, so MAR is not MCAR in disguise).
``missing_mnar`` blanks as many, missing not at random: the chance of a blank
grows with the value itself, so the complete cases are no longer a random
sample; the gold is still the complete-case analysis and the prompt does not
change. ``extreme`` gives 1-3 % of rows (at least one) a physically impossible
value, outside the plausible range the data dictionary states: a slipped
decimal point, a lost sign, a missing-value code such as 999.
``missing+extreme`` (or ``missing_mnar+extreme``) does both.

The canonical handling, which the gold follows and the data dictionary makes
decidable: impossible values are missing; then complete cases on the test's
columns. This module draws *what* to do for one dataset (on the parameter
stream); :func:`taskfactory.kit.release_table` does it on the data stream, inside the
emitted script too.
"""

from __future__ import annotations

import math

from ..errors import GridError
from ..kit import DESIGN_TYPES
from ..scenarios import NUMERIC_TYPES

PARTS = ("missing", "missing_mnar", "extreme")
CHOICES = ("none", "missing", "missing_mnar", "extreme", "missing+extreme", "missing_mnar+extreme")
MISSING_RATE = (0.03, 0.15)
EXTREME_RATE = (0.01, 0.03)


def canonical(name, where: str = "perturbations") -> str:
    """The canonical spelling of a perturbation (parts in a fixed order)."""
    if not isinstance(name, str):
        raise GridError(f"key '{where}': each perturbation must be a name, got {name!r}")
    if name == "none":
        return name
    parts = name.split("+")
    if (any(p not in PARTS for p in parts) or len(set(parts)) != len(parts)
            or {"missing", "missing_mnar"} <= set(parts)):
        raise GridError(f"key '{where}': unknown value '{name}'; allowed: {', '.join(CHOICES)}")
    return "+".join(p for p in PARTS if p in parts)


def extreme_columns(family, scenario) -> list[str]:
    """Numeric columns of the test, else the numeric extras (where impossible
    values then test whether an agent leaves irrelevant columns alone)."""
    numeric = [v.name for v in scenario.variables if v.type in NUMERIC_TYPES]
    used = [c for c in family.role_columns(scenario.roles) if c in numeric]
    return used or numeric


def draw(kind: str, family, scenario, n: int, rng) -> dict:
    """What the perturbation ``kind`` does to one dataset of ``n`` rows."""
    plan: dict = {"kind": kind}
    parts = kind.split("+")
    if "extreme" in parts:
        rate = float(rng.uniform(*EXTREME_RATE))
        rows = max(1, min(math.floor(EXTREME_RATE[1] * n), max(math.ceil(EXTREME_RATE[0] * n), round(rate * n))))
        plan["extreme"] = {"rate": rate, "rows": rows, "columns": extreme_columns(family, scenario)}
    if "missing" in parts or "missing_mnar" in parts:
        cols = family.measured_columns(scenario.roles)
        total = n * len(cols)
        rate = float(rng.uniform(*MISSING_RATE))
        cells = min(math.floor(MISSING_RATE[1] * total), max(math.ceil(MISSING_RATE[0] * total), round(rate * total)))
        if "missing_mnar" in parts:
            mechanism = "MNAR"
        else:
            mechanism = "MAR" if rng.random() < 0.5 else "MCAR"
        missing = {"mechanism": mechanism, "rate": rate, "cells": cells, "columns": cols}
        if mechanism == "MAR":  # driven by an extra column of the row, one related to a test column when there is one
            used = family.role_columns(scenario.roles)
            extras = [v for v in scenario.variables if v.type not in ("id", *DESIGN_TYPES) and v.name not in used]
            extras = [v for v in extras if not v.per_unit] or extras   # a unit's property would blank whole units
            related = [v for v in extras if v.relates is not None]
            drivers = [v.name for v in (related or extras)]
            missing["driver"] = drivers[int(rng.integers(len(drivers)))]
        if mechanism != "MCAR":
            missing["strength"] = float(rng.uniform(1.0, 2.0))
        plan["missing"] = missing
    return plan


def hints(plan: dict) -> list[str]:
    """Guided-prompt hints about the perturbation."""
    out = []
    if "extreme" in plan:
        out.append("A few values lie outside the plausible ranges the data dictionary gives; they are recording "
                   "errors, not measurements, and are best treated as missing.")
    if "missing" in plan:
        out.append("Some cells are blank because the value was not recorded; analyse the rows that are complete "
                   "on the variables your test uses.")
    return out
