"""Helpers shared by the k-sample families (one_way_anova, welch_anova, kruskal_wallis).

The nuisance parameters (group shares, the unit pattern of group locations,
the welch_anova spreads) are drawn here by the families' ``draw_params`` and
handed to ``generate`` as plain lists, so the emitted scripts need none of this
module. The tests reproduce R's ``oneway.test`` and ``kruskal.test``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..family import Alternative, reference_template
from ..kit import split_sizes
from ..result import TestResult
from ._common import grouped, require
from ._names import WELCH_ANOVA
from ._dist import chi2_sf, f_sf

MIN_LEVELS, MAX_LEVELS = 3, 5
#: Largest over smallest group size, drawn per dataset the same way for every
#: k-group design (so sizes do not tell the siblings apart), and the fewest
#: rows a group keeps at small N.
SIZE_RATIO = (1.2, 3.0)
MIN_GROUP = 5
ANOVA = "One-way analysis of means"
WELCH = "One-way analysis of means (not assuming equal variances)"
KRUSKAL = "Kruskal-Wallis rank sum test"


def level_count(scenario) -> int:
    """The number of levels of the scenario's group variable."""
    return len(scenario.variable(scenario.roles["group"]).levels)


def validate_groups(scenario) -> None:
    """Raise ``ValueError`` unless the group variable has 3 to 5 levels and
    ``dgp.trend`` (levels in their natural order) is absent, 1 or -1."""
    k = level_count(scenario)
    if not MIN_LEVELS <= k <= MAX_LEVELS:
        raise ValueError(f"group '{scenario.roles['group']}' needs {MIN_LEVELS} to {MAX_LEVELS} levels, has {k}")
    trend = scenario.dgp.get("trend")
    if trend is not None and (isinstance(trend, bool) or trend not in (1, -1)):
        raise ValueError(f"dgp trend ({trend!r}) must be 1 (means rise along the listed levels) or -1 (they fall)")


def exponents(k: int, rng) -> np.ndarray:
    """``k`` increasing exponents from 0 to 1, the inner ones uniform: ``r ** e``
    gives values whose largest over smallest is ``r``, log-uniform in between."""
    return np.concatenate([[0.0], np.sort(rng.uniform(0.0, 1.0, k - 2)), [1.0]])


def group_shares(n: int, k: int, rng) -> list[float]:
    """Group shares, in level order, with largest/smallest drawn from
    :data:`SIZE_RATIO` (random order).

    The ratio shrinks towards 1 (equal groups) until every group of
    ``split_sizes(n, shares)`` has at least :data:`MIN_GROUP` rows, so small N
    keeps usable groups.
    """
    ratio = float(rng.uniform(*SIZE_RATIO))
    e = exponents(k, rng)[rng.permutation(k)]
    while True:
        shares = ratio**e
        if ratio <= 1.0 or min(split_sizes(n, shares)) >= MIN_GROUP:
            return [float(s) for s in shares / shares.sum()]
        ratio = 1.0 + 0.8 * (ratio - 1.0) if ratio > 1.01 else 1.0


def draw_groups(scenario, n: int, rng) -> dict:
    """Group shares (:func:`group_shares`) and the unit pattern of the group
    means (:func:`unit_pattern`) of a k-group dataset, in that order."""
    shares = group_shares(n, level_count(scenario), rng)
    return {"shares": shares, "pattern": unit_pattern(split_sizes(n, shares), rng, scenario.dgp.get("trend"))}


def unit_pattern(sizes, rng, trend: int | None = None) -> list[float]:
    """Standardised group locations: size-weighted mean 0 and size-weighted SD 1.

    One of three shapes, equally likely: one group apart from the others,
    locations evenly spaced, or locations drawn at random; the order over the
    levels is random, or, for ordered levels (``trend`` 1 or -1, the
    scenario's ``dgp.trend``), rising or falling along them. Multiplied by
    Cohen's f and the within-group SD it gives the group means, and the ANOVA
    non-centrality is exactly ``N f^2``.
    """
    k = len(sizes)
    shape = rng.integers(3)
    if shape == 0:
        raw = np.zeros(k)
        raw[rng.integers(k)] = 1.0
    elif shape == 1:
        raw = rng.permutation(np.arange(k, dtype=float))
    else:
        raw = rng.normal(size=k)
    if trend is not None:
        raw = trend * np.sort(trend * raw)
    w = np.asarray(sizes, dtype=float) / np.sum(sizes)
    centred = raw - np.sum(w * raw)
    return [float(x) for x in centred / np.sqrt(np.sum(w * centred**2))]


def welch_terms(sizes, variances):
    """Welch's weights ``n_i / s_i^2``, their sum, and the term ``tmp`` of
    ``oneway.test``: sum((1 - w_i/W)^2 / (n_i - 1)) / (k^2 - 1)."""
    n = np.asarray(sizes, dtype=float)
    w = n / np.asarray(variances, dtype=float)
    total = float(w.sum())
    k = len(n)
    tmp = float(np.sum((1.0 - w / total) ** 2 / (n - 1.0)) / (k * k - 1.0))
    return w, total, tmp


def oneway(condition, data, var_equal: bool) -> TestResult:
    """``oneway.test(outcome ~ group, var.equal = var_equal)``.

    R stops when a group has fewer than 2 values; Welch's weights are infinite
    (R returns NaN) when a group has no variation, and the classical F is
    undefined when no group has any.
    """
    _, parts = grouped(data, condition.roles["outcome"], condition.roles["group"], min_size=2)
    k = len(parts)
    require(k >= 2, "the group column has fewer than 2 levels")
    n_i = np.array([len(p) for p in parts], dtype=float)
    m_i = np.array([p.mean() for p in parts])
    v_i = np.array([p.var(ddof=1) for p in parts])
    if var_equal:
        n = float(n_i.sum())
        grand = float(np.concatenate(parts).mean())
        within = float(np.sum((n_i - 1.0) * v_i) / (n - k))
        require(within > 0.0, "no group has any variation")
        statistic = float(np.sum(n_i * (m_i - grand) ** 2) / (k - 1) / within)
        df = (float(k - 1), n - k)
        method = ANOVA
    else:
        require(bool(np.all(v_i > 0.0)), "a group has no variation")
        w, total, tmp = welch_terms(n_i, v_i)
        centre = float(np.sum(w * m_i) / total)
        statistic = float(np.sum(w * (m_i - centre) ** 2) / ((k - 1) * (1.0 + 2.0 * (k - 2) * tmp)))
        df = (float(k - 1), 1.0 / (3.0 * tmp))
        method = WELCH
    pvalue = float(f_sf(statistic, df[0], df[1]))
    return TestResult(statistic=statistic, pvalue=pvalue, method=method, df=df, n=int(n_i.sum()),
                      statistic_name="F")


def kruskal(condition, data) -> TestResult:
    """``kruskal.test(outcome ~ group)``: mid-ranks, the chi-square approximation
    on k - 1 df, and R's tie correction 1 - sum(t^3 - t) / (n^3 - n).

    A group may hold a single value; when every value is tied the statistic is
    0/0 (R returns NaN).
    """
    _, parts = grouped(data, condition.roles["outcome"], condition.roles["group"], min_size=1)
    k = len(parts)
    require(k >= 2, "the group column has fewer than 2 levels")
    y = np.concatenate(parts)
    n = float(len(y))
    require(n >= 2 and float(np.ptp(y)) > 0.0, "every value is tied")
    ranks = stats.rankdata(y)
    sizes = np.array([len(p) for p in parts])
    rank_sums = np.add.reduceat(ranks, np.concatenate([[0], np.cumsum(sizes)[:-1]]))
    _, ties = np.unique(y, return_counts=True)
    ties = ties.astype(float)
    statistic = (12.0 * np.sum(rank_sums**2 / sizes) / (n * (n + 1.0)) - 3.0 * (n + 1.0))
    statistic = float(statistic / (1.0 - np.sum(ties**3 - ties) / (n**3 - n)))
    pvalue = float(chi2_sf(statistic, k - 1))
    return TestResult(statistic=statistic, pvalue=pvalue, method=KRUSKAL, df=(float(k - 1),), n=int(n),
                      statistic_name="Kruskal-Wallis chi-squared")


def welch_f(condition, data) -> TestResult:
    """Welch's heteroscedastic F, ``oneway.test(outcome ~ group)``."""
    return oneway(condition, data, var_equal=False)


#: Welch's F, R's ``oneway.test`` default, accepted beside the classical F:
#: equally right when the spreads are equal (welch_anova's own reference code).
WELCH_F = Alternative(method=WELCH, call="oneway.test(outcome ~ group)", run=welch_f,
                      r_code=reference_template("welch_anova", "R"), name=WELCH_ANOVA)
