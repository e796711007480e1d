"""What the regression families share: the scenario's description of
the covariates and their confounding, its checks, and the coefficient table
of the exposure's model (lm or glm).

A regression scenario's dgp gives, for every family of its kind::

    outcome: [mean, sd]          # the outcome's mean and residual SD (a linear model)
    exposure: [mean, sd]
    covariates: {age: [55, 12], sex: [0.52, 0.48]}   # numeric: [mean, sd]; two levels: their shares
    confounder: {age: 1.0, sex: -0.4}   # weights of the standardised covariates in the confounder
    exposure_link: 1             # the sign of the exposure's correlation with the confounder
    direction: 1                 # the sign of the exposure's effect

A censored outcome (``tobit``) gives ``latent_sd: sd`` (the residual SD of
the latent outcome) in place of ``outcome``: its mean is set per dataset so
that a drawn share of the rows falls at 0. A binary outcome gives ``prevalence`` (its share at the average exposure and
covariates) in place of ``outcome``; a count outcome gives ``rate`` (events per
unit of exposure time) and ``time: [low, high]`` (each row's exposure time,
uniform). The data draw the covariates (:func:`taskfactory.kit.covariates`), the
exposure correlated with the confounder, and the outcome from the exposure,
the confounder and an error; each family shapes the error (or the design)
its own way. A linear family's effect is the exposure's slope in outcome
residual SDs per SD of the exposure's part the covariates do not explain, so
its square is the partial Cohen's f^2; a logistic or count family's is the
log odds or rate ratio per SD of the exposure.
"""

from __future__ import annotations

import math

import numpy as np

from ..family import Family, rewrite
from ..kit import normal_expectation
from ..result import TestResult
from ..scenarios import require_direction, require_number
from . import _describe
from ._common import indicator, require, require_varies
from ._dist import chi2_cdf, chi2_sf
from ._factor import LEVELS, LEVELS_DOMAIN, FactorExposure, factor_levels, lr_result
from ._models import glm_nb_terms, glm_terms, lm_terms, model_matrix

#: Range of |corr(exposure, confounder)| and of the confounder's effect on the
#: outcome (in outcome residual SDs), drawn per dataset.
CONFOUNDING = (0.3, 0.6)
CONFOUNDER_EFFECT = (0.4, 0.8)
#: The conventional medium partial f^2 of a regression coefficient.
MEDIUM_F2 = 0.15


def mean_and_sd(value, what: str, positive_second: bool = True) -> tuple[float, float]:
    """A dgp value ``[mean, sd]`` (or ``[low, high]``) as two numbers, the
    second positive; ``ValueError`` naming ``what`` otherwise."""
    if not (isinstance(value, list) and len(value) == 2):
        raise ValueError(f"{what} needs [mean, sd]")
    a, b = (require_number(v, what) for v in value)
    if positive_second and not b > 0:
        raise ValueError(f"{what} needs a positive sd")
    return a, b


def check_dgp(scenario, confounded: bool = True, outcome: str = "linear") -> None:
    """Raise ``ValueError`` naming what in a regression scenario's dgp is
    missing or malformed (see the module docstring); ``outcome`` is
    ``linear``, ``censored``, ``binary`` or ``count``."""
    dgp = scenario.dgp
    if outcome == "linear":
        mean_and_sd(dgp.get("outcome"), "dgp outcome")
    elif outcome == "censored":
        if not require_number(dgp.get("latent_sd"), "dgp latent_sd") > 0.0:
            raise ValueError("dgp latent_sd must be positive")
        if scenario.variable(scenario.roles["outcome"]).range[0] != 0:
            raise ValueError(f"the range of '{scenario.roles['outcome']}' must start at 0, where the outcome piles up")
    elif outcome == "binary":
        if not 0.0 < require_number(dgp.get("prevalence"), "dgp prevalence") < 1.0:
            raise ValueError("dgp prevalence must lie between 0 and 1")
    else:
        if not require_number(dgp.get("rate"), "dgp rate") > 0.0:
            raise ValueError("dgp rate must be positive")
        low, high = mean_and_sd(dgp.get("time"), "dgp time")
        if not 0.0 < low < high:
            raise ValueError("dgp time needs [low, high] with 0 < low < high")
        lo, hi = scenario.variable(scenario.roles["exposure_time"]).range
        if not (lo <= low and high <= hi):
            raise ValueError(f"dgp time must lie inside the range of '{scenario.roles['exposure_time']}'")
    mean, sd = mean_and_sd(dgp["exposure"], "dgp exposure")
    lo, hi = scenario.variable(scenario.roles["exposure"]).range
    if not (lo < mean - 4 * sd and mean + 4 * sd < hi):
        raise ValueError(f"dgp exposure mean +/- 4 sd must lie inside the range of '{scenario.roles['exposure']}'")
    names = scenario.roles["covariates"]
    given = dgp.get("covariates")
    if not isinstance(given, dict) or sorted(given) != sorted(names):
        raise ValueError(f"dgp covariates must describe each covariate ({', '.join(names)})")
    for name in names:
        var = scenario.variable(name)
        if var.type == "category":
            if len(var.levels) != 2:
                raise ValueError(f"covariate '{name}' needs exactly two levels")
            shares = given[name]
            if not (isinstance(shares, list) and len(shares) == 2 and all(require_number(s, f"dgp covariates.{name}") > 0
                                                                           for s in shares)):
                raise ValueError(f"dgp covariates.{name} needs the positive shares of its two levels")
        else:
            m, s = mean_and_sd(given[name], f"dgp covariates.{name}")
            if not (var.range[0] < m - 3 * s and m + 3 * s < var.range[1]):
                raise ValueError(f"dgp covariates.{name} mean +/- 3 sd must lie inside the range of '{name}'")
    weights = dgp.get("confounder")
    if not isinstance(weights, dict) or not set(weights) <= set(names):
        raise ValueError("dgp confounder must weight some of the covariates")
    if not math.fsum(require_number(w, "dgp confounder") ** 2 for w in weights.values()) > 0:
        raise ValueError("dgp confounder needs a weight other than 0")
    if confounded and dgp.get("exposure_link") not in (1, -1):
        raise ValueError("dgp exposure_link must be 1 or -1")
    require_direction(scenario)


def coefficients(condition, data, vcov: str, method: str, covariates: bool = True, cluster=None) -> TestResult:
    """The exposure's row of ``lm(outcome ~ exposure + covariates)`` (without
    the covariates when ``covariates`` is False), with the ``vcov`` standard
    errors of :func:`taskfactory.methods._models.lm_terms`."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["exposure"])
    columns = [roles["exposure"], *(roles["covariates"] if covariates else [])]
    X, names = model_matrix(data, columns)
    require(len(data) > X.shape[1], f"{len(data)} complete rows for {X.shape[1]} coefficients")
    y = data[roles["outcome"]].to_numpy(dtype=float)
    terms = lm_terms(y, X, names, vcov=vcov, cluster=cluster)
    return TestResult.from_terms(terms, roles["exposure"], method, "t", n=len(data))


def glm_coefficients(condition, data, model: str, method: str, y, covariates: bool = True,
                     offset: bool = True) -> TestResult:
    """The exposure's row of ``summary(glm(y ~ exposure + covariates, ...))``
    with Wald z: ``model`` is ``binomial``, ``poisson`` or ``negative_binomial``
    (``MASS::glm.nb``); ``offset`` adds ``offset(log(exposure_time))`` when the
    family has that role. An exposure of text with two levels: the row of its
    one dummy; with k > 2 levels: the likelihood-ratio test of its k - 1
    dummies, ``anova(glm(y ~ covariates), glm(y ~ exposure + covariates),
    test = "LRT")`` (for glm.nb, MASS's ``anova`` of two glm.nb fits, theta
    estimated in each, its p-value ``1 - pchisq``)."""
    roles = condition.roles
    require_varies(data, roles["exposure"])
    columns = [roles["exposure"], *(roles["covariates"] if covariates else [])]
    X, names = model_matrix(data, columns)
    off = None
    if offset and roles.get("exposure_time") is not None:
        time = data[roles["exposure_time"]].to_numpy(dtype=float)
        require(bool((time > 0).all()), f"'{roles['exposure_time']}' must be positive (its log is the offset)")
        off = np.log(time)

    def fit(X, names):
        if model == "negative_binomial":
            return glm_nb_terms(y, X, names, offset=off)
        return glm_terms(y, X, names, model, offset=off)

    terms, info = fit(X, names)
    levels = factor_levels(data[roles["exposure"]])
    if levels is None or levels == 2:
        return TestResult.from_terms(terms, roles["exposure"] if levels is None else names[1], method, "z",
                                     n=len(data))
    kept = [0, *range(levels, X.shape[1])]   # the intercept and the covariates' columns
    _, without = fit(X[:, kept], [names[i] for i in kept])
    if model == "negative_binomial":
        lr = info["twologlik"] - without["twologlik"]
        p = 1.0 - chi2_cdf(lr, levels - 1)
    else:
        lr = without["deviance"] - info["deviance"]
        p = chi2_sf(lr, levels - 1)
    return lr_result(lr, p, levels, method, len(data))


def binary_outcome(condition, data) -> np.ndarray:
    """The outcome as 0/1: 1 where it is the ``positive`` level."""
    require_varies(data, condition.roles["outcome"])
    return indicator(data, condition.roles["outcome"], condition.roles["positive"]).astype(float)


def count_outcome(condition, data) -> np.ndarray:
    """The outcome as counts, checked to be whole numbers >= 0."""
    require_varies(data, condition.roles["outcome"])
    y = data[condition.roles["outcome"]].to_numpy(dtype=float)
    require(bool(np.all((y >= 0) & (y == np.round(y)))), f"'{condition.roles['outcome']}' must hold counts")
    return y


class ConfoundedRegression(Family):
    """What the families of an exposure confounded by covariates share (one
    coefficient of a linear, logistic or count model): the roles, the dgp
    schema and its check (``outcome`` says which outcome keys it needs), and
    the nuisance parameters of a dataset, the confounding and the
    confounder's effect, drawn per dataset."""

    category = "regression"
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns"}
    min_n = 30
    r_pvalue = "res[2, 4]"
    outcome: str = "linear"

    def draw_params(self, scenario, n, rng):
        return {"confounding": float(rng.uniform(*CONFOUNDING)),
                "confounder_effect": float(rng.uniform(*CONFOUNDER_EFFECT))}

    def validate(self, scenario):
        check_dgp(scenario, outcome=self.outcome)


class LinearRegression(ConfoundedRegression):
    """The linear families on a confounded exposure (ols_coefficient,
    ols_robust, and tobit on its latent outcome): the effect is the exposure's
    slope in outcome residual SDs per SD of its part the covariates do not
    explain."""

    dgp_keys = ("outcome", "exposure", "covariates", "confounder", "exposure_link")
    medium = float(np.sqrt(MEDIUM_F2))
    effect_unit = "outcome residual SDs per SD of the exposure net of the covariates (sqrt of partial f2)"
    # where Breusch-Pagan, judged at half the level beside the test of the squared covariates, sees
    # ols_robust's growing spread in 90 % of datasets
    min_n = 60

    def draw_params(self, scenario, n, rng):
        """Also the model's number of coefficients (for the t test's df)."""
        return {**super().draw_params(scenario, n, rng), "coefficients": 2 + len(scenario.roles["covariates"])}

    def hints(self, condition, data):
        return _describe.regression(data, condition.roles)


class CountRegression(FactorExposure, ConfoundedRegression):
    """The count families (poisson_regression, negative_binomial): counts over
    an exposure time, the log of which is the model's offset."""

    question_kind = "counts"
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns", "exposure_time": "numeric",
             LEVELS: "value"}
    #: Real data may have no exposure time (the model then has no offset, as R's call without it), and an
    #: exposure of several levels.
    optional_roles = ("exposure_time", LEVELS)
    value_domains = {LEVELS: LEVELS_DOMAIN}
    dummy_rewrite = ('i = names.index("{exposure}")',
                     'i = next(k for k, name in enumerate(names) if name.startswith("{exposure}[T."))  # its one dummy')
    min_n = 60
    dgp_keys = ("rate", "time", "exposure", "covariates", "confounder", "exposure_link")
    outcome = "count"
    medium = float(np.log(1.5))
    effect_unit = "log rate ratio per SD of the exposure"

    @staticmethod
    def mean_weight(scenario, gamma: float, theta: float | None = None) -> float:
        """The mean IRLS weight of a row at no effect, E[m / (1 + m / theta)] (E m for
        the Poisson, theta None), over the expected counts m = rate t exp(gamma c) of
        the design: c standard normal, t uniform on the dgp's time (by quadrature)."""
        low, high = scenario.dgp["time"]
        times = low + (high - low) * (np.arange(64) + 0.5) / 64  # midpoints of the uniform time
        rate = scenario.dgp["rate"]

        def weight(c):
            m = rate * times[None, :] * np.exp(gamma * c[:, None])
            return (m if theta is None else m / (1.0 + m / theta)).mean(axis=1)
        return normal_expectation(weight)

    def hints(self, condition, data):
        return _describe.count_regression(data, condition.roles)

    #: The offset in the reference templates, and what stands for it without an exposure time.
    OFFSET = {"r": (" + offset(log({exposure_time}))", ""),
              "py": ('offset = np.log(d["{exposure_time}"].to_numpy(float))', "offset = 0.0  # no exposure time, no offset")}

    def code_for(self, roles, lang):
        code = super().code_for(roles, lang)
        return code if roles.get("exposure_time") is not None else rewrite(code, [self.OFFSET[lang]], self.name)

    def canonical_for(self, roles):
        return without_offset(super().canonical_for(roles), roles)

    def title_for(self, roles):
        return without_offset(super().title_for(roles), roles)


#: How a count model's call, title and method name the offset, struck where a task has no exposure time.
OFFSET_WORDS = (" + offset(log(exposure_time))", " with an exposure-time offset", ", log exposure-time offset")


def without_offset(text: str, roles: dict) -> str:
    """A count model's call, title or method name, its offset struck where the task has no exposure time."""
    if roles.get("exposure_time") is not None:
        return text
    for words in OFFSET_WORDS:
        text = text.replace(words, "")
    return text

