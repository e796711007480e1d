"""One coefficient of a random-intercept linear mixed model of individuals
nested in clusters whose exposure is a property of the cluster.

R: ``summary(lmerTest::lmer(outcome ~ exposure + covariates + (1 | cluster)))``,
the exposure's row: lme4's REML fit (its optimizer path reproduced, see
:mod:`taskfactory.methods._mixed`) and lmerTest's t on Satterthwaite's
degrees of freedom. The design and data are ``ols_cluster``'s (its
``generate``, its cluster sizes and its range of N): the grid's ``n`` counts
clusters, one exposure value per cluster (or a cluster level plus a part
varying within clusters), individual covariates that predict
the outcome, and errors sharing a normal cluster intercept (intra-cluster
correlation ``icc`` of the error, here 0.1 to 0.5, drawn per dataset). The
tempting wrong test is the same regression's classical standard error, which
takes the rows for independent. From 100 clusters the cluster-robust t
(``ols_cluster``'s test) keeps its level on these data, so it is accepted
beside the mixed model, as the mixed model is on ``ols_cluster``'s data.
"""

import numpy as np

from ..effects import t_critical
from ..registry import register
from ._names import LINEAR_MIXED
from .ols_cluster import CLUSTER_ROBUST, LMER_CALL, OlsCluster, random_intercept


class LinearMixed(OlsCluster):
    name = "linear_mixed"
    title = "Linear mixed model coefficient with a random intercept per cluster"
    canonical = LMER_CALL
    test_name = LINEAR_MIXED
    accepted = (CLUSTER_ROBUST,)
    r_pvalue = "res[2, 5]"
    icc_range = (0.1, 0.5)

    def analyse(self, condition, data):
        return random_intercept(condition, data)

    def effect_for_z(self, z, n, params):
        """The slope whose t sits at the critical value: the GLS estimate's
        variance is 1 / sum_g 1 / (icc + (1 - icc) / m_g) for clusters of m_g
        rows (a unit-variance exposure and error), its df about n - p. An
        exposure with a share b of its variance between clusters adds, per
        cluster, the information of its within part: sum_g over
        [m_g - icc (m_g^2 b + m_g (1 - b)) / (1 - icc + m_g icc)] / (1 - icc)."""
        sizes, icc = np.asarray(params["sizes"], dtype=float), params["icc"]
        if "between" in params:
            b = params["between"]
            squared = sizes * sizes * b + sizes * (1.0 - b)  # E (sum of a cluster's exposure)^2
            information = float(np.sum(sizes - icc * squared / (1.0 - icc + sizes * icc)) / (1.0 - icc))
        else:
            information = float(np.sum(1.0 / (icc + (1.0 - icc) / sizes)))
        return float(t_critical(z, n - params["coefficients"]) / np.sqrt(information))


register(LinearMixed())
