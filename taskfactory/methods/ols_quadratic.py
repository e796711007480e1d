"""One coefficient of a linear model adjusted for covariates, one of which
acts on the exposure and the outcome along a curve.

R: ``summary(lm(outcome ~ exposure + covariates + I(covariate^2) ...))``, a
square for every numeric covariate (one with more than two values), the
exposure's row: the least-squares slope, its classical standard error and t
on n - p degrees of freedom. The data: ``ols_coefficient``'s confounded
design (see :mod:`taskfactory.methods._regression`) plus a curve in the
covariate the dgp names ``curved``, q = (a^2 - 1) / sqrt(2) for its
standardised value a (level beyond 3 SDs): the exposure follows q at
``curve_confounding`` (0.3 to 0.6) with the sign of the dgp's
``exposure_curve``, and the outcome follows
it by ``curve_effect`` (1.0 to 1.4) residual SDs with the sign of
``outcome_curve`` (1 a U, -1 a hump), the whole outcome scaled back to
the spread of the linear siblings'. q is uncorrelated with any straight
line in a, so the linear adjustment leaves the curve's confounding in the
slope, while the square of the covariate in the model, or a test of it,
shows the curve. The tempting wrong test is that linear adjustment,
``ols_coefficient``'s test.
"""

import numpy as np

from ..effects import t_critical
from ..kit import covariates, finish
from ..registry import register
from ..result import TestResult
from ._common import require, require_varies
from ._models import lm_terms, model_matrix
from ._names import OLS, OLS_QUADRATIC
from ._regression import LinearRegression, coefficients

METHOD = "Linear regression (lm) with a quadratic term for each numeric covariate, t test of the coefficient"
#: Range of |corr(exposure, curve)| and of the curve's effect on the outcome
#: (in outcome residual SDs per SD of the curve), drawn per dataset.
CURVE_CONFOUNDING = (0.3, 0.6)
CURVE_EFFECT = (1.0, 1.4)
#: The curve levels off this many SDs of the covariate from its mean, so that
#: the rare values beyond make no outliers of the outcome; the covariate itself
#: is drawn as in the linear siblings.
CURVE_REACH = 3.0
CURVE_SIGNS = "dgp outcome_curve and exposure_curve must be 1 (a U) or -1 (a hump)"


def generate(condition, rng):
    """Covariates, an exposure correlated with their confounder and with the
    curve of the ``curved`` covariate, and an outcome from the exposure (slope
    ``effect`` per SD of its part neither explains), the confounder, the curve
    and normal errors, scaled by :func:`spread` so that its variance is a
    linear sibling's."""
    dgp, params, n = condition.dgp, condition.params, condition.n
    columns, confounder = covariates(condition, rng, n)
    mean, sd = dgp["covariates"][dgp["curved"]]
    score = (columns[dgp["curved"]] - mean) / sd
    curve = (np.minimum(score * score, CURVE_REACH * CURVE_REACH) - 1.0) / np.sqrt(2.0)
    rho = dgp["exposure_link"] * params["confounding"]
    bend = dgp["exposure_curve"] * params["curve_confounding"]
    own = np.sqrt(1.0 - rho * rho - bend * bend)
    exposure = rho * confounder + bend * curve + own * rng.standard_normal(n)
    columns[condition.roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * exposure
    slope = dgp.get("direction", 1) * condition.effect_value / own
    gamma, kappa = params["confounder_effect"], dgp["outcome_curve"] * params["curve_effect"]
    outcome = slope * exposure + gamma * confounder + kappa * curve + rng.standard_normal(n)
    outcome /= spread(slope, gamma, kappa, rho, bend)
    columns[condition.roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    return finish(condition, rng, columns)


def spread(slope, gamma, kappa, rho, bend) -> float:
    """The outcome's SD over that of the same outcome without the curve (a
    linear sibling's, whose variance is slope^2 + gamma^2 + 2 slope gamma rho
    + 1), so that dividing by it leaves the curve in the outcome's shape, not
    in its spread; every test statistic is unchanged by the scale."""
    linear = slope * slope + gamma * gamma + 2.0 * slope * gamma * rho + 1.0
    return float(np.sqrt((linear + kappa * kappa + 2.0 * slope * kappa * bend) / linear))


def squared(data, names) -> list[str]:
    """The covariates of ``names`` that take a square: numeric columns with
    more than two values (R's ``is.numeric``; a two-valued one's square is
    itself again)."""
    return [name for name in names
            if data[name].dtype.kind in "iuf" and data[name].nunique() > 2]


def quadratic_design(data, roles) -> tuple[np.ndarray, list[str]]:
    """The model matrix of the exposure and covariates (an intercept first)
    with the :func:`squared` covariates' squares last, and the term names."""
    X, names = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    bent = squared(data, roles["covariates"])
    X = np.column_stack([X, *(data[name].to_numpy(dtype=float) ** 2 for name in bent)])
    return X, [*names, *(f"I({name}^2)" for name in bent)]


def quadratic(condition, data) -> TestResult:
    """The exposure's row of ``summary(lm(outcome ~ exposure + covariates +
    I(c^2) ...))`` over the numeric covariates c."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["exposure"])
    X, names = quadratic_design(data, roles)
    require(len(data) > X.shape[1], f"{len(data)} complete rows for {X.shape[1]} coefficients")
    terms = lm_terms(data[roles["outcome"]].to_numpy(dtype=float), X, names)
    return TestResult.from_terms(terms, roles["exposure"], METHOD, "t", n=len(data))


class OlsQuadratic(LinearRegression):
    name = "ols_quadratic"
    title = "Linear regression coefficient adjusted for covariates, with their squares"
    question_kind = "regression"
    canonical = "summary(lm(outcome ~ exposure + covariates + I(covariate^2) for each numeric covariate))"
    test_name = OLS_QUADRATIC
    naive_name = OLS
    naive_method = "Linear regression (lm) adjusted for the covariates as straight lines"
    dgp_keys = (*LinearRegression.dgp_keys, "curved", "outcome_curve", "exposure_curve")
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Also the curve's confounding and effect, and the squares among the
        model's coefficients."""
        params = super().draw_params(scenario, n, rng)
        params["curve_confounding"] = float(rng.uniform(*CURVE_CONFOUNDING))
        params["curve_effect"] = float(rng.uniform(*CURVE_EFFECT))
        params["coefficients"] += sum(scenario.variable(name).type != "category"
                                      for name in scenario.roles["covariates"])
        return params

    def validate(self, scenario):
        super().validate(scenario)
        dgp = scenario.dgp
        names = scenario.roles["covariates"]
        curved = dgp.get("curved")
        if not isinstance(curved, str) or curved not in names:
            raise ValueError(f"dgp curved must name one of the covariates ({', '.join(names)})")
        if scenario.variable(curved).type == "category":
            raise ValueError(f"dgp curved names '{curved}', a category covariate; a curve needs a numeric one")
        for key in ("outcome_curve", "exposure_curve"):
            if isinstance(dgp.get(key), bool) or dgp.get(key) not in (1, -1):
                raise ValueError(CURVE_SIGNS)

    def analyse(self, condition, data):
        return quadratic(condition, data)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method)

    def effect_for_z(self, z, n, params):
        """The slope whose t on n - p df sits at the critical value: the model
        holds the confounder and the curve, so the estimate's SD is
        1 / sqrt(n) in these units."""
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(n))


register(OlsQuadratic())
