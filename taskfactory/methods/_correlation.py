"""The correlation tests shared by the association families (pearson, spearman, kendall,
and the series families pearson_differences and spearman_differences).

Each reads the two columns playing the roles ``x`` and ``y`` and computes one
of R's ``cor.test`` methods with R's defaults: Pearson's r with the t statistic
on n - 2 degrees of freedom (canonical for pearson, the tempting wrong test of
the rank families), Spearman's rho and Kendall's tau (each accepted beside the
other). A series' families run them on :func:`first_differences`, the changes
from one period to the next (:func:`of_changes`).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from ..result import TestResult
from ..scenarios import require_number
from ._common import numeric, require, require_varies, unit_scaled
from ._dist import norm_cdf, norm_sf, t_sf

PEARSON_METHOD = "Pearson's product-moment correlation"


def pair(condition, data) -> tuple[np.ndarray, np.ndarray]:
    """The ``x`` and ``y`` columns as float arrays, checked as ``cor.test`` needs
    them: at least 3 rows, and neither column constant (R's ``cor`` would give
    NA and the test no p-value)."""
    x = numeric(data, condition.roles["x"])
    y = numeric(data, condition.roles["y"])
    require(len(x) >= 3, f"{len(x)} complete rows; a correlation test needs at least 3")
    require_varies(data, condition.roles["x"], condition.roles["y"])
    return x, y


def pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's correlation from centred cross-products, kept inside [-1, 1]
    as R's ``cor`` keeps it. Each column is scaled by a power of two first
    (:func:`unit_scaled`): r does not change by a bit on ordinary data, and
    columns of magnitude 1e160 or 1e-300 give R's r, not an overflow to 0."""
    (x, _), (y, _) = unit_scaled(x), unit_scaled(y)
    dx, dy = x - x.mean(), y - y.mean()
    r = float(np.dot(dx, dy) / math.sqrt(float(np.dot(dx, dx)) * float(np.dot(dy, dy))))
    return min(1.0, max(-1.0, r))


def t_pvalue(r: float, n: int) -> tuple[float, float]:
    """``(t, two-sided p)`` of a correlation ``r`` of ``n`` pairs on n - 2 df:
    t = sqrt(n - 2) r / sqrt(1 - r^2). A perfect correlation has an infinite t
    and p = 0, as in R."""
    df = n - 2
    if r * r >= 1.0:
        return math.copysign(math.inf, r), 0.0
    t = math.sqrt(df) * r / math.sqrt(1.0 - r * r)
    return t, float(min(1.0, 2.0 * t_sf(abs(t), df)))


def pearson_test(condition, data) -> TestResult:
    """``cor.test(x, y)``: Pearson's r, t on n - 2 df, two-sided p."""
    x, y = pair(condition, data)
    n = len(x)
    r = pearson_r(x, y)
    t, p = t_pvalue(r, n)
    return TestResult(statistic=t, pvalue=p, method=PEARSON_METHOD, df=(float(n - 2),), estimate=r, n=n,
                      statistic_name="t")


KENDALL_METHOD = "Kendall's rank correlation tau"
KENDALL_EXACT_MAX_N = 49


@lru_cache(maxsize=None)
def _kendall_cdf(n: int) -> tuple[float, ...]:
    """P(T <= q), q = 0 .. n(n - 1)/2, for T the number of concordant pairs of
    n untied pairs under independence (R's ckendall: permutations of n by
    their number of inversions, counted exactly, over n!)."""
    counts = [1]
    for m in range(2, n + 1):  # append one element: 0 .. m - 1 new inversions
        nxt = [0] * (len(counts) + m - 1)
        window = 0
        for k in range(len(nxt)):
            window += counts[k] if k < len(counts) else 0
            if k - m >= 0:
                window -= counts[k - m]
            nxt[k] = window
        counts = nxt
    total, running, out = math.factorial(n), 0, []
    for c in counts:
        running += c
        out.append(running / total)
    return tuple(out)


def _tie_groups(v: np.ndarray) -> np.ndarray:
    """Sizes of the groups of tied values (R: table(v[duplicated(v)]) + 1)."""
    _, counts = np.unique(v, return_counts=True)
    return counts[counts > 1].astype(float)


def kendall_test(condition, data) -> TestResult:
    """``cor.test(x, y, method = "kendall")`` with R's defaults: tau-b; the exact
    null distribution of T (concordant pairs) when n < 50 and neither column
    has ties, else the normal approximation of S with R's tie-corrected
    variance and no continuity correction."""
    x, y = pair(condition, data)
    n = len(x)
    r = float(stats.kendalltau(x, y).statistic)
    ties = min(len(np.unique(x)), len(np.unique(y))) < n
    if n <= KENDALL_EXACT_MAX_N and not ties:
        q = int(round((r + 1.0) * n * (n - 1) / 4.0))
        cdf = _kendall_cdf(n)
        p = 1.0 - cdf[q - 1] if q > n * (n - 1) / 4.0 else cdf[q]
        return TestResult(statistic=float(q), pvalue=float(min(2.0 * p, 1.0)), method=KENDALL_METHOD, estimate=r,
                          n=n, statistic_name="T")
    tx, ty = _tie_groups(x), _tie_groups(y)
    t0 = n * (n - 1) / 2.0
    s = r * math.sqrt((t0 - float(np.sum(tx * (tx - 1))) / 2.0) * (t0 - float(np.sum(ty * (ty - 1))) / 2.0))
    var_s = ((n * (n - 1) * (2 * n + 5) - float(np.sum(tx * (tx - 1) * (2 * tx + 5)))
              - float(np.sum(ty * (ty - 1) * (2 * ty + 5)))) / 18.0
             + float(np.sum(tx * (tx - 1))) * float(np.sum(ty * (ty - 1))) / (2.0 * n * (n - 1))
             + float(np.sum(tx * (tx - 1) * (tx - 2))) * float(np.sum(ty * (ty - 1) * (ty - 2)))
             / (9.0 * n * (n - 1) * (n - 2)))
    z = s / math.sqrt(var_s)
    p = 2.0 * min(norm_cdf(z), norm_sf(z))
    return TestResult(statistic=z, pvalue=float(p), method=KENDALL_METHOD, estimate=r, n=n, statistic_name="z")


SPEARMAN_METHOD = "Spearman's rank correlation rho"
SPEARMAN_EXACT_MAX_N = 1290
SPEARMAN_ENUMERATE_MAX_N = 9
EDGEWORTH = (0.2274, 0.2531, 0.1745, 0.0758, 0.1033, 0.3932, 0.0879, 0.0151, 0.0072, 0.0831, 0.0131, 4.6e-4)


@lru_cache(maxsize=None)
def _s_counts(n: int) -> np.ndarray:
    """Number of permutations p of 1..n with sum_i (i - p_i)^2 = s, for
    s = 0 .. (n^3 - n) / 3, by dynamic programming over the set of used values."""
    top, full = n * (n * n - 1) // 3, (1 << n) - 1
    table = {0: np.zeros(top + 1, dtype=np.int64)}
    table[0][0] = 1
    for mask in range(full):
        counts = table.pop(mask)
        i = bin(mask).count("1")
        for v in range(n):
            if not mask >> v & 1:
                step = (i - v) ** 2
                nxt = table.setdefault(mask | 1 << v, np.zeros(top + 1, dtype=np.int64))
                nxt[step:] += counts[:top + 1 - step]
    return table[full]


def prho(n: int, s: float, lower: bool) -> float:
    """Algorithm AS 89 as R's ``cor.test`` calls it: P(S >= s) for the upper tail,
    P(S < s) for the lower, S = sum (i - p_i)^2 over random permutations p of 1..n.

    Exact for n <= 9; for n >= 10 the Edgeworth series of AS 89 around the
    normal tail at x = (6 (s - 1) / (n^3 - n) - 1) sqrt(n - 1), clamped to [0, 1].
    """
    if n <= 1 or s <= 0:
        return 0.0 if lower else 1.0
    if s > n * (n * n - 1) / 3:
        return 1.0 if lower else 0.0
    if n <= SPEARMAN_ENUMERATE_MAX_N:
        counts = _s_counts(n)
        values = np.arange(len(counts))
        hits = int(counts[values < s].sum() if lower else counts[values >= s].sum())
        return hits / math.factorial(n)
    c = EDGEWORTH
    b = 1.0 / n
    x = (6.0 * (s - 1.0) * b / (n * n - 1.0) - 1.0) * math.sqrt(1.0 / b - 1.0)
    y = x * x
    u = x * b * (c[0] + b * (c[1] + c[2] * b) + y * (-c[3] + b * (c[4] + c[5] * b) - y * b * (
        c[6] + c[7] * b - y * (c[8] - c[9] * b + y * b * (c[10] - c[11] * y)))))
    u /= math.exp(y / 2.0)
    p = norm_cdf(x) - u if lower else norm_sf(x) + u
    return float(min(1.0, max(0.0, p)))


def spearman_test(condition, data) -> TestResult:
    """``cor.test(x, y, method = "spearman")``, two-sided as R computes it: the tail is the one S lies in (lower when
    S <= (n^3 - n) / 6), p = min(2 P, 1). In the exact branch R asks AS 89 for
    P(S >= round(S)) or, in the lower tail, P(S < round(S) + 2), i.e. P(S <= S_obs)
    as S takes even values only."""
    x, y = pair(condition, data)
    n = len(x)
    rho = pearson_r(stats.rankdata(x), stats.rankdata(y))
    q = (float(n) ** 3 - n) * (1.0 - rho) / 6.0
    lower = not q > (float(n) ** 3 - n) / 6.0
    ties = min(len(np.unique(x)), len(np.unique(y))) < n
    if ties or n > SPEARMAN_EXACT_MAX_N:
        _, p = t_pvalue(rho, n)
        branch = "t approximation"
    else:
        p = min(1.0, 2.0 * prho(n, float(np.floor(q + 0.5)) + 2.0 * lower, lower))
        branch = "exact permutation" if n <= SPEARMAN_ENUMERATE_MAX_N else "Edgeworth series"
    return TestResult(statistic=q, pvalue=float(p), method=SPEARMAN_METHOD, estimate=rho, n=n, statistic_name="S",
                      details={"branch": branch, "ties": bool(ties)})


#: The monotone curves :func:`taskfactory.kit.margin` bends a margin with, the
#: keys of a margin's dgp, and the range of the per-dataset factor on its ``k``.
SHAPES = ("normal", "lognormal", "sinh", "logistic")
MARGIN_KEYS = ("shape", "loc", "scale", "k", "shift")
K_RANGE = (0.8, 1.25)


def margin_factors(rng) -> dict:
    """How strongly each margin bends in one dataset: a factor on the
    scenario's ``k`` of x and of y."""
    return {"k_factor": [float(v) for v in rng.uniform(K_RANGE[0], K_RANGE[1], 2)]}


def check_margin(scenario, role: str, extra_keys: tuple[str, ...] = ()) -> dict:
    """The dgp's margin of ``role`` (x or y), checked: a known shape, loc, a
    positive scale and k, numbers only, no keys but :data:`MARGIN_KEYS` and
    ``extra_keys``. Raises ``ValueError`` naming what is wrong."""
    spec = scenario.dgp[role]
    if not isinstance(spec, dict) or spec.get("shape") not in SHAPES:
        raise ValueError(f"dgp {role} needs a shape, one of {', '.join(SHAPES)}")
    allowed = MARGIN_KEYS + extra_keys
    unknown = sorted(set(spec) - set(allowed))
    if unknown:
        raise ValueError(f"dgp {role} has the unknown key '{unknown[0]}'; allowed: {', '.join(allowed)}")
    for key in allowed[1:]:
        if key in spec:
            require_number(spec[key], f"dgp {role}.{key}")
    if not spec.get("scale", 0) > 0 or not spec.get("k", 1.0) > 0 or "loc" not in spec:
        raise ValueError(f"dgp {role} needs loc, a positive scale and a positive k")
    return spec


#: The coarsest recording step of a series whose changes are tested, in SDs of its level.
FINE_STEP = 0.005


def check_normal_margins(scenario, reach: float = 4.0, fine: bool = False) -> None:
    """The margins of ``x`` and ``y`` given by dgp ``x_mean``, ``x_sd``, ``y_mean``,
    ``y_sd``, checked: a positive SD, and mean +/- ``reach`` SDs inside the
    variable's range; with ``fine`` (a series whose changes are tested), values recorded
    to at most :data:`FINE_STEP` of the SD, so that rounding leaves the
    changes' shape alone (their SD is 0.14 to 0.32 of the levels'). Raises
    ``ValueError`` naming what is wrong."""
    for role in ("x", "y"):
        var = scenario.variable(scenario.roles[role])
        lo, hi = var.range
        mean = require_number(scenario.dgp[f"{role}_mean"], f"dgp {role}_mean")
        sd = require_number(scenario.dgp[f"{role}_sd"], f"dgp {role}_sd")
        if not sd > 0:
            raise ValueError(f"dgp {role}_sd must be positive")
        if not (lo < mean - reach * sd and mean + reach * sd < hi):
            raise ValueError(f"dgp {role}_mean +/- {reach:g} {role}_sd must lie inside the range of '{var.name}'")
        if fine and var.type != "numeric":
            raise ValueError(f"'{var.name}' must be numeric (not integer) for the changes of a series")
        if fine and 10.0 ** -var.decimals > FINE_STEP * sd:
            raise ValueError(f"'{var.name}' is recorded to {var.decimals} decimals, too coarse for the changes of a "
                             f"series of SD {sd:g}: a step of at most {FINE_STEP:g} SD needs more decimals")


def first_differences(condition, data) -> pd.DataFrame:
    """The changes of ``x`` and ``y`` from one period to the next, the rows in
    the order of ``period``: R's ``diff`` on ``d[order(d$period), ]``, kept
    where the periods are consecutive (a period missing from the complete
    rows leaves out the two changes it would join, which span two periods)."""
    period = numeric(data, condition.roles["period"])
    order = np.argsort(period, kind="stable")
    one_step = np.diff(period[order]) == 1.0
    x, y = condition.roles["x"], condition.roles["y"]
    return pd.DataFrame({x: np.diff(numeric(data, x)[order])[one_step], y: np.diff(numeric(data, y)[order])[one_step]})


def of_changes(test, condition, data) -> TestResult:
    """A correlation ``test`` (such as :func:`pearson_test`) run on the
    :func:`first_differences` of ``data``; its ``n`` the rows analysed, as
    every family's is (the changes are fewer: its df and statistic say how many)."""
    return dataclasses.replace(test(condition, first_differences(condition, data)), n=len(data))


#: The range the persistence phi of a pair of series (pearson_differences,
#: spearman_differences) is drawn from: their changes are nearly independent
#: from one period to the next (lag-1 autocorrelation -(1 - phi) / 2).
PERSISTENCE = (0.95, 0.99)


def draw_persistence(rng) -> dict:
    """The persistence ``phi`` both series of one dataset share."""
    return {"phi": float(rng.uniform(*PERSISTENCE))}
