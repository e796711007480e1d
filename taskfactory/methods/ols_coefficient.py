"""One coefficient of a linear model adjusted for confounders.

R: ``summary(lm(outcome ~ exposure + covariates))``, the exposure's row: the
least-squares slope, its classical standard error and t on n - p degrees of
freedom. The data: covariates that drive both the exposure and the outcome
(a confounder, see :mod:`taskfactory.methods._regression`), normal errors of
constant variance. The tempting wrong test is the simple regression of the
outcome on the exposure alone, whose slope carries the confounder's effect;
HC3 standard errors (``ols_robust``'s test) are accepted beside the classical
ones, since they are right on homoscedastic data too.
"""

import numpy as np

from ..effects import t_critical
from ..family import Alternative
from ..kit import confounded_exposure, finish
from ..registry import register
from ._names import OLS, OLS_HC3, UNADJUSTED_OLS
from ._regression import LinearRegression, coefficients

METHOD = "Linear regression (lm), t test of the coefficient"
HC3_METHOD = "t test of coefficients, HC3 standard errors (sandwich::vcovHC)"


def generate(condition, rng):
    """Covariates, an exposure correlated with their confounder, and an outcome
    from the exposure (slope ``effect`` per SD of its unconfounded part), the
    confounder and normal errors."""
    dgp, params = condition.dgp, condition.params
    columns, confounder, exposure = confounded_exposure(condition, rng, condition.n)
    slope = dgp.get("direction", 1) * condition.effect_value / np.sqrt(1.0 - params["confounding"] ** 2)
    error = rng.standard_normal(condition.n)
    outcome = slope * exposure + params["confounder_effect"] * confounder + error
    columns[condition.roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    return finish(condition, rng, columns)


def hc3(condition, data):
    return coefficients(condition, data, "HC3", HC3_METHOD)


class OlsCoefficient(LinearRegression):
    name = "ols_coefficient"
    title = "Linear regression coefficient adjusted for covariates"
    question_kind = "regression"
    canonical = "summary(lm(outcome ~ exposure + covariates))"
    test_name = OLS
    naive_name = UNADJUSTED_OLS
    naive_method = "Simple linear regression of the outcome on the exposure alone"
    accepted = (Alternative(method=HC3_METHOD, call='lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))',
                            run=hc3, name=OLS_HC3, r_pvalue="res[2, 4]",
                            r_code=('fit <- lm({outcome} ~ {exposure} + {covariates}, data = d)\n'
                                    'res <- lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))')),)
    generate = staticmethod(generate)

    def analyse(self, condition, data):
        return coefficients(condition, data, "classical", METHOD)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method, covariates=False)

    def effect_for_z(self, z, n, params):
        """The slope whose t on n - p df sits at the critical value: the
        estimate's SD is 1 / sqrt(n) in these units."""
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(n))


register(OlsCoefficient())
