"""One coefficient of a random-intercept linear mixed model of individuals
nested in clusters whose exposure is a property of the cluster.

R: ``summary(lmerTest::lmer(outcome ~ exposure + covariates + (1 | cluster)))``,
the exposure's row: lme4's REML fit (its optimizer path reproduced, see
:mod:`taskfactory.methods._mixed`) and lmerTest's t on Satterthwaite's
degrees of freedom. The design and data are ``ols_cluster``'s (its
``generate``): the grid's ``n`` counts clusters, here of 4 to 20 rows each
(drawn per cluster), one exposure value per cluster, individual covariates
that predict the outcome, and errors sharing a normal cluster intercept
(intra-cluster correlation ``icc`` of the error, here 0.1 to 0.5, drawn per
dataset). The tempting wrong test is the same regression's classical
standard error, which takes the rows for independent. The mixed model's t is
also accepted on ``ols_cluster``'s data, but not the other way round: with
few clusters, as here from 20, the Satterthwaite t keeps its level where the
cluster-robust t (vcovCL on the residual df) rejects a true null too often
(0.12 at 20 clusters, 0.09 at 30 and 50, over 1,000 datasets), which is why
this family reaches down to 20 clusters and ``ols_cluster`` stops at 50.
"""

import numpy as np

from ..effects import t_critical
from ..registry import register
from ._names import LINEAR_MIXED
from .ols_cluster import LMER_CALL, OlsCluster, random_intercept


class LinearMixed(OlsCluster):
    name = "linear_mixed"
    title = "Linear mixed model coefficient with a random intercept per cluster"
    canonical = LMER_CALL
    test_name = LINEAR_MIXED
    min_n = 20  # the Satterthwaite t keeps its level with 20 clusters (ols_cluster's vcovCL t needs 50)
    accepted = ()
    r_pvalue = "res[2, 5]"
    cluster_sizes = (4, 20)
    icc_range = (0.1, 0.5)

    def analyse(self, condition, data):
        return random_intercept(condition, data)

    def effect_for_z(self, z, n, params):
        """The slope whose t sits at the critical value: the GLS estimate's
        variance is 1 / sum_g 1 / (icc + (1 - icc) / m_g) for clusters of m_g
        rows (a unit-variance exposure and error), its df about n - p."""
        sizes, icc = np.asarray(params["sizes"], dtype=float), params["icc"]
        information = float(np.sum(1.0 / (icc + (1.0 - icc) / sizes)))
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(information))


register(LinearMixed())
