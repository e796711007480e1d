"""Cox proportional hazards model: time to an event in two groups that differ
on prognostic covariates.

R: ``summary(survival::coxph(Surv(time, event) ~ group + covariates))`` with
R's defaults (Efron ties), the group's row: the log hazard ratio and its Wald
z. The data are ``log_rank``'s (see :class:`taskfactory.methods.log_rank.TimeToEvent`)
but for how the groups form: membership of the second group follows a latent
score correlated (0.6 to 0.8, drawn per dataset) with the covariates'
prognostic score, as where the treatment or exposure is chosen rather than
randomised, so the groups differ visibly on the covariates and the covariates
predict the hazard. The tempting wrong test is the log-rank test of the
groups, which ignores that confounding. A fit that R warns on (a monotone
likelihood, no convergence) or a group with fewer than 5 events is redrawn.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..kit import column_spec, covariates, crossed_clusters, finish, split_sizes, survival_times
from ..registry import register
from ._factor import LEVELS, LEVELS_DOMAIN, FactorExposure
from ._names import COX_PH, LOG_RANK
from .log_rank import COX_METHOD, TimeToEvent, cox_test, log_rank_test

#: |corr(latent group score, prognostic score)|, drawn per dataset.
CONFOUNDING = (0.6, 0.8)


def generate(condition, rng):
    """Covariates; the second group the rows whose latent score
    rho c + sqrt(1 - rho^2) u is highest (c the prognostic score, rho the drawn
    confounding with the sign of the dgp's ``exposure_link``); Weibull
    proportional-hazards times whose log hazard is the group's effect plus the
    confounder's (see :func:`kit.survival_times`)."""
    dgp, params, roles = condition.dgp, condition.params, condition.roles
    n = condition.n
    columns, confounder = covariates(condition, rng, n)
    rho = dgp["exposure_link"] * params["confounding"]
    latent = rho * confounder + np.sqrt(1.0 - rho * rho) * rng.standard_normal(n)
    first = split_sizes(n, [params["share"], 1.0 - params["share"]])[0]
    second = np.zeros(n)
    second[np.argsort(latent, kind="stable")[first:]] = 1.0
    eta = dgp.get("direction", 1) * condition.effect_value * second + params["confounder_effect"] * confounder
    time, event = survival_times(condition, rng, eta)
    levels = column_spec(condition, "group")["levels"]
    columns[roles["group"]] = np.asarray(levels, dtype=object)[second.astype(int)]
    columns[roles["time"]] = time
    columns[roles["event"]] = event
    return finish(condition, rng, {**columns, **crossed_clusters(condition, n, rng)})


class CoxPh(FactorExposure, TimeToEvent):
    name = "cox_ph"
    title = "Cox proportional hazards regression coefficient (Wald z)"
    canonical = "summary(coxph(Surv(time, event) ~ group + covariates))"
    roles = {**TimeToEvent.roles, LEVELS: "value", "cluster": "cluster"}
    optional_roles = (LEVELS, "cluster")   # cluster: as log_rank's
    value_domains = {LEVELS: LEVELS_DOMAIN}
    factor_role = "group"
    levels_canonical = "anova(coxph(Surv(time, event) ~ covariates), coxph(Surv(time, event) ~ group + covariates))"
    levels_r_pvalue = 'res[2, "Pr(>|Chi|)"]'
    test_name = COX_PH
    naive_name = LOG_RANK
    naive_method = "Log-rank test of the groups, ignoring the covariates"
    r_pvalue = "res[1, 5]"
    dgp_keys = ("follow_up", "covariates", "confounder", "exposure_link")
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return {**super().draw_params(scenario, n, rng), "confounding": float(rng.uniform(*CONFOUNDING))}

    def validate(self, scenario):
        super().validate(scenario)
        if scenario.dgp.get("exposure_link") not in (1, -1):
            raise ValueError("dgp exposure_link must be 1 or -1")

    def analyse(self, condition, data):
        return cox_test(condition, data, COX_METHOD, factor=True)

    def naive(self, condition, data):
        return log_rank_test(condition, data, self.naive_method)

    def effect_for_z(self, z, n, params):
        """Schoenfeld with covariates: the Wald z is about
        log(HR) sqrt(D p (1 - p) (1 - R^2)), R the correlation of the group
        with the prognostic score, rho phi(tau) / sqrt(p (1 - p)) for a
        threshold tau on the latent score."""
        p = 1.0 - params["share"]
        tau = stats.norm.isf(p)
        r = params["confounding"] * stats.norm.pdf(tau) / np.sqrt(p * (1.0 - p))
        return float(z / np.sqrt(self.information(n, params) * (1.0 - r * r)))


register(CoxPh())
