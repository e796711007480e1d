"""Pearson's correlation of the day-to-day changes of two persistent series.

R: with the rows in period order, ``cor.test(diff(x), diff(y))``: r of the
changes from one period to the next (n - 1 of them in a complete series), t
on their count less 2 degrees of freedom. A period the canonical handling
leaves out drops the two changes it would join, since they span two periods:
``one_step <- diff(d$period) == 1`` selects the rest.

Both series wander: each is a stationary AR(1) process with one persistence
phi, drawn per dataset between 0.95 and 0.99, whose innovations correlate at
the effect, so the first differences correlate at exactly the effect (with
one phi, corr(dx, dy) = rho) and are nearly independent from day to day (their
lag-1 autocorrelation is -(1 - phi) / 2). The levels correlate at the effect
too, but a correlation of two persistent series varies far more than
independent pairs allow: the tempting wrong test, Pearson's ``cor.test(x, y)``
on the levels, rejects a true null in about half of the datasets (Yule's
nonsense correlations). Its siblings' data are independent pairs in the same
scenarios, whose lag-1 autocorrelations are near 0.
"""

import numpy as np

from ..effects import t_critical
from ..family import Family
from ..kit import ar1, correlated_normals, finish
from ..registry import register
from ..scenarios import require_direction
from . import _describe
from ._correlation import check_normal_margins, draw_persistence, of_changes, pearson_test
from ._names import PEARSON, PEARSON_DIFFERENCES


def generate(condition, rng):
    """Two AR(1) series over n days with persistence ``phi`` whose
    innovations correlate at ``direction * effect``, the rows numbered in time order."""
    dgp, n = condition.dgp, condition.n
    rho = dgp.get("direction", 1) * condition.effect_value
    phi = condition.params["phi"]
    ex, ey = correlated_normals(rng, n, rho)
    return finish(condition, rng, {
        condition.roles["period"]: np.arange(1, n + 1),
        condition.roles["x"]: dgp["x_mean"] + dgp["x_sd"] * ar1(ex, phi),
        condition.roles["y"]: dgp["y_mean"] + dgp["y_sd"] * ar1(ey, phi),
    })


class SeriesCorrelation(Family):
    """What the series siblings (pearson_differences, spearman_differences)
    share: roles, dgp schema and its check (the levels' mean +/- ``reach`` SDs
    inside the range, values recorded finely enough for the changes), the
    persistence of a dataset's two series, the medium effect and the hints."""

    category = "correlation"
    question_kind = "association"
    roles = {"x": "numeric", "y": "numeric", "period": "period"}
    min_n = 40  # pearson's (siblings share their range of N)
    dgp_keys = ("x_mean", "x_sd", "y_mean", "y_sd")
    medium = 0.3
    effect_bounds = (-1.0, 1.0)
    #: The SDs about the mean the levels' range must hold.
    reach = 4.0

    def draw_params(self, scenario, n, rng):
        return draw_persistence(rng)

    def validate(self, scenario):
        check_normal_margins(scenario, reach=self.reach, fine=True)
        require_direction(scenario)

    def hints(self, condition, data):
        return _describe.association(data, condition.roles["x"], condition.roles["y"], condition.roles["period"])


class PearsonDifferences(SeriesCorrelation):
    name = "pearson_differences"
    title = "Pearson correlation of first differences"
    canonical = "cor.test(diff(x), diff(y))"
    test_name = PEARSON_DIFFERENCES
    naive_name = PEARSON
    naive_method = "Pearson correlation test of the levels, cor.test(x, y)"
    effect_unit = "Pearson's r of the first differences"
    generate = staticmethod(generate)

    def analyse(self, condition, data):
        return of_changes(pearson_test, condition, data)

    def naive(self, condition, data):
        return pearson_test(condition, data)

    def effect_for_z(self, z, n, params):
        """The correlation at the critical value of the t test of n - 1 changes
        on n - 3 df: r = t / sqrt(n - 3 + t^2)."""
        t = t_critical(z, n - 3)
        return float(t / np.sqrt(n - 3 + t * t))


register(PearsonDifferences())
