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
from ..family import Alternative, Family
from ..kit import covariates, finish
from ..registry import register
from . import _describe
from ._names import OLS, OLS_HC3, UNADJUSTED_OLS
from ._regression import CONFOUNDER_EFFECT, CONFOUNDING, MEDIUM_F2, check_dgp, coefficients

METHOD = "Linear regression (lm), t test of the coefficient"
HC3_METHOD = "t test of coefficients, HC3 standard errors (sandwich::vcovHC)"


def generate(condition, rng):
    """Covariates, an exposure correlated with their confounder, and an outcome
    from the exposure (slope ``effect`` per SD of its unconfounded part), the
    confounder and normal errors."""
    n, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    columns, confounder = covariates(condition, rng, n)
    rho = dgp["exposure_link"] * params["confounding"]
    unconfounded = np.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    exposure = rho * confounder + unconfounded
    slope = dgp.get("direction", 1) * condition.effect_value / np.sqrt(1.0 - rho * rho)
    error = rng.standard_normal(n)
    outcome = slope * exposure + params["confounder_effect"] * confounder + error
    columns[roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * exposure
    columns[roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    return finish(condition, rng, columns)


def hc3(condition, data):
    return coefficients(condition, data, "HC3", HC3_METHOD)


class OlsCoefficient(Family):
    name = "ols_coefficient"
    title = "Linear regression coefficient adjusted for covariates"
    category = "regression"
    question_kind = "regression"
    canonical = "summary(lm(outcome ~ exposure + covariates))"
    test_name = OLS
    naive_name = UNADJUSTED_OLS
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns"}
    min_n = 30
    dgp_keys = ("outcome", "exposure", "covariates", "confounder", "exposure_link")
    naive_method = "Simple linear regression of the outcome on the exposure alone"
    accepted = (Alternative(method=HC3_METHOD, call='lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))',
                            run=hc3, name=OLS_HC3, r_pvalue="res[2, 4]",
                            r_code=('fit <- lm({outcome} ~ {exposure} + {covariates}, data = d)\n'
                                    'res <- lmtest::coeftest(fit, vcov = sandwich::vcovHC(fit, type = "HC3"))')),)
    r_pvalue = "res[2, 4]"
    medium = float(np.sqrt(MEDIUM_F2))
    effect_unit = "outcome residual SDs per SD of the exposure net of the covariates (sqrt of partial f2)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return {"confounding": float(rng.uniform(*CONFOUNDING)),
                "confounder_effect": float(rng.uniform(*CONFOUNDER_EFFECT)),
                "coefficients": 2 + len(scenario.roles["covariates"])}

    def validate(self, scenario):
        check_dgp(scenario)

    def analyse(self, condition, data):
        return coefficients(condition, data, "classical", METHOD)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method, covariates=False)

    def effect_for_z(self, z, n, params):
        """The slope whose t on n - p df sits at the critical value: the
        estimate's SD is 1 / sqrt(n) in these units."""
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(n))

    def hints(self, condition, data):
        return _describe.regression(data, condition.roles)


register(OlsCoefficient())
