"""t-tests on means computed as R's ``t.test.default`` computes them.

Shared by the one-sample and paired families: R runs a paired test as a
one-sample test of the differences, and the paired family's tempting wrong
test is Welch's two-sample test on the same two columns.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..result import TestResult
from ._common import require, welch_df

EPS = float(np.finfo(float).eps)


def _two_sided_p(t: float, df: float) -> float:
    """R's ``2 * pt(-abs(t), df)``."""
    return float(2.0 * stats.t.sf(abs(t), df))


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


def welch_two_sample(x: np.ndarray, y: np.ndarray) -> TestResult:
    """Welch's t-test of ``mean(x) == mean(y)``; ``estimate`` is ``mean(x) - mean(y)``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    require(len(x) >= 2 and len(y) >= 2, "each sample needs at least 2 values")
    mx, my = float(x.mean()), float(y.mean())
    stderr = float(np.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y)))
    require(stderr > 0.0 and not stderr < 10.0 * EPS * max(abs(mx), abs(my)), "the data are essentially constant")
    t = (mx - my) / stderr
    df = welch_df(x, y)
    return TestResult(statistic=t, pvalue=_two_sided_p(t, df), method="Welch Two Sample t-test", df=(df,),
                      estimate=mx - my, n=len(x) + len(y), statistic_name="t")
