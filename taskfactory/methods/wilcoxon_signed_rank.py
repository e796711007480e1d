"""Wilcoxon signed rank test: the same units measured before and after.

R: ``wilcox.test(after, before, paired = TRUE)`` with its defaults: the
differences ``after - before`` lose their zeros; the p-value is exact when
fewer than 50 differences remain and neither zeros nor tied absolute
differences occurred, otherwise it is the normal approximation with
continuity correction and tie-corrected variance.

Each unit has a true level s; each of its two measurements adds an
independent exponential error (skewed, as for readings that can only
overshoot), and the after measurement adds a shift (subtracts it when the
scenario's ``dgp.direction`` is -1). A share of the units is
measured under poor conditions, with an error scale several times larger. The
difference ``after - before`` is then a scale mixture of Laplace variables:
symmetric about the shift, with heavy tails that cost the tempting paired
t-test much of its power against the ranks. With no shift the two
measurements of a unit are exchangeable, so the differences are symmetric
about zero even after rounding, as the signed-rank null requires.

The effect is P(D > 0) for a difference D. For a Laplace difference with
scale b and location mu >= 0, P(D > 0) = 1 - exp(-mu / b) / 2; the sum of two
independent Laplace differences with scales b1 and b2 exceeds t >= 0 with
probability exp(-t / b) (2 + t / b) / 4 when b1 = b2 = b, and
(b1^2 exp(-t / b1) - b2^2 exp(-t / b2)) / (2 (b1^2 - b2^2)) otherwise; mixing
these over the two kinds of unit gives P(D > 0) and P(D1 + D2 > 0) in closed
form.
"""

import numpy as np
from scipy import optimize

from ..kit import finish
from ..family import Alternative, Family
from ..registry import register
from ._names import PAIRED_T, SIGNED_RANK, SIGNED_RANK_CORRECTED
from . import _describe
from ..scenarios import require_direction, require_number
from ._common import check_paired, numeric, require
from ._ranks import signed_rank_test
from ._ttest import one_sample


def _positive_share(mu, share, factor):
    """P(D > 0) for a shift of ``mu`` base error scales (mu >= 0)."""
    return 1.0 - 0.5 * ((1.0 - share) * np.exp(-mu) + share * np.exp(-mu / factor))


def _shift(theta, share, factor):
    """The shift, in base error scales, that makes P(D > 0) = theta (bisection
    on the decreasing tail probability; negative below theta = 1/2)."""
    if theta < 0.5:
        return -_shift(1.0 - theta, share, factor)
    lo, hi = 0.0, 1.0
    while _positive_share(hi, share, factor) < theta and hi < 1e6:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _positive_share(mid, share, factor) < theta:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _pair_tail(t, b1, b2):
    """P(L1 + L2 > t), t >= 0, for independent centred Laplace variables with
    scales b1 and b2."""
    if b1 == b2:
        return 0.25 * np.exp(-t / b1) * (2.0 + t / b1)
    return (b1 * b1 * np.exp(-t / b1) - b2 * b2 * np.exp(-t / b2)) / (2.0 * (b1 * b1 - b2 * b2))


def _walsh_positive_share(mu, share, factor):
    """P(D1 + D2 > 0) for a shift of ``mu`` base error scales (mu >= 0)."""
    kinds = ((1.0 - share, 1.0), (share, factor))
    return 1.0 - sum(w1 * w2 * _pair_tail(2.0 * mu, b1, b2) for w1, b1 in kinds for w2, b2 in kinds)


def generate(condition, rng):
    dgp, params, n = condition.dgp, condition.params, condition.n
    b = dgp["noise"]
    share, factor = params["noisy_share"], params["noisy_factor"]
    scale = b * np.where(rng.random(n) < share, factor, 1.0)
    shift = dgp.get("direction", 1) * b * _shift(condition.effect_value, share, factor)
    level = rng.normal(dgp["mean"] - b * (1.0 - share + share * factor), dgp["sd"], n)
    before = level + scale * rng.standard_exponential(n)
    after = level + scale * rng.standard_exponential(n) + shift
    return finish(condition, rng, {
        condition.roles["before"]: before,
        condition.roles["after"]: after,
    })


def _differences(condition, data):
    return numeric(data, condition.roles["after"]) - numeric(data, condition.roles["before"])


def large_sample(condition, data):
    """``wilcox.test(after, before, paired = TRUE, exact = FALSE)``: the normal
    approximation even where R's default is exact (a convention, so it is accepted)."""
    return signed_rank_test(_differences(condition, data), exact=False)


class WilcoxonSignedRank(Family):
    name = "wilcoxon_signed_rank"
    title = "Wilcoxon signed rank test"
    category = "paired"
    question_kind = "paired"
    canonical = "wilcox.test(after, before, paired = TRUE)"
    test_name = SIGNED_RANK
    naive_name = PAIRED_T
    roles = {"before": "numeric", "after": "numeric"}
    min_n = 60  # where a normality test at 5 % sees the heavy tails in 90 % of datasets
    dgp_keys = ("mean", "sd", "noise")
    naive_method = "Paired t-test"
    accepted = (Alternative(method="Wilcoxon signed rank test with continuity correction",
                            call="wilcox.test(after, before, paired = TRUE, exact = FALSE)", run=large_sample,
                            r_code='res <- wilcox.test(d[["{after}"]], d[["{before}"]], paired = TRUE, exact = FALSE)',
                            name=SIGNED_RANK_CORRECTED),)
    medium = 0.64
    effect_unit = "P(D > 0) for the paired difference D = after - before (before - after when dgp direction is -1)"
    null_value = 0.5
    effect_bounds = (0.0, 1.0)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Share of units measured under poor conditions, and how many times larger
        their error scale is."""
        return {"noisy_share": float(rng.uniform(0.1, 0.25)), "noisy_factor": float(rng.uniform(3.0, 5.0))}

    def validate(self, scenario):
        """Before and after must be distinct columns with one type, range and
        rounding, so that under the null the released pair stays exchangeable."""
        check_paired(scenario)
        require_direction(scenario)
        if not require_number(scenario.dgp["noise"], "dgp noise") > 0:
            raise ValueError("dgp noise must be positive")

    def analyse(self, condition, data):
        return signed_rank_test(_differences(condition, data))

    def naive(self, condition, data):
        d = _differences(condition, data)
        require(d.size >= 2 and float(np.ptp(d)) > 0.0, "the differences have no variation")
        return one_sample(d, 0.0, "Paired t-test")

    def effect_for_z(self, z, n, params):
        """P(D > 0) whose expected V lies z null standard deviations above its null
        mean: E[V] = n P(D > 0) + n (n - 1) / 2 P(D1 + D2 > 0), against
        n (n + 1) / 4 and Var0[V] = n (n + 1) (2n + 1) / 24."""
        share, factor = params["noisy_share"], params["noisy_factor"]
        target = n * (n + 1) / 4.0 + z * np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)

        def gap(mu):
            pairs = n * (n - 1) / 2.0
            return n * _positive_share(mu, share, factor) + pairs * _walsh_positive_share(mu, share, factor) - target

        if gap(200.0) <= 0.0:
            return 0.99
        mu = optimize.brentq(gap, 0.0, 200.0, xtol=1e-12)
        return float(min(_positive_share(mu, share, factor), 0.99))

    def hints(self, condition, data):
        return _describe.pairs(data, condition.roles["before"], condition.roles["after"])


register(WilcoxonSignedRank())
