"""One coefficient of a linear model whose errors grow with the exposure.

R: ``lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))``,
``fit <- lm(outcome ~ exposure + covariates)``, the exposure's row: the
least-squares slope with the HC3 sandwich standard error, t on the residual
df. The data: the confounded design of the regression kind (see
:mod:`taskfactory.methods._regression`) with normal errors whose SD grows
exponentially with the exposure, exp(h x - h^2) for the standardised exposure
x (mean variance 1), h drawn per dataset. The tempting wrong test is the same
model's classical standard error, which misses the extra variance at the
high-leverage ends of the exposure.
"""

import numpy as np

from ..effects import t_critical
from ..kit import confounded_exposure, finish, normal_expectation
from ..registry import register
from ._names import OLS, OLS_HC3
from ._regression import LinearRegression, coefficients

METHOD = "t test of coefficients, HC3 standard errors (sandwich::vcovHC)"
#: Range of h, the growth of the error SD per SD of the exposure (log scale):
#: Breusch-Pagan at half the level sees it in 90 % of datasets at the kind's
#: smallest N, blank cells included.
HETEROSCEDASTICITY = (1.0, 1.3)


def spread(x, h):
    """How the error SD grows with the standardised exposure x: exp(2 h tanh(x / 2)),
    about exp(h x) near the mean, levelling off beyond two SDs."""
    return np.exp(2.0 * h * np.tanh(x / 2.0))


def generate(condition, rng):
    """As ols_coefficient's data, with normal errors whose SD is :func:`spread`,
    scaled to mean variance 1."""
    dgp, params = condition.dgp, condition.params
    columns, confounder, exposure = confounded_exposure(condition, rng, condition.n)
    slope = dgp.get("direction", 1) * condition.effect_value / np.sqrt(1.0 - params["confounding"] ** 2)
    h = params["heteroscedasticity"]
    scale = np.sqrt(normal_expectation(lambda z: spread(z, h) ** 2))
    error = rng.standard_normal(condition.n) * spread(exposure, h) / scale
    outcome = slope * exposure + params["confounder_effect"] * confounder + error
    columns[condition.roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    return finish(condition, rng, columns)


class OlsRobust(LinearRegression):
    name = "ols_robust"
    title = "Linear regression coefficient with heteroscedasticity-robust (HC3) standard errors"
    question_kind = "regression"
    canonical = 'lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))'
    test_name = OLS_HC3
    naive_name = OLS
    naive_method = "Linear regression with classical standard errors, summary(lm(...))"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Also h, how fast the error SD grows with the exposure."""
        return {**super().draw_params(scenario, n, rng), "heteroscedasticity": float(rng.uniform(*HETEROSCEDASTICITY))}

    def analyse(self, condition, data):
        return coefficients(condition, data, "HC3", METHOD)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method)

    def effect_for_z(self, z, n, params):
        """The slope whose t on n - p df sits at the critical value. The
        exposure is rho c + s u (c the confounder, u its own part, s^2 = 1 - rho^2),
        so the sandwich variance of the estimate is E[u^2 spread(x)^2] / (n E spread^2)
        in these units, by quadrature over c and u."""
        h, rho = params["heteroscedasticity"], params["confounding"]
        nodes, weights = np.polynomial.hermite_e.hermegauss(40)
        weights = weights / weights.sum()
        c, u = nodes[:, None], nodes[None, :]
        inner = float(np.sum(weights[:, None] * weights[None, :] * u * u * spread(rho * c + np.sqrt(1.0 - rho * rho) * u, h) ** 2))
        variance = inner / normal_expectation(lambda x: spread(x, h) ** 2)
        return float(t_critical(z, n - params["coefficients"]) * np.sqrt(variance / n))


register(OlsRobust())
