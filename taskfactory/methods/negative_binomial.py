"""One coefficient of a negative binomial regression of overdispersed counts
over an exposure time.

R: ``summary(MASS::glm.nb(outcome ~ exposure + covariates +
offset(log(exposure_time))))``, the exposure's row: the log rate ratio and its
Wald z, with the dispersion theta estimated by maximum likelihood. The data:
poisson_regression's design (see :mod:`taskfactory.methods.poisson_regression`)
with each row's mean multiplied by a gamma frailty of mean 1 and shape
``theta`` (0.5 to 3), so the counts' variance is m + m^2 / theta. A dataset
whose theta does not converge is redrawn. The tempting wrong test is the
Poisson regression with the same offset, whose standard errors ignore the
overdispersion.
"""

import numpy as np

from ..family import Family
from ..kit import covariates, finish
from ..registry import register
from . import _describe
from ._names import NEGATIVE_BINOMIAL, POISSON
from ._regression import CONFOUNDER_EFFECT, CONFOUNDING, check_dgp, count_outcome, glm_coefficients

METHOD = "Negative binomial regression (MASS::glm.nb, log exposure-time offset), Wald z test of the coefficient"
THETA = (0.5, 3.0)


def generate(condition, rng):
    """As poisson_regression's data, each mean times a gamma(theta, 1/theta) frailty."""
    n, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    columns, confounder = covariates(condition, rng, n)
    rho = dgp["exposure_link"] * params["confounding"]
    exposure = rho * confounder + np.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    time = rng.uniform(dgp["time"][0], dgp["time"][1], n)
    mean = dgp["rate"] * time * np.exp(dgp.get("direction", 1) * condition.effect_value * exposure
                                       + params["confounder_effect"] * confounder)
    theta = params["theta"]
    columns[roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * exposure
    columns[roles["exposure_time"]] = time
    columns[roles["outcome"]] = rng.poisson(mean * rng.gamma(theta, 1.0 / theta, n))
    return finish(condition, rng, columns)


class NegativeBinomial(Family):
    name = "negative_binomial"
    title = "Negative binomial regression coefficient with an exposure-time offset (Wald z)"
    category = "regression"
    question_kind = "counts"
    canonical = "summary(MASS::glm.nb(outcome ~ exposure + covariates + offset(log(exposure_time))))"
    test_name = NEGATIVE_BINOMIAL
    naive_name = POISSON
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns", "exposure_time": "numeric"}
    min_n = 60
    dgp_keys = ("rate", "time", "exposure", "covariates", "confounder", "exposure_link")
    naive_method = "Poisson regression with the same offset"
    r_pvalue = "res[2, 4]"
    medium = float(np.log(1.5))
    effect_unit = "log rate ratio per SD of the exposure"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        low, high = scenario.dgp["time"]
        gamma = float(rng.uniform(*CONFOUNDER_EFFECT))
        return {"confounding": float(rng.uniform(*CONFOUNDING)), "confounder_effect": gamma,
                "theta": float(rng.uniform(*THETA)),
                "mean_count": float(scenario.dgp["rate"] * (low + high) / 2.0 * np.exp(gamma * gamma / 2.0))}

    def validate(self, scenario):
        check_dgp(scenario, outcome="count")

    def analyse(self, condition, data):
        return glm_coefficients(condition, data, "negative_binomial", METHOD, count_outcome(condition, data))

    def naive(self, condition, data):
        return glm_coefficients(condition, data, "poisson", self.naive_method, count_outcome(condition, data))

    def effect_for_z(self, z, n, params):
        """The log rate ratio whose Wald z sits at ``z``: the estimate's
        variance is about (1 / m + 1 / theta) / (n (1 - rho^2)), m the mean count."""
        m, theta = params["mean_count"], params["theta"]
        return float(z * np.sqrt((1.0 / m + 1.0 / theta) / (n * (1.0 - params["confounding"] ** 2))))

    def hints(self, condition, data):
        return _describe.count_regression(data, condition.roles)


register(NegativeBinomial())
