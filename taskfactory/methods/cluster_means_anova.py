"""k groups of clusters: one-way ANOVA on the cluster means.

R: the outcome averaged within each cluster (and group),
``m <- aggregate(outcome ~ cluster + group, data = d, FUN = mean)``, then
``oneway.test(outcome ~ group, data = m, var.equal = TRUE)``: the F test on
k - 1 and clusters - k degrees of freedom, the cluster-level analysis of a
study that assigned whole clusters (schools, farms, wards) to 3 to 5 groups.

Every row of a cluster is in its group (at least 2 clusters a group), and
the clusters differ: each adds a normal effect whose share of the outcome's
variance, the intraclass correlation, is drawn per dataset between 0.15 and
0.35. The group means follow one_way_anova's patterns, the effect being
Cohen's f of the rows. Rows of one cluster are not independent, so the
tempting wrong test, Welch's F on the rows, rejects a true null far too
often. Its siblings take the same scenarios with the groups assigned one row
at a time (every cluster holding rows of several groups).
"""

import dataclasses

import numpy as np

from ..effects import f_noncentrality
from ..family import Family
from ..kit import cluster_sizes, column_spec, finish, nested_groups
from ..registry import register
from . import _describe
from ._anova import draw_groups, oneway, validate_groups
from ._common import CLUSTER_ICC, check_location, cluster_means, draw_clusters
from ._names import CLUSTER_MEANS_ANOVA, WELCH_ANOVA


def generate(condition, rng):
    """Clusters of :func:`kit.cluster_sizes` rows, whole clusters in a group
    (:func:`kit.nested_groups`), group means on the drawn pattern, a normal
    cluster effect and a normal row error."""
    dgp, params, n = condition.dgp, condition.params, condition.n
    levels = np.asarray(column_spec(condition, "group")["levels"], dtype=object)
    sizes = cluster_sizes(n, params["clusters"], rng)
    group = nested_groups(len(sizes), params["shares"], rng)
    icc = params["icc"]
    means = dgp["mean"] + condition.effect_value * dgp["sd"] * np.asarray(params["pattern"])
    cluster_mean = means[group] + rng.normal(0.0, dgp["sd"] * np.sqrt(icc), len(sizes))
    return finish(condition, rng, {
        condition.roles["cluster"]: np.repeat(np.arange(1, len(sizes) + 1), sizes),
        condition.roles["group"]: np.repeat(levels[group], sizes),
        condition.roles["outcome"]: rng.normal(np.repeat(cluster_mean, sizes), dgp["sd"] * np.sqrt(1.0 - icc)),
    })


def _of_means(condition, data, var_equal):
    roles = condition.roles
    means = cluster_means(data, roles["outcome"], roles["group"], roles["cluster"])
    return dataclasses.replace(oneway(condition, means, var_equal=var_equal), n=len(data))


class ClusterMeansAnova(Family):
    name = "cluster_means_anova"
    title = "One-way ANOVA on cluster means"
    category = "k-sample"
    question_kind = "k_groups"
    canonical = "oneway.test(outcome ~ group, data = aggregate(outcome ~ cluster + group, d, mean), var.equal = TRUE)"
    test_name = CLUSTER_MEANS_ANOVA
    naive_name = WELCH_ANOVA
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    min_n = 40  # one_way_anova's (siblings share their range of N)
    dgp_keys = ("mean", "sd")
    naive_method = "Welch one-way ANOVA on the rows, oneway.test(outcome ~ group)"
    medium = 0.25
    effect_unit = "Cohen's f (SD of the group means over the outcome's SD)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Group shares (:func:`_anova.draw_groups`, the shares reached by
        whole clusters), the number of clusters
        (:func:`_common.draw_clusters`) and the intraclass correlation."""
        return {**draw_groups(scenario, n, rng), **draw_clusters(scenario, n, rng),
                "icc": float(rng.uniform(*CLUSTER_ICC))}

    def validate(self, scenario):
        validate_groups(scenario)
        check_location(scenario, "outcome")

    def analyse(self, condition, data):
        return _of_means(condition, data, var_equal=True)

    def naive(self, condition, data):
        return oneway(condition, data, var_equal=False)

    def effect_for_z(self, z, n, params):
        """Cohen's f at the F test's critical non-centrality on the cluster means:
        clusters of m = n / clusters rows, whose means vary by sd^2 (icc + (1 - icc) / m)."""
        k, clusters, icc = len(params["shares"]), params["clusters"], params["icc"]
        spread = np.sqrt(icc + (1.0 - icc) * clusters / n)
        return float(spread * np.sqrt(f_noncentrality(z, k - 1, clusters - k) / clusters))

    def hints(self, condition, data):
        return _describe.groups(data, condition.roles["outcome"], condition.roles["group"], condition.roles["cluster"])


register(ClusterMeansAnova())
