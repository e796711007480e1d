"""The exact binomial test of a proportion against a stated rate.

R: ``binom.test(sum(outcome == positive), n, p = p0)``. The two-sided p adds
to the observed tail the probabilities of the outcomes on the other side that
are no more likely than the observed one (R's relative tolerance 1e-7); the
estimate is the sample proportion. The data are a rare event in a modest
sample: with few expected events the normal-approximation (Wald) z, the
tempting test, misleads, and with no event at all it rejects outright. The rate
differs from ``p0`` by Cohen's h on the arcsine scale, in the scenario's
direction.
"""

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from ..effects import effect_for_power
from ..family import Family
from ..kit import column_spec, finish
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction, require_number
from ._common import indicator, require
from ._names import BINOMIAL, PROP_Z_ONE
from . import _describe

REL_ERR = 1.0 + 1e-7
METHOD = "Exact binomial test"


def rate(p0, h):
    """The proportion Cohen's h away from ``p0`` on the arcsine scale (h within its bounds)."""
    phi = np.arcsin(np.sqrt(p0)) + h / 2.0
    return float(np.sin(phi) ** 2)


def generate(condition, rng):
    params = condition.params
    positive = condition.roles["positive"]
    negative = next(lv for lv in column_spec(condition, "outcome")["levels"] if lv != positive)
    chance = rate(params["p0"], params["direction"] * condition.effect_value)
    success = rng.random(condition.n) < chance
    return finish(condition, rng, {condition.roles["outcome"]: np.where(success, positive, negative).astype(object)})


def binom_test(x: int, n: int, p: float) -> TestResult:
    """R's ``binom.test(x, n, p)``, two-sided."""
    d = stats.binom.pmf(x, n, p)
    m = n * p
    if x == m:
        pvalue = 1.0
    elif x < m:
        i = np.arange(math.ceil(m), n + 1)
        y = int(np.sum(stats.binom.pmf(i, n, p) <= d * REL_ERR))
        pvalue = float(stats.binom.cdf(x, n, p) + stats.binom.sf(n - y, n, p))
    else:
        i = np.arange(0, math.floor(m) + 1)
        y = int(np.sum(stats.binom.pmf(i, n, p) <= d * REL_ERR))
        pvalue = float(stats.binom.cdf(y - 1, n, p) + stats.binom.sf(x - 1, n, p))
    return TestResult(statistic=float(x), pvalue=min(1.0, pvalue), method=METHOD, estimate=x / n, n=n,
                      statistic_name="number of successes")


def wald_z(x: int, n: int, p: float) -> TestResult:
    """The textbook normal-approximation z, (p_hat - p0) / sqrt(p_hat (1 - p_hat) / n):
    with no event (or no non-event) its standard error is 0, the statistic is
    undefined (None) and the test rejects outright (p = 0)."""
    estimate = x / n
    se = math.sqrt(estimate * (1.0 - estimate) / n)
    if se == 0.0:
        return TestResult(statistic=None, pvalue=0.0, method="Wald z test of one proportion", estimate=estimate, n=n,
                          statistic_name="z")
    z = (estimate - p) / se
    return TestResult(statistic=z, pvalue=float(2.0 * stats.norm.sf(abs(z))),
                      method="Wald z test of one proportion", estimate=estimate, n=n, statistic_name="z")


@lru_cache(maxsize=512)
def rejection_region(n: int, p: float, alpha: float = 0.05) -> np.ndarray:
    """``reject[x]``: the exact test of x successes in n rejects at ``alpha``
    (the p of each x as the mass of the outcomes no more likely than it, which
    is R's rule but for ties within its tolerance; for calibration)."""
    d = stats.binom.pmf(np.arange(n + 1), n, p)
    order = np.sort(d)
    p_values = np.cumsum(order)[np.searchsorted(order, d * REL_ERR, side="right") - 1]
    return p_values < alpha


def power(n: int, p0: float, p: float, alpha: float = 0.05) -> float:
    """The exact probability that the test of p0 rejects when the rate is p."""
    return float(stats.binom.pmf(np.arange(n + 1), n, p) @ rejection_region(n, p0, alpha))


def _counts(condition, data) -> tuple[int, int]:
    y = indicator(data, condition.roles["outcome"], condition.roles["positive"])
    require(len(y) >= 1, "the test needs at least one row")
    return int(np.sum(y)), len(y)


class BinomialExact(Family):
    name = "binomial_exact"
    title = "Exact binomial test"
    category = "proportions"
    question_kind = "one_proportion"
    null_p = "discrete"
    canonical = "binom.test(sum(outcome == positive), n, p = p0)"
    test_name = BINOMIAL
    roles = {"outcome": "category", "positive": "level", "p0": "value"}
    value_domains = {"p0": (0.0, 1.0)}   # at 0 or 1 every sample gives p = 0 or 1: no test
    min_n = 20
    naive_method = "Wald z test of one proportion (normal approximation, standard error from the sample)"
    naive_name = PROP_Z_ONE
    medium = 0.5
    effect_unit = "Cohen's h against p0, in the scenario's direction"
    effect_bounds = (0.0, math.pi)
    generate = staticmethod(generate)

    def validate(self, scenario):
        p0 = require_number(scenario.roles["p0"], "p0")
        if not 0.001 <= p0 <= 0.5:
            raise ValueError(f"p0 ({p0!r}) must be a rate from 0.001 to 0.5 (name the rarer outcome positive)")
        outcome = scenario.variable(scenario.roles["outcome"])
        if len(outcome.levels) != 2 or scenario.roles["positive"] not in outcome.levels:
            raise ValueError(f"outcome '{outcome.name}' needs 2 levels, one of them the positive "
                             f"({scenario.roles['positive']!r})")
        require_direction(scenario)

    def analyse(self, condition, data):
        x, n = _counts(condition, data)
        return binom_test(x, n, float(condition.roles["p0"]))

    def naive(self, condition, data):
        x, n = _counts(condition, data)
        return wald_z(x, n, float(condition.roles["p0"]))

    def draw_params(self, scenario, n, rng):
        """The stated rate and the direction of the effect (the scenario's)."""
        return {"p0": float(scenario.roles["p0"]), "direction": scenario.dgp.get("direction", 1)}

    def effect_for_z(self, z, n, params):
        """Cohen's h at which the exact test, over all outcomes of n trials,
        rejects as often as a z test whose statistic averages ``z``; the test
        is discrete, so no normal approximation gets this right. Where the
        rate reaches 0 or 1 first, the largest h short of it."""
        p0, direction = params["p0"], params["direction"]
        phi0 = math.asin(math.sqrt(p0))
        limit = 0.999 * 2.0 * (math.pi / 2.0 - phi0 if direction > 0 else phi0)
        return effect_for_power(lambda h: power(n, p0, rate(p0, direction * h)), z, limit)

    def hints(self, condition, data):
        return _describe.proportion(data, condition.roles["outcome"], condition.roles["positive"],
                                    float(condition.roles["p0"]))


register(BinomialExact())
