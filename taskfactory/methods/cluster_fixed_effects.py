"""One coefficient of a linear model of individuals nested in clusters,
estimated within clusters, where the clusters' levels of the outcome go with
their levels of the exposure.

R: ``summary(lm(outcome ~ exposure + covariates + factor(cluster)))``, the
exposure's row: the least-squares dummy-variable fit, whose slope and
classical standard error are the within estimator's (each column less its
cluster mean; n - clusters - p residual degrees of freedom). The design is
``ols_cluster``'s on scenarios whose exposure varies within clusters (the
same cluster sizes, covariates, share ``between`` of the exposure's variance
between clusters and range of N), except that each cluster's intercept is
correlated, at ``cluster_corr`` (0.5 to 0.8) with the sign of the dgp's
``cluster_link``, with the cluster's level of the exposure, and the
intercepts are larger (intra-cluster correlation ``icc`` of the error 0.2 to
0.5). So a model that lets the between-cluster contrast into the slope (the
random-intercept mixed model, the pooled regression with cluster-robust
errors) is biased, and a regression-based Hausman test (the cluster mean of
the exposure added to the pooled model, its cluster-robust t) shows it. The
tempting wrong test is the random-intercept mixed model, the usual answer to
rows nested in clusters. The within-between mixed model (Mundlak's: the
random-intercept model with the cluster mean of the exposure beside it),
whose exposure slope is the within-cluster one, is accepted.
"""

import numpy as np

from ..effects import t_critical
from ..family import Alternative
from ..registry import register
from ..result import TestResult
from ._common import require, require_varies
from ._mixed import lmer_terms
from ._models import model_matrix, within_terms
from ._names import CLUSTER_WITHIN, LINEAR_MIXED, WITHIN_BETWEEN
from .ols_cluster import LMER_METHOD, WITHIN_CLUSTERS, OlsCluster, random_intercept

METHOD = "Linear regression with cluster fixed effects (least-squares dummy variables)"
WITHIN_BETWEEN_METHOD = ("Linear mixed model fit by REML with the cluster mean of the exposure, t-tests use "
                         "Satterthwaite's method (lmerTest)")
#: |corr(cluster intercept, cluster level of the exposure)|, drawn per dataset.
CLUSTER_CORR = (0.5, 0.8)


def _design(condition, data):
    """(outcome, model matrix of the exposure and covariates, its names, the
    clusters), refusing an exposure no cluster's rows vary in."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["exposure"])
    cluster = data[roles["cluster"]]
    require(bool((data.groupby(cluster)[roles["exposure"]].nunique() > 1).any()),
            f"'{roles['exposure']}' is constant within every value of '{roles['cluster']}'")
    X, names = model_matrix(data, [roles["exposure"], *roles["covariates"]])
    return data[roles["outcome"]].to_numpy(dtype=float), X, names, cluster


def within_clusters(condition, data) -> TestResult:
    """The exposure's row of ``summary(lm(outcome ~ exposure + covariates +
    factor(cluster)))``: the within estimator with classical errors."""
    y, X, names, cluster = _design(condition, data)
    terms = within_terms(y, X[:, 1:], names[1:], cluster)
    return TestResult.from_terms(terms, condition.roles["exposure"], METHOD, "t", n=len(data))


def within_between(condition, data) -> TestResult:
    """The exposure's row of ``summary(lmerTest::lmer(outcome ~ exposure +
    .cluster_mean + covariates + (1 | cluster)))``, ``.cluster_mean`` the
    exposure's mean over the row's cluster: REML, Satterthwaite's df."""
    y, X, names, cluster = _design(condition, data)
    require(len(data) > X.shape[1] + 1, f"{len(data)} complete rows for {X.shape[1] + 1} coefficients")
    mean = data.groupby(cluster)[condition.roles["exposure"]].transform("mean").to_numpy(dtype=float)
    X = np.column_stack([X[:, :2], mean, X[:, 2:]])
    terms, _ = lmer_terms(y, X, [*names[:2], ".cluster_mean", *names[2:]], cluster)
    return TestResult.from_terms(terms, condition.roles["exposure"], WITHIN_BETWEEN_METHOD, "t", n=len(data))


class ClusterFixedEffects(OlsCluster):
    name = "cluster_fixed_effects"
    title = "Linear regression coefficient within clusters (cluster fixed effects)"
    canonical = "summary(lm(outcome ~ exposure + covariates + factor(cluster)))"
    test_name = CLUSTER_WITHIN
    naive_name = LINEAR_MIXED
    naive_method = LMER_METHOD
    accepted = (Alternative(
        method=WITHIN_BETWEEN_METHOD, run=within_between, name=WITHIN_BETWEEN, r_pvalue="res[2, 5]",
        call="summary(lmerTest::lmer(outcome ~ exposure + .cluster_mean + covariates + (1 | cluster)))",
        r_code=('d$.cluster_mean <- ave(d[["{exposure}"]], d[["{cluster}"]])\n'
                "fit <- lmerTest::lmer({outcome} ~ {exposure} + .cluster_mean + {covariates} + (1 | {cluster}), data = d)\n"
                "res <- summary(fit)$coefficients")),)
    r_pvalue = "res[2, 4]"
    dgp_keys = ("outcome", "exposure", "covariates", "confounder", "exposure_varies", "cluster_link")
    effect_unit = "outcome error SDs per SD of the exposure"
    icc_range = (0.2, 0.5)

    def draw_params(self, scenario, n, rng):
        params = super().draw_params(scenario, n, rng)
        params["cluster_corr"] = float(rng.uniform(*CLUSTER_CORR))
        return params

    def validate(self, scenario):
        super().validate(scenario)
        if scenario.dgp.get("exposure_varies") != WITHIN_CLUSTERS:
            raise ValueError(f"{self.name} needs an exposure that varies within clusters "
                             f"(dgp exposure_varies: {WITHIN_CLUSTERS})")
        link = scenario.dgp.get("cluster_link")
        if isinstance(link, bool) or link not in (1, -1):
            raise ValueError("dgp cluster_link (the sign of the clusters' intercepts' correlation with their "
                             "exposure levels) must be 1 or -1")

    def analyse(self, condition, data):
        return within_clusters(condition, data)

    def naive(self, condition, data):
        return random_intercept(condition, data)

    def effect_for_z(self, z, n, params):
        """The slope whose t sits at the critical value: the within
        estimator's variance is the within-cluster error variance 1 - icc
        over the exposure's within-cluster sum of squares, about
        (1 - b) (rows - clusters) (a unit-variance exposure and error)."""
        rows = float(np.sum(params["sizes"]))
        df = rows - n - (params["coefficients"] - 1)
        variance = (1.0 - params["icc"]) / ((1.0 - params["between"]) * (rows - n))
        return float(t_critical(z, df) * np.sqrt(variance))


register(ClusterFixedEffects())
