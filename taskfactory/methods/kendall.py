"""Kendall's rank correlation of two skewed measurements recorded coarsely, so
that many values tie.

R: ``cor.test(x, y, method = "kendall")`` with R's defaults: tau-b; the exact
null distribution of the number of concordant pairs when n < 50 and neither
variable has ties, else S referred to a normal distribution with the
tie-corrected variance and no continuity correction. The data here always tie,
so R takes the normal branch.

The data come from a Gaussian copula with correlation sin(pi tau / 2) (whose
Kendall correlation is tau), each margin bent by the scenario's monotone
non-linear curve (as for spearman) and rounded to the scenario's ``step``: the
scatter is curved and skewed, and most values share their value with others.
The tempting wrong test is Pearson's ``cor.test(x, y)``; Spearman's rho, whose
t approximation R uses with ties, is accepted beside Kendall's tau.
"""

import numpy as np

from ..family import Alternative, Family
from ..kit import correlated_normals, finish, margin, time_order
from ..registry import register
from ..scenarios import require_direction, require_number
from . import _describe
from ._correlation import (K_RANGE, SPEARMAN_METHOD, check_margin, kendall_test, margin_factors, pearson_test,
                           spearman_test)
from ._names import KENDALL, PEARSON, SPEARMAN

#: Fewest and most distinct values a margin may take between normal scores -2 and 2.
LEVELS = (5, 40)


def coarse(z, spec, factor):
    """The margin of :func:`taskfactory.kit.margin`, rounded to the nearest ``step``."""
    step = spec["step"]
    return np.round(margin(z, spec, factor) / step) * step


def generate(condition, rng):
    """Gaussian copula with correlation sin(pi tau / 2), each margin bent and
    rounded by :func:`coarse`."""
    dgp, n = condition.dgp, condition.n
    tau = dgp.get("direction", 1) * condition.effect_value
    r = np.sin(np.pi * tau / 2.0)
    zx, zy = correlated_normals(rng, n, r)
    kx, ky = condition.params["k_factor"]
    return finish(condition, rng, {
        condition.roles["x"]: coarse(zx, dgp["x"], kx),
        condition.roles["y"]: coarse(zy, dgp["y"], ky),
        **time_order(condition, n),
    })


class Kendall(Family):
    name = "kendall"
    title = "Kendall rank correlation test"
    category = "correlation"
    question_kind = "association"
    canonical = 'cor.test(x, y, method = "kendall")'
    test_name = KENDALL
    naive_name = PEARSON
    roles = {"x": "numeric", "y": "numeric", "period": "period"}
    optional_roles = ("period",)  # a series' days (pearson_differences' scenarios): the test ignores them
    min_n = 40  # spearman's (siblings share their range of N)
    dgp_keys = ("x", "y")
    naive_method = "Pearson correlation test, cor.test(x, y)"
    accepted = (Alternative(method=SPEARMAN_METHOD, call='cor.test(x, y, method = "spearman")', run=spearman_test,
                            r_code='res <- cor.test(d[["{x}"]], d[["{y}"]], method = "spearman")', name=SPEARMAN),)
    medium = 0.2
    effect_unit = "Kendall's tau"
    effect_bounds = (-1.0, 1.0)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return margin_factors(rng)

    def validate(self, scenario):
        for role in ("x", "y"):
            spec = check_margin(scenario, role, ("step",))
            if not require_number(spec.get("step", 0), f"dgp {role}.step") > 0:
                raise ValueError(f"dgp {role} needs a positive step (the values are rounded to it)")
            var = scenario.variable(scenario.roles[role])
            lo, hi = var.range
            with np.errstate(over="ignore"):
                ends = coarse(np.array([-4.0, 4.0]), spec, K_RANGE[1])
            if not (lo <= ends[0] and ends[1] <= hi):
                raise ValueError(f"the margin of {role} at normal scores +/- 4 leaves the range of '{var.name}'")
            for factor in K_RANGE:
                levels = len(np.unique(coarse(np.linspace(-2.0, 2.0, 2001), spec, factor)))
                if not LEVELS[0] <= levels <= LEVELS[1]:
                    raise ValueError(f"dgp {role}.step gives {levels} distinct values between normal scores -2 and 2; "
                                     f"ties need {LEVELS[0]} to {LEVELS[1]}")
            if round(spec["step"], var.decimals) != spec["step"]:
                raise ValueError(f"dgp {role}.step has more decimals than '{var.name}' ({var.decimals})")
        require_direction(scenario)

    def analyse(self, condition, data):
        return kendall_test(condition, data)

    def naive(self, condition, data):
        return pearson_test(condition, data)

    def effect_for_z(self, z, n, params):
        """Kendall's tau whose S sits ``z`` null standard deviations from zero,
        tau = z sqrt(2 (2n + 5) / (9 n (n - 1))), as without ties (ties shrink
        tau-b's numerator and its null SD alike)."""
        return float(z * np.sqrt(2.0 * (2 * n + 5) / (9.0 * n * (n - 1))))

    def hints(self, condition, data):
        return _describe.association(data, condition.roles["x"], condition.roles["y"], condition.roles.get("period"))


register(Kendall())
