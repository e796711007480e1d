"""Pearson's chi-square goodness-of-fit test of one categorical variable against
stated shares.

R: ``chisq.test(table(outcome), p = p0)``, ``p0`` the stated share of each level
(the role ``stated``, a mapping of level to share; levels absent from the sample
count zero). X-squared = sum (O - E)^2 / E on k - 1 degrees of freedom, no
continuity correction. R warns that the approximation may be incorrect when an
expected count is below 5; such a sample is redrawn. There is no tempting
wrong test of the same data.

The data are multinomial with probabilities ``p0 + w d``: ``d`` is the
scenario's direction of departure (``deviation``, one number per level),
centred to sum to zero and scaled to unit weighted norm, sum d^2 / p0 = 1, so
that Cohen's w is exactly the effect.
"""

import math

import numpy as np

from ..effects import chi2_noncentrality
from ..family import Family
from ..kit import finish
from ..registry import register
from ..result import TestResult
from ..scenarios import require_number
from . import _describe
from ._common import require
from ._names import CHI_SQUARE_GOF
from ._dist import chi2_sf

METHOD = "Chi-squared test for given probabilities"
#: The smallest stated share a scenario may give: at the minimum N every level expects 6.
MIN_SHARE = 0.1
MIN_N = 60
#: Cohen's w every scenario's departure must reach with all probabilities positive.
W_REACH = 0.45


def departure(stated, deviation):
    """The scenario's direction of departure, centred to sum to zero and scaled
    so that sum d^2 / p0 = 1 (a shift of w along it has Cohen's w = w)."""
    p0 = np.asarray(stated, dtype=float)
    d = np.asarray(deviation, dtype=float)
    d = d - p0 * d.sum()  # sums to zero since p0 sums to one
    return d / np.sqrt(np.sum(d * d / p0))


def generate(condition, rng):
    """Multinomial counts over the stated levels with probabilities p0 + w d."""
    stated = condition.roles["stated"]
    probs = np.asarray(list(stated.values()), dtype=float) + condition.effect_value * np.asarray(
        condition.params["departure"])
    counts = rng.multinomial(condition.n, probs / probs.sum())
    levels = np.asarray(list(stated), dtype=object)
    return finish(condition, rng, {condition.roles["outcome"]: np.repeat(levels, counts)})


class ChiSquareGof(Family):
    name = "chi_square_gof"
    title = "Chi-square goodness-of-fit test"
    category = "contingency"
    question_kind = "stated_shares"
    canonical = "chisq.test(table(outcome), p = p0)"
    test_name = CHI_SQUARE_GOF
    roles = {"outcome": "category", "stated": "shares"}
    min_n = MIN_N
    dgp_keys = ("deviation",)
    medium = 0.3
    effect_unit = "Cohen's w"
    effect_bounds = (0.0, W_REACH)
    r_pvalue = "res$p.value"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return {"departure": departure(list(scenario.roles["stated"].values()), scenario.dgp["deviation"]).tolist()}

    def validate(self, scenario):
        stated = scenario.roles["stated"]
        levels = scenario.variable(scenario.roles["outcome"]).levels
        if sorted(stated) != sorted(levels):
            raise ValueError(f"role 'stated' must give a share to each level of '{scenario.roles['outcome']}' "
                             f"({', '.join(levels)})")
        if min(stated.values()) < MIN_SHARE:
            raise ValueError(f"every stated share must be at least {MIN_SHARE:g}")
        deviation = scenario.dgp["deviation"]
        if not (isinstance(deviation, list) and len(deviation) == len(stated)):
            raise ValueError("dgp deviation needs one number per stated share, in their order")
        for x in deviation:
            require_number(x, "dgp deviation")
        d = np.asarray(deviation, dtype=float)
        p0 = np.asarray(list(stated.values()))
        if abs(float(np.sum(d - p0 * d.sum()))) > 1e-12 or not np.any(np.abs(d - p0 * d.sum()) > 1e-9):
            raise ValueError("dgp deviation must point away from the stated shares")
        if not np.all(p0 + W_REACH * departure(p0, d) > 0.0):
            raise ValueError(f"dgp deviation leaves a level without probability at Cohen's w = {W_REACH:g}")
        if "{stated}" not in scenario.context + scenario.question:
            raise ValueError("the context or question must state the shares, as {stated}")

    def analyse(self, condition, data):
        stated = condition.roles["stated"]
        y = data[condition.roles["outcome"]].astype(str)
        unknown = sorted(set(y) - set(stated))
        require(not unknown, f"'{condition.roles['outcome']}' holds the level '{unknown[0] if unknown else ''}', "
                             "which the stated shares give none")
        counts = y.value_counts().reindex(list(stated), fill_value=0).to_numpy(dtype=float)
        expected = counts.sum() * np.asarray(list(stated.values()), dtype=float)
        require(bool(np.all(expected >= 5.0)), f"an expected count is below 5 ({expected.min():.3g}); "
                                              "R warns that the chi-square approximation may be incorrect")
        statistic = float(np.sum((counts - expected) ** 2 / expected))
        df = len(stated) - 1
        return TestResult(statistic=statistic, pvalue=float(chi2_sf(statistic, df)), method=METHOD,
                          df=(float(df),), n=int(counts.sum()), statistic_name="X-squared")

    def effect_for_z(self, z, n, params):
        """Cohen's w: X-squared has non-centrality N w^2 on k - 1 df."""
        return float(math.sqrt(chi2_noncentrality(z, len(params["departure"]) - 1) / n))

    def hints(self, condition, data):
        return _describe.shares(data, condition.roles["outcome"], condition.roles["stated"])


register(ChiSquareGof())
