"""Sign test: the same units measured before and after, the changes skewed.

R: ``binom.test(sum(after > before), sum(after != before))``: of the units
whose measurement changed, the number that rose, against a binomial with
p = 1/2 (two-sided, R's rule for the opposite tail); units that did not change
drop out.

Each unit's before measurement is drawn as ``wilcoxon_signed_rank``'s (a true
level plus an exponential error, several times larger for a share of units).
Its change D = after - before is skewed: most units change a little, up or
down, and a minority rise by much more, as where a treatment helps a few a lot
and leaves the rest about where they were. D is a Weibull variable of shape
0.55 to 0.8 (drawn per dataset) less a threshold w, times a scale that gives
the changes the spread of the signed-rank sibling's; w sets P(D > 0) =
exp(-w^shape), so with no effect w is the Weibull median and half the units
rise. The median change is then 0 while the long upper tail puts the mean
change and the median of the Walsh averages (the shift the signed-rank test
estimates) above 0. The tempting wrong test is the Wilcoxon signed rank test,
whose assumption of changes symmetric about their centre the skew breaks: it
rejects a true null of no typical change, and the paired t-test more often.

The effect is P(D > 0) (P(before - after > 0) when the scenario's
``dgp.direction`` is -1; the long tail points up either way).
"""

import math

import numpy as np
from scipy import special

from ..family import Family
from ..kit import finish
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction, require_number
from ..testnames import TestName
from . import _describe
from ._common import check_paired, numeric, require
from ._names import SIGNED_RANK
from ._ranks import signed_rank_test
from .binomial_exact import binom_test

#: Its names; R prints the call's method as "Exact binomial test", which on a
#: paired task names this test (a tie with binomial_exact's label goes to the
#: task's own family).
SIGN_TEST = TestName("Exact sign test", (
    "sign test", "exact sign test", "binomial sign test", "sign test of the difference", "sign test paired",
    "paired sign test", "binom test of the sign", "binomial test of the sign", "exact binomial test of the sign",
    "binom test of the positive difference", "binomial test of the positive difference", "exact binomial test",
    "binom test sum after before"))
METHOD = "Exact sign test (binomial test of the positive differences)"
#: The Weibull shape of the changes, drawn per dataset.
SHAPE = (0.55, 0.8)


def generate(condition, rng):
    """Before as the signed-rank sibling draws it; after = before + D, D a
    scaled Weibull variable less the threshold whose upper tail probability is
    the share of units that rise."""
    dgp, params, n = condition.dgp, condition.params, condition.n
    b, k = dgp["noise"], params["shape"]
    share, factor = params["noisy_share"], params["noisy_factor"]
    scale = b * np.where(rng.random(n) < share, factor, 1.0)
    level = rng.normal(dgp["mean"] - b * (1.0 - share + share * factor), dgp["sd"], n)
    before = level + scale * rng.standard_exponential(n)
    theta = condition.effect_value if dgp.get("direction", 1) == 1 else 1.0 - condition.effect_value
    threshold = (-np.log(theta)) ** (1.0 / k)
    change = b * params["spread"] * (rng.weibull(k, n) - threshold)
    return finish(condition, rng, {
        condition.roles["before"]: before,
        condition.roles["after"]: before + change,
    })


def _signs(condition, data) -> tuple[int, int]:
    """The number of units whose after value exceeds the before value, and of
    those whose values differ."""
    after, before = numeric(data, condition.roles["after"]), numeric(data, condition.roles["before"])
    require(after.size > 0, "no paired observations")
    changed = int(np.sum(after != before))
    require(changed > 0, "no unit's measurement changed")
    return int(np.sum(after > before)), changed


def sign_test(condition, data) -> TestResult:
    """``binom.test(sum(after > before), sum(after != before))``."""
    rose, changed = _signs(condition, data)
    res = binom_test(rose, changed, 0.5)
    return TestResult(statistic=res.statistic, pvalue=res.pvalue, method=METHOD, estimate=res.estimate,
                      n=len(data), statistic_name="number of successes")


def weibull_sd(shape: float) -> float:
    """The standard deviation of a Weibull variable of unit scale."""
    return math.sqrt(special.gamma(1.0 + 2.0 / shape) - special.gamma(1.0 + 1.0 / shape) ** 2)


class SignTest(Family):
    name = "sign_test"
    title = "Exact sign test"
    category = "paired"
    question_kind = "paired"
    canonical = "binom.test(sum(after > before), sum(after != before))"
    test_name = SIGN_TEST
    naive_name = SIGNED_RANK
    naive_method = "Wilcoxon signed rank test, assuming changes symmetric about their centre"
    roles = {"before": "numeric", "after": "numeric"}
    min_n = 60  # wilcoxon_signed_rank's (siblings share their range of N)
    dgp_keys = ("mean", "sd", "noise")
    medium = 0.64
    effect_unit = "P(D > 0) for the paired difference D = after - before (before - after when dgp direction is -1)"
    null_value = 0.5
    effect_bounds = (0.0, 1.0)
    null_p = "discrete"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The before errors as the signed-rank sibling draws them, the Weibull
        shape of the changes and the scale (in units of dgp noise) that gives
        them the SD of that sibling's differences, b sqrt(2 (1 - s + s f^2))."""
        share, factor = float(rng.uniform(0.1, 0.25)), float(rng.uniform(3.0, 5.0))
        shape = float(rng.uniform(*SHAPE))
        spread = math.sqrt(2.0 * (1.0 - share + share * factor * factor)) / weibull_sd(shape)
        return {"noisy_share": share, "noisy_factor": factor, "shape": shape, "spread": spread}

    def validate(self, scenario):
        check_paired(scenario)
        require_direction(scenario)
        if not require_number(scenario.dgp["noise"], "dgp noise") > 0:
            raise ValueError("dgp noise must be positive")

    def analyse(self, condition, data):
        return sign_test(condition, data)

    def naive(self, condition, data):
        after, before = numeric(data, condition.roles["after"]), numeric(data, condition.roles["before"])
        return signed_rank_test(after - before)

    def effect_for_z(self, z, n, params):
        """The count that rose is binomial(n, theta): its z against p = 1/2 is
        about (2 theta - 1) sqrt(n)."""
        return float(min(0.5 + 0.5 * z / math.sqrt(n), 0.99))

    def hints(self, condition, data):
        return _describe.pairs(data, condition.roles["before"], condition.roles["after"])


register(SignTest())
