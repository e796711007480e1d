"""A difference in differences: units of a treated and a comparison group,
each observed in several periods before and after a change that reached only
the treated group, with standard errors clustered by unit.

R: ``lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~unit))``,
``fit <- lm(outcome ~ treated * post)``, the ``treated:post`` row, with
sandwich's defaults (HC1 cluster sums scaled by G / (G - 1) and
(n - 1) / (n - p), t on the residual df). ``treated`` and ``post`` are 0/1
columns. The grid's ``n`` counts units, each observed in ``pre`` periods before
and ``post`` periods after the change (3 to 6 each, drawn per dataset).

The data: a treated share of the units (0.3 to 0.6) and a baseline gap between
the groups, a common linear trend over the periods, and per unit a random
level (share ``unit_share`` of the outcome's variance), a random shift of its
own at the change (variance ``shift``) and serially correlated AR(1) shocks
(``rho`` 0.5 to 0.9). The shocks of one unit move together, so the rows are
not independent: the tempting wrong test, the same regression's classical
standard error, takes them for independent. The effect is the difference in
differences in outcome SDs (the SD of a unit-period value within a group
before the change).
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
from ._models import lm_terms
from ._names import DID_CLASSICAL, DID_CLUSTER
from ._regression import mean_and_sd

METHOD = "t test of coefficients, cluster-robust standard errors (sandwich::vcovCL)"
PERIODS = (3, 6)          # periods before, and after, the change
TREATED_SHARE = (0.3, 0.6)
RHO = (0.5, 0.9)          # AR(1) correlation of a unit's shocks from one period to the next
UNIT_SHARE = (0.1, 0.3)   # the unit levels' share of the outcome's variance
SHIFT = (0.3, 0.6)        # variance of each unit's own shift at the change
TREND = (-0.1, 0.1)       # the common trend, outcome SDs per period
GAP = (-0.5, 0.5)         # the treated group's baseline gap, outcome SDs


def treated_units(n, share):
    """How many of ``n`` units are treated: ``share`` of them, at least 2, and
    at least 2 left for comparison."""
    return int(min(n - 2, max(2, round(share * n))))


def shock_contrast(pre, post, rho):
    """The variance of the post-change mean less the pre-change mean of a
    stationary AR(1) series of unit variance (correlation ``rho`` at lag 1)."""
    t = np.arange(pre + post)
    cov = rho ** np.abs(t[:, None] - t[None, :])
    c = np.concatenate([np.full(pre, -1.0 / pre), np.full(post, 1.0 / post)])
    return float(c @ cov @ c)


def generate(condition, rng):
    """``n`` units by ``pre + post`` periods, in outcome SDs: the treated
    group's gap, the common trend, the unit level, the unit's own shift after
    the change, stationary AR(1) shocks, and the effect in the treated group
    after the change."""
    k, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    pre, post = params["pre"], params["post"]
    periods = pre + post
    n_treated = treated_units(k, params["treated_share"])
    unit = np.repeat(np.arange(1, k + 1), periods)
    period = np.tile(np.arange(1, periods + 1), k)
    treated_unit = np.zeros(k, dtype=int)
    treated_unit[rng.permutation(k)[:n_treated]] = 1
    treated = treated_unit[unit - 1]
    after = (period > pre).astype(int)
    rho, share = params["rho"], params["unit_share"]
    shocks = np.empty((k, periods))
    shocks[:, 0] = rng.standard_normal(k)
    for j in range(1, periods):
        shocks[:, j] = rho * shocks[:, j - 1] + np.sqrt(1.0 - rho * rho) * rng.standard_normal(k)
    level = np.sqrt(share) * rng.standard_normal(k)
    shift = np.sqrt(params["shift"]) * rng.standard_normal(k)
    did = dgp.get("direction", 1) * condition.effect_value
    y = (params["gap"] * treated + params["trend"] * (period - 1) + level[unit - 1] + shift[unit - 1] * after
         + np.sqrt(1.0 - share) * shocks.ravel() + did * treated * after)
    mean, sd = dgp["outcome"]
    return finish(condition, rng, {
        roles["outcome"]: mean + sd * y,
        roles["treated"]: treated,
        roles["post"]: after,
        roles["unit"]: unit,
        roles["period"]: period,
    })


def did_terms(condition, data, vcov, method):
    """The ``treated:post`` row of ``lm(outcome ~ treated * post)`` with the
    ``vcov`` standard errors of :func:`taskfactory.methods._models.lm_terms`."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["treated"], roles["post"])
    treated = data[roles["treated"]].to_numpy(dtype=float)
    post = data[roles["post"]].to_numpy(dtype=float)
    for role, x in (("treated", treated), ("post", post)):
        require(bool(np.isin(x, (0.0, 1.0)).all()), f"'{roles[role]}' must hold 0 and 1")
    interaction = f"{roles['treated']}:{roles['post']}"
    X = np.column_stack([np.ones(len(data)), treated, post, treated * post])
    names = ["(Intercept)", roles["treated"], roles["post"], interaction]
    cluster = data[roles["unit"]] if vcov == "CL" else None
    terms = lm_terms(data[roles["outcome"]].to_numpy(dtype=float), X, names, vcov=vcov, cluster=cluster)
    return TestResult.from_terms(terms, interaction, method, "t", n=len(data))


class DiffInDiff(Family):
    name = "diff_in_diff"
    title = "Difference-in-differences regression with cluster-robust standard errors"
    category = "panel"
    question_kind = "policy_change"
    canonical = ("lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~unit)), "
                 "fit <- lm(outcome ~ treated * post)")
    test_name = DID_CLUSTER
    naive_name = DID_CLASSICAL
    roles = {"outcome": "numeric", "treated": "numeric", "post": "numeric", "unit": "unit", "period": "period"}
    design_roles = ("treated", "post")
    n_unit = "units"
    min_n = 40  # with 30 units R's vcovCL t test rejects a true null at about 0.065
    max_n = 800
    dgp_keys = ("outcome",)
    naive_method = "Difference-in-differences regression with classical standard errors, ignoring the units"
    r_pvalue = "res[4, 4]"
    medium = 0.5
    effect_unit = "outcome SDs (difference in differences)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return {"pre": int(rng.integers(PERIODS[0], PERIODS[1] + 1)),
                "post": int(rng.integers(PERIODS[0], PERIODS[1] + 1)),
                "treated_share": float(rng.uniform(*TREATED_SHARE)),
                "rho": float(rng.uniform(*RHO)),
                "unit_share": float(rng.uniform(*UNIT_SHARE)),
                "shift": float(rng.uniform(*SHIFT)),
                "trend": float(rng.uniform(*TREND)),
                "gap": float(rng.uniform(*GAP))}

    def rows(self, n, params=None):
        return n * (2 * PERIODS[1] if params is None else params["pre"] + params["post"])

    def validate(self, scenario):
        mean_and_sd(scenario.dgp.get("outcome"), "dgp outcome")
        for role in ("treated", "post"):
            var = scenario.variable(scenario.roles[role])
            if var.type != "integer" or tuple(var.range) != (0, 1):
                raise ValueError(f"'{var.name}' ({role}) must be an integer column with range [0, 1]")
        require_direction(scenario)

    def analyse(self, condition, data):
        return did_terms(condition, data, "CL", METHOD)

    def naive(self, condition, data):
        return did_terms(condition, data, "classical", self.naive_method)

    def effect_for_z(self, z, n, params):
        """The difference in differences whose t sits at the critical value: on
        a balanced panel it is the treated less the comparison units' mean of
        (post-change mean - pre-change mean), whose variance per unit is the
        shift's plus (1 - unit_share) times the AR(1) shocks' contrast."""
        pre, post = params["pre"], params["post"]
        n_treated = treated_units(n, params["treated_share"])
        per_unit = params["shift"] + (1.0 - params["unit_share"]) * shock_contrast(pre, post, params["rho"])
        variance = per_unit * (1.0 / n_treated + 1.0 / (n - n_treated))
        return float(t_critical(z, n * (pre + post) - 4) * np.sqrt(variance))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.policy_change(data, roles["outcome"], roles["treated"], roles["post"], roles["unit"],
                                       roles["period"])


register(DiffInDiff())
