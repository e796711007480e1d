"""The effect of an endogenous exposure, estimated with an instrument.

R: ``summary(AER::ivreg(outcome ~ exposure + covariates | instrument + covariates))``,
the exposure's row: two-stage least squares, classical standard errors from
the structural residuals, t on n - p degrees of freedom. The data: measured
covariates that drive the exposure and the outcome (a confounder, as in
:mod:`taskfactory.methods._regression`), and an unmeasured influence shared by
the exposure and the outcome (their errors correlate at 0.3 to 0.6, drawn per
dataset, with the sign the scenario gives); an instrument that moves the
exposure (its share of the exposure's variance net of the covariates drawn
per dataset, 0.4 to 0.65) and reaches the outcome only through it. A dataset
whose instrument is weak (the first-stage F of the instrument given the
covariates at most 10) cannot give a reliable 2SLS test and is refused. The
tempting wrong test is the linear regression adjusted for the covariates,
whose slope carries the unmeasured influence.

A scenario's dgp gives the keys of a linear regression scenario (see
:mod:`taskfactory.methods._regression`: ``outcome``, ``exposure``,
``covariates``, ``confounder``, ``exposure_link``, ``direction``) and::

    instrument: [mean, sd]       # the instrument's mean and SD
    instrument_link: -1          # the sign of the instrument's effect on the exposure
    endogeneity_link: 1          # the sign of the correlation of the exposure's and the outcome's errors
"""

import numpy as np
import pandas as pd

from ..effects import t_critical
from ..errors import DataError
from ..family import rewrite
from ..kit import correlated_normals, covariates, finish
from ..registry import register
from ..result import TestResult
from . import _describe
from ._common import require, require_varies
from ._models import ivreg_terms, lm_terms, model_matrix
from ._names import IV_2SLS, OLS
from ._regression import CONFOUNDER_EFFECT, CONFOUNDING, ConfoundedRegression, mean_and_sd, check_dgp, coefficients

METHOD = "Instrumental-variable regression (AER::ivreg, two-stage least squares), t test of the coefficient"
#: Range of the correlation of the exposure's and the outcome's unmeasured
#: parts (the endogeneity) and of the instrument's share of the variance of
#: the exposure net of the covariates, drawn per dataset.
ENDOGENEITY = (0.3, 0.6)
INSTRUMENT_R2 = (0.4, 0.65)
#: The first-stage F at or below which an instrument is too weak for the test.
WEAK_F = 10.0


def generate(condition, rng):
    """Covariates and their confounder c; a standard normal instrument z; the
    exposure x = r c + sqrt(1 - r^2) (s pi z + sqrt(1 - pi^2) v), r the drawn
    ``confounding`` with the sign of ``exposure_link``, s the
    ``instrument_link``, pi^2 the drawn ``instrument_r2``; the outcome from
    the exposure (slope ``effect`` per SD of its part net of the covariates),
    the confounder and an error e correlated with v at the drawn
    ``endogeneity`` with the sign of ``endogeneity_link``."""
    n, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    columns, confounder = covariates(condition, rng, n)
    z = rng.standard_normal(n)
    v, e = correlated_normals(rng, n, dgp["endogeneity_link"] * params["endogeneity"])
    pi = np.sqrt(params["instrument_r2"])
    net = dgp["instrument_link"] * pi * z + np.sqrt(1.0 - pi * pi) * v
    r = dgp["exposure_link"] * params["confounding"]
    x = r * confounder + np.sqrt(1.0 - r * r) * net
    slope = dgp.get("direction", 1) * condition.effect_value / np.sqrt(1.0 - r * r)
    outcome = slope * x + params["confounder_effect"] * confounder + e
    columns[roles["instrument"]] = dgp["instrument"][0] + dgp["instrument"][1] * z
    columns[roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * x
    columns[roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    return finish(condition, rng, columns)


def instrument_columns(roles: dict) -> list[str]:
    """The instrument, then any further ones real data give (``instruments``)."""
    return [roles["instrument"], *(roles.get("instruments") or [])]


def _designs(condition, data):
    """The model matrices of the regressors (intercept, exposure, covariates)
    and of the instruments (intercept, instruments, covariates), with their
    column names, from one ``model_matrix`` of all the columns."""
    roles = condition.roles
    k = len(instrument_columns(roles))
    for col in instrument_columns(roles)[1:]:
        require(pd.api.types.is_numeric_dtype(data[col]), f"the instrument '{col}' must hold numbers")
    both, names = model_matrix(data, [roles["exposure"], *instrument_columns(roles), *roles["covariates"]])
    regressors, instruments = [0, 1, *range(2 + k, len(names))], [0, *range(2, len(names))]
    return (both[:, regressors], [names[j] for j in regressors],
            both[:, instruments], [names[j] for j in instruments])


def first_stage_f(condition, data, designs=None) -> float:
    """The F of the instruments in ``lm(exposure ~ instruments + covariates)``
    against ``lm(exposure ~ covariates)`` (for one instrument, the square of
    its t); ``designs`` is :func:`_designs`' result, if at hand."""
    _, _, Z, names = designs or _designs(condition, data)
    x = data[condition.roles["exposure"]].to_numpy(dtype=float)
    k = len(instrument_columns(condition.roles))
    if k == 1:
        return float(lm_terms(x, Z, names)[1].statistic ** 2)
    restricted = np.delete(Z, range(1, 1 + k), axis=1)
    rss = [float(np.sum((x - M @ np.linalg.lstsq(M, x, rcond=None)[0]) ** 2)) for M in (restricted, Z)]
    return (rss[0] - rss[1]) / k / (rss[1] / (len(x) - Z.shape[1]))


def iv_coefficients(condition, data, method: str = METHOD) -> TestResult:
    """The exposure's row of ``summary(AER::ivreg(outcome ~ exposure +
    covariates | instrument + covariates))``; DataError when the instrument
    is weak (first-stage F at most :data:`WEAK_F`)."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["exposure"], roles["instrument"])
    designs = _designs(condition, data)
    X, names, Z, _ = designs
    require(len(data) > Z.shape[1], f"{len(data)} complete rows for {Z.shape[1]} coefficients")
    f = first_stage_f(condition, data, designs)
    if not f > WEAK_F:
        named = "', '".join(instrument_columns(roles))
        what = (f"the instrument '{named}' is weak: its" if len(instrument_columns(roles)) == 1
                else f"the instruments '{named}' are weak: their")
        raise DataError(f"{what} first-stage F given the covariates is {f:.2f}, not above {WEAK_F:g}")
    y = data[roles["outcome"]].to_numpy(dtype=float)
    terms = ivreg_terms(y, X, names, Z)
    return TestResult.from_terms(terms, roles["exposure"], method, "t", n=len(data))


class Iv2sls(ConfoundedRegression):
    name = "iv_2sls"
    title = "Instrumental-variable (two-stage least squares) regression coefficient"
    question_kind = "instrumented"
    canonical = "summary(AER::ivreg(outcome ~ exposure + covariates | instrument + covariates))"
    test_name = IV_2SLS
    naive_name = OLS
    roles = {"outcome": "numeric", "exposure": "numeric", "instrument": "numeric", "instruments": "columns",
             "covariates": "columns"}
    #: Further instruments beside ``instrument``, as real analyses may have (none in the scenarios).
    optional_roles = ("instruments",)
    min_n = 60  # here the first-stage F exceeds 10 in 99 % of clean datasets, 97 % of those with blank cells
    dgp_keys = ("outcome", "exposure", "instrument", "covariates", "confounder", "exposure_link",
                "instrument_link", "endogeneity_link")
    naive_method = "Linear regression of the outcome on the exposure and the covariates, ignoring the instrument"
    medium = 0.5
    effect_unit = "outcome error SDs per SD of the exposure net of the covariates"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The confounding and the confounder's effect (as the regression
        families), the endogeneity, the instrument's strength and the model's
        number of coefficients."""
        return {"confounding": float(rng.uniform(*CONFOUNDING)),
                "confounder_effect": float(rng.uniform(*CONFOUNDER_EFFECT)),
                "endogeneity": float(rng.uniform(*ENDOGENEITY)),
                "instrument_r2": float(rng.uniform(*INSTRUMENT_R2)),
                "coefficients": 2 + len(scenario.roles["covariates"])}

    def validate(self, scenario):
        check_dgp(scenario)
        dgp = scenario.dgp
        mean, sd = mean_and_sd(dgp.get("instrument"), "dgp instrument")
        lo, hi = scenario.variable(scenario.roles["instrument"]).range
        if not (lo < mean - 4 * sd and mean + 4 * sd < hi):
            raise ValueError(f"dgp instrument mean +/- 4 sd must lie inside the range of "
                             f"'{scenario.roles['instrument']}'")
        for key in ("instrument_link", "endogeneity_link"):
            if dgp.get(key) not in (1, -1):
                raise ValueError(f"dgp {key} must be 1 or -1")

    def analyse(self, condition, data):
        return iv_coefficients(condition, data)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method)

    def effect_for_z(self, z, n, params):
        """The slope whose t on n - p df sits at the critical value: the 2SLS
        estimate's variance is about sigma^2 / (n Var(x net of c) pi^2), so in
        these units its SD is 1 / sqrt(n pi^2)."""
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(n * params["instrument_r2"]))

    def hints(self, condition, data):
        return _describe.instrumented(data, condition.roles)

    def code_for(self, roles, lang):
        code = super().code_for(roles, lang)
        extra = roles.get("instruments") or []
        if not extra:
            return code
        change = {"r": ("| {instrument} + ", "| {instrument} + {instruments} + "),
                  "py": ("~ {instrument}]", "~ {instrument} + " + " + ".join(extra) + "]")}[lang]
        return rewrite(code, [change], self.name)

    def canonical_for(self, roles):
        return self.canonical.replace("| instrument +", "| instrument + instruments +") \
            if roles.get("instruments") else self.canonical


register(Iv2sls())
