"""One coefficient of a linear model of individuals nested in clusters whose
exposure is a property of the cluster, or varies within clusters too.

R: ``lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~cluster))``,
``fit <- lm(outcome ~ exposure + covariates)``, the exposure's row, with
sandwich's defaults: HC1 cluster sums scaled by G / (G - 1) and
(n - 1) / (n - p), t on the residual df. The grid's ``n`` counts clusters,
each of 5 to 15 rows. The data: one exposure value per cluster (or, where
the scenario's dgp says ``exposure_varies: within_clusters``, a cluster
level holding a share ``between`` of the exposure's variance, 0.3 to 0.7,
plus a part varying within clusters), individual covariates that predict the
outcome, and errors sharing a cluster intercept (intra-cluster correlation
``icc`` of the error, 0.05 to 0.3) unrelated to the exposure. The tempting
wrong test is the same model's classical standard error, which takes the rows
for independent. The random-intercept mixed model's Satterthwaite t
(``linear_mixed``'s test, ``summary(lmerTest::lmer(outcome ~ exposure +
covariates + (1 | cluster)))``) is accepted beside it: its model is right on
these data too.
"""

import numpy as np

from ..effects import t_critical
from ..family import Alternative, Family
from ..kit import covariates, finish
from ..registry import register
from ..result import TestResult
from . import _describe
from ._common import require, require_varies
from ._mixed import lmer_terms
from ._models import model_matrix
from ._names import LINEAR_MIXED, OLS, OLS_CLUSTER
from ._regression import CONFOUNDER_EFFECT, MEDIUM_F2, check_dgp, coefficients

METHOD = "t test of coefficients, cluster-robust standard errors (sandwich::vcovCL)"
LMER_METHOD = "Linear mixed model fit by REML, t-tests use Satterthwaite's method (lmerTest)"
LMER_CALL = "summary(lmerTest::lmer(outcome ~ exposure + covariates + (1 | cluster)))"
LMER_R = ("fit <- lmerTest::lmer({outcome} ~ {exposure} + {covariates} + (1 | {cluster}), data = d)\n"
          "res <- summary(fit)$coefficients")


#: The dgp's ``exposure_varies``: one exposure value per cluster (the default), or values varying within clusters.
BETWEEN_CLUSTERS, WITHIN_CLUSTERS = "between_clusters", "within_clusters"
#: Share of the variance of an exposure varying within clusters that lies
#: between them (the cluster levels), drawn per dataset.
EXPOSURE_BETWEEN = (0.3, 0.7)


def generate(condition, rng):
    """Clusters of ``sizes`` rows: a standard normal exposure (its cluster
    level, plus a part varying within clusters where ``between`` is drawn),
    covariates per row, and an error of a normal cluster intercept (variance
    ``icc``, correlated at ``cluster_corr`` with the exposure's cluster level
    where that is drawn) plus a row term (variance 1 - icc)."""
    k, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    sizes, icc = np.asarray(params["sizes"], dtype=int), params["icc"]
    rows = int(sizes.sum())
    cluster = np.repeat(np.arange(1, k + 1), sizes)
    columns, confounder = covariates(condition, rng, rows)
    level = rng.standard_normal(k)
    if "between" in params:
        between = params["between"]
        exposure = np.sqrt(between) * level[cluster - 1] + np.sqrt(1.0 - between) * rng.standard_normal(rows)
    else:
        exposure = level[cluster - 1]
    if "cluster_corr" in params:
        rho = dgp["cluster_link"] * params["cluster_corr"]
        intercept = np.sqrt(icc) * (rho * level + np.sqrt(1.0 - rho * rho) * rng.standard_normal(k))
    else:
        intercept = rng.normal(0.0, np.sqrt(icc), k)
    error = intercept[cluster - 1] + rng.normal(0.0, np.sqrt(1.0 - icc), rows)
    slope = dgp.get("direction", 1) * condition.effect_value
    outcome = slope * exposure + params["confounder_effect"] * confounder + error
    columns[roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * exposure
    columns[roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    columns[roles["cluster"]] = cluster
    return finish(condition, rng, columns)


def cluster_robust(condition, data):
    """The exposure's row of ``lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~cluster))``."""
    cluster = data[condition.roles["cluster"]].to_numpy()
    return coefficients(condition, data, "CL", METHOD, cluster=cluster)


#: The cluster-robust t as an accepted alternative (on ``linear_mixed``'s data).
CLUSTER_ROBUST = Alternative(method=METHOD, call="lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~cluster))",
                             run=cluster_robust, name=OLS_CLUSTER, r_pvalue="res[2, 4]",
                             r_code=("fit <- lm({outcome} ~ {exposure} + {covariates}, data = d)\n"
                                     "res <- lmtest::coeftest(fit, vcov = sandwich::vcovCL(fit, cluster = ~{cluster}))"))


def random_intercept(condition, data):
    """The exposure's row of ``summary(lmerTest::lmer(outcome ~ exposure +
    covariates + (1 | cluster)))$coefficients``: REML, Satterthwaite's df."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["exposure"])
    X, names = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    require(len(data) > X.shape[1], f"{len(data)} complete rows for {X.shape[1]} coefficients")
    y = data[roles["outcome"]].to_numpy(dtype=float)
    terms, _ = lmer_terms(y, X, names, data[roles["cluster"]])
    return TestResult.from_terms(terms, roles["exposure"], LMER_METHOD, "t", n=len(data))


class OlsCluster(Family):
    name = "ols_cluster"
    title = "Linear regression coefficient with cluster-robust standard errors"
    category = "regression"
    question_kind = "clustered_regression"
    canonical = CLUSTER_ROBUST.call
    test_name = OLS_CLUSTER
    naive_name = OLS
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns", "cluster": "cluster"}
    n_unit = "clusters"
    min_n = 100  # R's vcovCL t (on the residual df) rejects 7 % of true nulls at 50 clusters, 5 % from 100
    max_n = 800
    dgp_keys = ("outcome", "exposure", "covariates", "confounder")
    naive_method = "Linear regression with classical standard errors, ignoring the clusters"
    accepted = (Alternative(method=LMER_METHOD, call=LMER_CALL, run=random_intercept, r_code=LMER_R,
                            r_pvalue="res[2, 5]", name=LINEAR_MIXED),)
    r_pvalue = "res[2, 4]"
    medium = float(np.sqrt(MEDIUM_F2))
    effect_unit = "outcome error SDs per SD of the cluster-level exposure"
    generate = staticmethod(generate)

    #: Rows per cluster (drawn per cluster, the same for linear_mixed, so sizes
    #: do not tell the siblings apart) and the ICC of the error (drawn per dataset).
    cluster_sizes = (5, 15)
    icc_range = (0.05, 0.3)

    def draw_params(self, scenario, n, rng):
        low, high = self.cluster_sizes
        params = {"sizes": [int(s) for s in rng.integers(low, high + 1, n)],
                  "icc": float(rng.uniform(*self.icc_range)),
                  "confounder_effect": float(rng.uniform(*CONFOUNDER_EFFECT)),
                  "coefficients": 2 + len(scenario.roles["covariates"])}
        if scenario.dgp.get("exposure_varies") == WITHIN_CLUSTERS:
            params["between"] = float(rng.uniform(*EXPOSURE_BETWEEN))
        return params

    def rows(self, n, params=None):
        return n * self.cluster_sizes[1] if params is None else int(sum(params["sizes"]))

    def validate(self, scenario):
        check_dgp(scenario, confounded=False)
        if scenario.dgp.get("exposure_varies", BETWEEN_CLUSTERS) not in (BETWEEN_CLUSTERS, WITHIN_CLUSTERS):
            raise ValueError(f"dgp exposure_varies must be {BETWEEN_CLUSTERS} (one value per cluster, the default) "
                             f"or {WITHIN_CLUSTERS}")

    def analyse(self, condition, data):
        return cluster_robust(condition, data)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method)

    def effect_for_z(self, z, n, params):
        """The slope whose t sits at the critical value: the least-squares
        estimate's variance is sum_g m_g (1 + (m_g - 1) icc b) / (sum_g m_g)^2
        for clusters of m_g rows (a unit-variance exposure and error, a share
        b of the exposure's variance between clusters)."""
        m, icc = np.asarray(params["sizes"], dtype=float), params["icc"]
        variance = float(np.sum(m * (1.0 + (m - 1.0) * icc * params.get("between", 1.0))) / np.sum(m) ** 2)
        return float(t_critical(z, m.sum() - params["coefficients"]) * np.sqrt(variance))

    def hints(self, condition, data):
        return _describe.clustered_regression(data, condition.roles)


register(OlsCluster())
