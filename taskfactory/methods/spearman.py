"""Spearman's rank correlation of two skewed or heavy-tailed measurements.

R: ``cor.test(x, y, method = "spearman")``. The statistic is
S = (n^3 - n)(1 - rho) / 6, rho the correlation of the ranks. With no ties and
n <= 1290 R takes its "exact" branch, Algorithm AS 89 (Best & Roberts, Applied
Statistics 24, 1975): the permutation distribution of S for n <= 9, an
Edgeworth series for n >= 10. With ties, or n > 1290, R refers
rho / sqrt((1 - rho^2) / (n - 2)) to a t distribution on n - 2 df.

The data come from a Gaussian copula pushed through monotone non-linear margins
(lognormal, sinh, logistic), so the population Spearman correlation is exactly
the effect while the raw scatter is curved, skewed and dotted with a few
high-leverage points. The tempting wrong test is Pearson's ``cor.test(x, y)``;
Kendall's tau (``cor.test(x, y, method = "kendall")``) is accepted beside it.
"""

import numpy as np

from ..kit import correlated_normals, finish, margin, time_order
from ..family import Alternative, Family
from ..registry import register
from ._names import KENDALL, PEARSON, SPEARMAN
from . import _describe
from ..scenarios import require_direction
from ._correlation import (K_RANGE, KENDALL_METHOD, check_margin, kendall_test, margin_factors, pearson_test,
                           spearman_test)


def generate(condition, rng):
    """Gaussian copula with correlation 2 sin(pi rho_s / 6) (whose Spearman
    correlation is rho_s), each margin bent by :func:`margin`."""
    dgp, n = condition.dgp, condition.n
    rho_s = dgp.get("direction", 1) * condition.effect_value
    r = 2.0 * np.sin(np.pi * rho_s / 6.0)
    zx, zy = correlated_normals(rng, n, r)
    kx, ky = condition.params["k_factor"]
    return finish(condition, rng, {
        condition.roles["x"]: margin(zx, dgp["x"], kx),
        condition.roles["y"]: margin(zy, dgp["y"], ky),
        **time_order(condition, n),
    })


class Spearman(Family):
    name = "spearman"
    title = "Spearman rank correlation test"
    category = "correlation"
    question_kind = "association"
    canonical = 'cor.test(x, y, method = "spearman")'
    test_name = SPEARMAN
    naive_name = PEARSON
    roles = {"x": "numeric", "y": "numeric", "period": "period"}
    optional_roles = ("period",)  # a series' days (pearson_differences' scenarios): the test ignores them
    min_n = 40  # where a normality test at 2.5 % per margin sees the skew in 90 % of datasets
    dgp_keys = ("x", "y")
    naive_method = "Pearson correlation test, cor.test(x, y)"
    accepted = (Alternative(method=KENDALL_METHOD, call='cor.test(x, y, method = "kendall")', run=kendall_test,
                            r_code='res <- cor.test(d[["{x}"]], d[["{y}"]], method = "kendall")', name=KENDALL),)
    medium = 0.3
    effect_unit = "Spearman's rho"
    effect_bounds = (-1.0, 1.0)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return margin_factors(rng)

    def validate(self, scenario):
        for role in ("x", "y"):
            spec = check_margin(scenario, role)
            lo, hi = scenario.variable(scenario.roles[role]).range
            with np.errstate(over="ignore"):
                ends = margin(np.array([-4.0, 4.0]), spec, K_RANGE[1])
            if not (lo < ends[0] and ends[1] < hi):
                raise ValueError(f"the margin of {role} at normal scores +/- 4 leaves the range of '{scenario.roles[role]}'")
        require_direction(scenario)

    def analyse(self, condition, data):
        return spearman_test(condition, data)

    def naive(self, condition, data):
        return pearson_test(condition, data)

    def effect_for_z(self, z, n, params):
        """Spearman's rho whose Fisher z sits ``z`` standard errors from zero, with the
        variance of the Fisher z of Spearman's rho, about 1.06 / (n - 3)."""
        return float(np.tanh(z * np.sqrt(1.06 / (n - 3))))

    def hints(self, condition, data):
        return _describe.association(data, condition.roles["x"], condition.roles["y"], condition.roles.get("period"))


register(Spearman())
