"""t-tests on means computed as R's ``t.test.default`` computes them: the one
implementation of the one-sample, paired, Welch and Student t-tests.

R runs a paired test as a one-sample test of the differences; the two-sample
test is Welch's unless ``equal_var`` (R's ``var.equal = TRUE``).
"""

from __future__ import annotations

import numpy as np

from ..result import TestResult
from ._common import require, welch_df
from ._dist import t_sf

EPS = float(np.finfo(float).eps)


def _two_sided_p(t: float, df: float) -> float:
    """R's ``2 * pt(-abs(t), df)``."""
    return float(2.0 * t_sf(abs(t), df))


def one_sample(x: np.ndarray, mu: float, method: str) -> TestResult:
    """The t-test of ``mean(x) == mu``; ``estimate`` is the mean of ``x``.

    Raises :class:`DataError` where R stops (fewer than 2 values, "data are
    essentially constant") and where the standard error is exactly zero, which
    R lets through to an infinite or undefined statistic.
    """
    x = np.asarray(x, dtype=float)
    n = len(x)
    require(n >= 2, "the test needs at least 2 values")
    mx = float(x.mean())
    stderr = float(np.sqrt(x.var(ddof=1) / n))
    require(stderr > 0.0 and not stderr < 10.0 * EPS * abs(mx), "the data are essentially constant")
    t = (mx - float(mu)) / stderr
    df = float(n - 1)
    return TestResult(statistic=t, pvalue=_two_sided_p(t, df), method=method, df=(df,), estimate=mx, n=n,
                      statistic_name="t")


def two_sample(x: np.ndarray, y: np.ndarray, equal_var: bool = False) -> TestResult:
    """The t-test of ``mean(x) == mean(y)``: Welch's, or Student's with a pooled
    variance when ``equal_var``; ``estimate`` is ``mean(x) - mean(y)``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    nx, ny = len(x), len(y)
    require(nx >= 2 and ny >= 2, "each sample needs at least 2 values")
    mx, my = float(x.mean()), float(y.mean())
    vx, vy = x.var(ddof=1), y.var(ddof=1)
    if equal_var:
        df = float(nx + ny - 2)
        pooled = ((nx - 1) * vx + (ny - 1) * vy) / df
        stderr = float(np.sqrt(pooled * (1.0 / nx + 1.0 / ny)))
        method = "Two Sample t-test"
    else:
        df = welch_df(x, y)
        stderr = float(np.sqrt(vx / nx + vy / ny))
        method = "Welch Two Sample t-test"
    require(stderr > 0.0 and not stderr < 10.0 * EPS * max(abs(mx), abs(my)), "the data are essentially constant")
    t = (mx - my) / stderr
    return TestResult(statistic=t, pvalue=_two_sided_p(t, df), method=method, df=(df,), estimate=mx - my,
                      n=nx + ny, statistic_name="t")
