"""Helpers shared by the families' analyses (not part of emitted scripts)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import DataError
from ..result import TestResult
from ..scenarios import require_number
from ._dist import chi2_sf


def require(ok: bool, reason: str) -> None:
    """Raise :class:`DataError` with ``reason`` unless ``ok``."""
    if not ok:
        raise DataError(reason)


def shown(value) -> str:
    """A cell as a message shows it: the Python value's repr (``5.0``, ``'a'``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def require_varies(data, *columns: str) -> None:
    """Raise :class:`DataError` when one of ``columns`` holds the same value on
    every analysed row: a test of a constant outcome, exposure or group is
    degenerate (R stops, returns NaN, or prints a p-value of rounding noise)."""
    for col in columns:
        values = data[col].to_numpy()
        if len(values) and not (values != values[0]).any():
            raise DataError(f"'{col}' has no variation: every analysed row holds {shown(values[0])}")


def indicator(data, column: str, positive) -> np.ndarray:
    """Whether each row of ``column`` (a binary outcome, compared as text) is
    the ``positive`` level. Raises :class:`DataError` when the column holds
    more than two levels, or two of which neither is ``positive``."""
    y = data[column].astype(str).to_numpy()
    levels = sorted(set(y))
    require(len(levels) <= 2, f"'{column}' has {len(levels)} levels, the test needs a binary outcome")
    require(len(levels) < 2 or str(positive) in levels, f"role 'positive' ({str(positive)!r}) is not a level of "
            f"'{column}', which holds {levels[0]!r} and {levels[-1]!r}")
    return y == str(positive)


def unit_scaled(values: np.ndarray, axis: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(values * 2**-e, e)``, ``e`` (per column with ``axis=0``) the power of
    two that brings the largest magnitude into [0.5, 1) (0 for zeros). The
    scaling is exact, so sums, products and square roots of the scaled values
    are the unscaled ones' times a power of two, bit for bit, wherever the
    unscaled ones neither overflow nor underflow; and the scaled ones do not,
    whatever the magnitude of ``values`` (R's ``cor`` reaches the same with
    long double sums)."""
    _, e = np.frexp(np.max(np.abs(values), axis=axis))
    return np.ldexp(values, -e), e


#: The smallest positive normal double.
NORMAL_MIN = float(np.finfo(float).tiny)


def require_held(variances, names) -> None:
    """Raise :class:`DataError` naming the first coefficient whose variance
    (its standard error squared) lies outside the normal doubles: it was
    computed from products that underflowed or overflowed, in R as here, so
    its test is noise."""
    for name, v in zip(names, variances):
        require(NORMAL_MIN <= v < math.inf,
                f"the variance of '{name}' ({v:.3g}) is beyond double precision: a column's scale is too extreme")


def numeric(data, column: str) -> np.ndarray:
    """A column as a float array (the data are complete cases already)."""
    return np.asarray(data[column], dtype=float)


def grouped(data, outcome: str, group: str, k: int | None = None, min_size: int = 2, unit: str = "values"):
    """Split ``outcome`` by the levels of ``group``, in R's factor order.

    Returns ``(levels, [arrays])``. Raises :class:`DataError` when the number
    of levels is not ``k`` or a group has fewer than ``min_size`` values (rows
    of ``data``, which ``unit`` names: the clusters of a table of cluster means).
    """
    require_varies(data, outcome, group)
    labels = np.asarray(data[group]).astype(str)   # each value as its text, as R's factor() takes it
    levels, codes = np.unique(labels, return_inverse=True)   # sorted by code point, as Python sorts text
    levels = levels.tolist()
    if k is not None:
        require(len(levels) == k, f"'{group}' has {len(levels)} levels, the test needs {k}")
    y = numeric(data, outcome)
    parts = [y[codes == j] for j in range(len(levels))]
    require(all(len(p) >= min_size for p in parts), f"a level of '{group}' has fewer than {min_size} {unit}")
    return levels, parts


def nonconstant(*arrays: np.ndarray) -> None:
    """Raise :class:`DataError` when any array has zero variance."""
    for a in arrays:
        require(len(a) > 1 and float(np.ptp(a)) > 0.0, "a group has no variation")


def welch_df(a: np.ndarray, b: np.ndarray) -> float:
    """Welch-Satterthwaite degrees of freedom of two samples."""
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    return float((va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)))


def check_two_groups(scenario) -> None:
    """Raise ValueError unless the column playing ``group`` has exactly 2 levels."""
    group = scenario.variable(scenario.roles["group"])
    if len(group.levels) != 2:
        raise ValueError(f"group '{group.name}' needs exactly 2 levels")


def check_two_proportions(scenario, lowest: float) -> None:
    """Raise ValueError unless the outcome and group columns have 2 levels
    each, ``positive`` is one of the outcome's, and ``dgp p`` is a proportion
    from ``lowest`` to 1 - ``lowest`` (scenario checks)."""
    for role in ("outcome", "group"):
        levels = scenario.variable(scenario.roles[role]).levels
        if len(levels) != 2:
            raise ValueError(f"{role} '{scenario.roles[role]}' needs exactly 2 levels")
    positive = scenario.roles["positive"]
    if positive not in scenario.variable(scenario.roles["outcome"]).levels:
        raise ValueError(f"positive ({positive!r}) must be one of the levels of '{scenario.roles['outcome']}'")
    p = scenario.dgp["p"]
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not lowest <= p <= 1.0 - lowest:
        raise ValueError(f"dgp p ({p!r}) must be a proportion from {lowest:g} to {1.0 - lowest:g}")


def check_location(scenario, role: str, location: str = "mean", spread: str | None = "sd") -> None:
    """Raise ValueError unless ``dgp[location]`` is a number inside the range of
    the column playing ``role`` and ``dgp[spread]`` a positive number (scenario checks)."""
    lo, hi = scenario.variable(scenario.roles[role]).range
    if not lo < require_number(scenario.dgp[location], f"dgp {location}") < hi:
        raise ValueError(f"dgp {location} lies outside the range of '{scenario.roles[role]}'")
    if spread is not None and not require_number(scenario.dgp[spread], f"dgp {spread}") > 0:
        raise ValueError(f"dgp {spread} must be positive")


def check_paired(scenario) -> None:
    """Raise ValueError unless the before and after columns are distinct, share
    type, range and decimals (so a null pair stays exchangeable once rounded
    and clipped), and dgp mean lies inside their range with a positive sd."""
    before, after = scenario.variable(scenario.roles["before"]), scenario.variable(scenario.roles["after"])
    if before.name == after.name:
        raise ValueError("before and after must be different columns")
    if before.range != after.range or before.decimals != after.decimals or before.type != after.type:
        raise ValueError("before and after need the same type, range and decimals")
    check_location(scenario, "before")


def counts_2x2(condition, data) -> np.ndarray:
    """The 2 x 2 table of ``group`` (rows, R's sorted order) by ``outcome``
    (columns: the ``positive`` level, then the other)."""
    outcome, group = condition.roles["outcome"], condition.roles["group"]
    require_varies(data, outcome, group)
    g = data[group].astype(str).to_numpy()
    y = indicator(data, outcome, condition.roles["positive"])
    levels = sorted(set(g))
    require(len(levels) == 2, f"'{group}' has {len(levels)} levels, the test needs 2")
    x = [int(np.sum(y[g == lv])) for lv in levels]
    n = [int(np.sum(g == lv)) for lv in levels]
    return np.array([[x[0], n[0] - x[0]], [x[1], n[1] - x[1]]])


def chisq_yates(table: np.ndarray,
                method: str = "Pearson's Chi-squared test with Yates' continuity correction") -> TestResult:
    """R's ``chisq.test`` on a 2 x 2 table: Pearson's X-squared with Yates'
    correction, whatever the expected counts (R only warns). ``prop.test`` of
    two proportions gives the same statistic (its correction, |p1 - p2| over
    1/n1 + 1/n2, is the same |O - E|); ``method`` names the call."""
    observed = np.asarray(table, dtype=float)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    require(bool(np.all(expected > 0)), "a margin of the table is empty")
    yates = min(0.5, float(np.min(np.abs(observed - expected))))
    statistic = float(np.sum((np.abs(observed - expected) - yates) ** 2 / expected))
    return TestResult(statistic=statistic, pvalue=float(chi2_sf(statistic, 1)),
                      method=method, df=(1.0,),
                      n=int(observed.sum()), statistic_name="X-squared")


#: The number of clusters of a two- or k-group design with a cluster column is
#: drawn between these, and at most one per :data:`ROWS_PER_CLUSTER` rows.
CLUSTERS = (10, 24)
ROWS_PER_CLUSTER = 4
#: The range the intraclass correlation of an outcome in whole clusters is drawn from.
CLUSTER_ICC = (0.15, 0.35)


def draw_clusters(scenario, n: int, rng) -> dict:
    """``{"clusters": k}`` for a scenario with a ``cluster`` role, drawn alike for
    every design of its groups (whole clusters in a group, or rows of every group
    in each cluster); an empty mapping, drawing nothing, for one without."""
    if "cluster" not in scenario.roles:
        return {}
    return {"clusters": int(rng.integers(CLUSTERS[0], max(CLUSTERS[0], min(CLUSTERS[1], n // ROWS_PER_CLUSTER)) + 1))}


def cluster_means(data, outcome: str, group: str, cluster: str) -> pd.DataFrame:
    """The mean ``outcome`` of each cluster (and group), in columns ``outcome``
    and ``group``, as R's ``aggregate(outcome ~ cluster + group, data = d, FUN =
    mean)`` gives it (a cluster holding several groups gives a mean of each)."""
    keys = pd.DataFrame({"cluster": data[cluster].astype(str).to_numpy(), group: data[group].astype(str).to_numpy(),
                         outcome: numeric(data, outcome)})
    return keys.groupby(["cluster", group], sort=False)[outcome].mean().reset_index()
