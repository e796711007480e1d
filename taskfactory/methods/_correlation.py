"""Helpers shared by the correlation families (pearson, spearman).

Both read the two columns playing the roles ``x`` and ``y``; both report, as
their canonical or their tempting wrong test, R's ``cor.test(x, y)``: Pearson's
r with the t statistic on n - 2 degrees of freedom.
"""

from __future__ import annotations

import math

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
