"""One coefficient of a tobit model: a linear model of an outcome that piles up at 0.

R: ``summary(AER::tobit(outcome ~ exposure + covariates, left = 0))``, the
exposure's row: the maximum-likelihood slope of the latent (uncensored)
outcome and its Wald z (``survreg`` with a Gaussian error, rows at or below 0
censored there). The data: the confounded design of the regression kind (see
:mod:`taskfactory.methods._regression`), a latent outcome linear in the
exposure and the confounder with normal errors, observed as max(0, latent):
the latent mean is set per dataset so that its expected share at or below 0
is a drawn 15-50 %. A dataset whose fit does not converge, or whose uncensored
rows do not determine every coefficient, is redrawn. The tempting wrong test
is the linear regression of the observed outcome (``summary(lm(...))``), its
zeros taken as measured values: its slope is attenuated towards 0 and its
errors are neither normal nor of constant variance. A task's optional
``left`` role moves the limit as R's ``left`` argument does (a real dataset's
floor, such as a detection limit); the synthetic designs keep 0.
"""

import numpy as np
from scipy import stats

from ..family import number_literal, rewrite
from ..kit import confounded_exposure, finish
from ..registry import register
from ..result import TestResult
from ._common import require_varies
from ._models import model_matrix
from ._names import OLS, TOBIT
from ._regression import LinearRegression, coefficients
from ._tobit import tobit_terms
from ._dist import norm_cdf, norm_sf

METHOD = "Tobit regression (AER::tobit, left = 0), Wald z test of the coefficient"
#: Range of the expected share of rows at 0, drawn per dataset.
CENSORED = (0.15, 0.50)
#: Where a task's ``left`` role moves the limit, the reference templates'
#: mentions of the limit of 0 and what each becomes (``{left}`` is then filled).
LIMIT_TERMS = {
    "r": (("left = 0,", "left = {left},"),),
    "py": (("cens = y <= 0  # AER::tobit(left = 0): rows at or below 0 are censored at 0",
            "cens = y <= {left}  # AER::tobit(left = {left}): rows at or below {left} are censored there"),
           ("c = -(X[cens] @ beta) / sigma", "c = ({left} - X[cens] @ beta) / sigma"),
           ("np.maximum(y, 0)", "np.maximum(y, {left})")),
}


def limit(roles: dict) -> float | None:
    """The task's limit other than R's default of 0, or None."""
    left = roles.get("left")
    return None if left is None or float(left) == 0.0 else float(left)


def at_limit(text: str, roles: dict) -> str:
    """``text`` (a title, a call, a method) with its limit of 0 moved to the task's."""
    left = limit(roles)
    if left is None:
        return text
    return text.replace("left = 0", f"left = {number_literal(left)}").replace(
        "censored at 0", f"censored at {number_literal(left)}")


def generate(condition, rng):
    """Covariates, an exposure correlated with their confounder, and a latent
    outcome from the exposure (slope ``effect`` per SD of its unconfounded
    part), the confounder and normal errors, shifted so that the drawn share
    of it lies below 0 (``censoring_z`` is that share's normal quantile); the
    outcome is the latent one, or 0 where that is below 0, in ``latent_sd``
    units."""
    dgp, params = condition.dgp, condition.params
    columns, confounder, exposure = confounded_exposure(condition, rng, condition.n)
    rho = dgp["exposure_link"] * params["confounding"]
    gamma = params["confounder_effect"]
    slope = dgp.get("direction", 1) * condition.effect_value / np.sqrt(1.0 - params["confounding"] ** 2)
    spread = np.sqrt(1.0 + slope * slope + gamma * gamma + 2.0 * slope * gamma * rho)  # SD of the latent outcome
    latent = (-params["censoring_z"] * spread + slope * exposure + gamma * confounder
              + rng.standard_normal(condition.n))
    columns[condition.roles["outcome"]] = dgp["latent_sd"] * np.maximum(latent, 0.0)
    return finish(condition, rng, columns)


def information(effect, params, nodes=40):
    """The expected Fisher information per row of the tobit model (in latent
    residual SDs) for (intercept, exposure, confounder, sigma^2) at the design
    of :func:`generate` (Amemiya 1973, by Gauss-Hermite quadrature over the
    confounder c and the exposure's own part u); the covariates' other
    directions are independent of the exposure and the latent mean, so they
    do not change the exposure's variance."""
    rho_abs = params["confounding"]
    rho = params.get("aligned", 1) * rho_abs  # sign of the slope times that of the exposure's link
    gamma = params["confounder_effect"]
    slope = effect / np.sqrt(1.0 - rho_abs**2)
    spread = np.sqrt(1.0 + slope * slope + gamma * gamma + 2.0 * slope * gamma * rho)
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    c, u = np.meshgrid(z, z, indexing="ij")
    weight = (w[:, None] * w[None, :]).ravel()
    c, u = c.ravel(), u.ravel()
    x = rho * c + np.sqrt(1.0 - rho * rho) * u
    m = -params["censoring_z"] * spread + slope * x + gamma * c  # the latent mean of a row
    pdf, cdf, sf = stats.norm.pdf(m), norm_cdf(m), norm_sf(m)
    ratio = pdf * pdf / np.maximum(sf, 1e-300)
    a = -(m * pdf - ratio - cdf)
    b = 0.5 * (m * m * pdf + pdf - m * ratio)
    cc = -0.25 * (m**3 * pdf + m * pdf - m * m * ratio - 2.0 * cdf)
    X = np.stack([np.ones_like(x), x, c])
    info = np.empty((4, 4))
    info[:3, :3] = (X * (weight * a)) @ X.T
    info[:3, 3] = info[3, :3] = X @ (weight * b)
    info[3, 3] = float(weight @ cc)
    return info


def effect_variance(effect, params):
    """n times the variance of the tobit estimate of the effect (the exposure's
    slope in latent residual SDs per SD of its part the covariates do not
    explain, sqrt(1 - rho^2) times its slope per SD of the exposure)."""
    return float(np.linalg.inv(information(effect, params))[1, 1]) * (1.0 - params["confounding"] ** 2)


class Tobit(LinearRegression):
    name = "tobit"
    title = "Tobit regression coefficient (censored at 0)"
    question_kind = "regression"
    canonical = "summary(AER::tobit(outcome ~ exposure + covariates, left = 0))"
    test_name = TOBIT
    naive_name = OLS
    naive_method = "Linear regression of the outcome, its zeros taken as measured, summary(lm(...))"
    dgp_keys = ("latent_sd", "exposure", "covariates", "confounder", "exposure_link")
    roles = {**LinearRegression.roles, "left": "value"}
    optional_roles = ("left",)
    outcome = "censored"
    effect_unit = ("latent outcome residual SDs per SD of the exposure net of the covariates "
                   "(sqrt of the latent partial f2)")
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Also the expected share of rows at 0 and its normal quantile, and the
        sign of the exposure's effect times that of its link to the confounder."""
        share = float(rng.uniform(*CENSORED))
        return {**super().draw_params(scenario, n, rng), "censored_share": share,
                "censoring_z": float(stats.norm.ppf(share)),
                "aligned": int(scenario.dgp.get("direction", 1) * scenario.dgp["exposure_link"])}

    def analyse(self, condition, data):
        roles = condition.roles
        require_varies(data, roles["outcome"], roles["exposure"])
        X, names = model_matrix(data, [roles["exposure"], *roles["covariates"]])
        y = data[roles["outcome"]].to_numpy(dtype=float)
        terms, _ = tobit_terms(y, X, names, left=limit(roles) or 0.0)
        return TestResult.from_terms(terms, roles["exposure"], at_limit(METHOD, roles), "z", n=len(data))

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method)

    def code_for(self, roles, lang):
        code = super().code_for(roles, lang)
        return code if limit(roles) is None else rewrite(code, LIMIT_TERMS[lang], self.name)

    def canonical_for(self, roles):
        return at_limit(self.canonical, roles)

    def title_for(self, roles):
        return at_limit(self.title, roles)

    def effect_for_z(self, z, n, params):
        """The effect whose Wald z has expected value ``z``: the estimate's
        variance is the exposure's element of the inverse expected information
        of the tobit model (:func:`information`) over n, which
        depends a little on the slope itself (through the latent mean), so the
        slope is found by fixed-point iteration."""
        effect = 0.0
        for _ in range(50):
            new = float(abs(z) * np.sqrt(effect_variance(effect, params) / n))
            if abs(new - effect) < 1e-12:
                break
            effect = new
        return float(np.sign(z) * new) if z else 0.0


register(Tobit())
