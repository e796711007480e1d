"""Helpers shared by the correlation families (pearson, spearman).

Both read the two columns playing the roles ``x`` and ``y``; both report, as
their canonical or their tempting wrong test, R's ``cor.test(x, y)``: Pearson's
r with the t statistic on n - 2 degrees of freedom. Kendall's tau
(``cor.test(x, y, method = "kendall")``) is accepted beside Spearman's rho.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from ..result import TestResult
from ._common import numeric, require

PEARSON_METHOD = "Pearson's product-moment correlation"


def pair(condition, data) -> tuple[np.ndarray, np.ndarray]:
    """The ``x`` and ``y`` columns as float arrays, checked as ``cor.test`` needs
    them: at least 3 rows, and neither column constant (R's ``cor`` would give
    NA and the test no p-value)."""
    x = numeric(data, condition.roles["x"])
    y = numeric(data, condition.roles["y"])
    require(len(x) >= 3, f"{len(x)} complete rows; a correlation test needs at least 3")
    require(float(np.ptp(x)) > 0.0, f"'{condition.roles['x']}' has no variation")
    require(float(np.ptp(y)) > 0.0, f"'{condition.roles['y']}' has no variation")
    return x, y


def pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's correlation from centred cross-products, kept inside [-1, 1]
    as R's ``cor`` keeps it."""
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
    return t, float(min(1.0, 2.0 * stats.t.sf(abs(t), df)))


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
    p = 2.0 * min(stats.norm.cdf(z), stats.norm.sf(z))
    return TestResult(statistic=z, pvalue=float(p), method=KENDALL_METHOD, estimate=r, n=n, statistic_name="z")
