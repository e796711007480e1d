"""Pearson's product-moment correlation of two roughly normal measurements.

R: ``cor.test(x, y)``: r, t = sqrt(n - 2) r / sqrt(1 - r^2) on n - 2 degrees of
freedom. The data are bivariate normal, the one setting where the t test of r is
exact, so the family has no tempting wrong test.
"""

import numpy as np

from ..effects import t_critical
from ..kit import correlated_normals, finish, time_order
from ..family import Family
from ..registry import register
from ._names import PEARSON
from . import _describe
from ..scenarios import require_direction
from ._correlation import check_normal_margins, pearson_test


def generate(condition, rng):
    """Bivariate normal x and y with correlation ``direction * effect``."""
    dgp, n = condition.dgp, condition.n
    rho = dgp.get("direction", 1) * condition.effect_value
    zx, zy = correlated_normals(rng, n, rho)
    return finish(condition, rng, {
        condition.roles["x"]: dgp["x_mean"] + dgp["x_sd"] * zx,
        condition.roles["y"]: dgp["y_mean"] + dgp["y_sd"] * zy,
        **time_order(condition, n),
    })


class Pearson(Family):
    name = "pearson"
    title = "Pearson correlation test"
    category = "correlation"
    question_kind = "association"
    canonical = "cor.test(x, y)"
    test_name = PEARSON
    roles = {"x": "numeric", "y": "numeric", "period": "period"}
    optional_roles = ("period",)  # a series' days (pearson_differences' scenarios): the test ignores them
    min_n = 40  # spearman's (siblings share their range of N)
    dgp_keys = ("x_mean", "x_sd", "y_mean", "y_sd")
    medium = 0.3
    effect_unit = "Pearson's r"
    effect_bounds = (-1.0, 1.0)
    generate = staticmethod(generate)

    def validate(self, scenario):
        check_normal_margins(scenario)
        require_direction(scenario)

    def analyse(self, condition, data):
        return pearson_test(condition, data)

    def effect_for_z(self, z, n, params):
        """The correlation at the critical value of the t test on n - 2 df:
        r = t / sqrt(n - 2 + t^2), which the sample r reaches about half the time."""
        t = t_critical(z, n - 2)
        return float(t / np.sqrt(n - 2 + t * t))

    def hints(self, condition, data):
        return _describe.association(data, condition.roles["x"], condition.roles["y"], condition.roles.get("period"))


register(Pearson())
