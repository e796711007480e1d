"""One coefficient of a negative binomial regression of overdispersed counts
over an exposure time.

R: ``summary(MASS::glm.nb(outcome ~ exposure + covariates +
offset(log(exposure_time))))``, the exposure's row: the log rate ratio and its
Wald z, with the dispersion theta estimated by maximum likelihood. The data:
poisson_regression's design (see :func:`taskfactory.kit.expected_counts`) with
each row's mean multiplied by a gamma frailty of mean 1 and shape ``theta``
(0.5 to 3), so the counts' variance is m + m^2 / theta. A dataset whose theta
does not converge is redrawn. The tempting wrong test is the Poisson
regression with the same offset, whose standard errors ignore the
overdispersion.
"""

import numpy as np

from ..kit import expected_counts, finish
from ..registry import register
from ._names import NEGATIVE_BINOMIAL, POISSON
from ._regression import CountRegression, count_outcome, glm_coefficients, without_offset

METHOD = "Negative binomial regression (MASS::glm.nb, log exposure-time offset), Wald z test of the coefficient"
THETA = (0.5, 3.0)


def generate(condition, rng):
    """Poisson counts around the design's expected counts times a gamma(theta, 1/theta) frailty."""
    columns, expected = expected_counts(condition, rng, condition.n)
    theta = condition.params["theta"]
    columns[condition.roles["outcome"]] = rng.poisson(expected * rng.gamma(theta, 1.0 / theta, condition.n))
    return finish(condition, rng, columns)


class NegativeBinomial(CountRegression):
    name = "negative_binomial"
    title = "Negative binomial regression coefficient with an exposure-time offset (Wald z)"
    canonical = "summary(MASS::glm.nb(outcome ~ exposure + covariates + offset(log(exposure_time))))"
    levels_canonical = ("anova(MASS::glm.nb(outcome ~ covariates + offset(log(exposure_time))), "
                        "MASS::glm.nb(outcome ~ exposure + covariates + offset(log(exposure_time))))")
    levels_r_pvalue = 'res[2, "Pr(Chi)"]'
    test_name = NEGATIVE_BINOMIAL
    naive_name = POISSON
    naive_method = "Poisson regression with the same offset"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Also theta, the gamma frailty's shape, and the mean IRLS weight of a row (for calibration)."""
        params = super().draw_params(scenario, n, rng)
        theta = float(rng.uniform(*THETA))
        return {**params, "theta": theta, "mean_weight": self.mean_weight(scenario, params["confounder_effect"], theta)}

    def analyse(self, condition, data):
        return glm_coefficients(condition, data, "negative_binomial", without_offset(METHOD, condition.roles),
                                count_outcome(condition, data))

    def naive(self, condition, data):
        return glm_coefficients(condition, data, "poisson", self.naive_method, count_outcome(condition, data))

    def effect_for_z(self, z, n, params):
        """The log rate ratio whose Wald z sits at ``z``: the estimate's
        variance is about 1 / (n w (1 - rho^2)), w the mean weight m / (1 + m / theta)."""
        return float(z / np.sqrt(n * params["mean_weight"] * (1.0 - params["confounding"] ** 2)))


register(NegativeBinomial())
