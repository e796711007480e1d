"""Spearman's rank correlation of the changes of two persistent series that jump.

R: with the rows in period order, ``cor.test(diff(x), diff(y), method =
"spearman")``: rho of the changes from one period to the next, with R's
branches of the Spearman test (see :mod:`taskfactory.methods.spearman`). A
period the canonical handling leaves out drops the two changes it would join,
as in pearson_differences.

Both series wander as pearson_differences' do (AR(1), one persistence phi
drawn per dataset between 0.95 and 0.99), but their innovations are
heavy-tailed: a Gaussian copula with correlation 2 sin(pi rho_s / 6) pushed
through sinh(k z), scaled to unit variance, so most changes are small and a
few are jumps. The Spearman correlation of the innovations is the effect,
and the changes differ from them by the mean reversion, (1 - phi) times the
level. The tempting wrong test is Spearman's rho of the levels,
``cor.test(x, y, method = "spearman")``, which persistence misleads as it
misleads Pearson's r; Kendall's tau of the changes is accepted beside rho.
"""

import numpy as np

from ..family import Alternative, reference_template
from ..kit import ar1, correlated_normals, finish
from ..registry import register
from ._correlation import KENDALL_METHOD, kendall_test, of_changes, spearman_test
from ._names import KENDALL_DIFFERENCES, SPEARMAN, SPEARMAN_DIFFERENCES
from .pearson_differences import SeriesCorrelation

#: The range of the per-series tail factor k of sinh(k z) at N = 40 (the
#: larger, the heavier the jumps), where the Shapiro-Wilk test at 2.5 % of
#: each series' changes sees them in about 97 % of datasets even when a third
#: of the changes are blank; it shrinks as (40 / N)^0.15, so that the test
#: still sees them and the levels of a long series stay within about 6 SDs of
#: their mean.
TAIL = (1.5, 1.9)


def jumps(z, k):
    """Standard normal scores ``z`` made heavy-tailed, sinh(k z), and scaled to unit variance."""
    return np.sinh(k * z) / np.sqrt((np.exp(2.0 * k * k) - 1.0) / 2.0)


def generate(condition, rng):
    """Two AR(1) series over n days with persistence ``phi`` whose innovations
    are :func:`jumps` of a Gaussian copula with Spearman correlation
    ``direction * effect``, the rows numbered in time order."""
    dgp, n, params = condition.dgp, condition.n, condition.params
    rho_s = dgp.get("direction", 1) * condition.effect_value
    zx, zy = correlated_normals(rng, n, 2.0 * np.sin(np.pi * rho_s / 6.0))
    kx, ky = params["tail"]
    return finish(condition, rng, {
        condition.roles["period"]: np.arange(1, n + 1),
        condition.roles["x"]: dgp["x_mean"] + dgp["x_sd"] * ar1(jumps(zx, kx), params["phi"]),
        condition.roles["y"]: dgp["y_mean"] + dgp["y_sd"] * ar1(jumps(zy, ky), params["phi"]),
    })


def kendall_of_changes(condition, data):
    return of_changes(kendall_test, condition, data)


class SpearmanDifferences(SeriesCorrelation):
    name = "spearman_differences"
    title = "Spearman rank correlation of first differences"
    canonical = 'cor.test(diff(x), diff(y), method = "spearman")'
    test_name = SPEARMAN_DIFFERENCES
    naive_name = SPEARMAN
    naive_method = 'Spearman rank correlation test of the levels, cor.test(x, y, method = "spearman")'
    accepted = (Alternative(method=KENDALL_METHOD, call='cor.test(diff(x), diff(y), method = "kendall")',
                            run=kendall_of_changes, name=KENDALL_DIFFERENCES,
                            r_code='d <- d[order(d[["{period}"]]), ]\n'
                                   'one_step <- diff(d[["{period}"]]) == 1\n'
                                   'res <- cor.test(diff(d[["{x}"]])[one_step], diff(d[["{y}"]])[one_step], '
                                   'method = "kendall")'),)
    effect_unit = "Spearman's rho of the innovations"
    reach = 6.0   # the jumps reach further than a normal series
    generate = staticmethod(generate)

    @property
    def py_code(self) -> str:
        """The changes (this family's reference file), then spearman's test of them."""
        return reference_template(self.name, "py") + "\n" + reference_template("spearman", "py")

    def draw_params(self, scenario, n, rng):
        shrink = (40.0 / n) ** 0.15
        return {**super().draw_params(scenario, n, rng), "tail": [float(k) for k in shrink * rng.uniform(*TAIL, 2)]}

    def analyse(self, condition, data):
        return of_changes(spearman_test, condition, data)

    def naive(self, condition, data):
        return spearman_test(condition, data)

    def effect_for_z(self, z, n, params):
        """Spearman's rho whose Fisher z sits ``z`` standard errors from zero
        over n - 1 changes, the variance of the Fisher z of rho about 1.06 / (n - 4)."""
        return float(np.tanh(z * np.sqrt(1.06 / (n - 4))))


register(SpearmanDifferences())
