"""One exposure's slope in a panel of units each observed over several
periods, estimated within units (entity fixed effects).

R: ``summary(plm::plm(outcome ~ exposure, data = d, index = c("unit", "period"),
model = "within"))``, the exposure's row: outcome and exposure less their
unit means, least squares on the deviations, classical standard errors on
n - units - 1 degrees of freedom (an unbalanced panel, a unit missing some
periods, is fitted the same way). The grid's ``n`` counts units, each observed
in ``periods`` periods (4 to 10, drawn per dataset).

The data: the exposure is a unit level (its spread between units ``between``
times its spread within them) plus a part varying within units; each unit
has a fixed level of the outcome (SD ``unit_sd`` idiosyncratic-error SDs)
correlated, at ``unit_corr`` with the sign of the dgp's ``unit_link``, with the
unit's level of exposure; the idiosyncratic errors are independent. So the
tempting wrong test, the pooled regression ``lm(outcome ~ exposure)`` that
ignores the units, mixes the between-unit association (the unit levels) into
the slope. The effect is the slope in idiosyncratic-error SDs per SD of the
exposure within units.
"""

import numpy as np

from ..effects import t_critical
from ..family import Family
from ..kit import finish
from ..registry import register
from ..result import TestResult
from ..scenarios import require_direction
from . import _describe
from ._common import require, require_varies
from ._models import lm_terms, model_matrix, within_terms
from ._names import PANEL_WITHIN, POOLED_OLS
from ._regression import MEDIUM_F2, mean_and_sd

METHOD = "Oneway (individual) effect Within Model"
PERIODS = (4, 10)
#: Between-unit SD of the exposure's unit levels over its within-unit SD.
BETWEEN = (0.8, 1.5)
#: SD of the units' outcome levels, in idiosyncratic-error SDs.
UNIT_SD = (1.0, 2.0)
#: |corr(unit level of the outcome, unit level of the exposure)|.
UNIT_CORR = (0.3, 0.7)


def generate(condition, rng):
    """``n`` units by ``periods`` periods: the standardised exposure is the
    unit's level (SD ``between``) plus a within-unit part (SD 1); the outcome,
    in idiosyncratic-error SDs, is the unit's level (SD ``unit_sd``, correlated
    with the unit's exposure level) plus the slope times the exposure plus an
    independent standard normal error."""
    k, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    periods, between = params["periods"], params["between"]
    unit = np.repeat(np.arange(1, k + 1), periods)
    period = np.tile(np.arange(1, periods + 1), k)
    level = rng.standard_normal(k)
    rho = dgp["unit_link"] * params["unit_corr"]
    unit_effect = params["unit_sd"] * (rho * level + np.sqrt(1.0 - rho * rho) * rng.standard_normal(k))
    x = between * level[unit - 1] + rng.standard_normal(k * periods)
    slope = dgp.get("direction", 1) * condition.effect_value
    y = unit_effect[unit - 1] + slope * x + rng.standard_normal(k * periods)
    mean_x, sd_x = dgp["exposure"]
    mean_y, sd_y = dgp["outcome"]
    return finish(condition, rng, {
        roles["outcome"]: mean_y + sd_y * y,
        roles["exposure"]: mean_x + sd_x * x / np.sqrt(1.0 + between * between),
        roles["unit"]: unit,
        roles["period"]: period,
    })


class PanelFixedEffects(Family):
    name = "panel_fixed_effects"
    title = "Panel regression with unit fixed effects (within estimator)"
    category = "panel"
    question_kind = "panel"
    canonical = 'summary(plm::plm(outcome ~ exposure, index = c("unit", "period"), model = "within"))'
    test_name = PANEL_WITHIN
    naive_name = POOLED_OLS
    roles = {"outcome": "numeric", "exposure": "numeric", "unit": "unit", "period": "period"}
    n_unit = "units"
    min_n = 10
    max_n = 1200  # at most 12,000 rows, as ols_cluster
    dgp_keys = ("outcome", "exposure", "unit_link")
    naive_method = "Pooled linear regression of the outcome on the exposure, ignoring the units"
    r_pvalue = "res[1, 4]"
    medium = float(np.sqrt(MEDIUM_F2))
    effect_unit = "idiosyncratic-error SDs per within-unit SD of the exposure"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return {"periods": int(rng.integers(PERIODS[0], PERIODS[1] + 1)),
                "between": float(rng.uniform(*BETWEEN)),
                "unit_sd": float(rng.uniform(*UNIT_SD)),
                "unit_corr": float(rng.uniform(*UNIT_CORR))}

    def rows(self, n, params=None):
        return n * (PERIODS[1] if params is None else params["periods"])

    def validate(self, scenario):
        dgp = scenario.dgp
        mean_and_sd(dgp.get("outcome"), "dgp outcome")
        mean, sd = mean_and_sd(dgp.get("exposure"), "dgp exposure")
        lo, hi = scenario.variable(scenario.roles["exposure"]).range
        if not (lo < mean - 4 * sd and mean + 4 * sd < hi):
            raise ValueError(f"dgp exposure mean +/- 4 sd must lie inside the range of '{scenario.roles['exposure']}'")
        link = dgp.get("unit_link")
        if isinstance(link, bool) or link not in (1, -1):
            raise ValueError("dgp unit_link (the sign of the units' outcome levels' correlation with their exposure "
                             "levels) must be 1 or -1")
        require_direction(scenario)

    def analyse(self, condition, data):
        roles = condition.roles
        require_varies(data, roles["outcome"], roles["exposure"])
        # plm warns "duplicate couples (id-time)" and its fit is then unreliable
        require(not data.duplicated([roles["unit"], roles["period"]]).any(),
                f"a value of '{roles['unit']}' appears twice in one value of '{roles['period']}'")
        terms = within_terms(data[roles["outcome"]].to_numpy(dtype=float),
                             data[roles["exposure"]].to_numpy(dtype=float), [roles["exposure"]],
                             data[roles["unit"]])
        return TestResult.from_terms(terms, roles["exposure"], METHOD, "t", n=len(data))

    def naive(self, condition, data):
        roles = condition.roles
        X, names = model_matrix(data, [roles["exposure"]])
        terms = lm_terms(data[roles["outcome"]].to_numpy(dtype=float), X, names)
        return TestResult.from_terms(terms, roles["exposure"], self.naive_method, "t", n=len(data))

    def effect_for_z(self, z, n, params):
        """The slope whose t sits at the critical value: the within estimator's
        variance is 1 / sum of squared within-unit deviations of the exposure,
        about 1 / (n (T - 1)) in its within-unit SDs."""
        periods = params["periods"]
        return float(t_critical(z, n * periods - n - 1) / np.sqrt(n * (periods - 1)))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.panel(data, roles["outcome"], roles["exposure"], roles["unit"], roles["period"])


register(PanelFixedEffects())
