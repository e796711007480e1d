"""One coefficient of a random-intercept linear mixed model of individuals
nested in clusters whose exposure is a property of the cluster.

R: ``summary(lmerTest::lmer(outcome ~ exposure + covariates + (1 | cluster)))``,
the exposure's row: lme4's REML fit (its optimizer path reproduced, see
:mod:`taskfactory.methods._mixed`) and lmerTest's t on Satterthwaite's
degrees of freedom. The grid's ``n`` counts clusters, of unequal sizes (4 to
20 rows each, drawn per cluster). The data: one exposure value per cluster,
individual covariates that predict the outcome, and errors sharing a normal
cluster intercept (intra-cluster correlation ``icc`` of the error, 0.1 to 0.5,
drawn per dataset). The tempting wrong test is the same regression's classical
standard error, which takes the rows for independent. The mixed model's t is
also accepted on ``ols_cluster``'s data, but not the other way round: with
few clusters, as here from 20, the Satterthwaite t keeps its level where the
cluster-robust t (vcovCL on the residual df) rejects a true null too often
(0.12 at 20 clusters, 0.09 at 30 and 50, over 1,000 datasets), which is why
this family reaches down to 20 clusters and ``ols_cluster`` stops at 50.
"""

import numpy as np

from ..effects import t_critical
from ..family import Family
from ..kit import covariates, finish
from ..registry import register
from . import _describe
from ._names import LINEAR_MIXED, OLS
from ._regression import CONFOUNDER_EFFECT, MEDIUM_F2, check_dgp, coefficients
from .ols_cluster import LMER_CALL, OlsCluster, random_intercept

CLUSTER_SIZE = (4, 20)
ICC = (0.1, 0.5)


def generate(condition, rng):
    """Clusters of ``sizes`` rows: a standard normal exposure per cluster,
    covariates per row, and an error of a normal cluster intercept (variance
    ``icc``) plus a row term (variance 1 - icc)."""
    k, dgp, params, roles = condition.n, condition.dgp, condition.params, condition.roles
    sizes, icc = np.asarray(params["sizes"], dtype=int), params["icc"]
    rows = int(sizes.sum())
    cluster = np.repeat(np.arange(1, k + 1), sizes)
    columns, confounder = covariates(condition, rng, rows)
    exposure = rng.standard_normal(k)[cluster - 1]
    error = rng.normal(0.0, np.sqrt(icc), k)[cluster - 1] + rng.normal(0.0, np.sqrt(1.0 - icc), rows)
    slope = dgp.get("direction", 1) * condition.effect_value
    outcome = slope * exposure + params["confounder_effect"] * confounder + error
    columns[roles["exposure"]] = dgp["exposure"][0] + dgp["exposure"][1] * exposure
    columns[roles["outcome"]] = dgp["outcome"][0] + dgp["outcome"][1] * outcome
    columns[roles["cluster"]] = cluster
    return finish(condition, rng, columns)


class LinearMixed(Family):
    name = "linear_mixed"
    title = "Linear mixed model coefficient with a random intercept per cluster"
    category = "regression"
    question_kind = "clustered_regression"
    canonical = LMER_CALL
    test_name = LINEAR_MIXED
    naive_name = OLS
    roles = {"outcome": "numeric", "exposure": "numeric", "covariates": "columns", "cluster": "cluster"}
    n_unit = "clusters"
    min_n = 20  # the Satterthwaite t keeps its level with 20 clusters (ols_cluster's vcovCL t needs 50)
    max_n = 800
    dgp_keys = OlsCluster.dgp_keys
    naive_method = OlsCluster.naive_method
    r_pvalue = "res[2, 5]"
    medium = float(np.sqrt(MEDIUM_F2))
    effect_unit = "outcome error SDs per SD of the cluster-level exposure"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        return {"sizes": [int(s) for s in rng.integers(CLUSTER_SIZE[0], CLUSTER_SIZE[1] + 1, n)],
                "icc": float(rng.uniform(*ICC)),
                "confounder_effect": float(rng.uniform(*CONFOUNDER_EFFECT)),
                "coefficients": 2 + len(scenario.roles["covariates"])}

    def rows(self, n, params=None):
        return n * CLUSTER_SIZE[1] if params is None else int(sum(params["sizes"]))

    def validate(self, scenario):
        check_dgp(scenario, confounded=False)

    def analyse(self, condition, data):
        return random_intercept(condition, data)

    def naive(self, condition, data):
        return coefficients(condition, data, "classical", self.naive_method)

    def effect_for_z(self, z, n, params):
        """The slope whose t sits at the critical value: the GLS estimate's
        variance is 1 / sum_g 1 / (icc + (1 - icc) / m_g) for clusters of m_g
        rows (a unit-variance exposure and error), its df about n - p."""
        sizes, icc = np.asarray(params["sizes"], dtype=float), params["icc"]
        information = float(np.sum(1.0 / (icc + (1.0 - icc) / sizes)))
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(information))

    def hints(self, condition, data):
        return _describe.clustered_regression(data, condition.roles)


register(LinearMixed())
