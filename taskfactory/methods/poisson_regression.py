"""One coefficient of a Poisson regression of counts over an exposure time.

R: ``summary(glm(outcome ~ exposure + covariates + offset(log(exposure_time)),
family = poisson))``, the exposure's row: the log rate ratio and its Wald z.
The data: covariates that confound the exposure (see
:mod:`taskfactory.methods._regression`), each row's exposure time (uniform on
the scenario's ``time``) and Poisson counts at the scenario's ``rate`` per
unit of time. The tempting wrong test is the same model without the offset,
which takes counts over unequal times for comparable.
"""

import numpy as np

from ..family import Family
from ..kit import covariates, finish
from ..registry import register
from . import _describe
from ._names import POISSON, POISSON_NO_OFFSET
from ._regression import CONFOUNDER_EFFECT, CONFOUNDING, check_dgp, count_outcome, glm_coefficients

METHOD = "Poisson regression (glm, poisson, log exposure-time offset), Wald z test of the coefficient"


def generate(condition, rng):
    """Covariates, an exposure correlated with their confounder, exposure
    times, and Poisson counts with log mean log(rate time) + effect x + the
    confounder's effect, x the standardised exposure."""
    n, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    columns, confounder = covariates(condition, rng, n)
    rho = dgp["exposure_link"] * params["confounding"]
    exposure = rho * confounder + np.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    time = rng.uniform(dgp["time"][0], dgp["time"][1], n)
    mean = dgp["rate"] * time * np.exp(dgp.get("direction", 1) * condition.effect_value * exposure
                                       + params["confounder_effect"] * confounder)
    columns[roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * exposure
    columns[roles["exposure_time"]] = time
    columns[roles["outcome"]] = rng.poisson(mean)
    return finish(condition, rng, columns)


class PoissonRegression(Family):
    name = "poisson_regression"
    title = "Poisson regression coefficient with an exposure-time offset (Wald z)"
    category = "regression"
    question_kind = "counts"
    canonical = "summary(glm(outcome ~ exposure + covariates + offset(log(exposure_time)), family = poisson))"
    test_name = POISSON
    naive_name = POISSON_NO_OFFSET
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns", "exposure_time": "numeric"}
    min_n = 60
    dgp_keys = ("rate", "time", "exposure", "covariates", "confounder", "exposure_link")
    naive_method = "Poisson regression without the exposure-time offset"
    r_pvalue = "res[2, 4]"
    medium = float(np.log(1.5))
    effect_unit = "log rate ratio per SD of the exposure"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        low, high = scenario.dgp["time"]
        gamma = float(rng.uniform(*CONFOUNDER_EFFECT))
        return {"confounding": float(rng.uniform(*CONFOUNDING)), "confounder_effect": gamma,
                "mean_count": float(scenario.dgp["rate"] * (low + high) / 2.0 * np.exp(gamma * gamma / 2.0))}

    def validate(self, scenario):
        check_dgp(scenario, outcome="count")

    def analyse(self, condition, data):
        return glm_coefficients(condition, data, "poisson", METHOD, count_outcome(condition, data))

    def naive(self, condition, data):
        return glm_coefficients(condition, data, "poisson", self.naive_method, count_outcome(condition, data), offset=False)

    def effect_for_z(self, z, n, params):
        """The log rate ratio whose Wald z sits at ``z``: the estimate's
        variance is about 1 / (n m (1 - rho^2)), m the mean count."""
        return float(z / np.sqrt(n * params["mean_count"] * (1.0 - params["confounding"] ** 2)))

    def hints(self, condition, data):
        return _describe.count_regression(data, condition.roles)


register(PoissonRegression())
