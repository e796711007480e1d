"""One coefficient of a Poisson regression of counts over an exposure time.

R: ``summary(glm(outcome ~ exposure + covariates + offset(log(exposure_time)),
family = poisson))``, the exposure's row: the log rate ratio and its Wald z.
The data: covariates that confound the exposure, each row's exposure time
(uniform on the scenario's ``time``) and Poisson counts at the scenario's
``rate`` per unit of time (see :func:`taskfactory.kit.expected_counts`). The
tempting wrong test is the same model without the offset, which takes counts
over unequal times for comparable.
"""

import numpy as np

from ..errors import DataError
from ..kit import expected_counts, finish
from ..registry import register
from ._names import POISSON, POISSON_NO_OFFSET
from ._regression import CountRegression, count_outcome, glm_coefficients, without_offset

METHOD = "Poisson regression (glm, poisson, log exposure-time offset), Wald z test of the coefficient"


def generate(condition, rng):
    """Poisson counts around the design's expected counts."""
    columns, expected = expected_counts(condition, rng, condition.n)
    columns[condition.roles["outcome"]] = rng.poisson(expected)
    return finish(condition, rng, columns)


class PoissonRegression(CountRegression):
    name = "poisson_regression"
    title = "Poisson regression coefficient with an exposure-time offset (Wald z)"
    canonical = "summary(glm(outcome ~ exposure + covariates + offset(log(exposure_time)), family = poisson))"
    levels_canonical = ('anova(glm(outcome ~ covariates + offset(log(exposure_time)), family = poisson), '
                        'glm(outcome ~ exposure + covariates + offset(log(exposure_time)), family = poisson), '
                        'test = "LRT")')
    levels_r_pvalue = 'res[2, "Pr(>Chi)"]'
    test_name = POISSON
    naive_name = POISSON_NO_OFFSET
    naive_method = "Poisson regression without the exposure-time offset"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Also the mean IRLS weight of a row (for calibration)."""
        params = super().draw_params(scenario, n, rng)
        return {**params, "mean_weight": self.mean_weight(scenario, params["confounder_effect"])}

    def analyse(self, condition, data):
        return glm_coefficients(condition, data, "poisson", without_offset(METHOD, condition.roles),
                                count_outcome(condition, data))

    def naive(self, condition, data):
        if condition.roles.get("exposure_time") is None:
            raise DataError("without an exposure time the model has no offset to leave out")
        return glm_coefficients(condition, data, "poisson", self.naive_method, count_outcome(condition, data),
                                offset=False)

    def effect_for_z(self, z, n, params):
        """The log rate ratio whose Wald z sits at ``z``: the estimate's
        variance is about 1 / (n w (1 - rho^2)), w the mean weight (the mean count)."""
        return float(z / np.sqrt(n * params["mean_weight"] * (1.0 - params["confounding"] ** 2)))


register(PoissonRegression())
