"""One coefficient of a logistic regression of a binary outcome.

R: ``summary(glm(outcome == positive ~ exposure + covariates, family = binomial))``,
the exposure's row: the maximum-likelihood log odds ratio and its Wald z. The
data: covariates that confound the exposure (see
:mod:`taskfactory.methods._regression`) and a binary outcome, uncommon at the
scenario's ``prevalence``, drawn from a logistic model. A dataset whose fit
separates, or whose IRLS does not converge, is redrawn. The tempting wrong
test is the logistic regression on the exposure alone, which the confounding
biases. (The linear probability model, ``lm`` on the 0/1 outcome, is no trap:
its t test of a zero slope is asymptotically the logistic one, and the two
decide alike in 90-99 % of borderline datasets even under strong confounding
and a rare outcome.)
"""

import numpy as np

from ..kit import column_spec, confounded_exposure, finish, normal_expectation
from ..registry import register
from . import _describe
from ._factor import LEVELS, LEVELS_DOMAIN, FactorExposure
from ._names import LOGISTIC, UNADJUSTED_LOGISTIC
from ._regression import ConfoundedRegression, binary_outcome, glm_coefficients

METHOD = "Logistic regression (glm, binomial), Wald z test of the coefficient"


def generate(condition, rng):
    """Covariates, an exposure correlated with their confounder, and the
    outcome from a logistic model: logit P = logit(prevalence) + effect x +
    the confounder's effect, x the standardised exposure."""
    dgp, params, roles = condition.dgp, condition.params, condition.roles
    columns, confounder, exposure = confounded_exposure(condition, rng, condition.n)
    logit = (np.log(dgp["prevalence"] / (1.0 - dgp["prevalence"])) + dgp.get("direction", 1) * condition.effect_value
             * exposure + params["confounder_effect"] * confounder)
    event = rng.random(condition.n) < 1.0 / (1.0 + np.exp(-logit))
    negative = next(level for level in column_spec(condition, "outcome")["levels"] if level != roles["positive"])
    columns[roles["outcome"]] = np.where(event, roles["positive"], negative)
    return finish(condition, rng, columns)


class LogisticRegression(FactorExposure, ConfoundedRegression):
    name = "logistic_regression"
    title = "Logistic regression coefficient (Wald z)"
    question_kind = "binary_outcome"
    canonical = "summary(glm(outcome == positive ~ exposure + covariates, family = binomial))"
    test_name = LOGISTIC
    naive_name = UNADJUSTED_LOGISTIC
    roles = {"outcome": "category", "positive": "level", "exposure": "numeric", "covariates": "columns", LEVELS: "value"}
    optional_roles = (LEVELS,)
    value_domains = {LEVELS: LEVELS_DOMAIN}
    levels_canonical = ('anova(glm(outcome == positive ~ covariates, family = binomial), '
                        'glm(outcome == positive ~ exposure + covariates, family = binomial), test = "LRT")')
    levels_r_pvalue = 'res[2, "Pr(>Chi)"]'
    dummy_rewrite = ('p_value = fit.pvalues["{exposure}"]',
                     'p_value = fit.pvalues.filter(regex=r"^{exposure}\\[T\\.").iloc[0]  # the dummy of its second level')
    min_n = 60
    dgp_keys = ("prevalence", "exposure", "covariates", "confounder", "exposure_link")
    naive_method = "Logistic regression on the exposure alone, without the covariates"
    outcome = "binary"
    medium = float(np.log(2.5))
    effect_unit = "log odds ratio per SD of the exposure"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Also the mean IRLS weight of a row, E p (1 - p) over the confounder at no effect (for calibration)."""
        params = super().draw_params(scenario, n, rng)
        base, gamma = np.log(scenario.dgp["prevalence"] / (1.0 - scenario.dgp["prevalence"])), params["confounder_effect"]
        weight = normal_expectation(lambda c: 1.0 / (2.0 + np.exp(base + gamma * c) + np.exp(-base - gamma * c)))
        return {**params, "mean_weight": weight}

    def validate(self, scenario):
        super().validate(scenario)
        levels = scenario.variable(scenario.roles["outcome"]).levels
        if len(levels) != 2 or scenario.roles["positive"] not in levels:
            raise ValueError(f"'{scenario.roles['outcome']}' needs two levels, one of them the positive "
                             f"'{scenario.roles['positive']}'")

    def analyse(self, condition, data):
        return glm_coefficients(condition, data, "binomial", METHOD, binary_outcome(condition, data))

    def naive(self, condition, data):
        return glm_coefficients(condition, data, "binomial", self.naive_method, binary_outcome(condition, data),
                                covariates=False)

    def effect_for_z(self, z, n, params):
        """The log odds ratio whose Wald z sits at ``z``: the estimate's
        variance is about 1 / (n w (1 - rho^2)), w the mean weight p (1 - p)
        and rho the exposure's correlation with the confounder."""
        return float(z / np.sqrt(n * params["mean_weight"] * (1.0 - params["confounding"] ** 2)))

    def hints(self, condition, data):
        return _describe.binary_regression(data, condition.roles)


register(LogisticRegression())
