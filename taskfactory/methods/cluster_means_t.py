"""Two groups of clusters: Student's t-test on the cluster means.

R: the outcome averaged within each cluster (and group),
``m <- aggregate(outcome ~ cluster + group, data = d, FUN = mean)``, then
``t.test(outcome ~ group, data = m, var.equal = TRUE)``: Student's t on
clusters - 2 degrees of freedom, the cluster-level analysis of a trial that
assigned whole clusters (schools, practices, plots) to the groups.

Every row of a cluster is in its group, and the clusters differ: each adds a
normal effect whose share of the outcome's variance, the intraclass
correlation, is drawn per dataset between 0.15 and 0.35. The effect is a
shift of the second-listed group's mean in SDs of the outcome (Cohen's d).
Rows of one cluster are not independent, so the tempting wrong test, Welch's
t on the rows, rejects a true null far too often, the more so the larger the
clusters. Welch's t on the cluster means is accepted beside Student's. Its
siblings, welch_t and mann_whitney, take the same scenarios with the groups
assigned one row at a time (every cluster holds both groups).
"""

import dataclasses

import numpy as np

from ..effects import t_critical
from ..family import Alternative, Family
from ..kit import cluster_sizes, column_spec, finish, first_group_share, nested_groups
from ..registry import register
from ..scenarios import require_direction
from . import _describe
from ._common import CLUSTER_ICC, check_location, check_two_groups, cluster_means, draw_clusters, grouped, nonconstant
from ._names import CLUSTER_MEANS_T, CLUSTER_MEANS_WELCH_T, WELCH_T
from ._ttest import two_sample

def generate(condition, rng):
    """Clusters of :func:`kit.cluster_sizes` rows, whole clusters in a group
    (:func:`kit.nested_groups`), a normal cluster effect and a normal row error."""
    dgp, params, n = condition.dgp, condition.params, condition.n
    levels = np.asarray(column_spec(condition, "group")["levels"], dtype=object)
    sizes = cluster_sizes(n, params["clusters"], rng)
    group = nested_groups(len(sizes), [params["share"], 1.0 - params["share"]], rng)
    icc = params["icc"]
    shift = dgp.get("direction", 1) * condition.effect_value * dgp["sd"]
    cluster_mean = dgp["mean"] + shift * group + rng.normal(0.0, dgp["sd"] * np.sqrt(icc), len(sizes))
    return finish(condition, rng, {
        condition.roles["cluster"]: np.repeat(np.arange(1, len(sizes) + 1), sizes),
        condition.roles["group"]: np.repeat(levels[group], sizes),
        condition.roles["outcome"]: rng.normal(np.repeat(cluster_mean, sizes), dgp["sd"] * np.sqrt(1.0 - icc)),
    })


def _t_test(condition, data, equal_var, of_means=True):
    roles = condition.roles
    rows = cluster_means(data, roles["outcome"], roles["group"], roles["cluster"]) if of_means else data
    _, (a, b) = grouped(rows, condition.roles["outcome"], condition.roles["group"], k=2,
                        unit="clusters" if of_means else "values")
    nonconstant(a, b)
    return dataclasses.replace(two_sample(a, b, equal_var=equal_var), n=len(data))


def welch_of_means(condition, data):
    return _t_test(condition, data, equal_var=False)


class ClusterMeansT(Family):
    name = "cluster_means_t"
    title = "Two-sample t-test on cluster means"
    category = "two-sample"
    question_kind = "two_groups"
    canonical = "t.test(outcome ~ group, data = aggregate(outcome ~ cluster + group, d, mean), var.equal = TRUE)"
    test_name = CLUSTER_MEANS_T
    naive_name = WELCH_T
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    min_n = 40  # welch_t's (siblings share their range of N)
    dgp_keys = ("mean", "sd")
    naive_method = "Welch two-sample t-test on the rows, t.test(outcome ~ group)"
    accepted = (Alternative(method="Welch Two Sample t-test",
                            call="t.test(outcome ~ group, data = aggregate(outcome ~ cluster + group, d, mean))",
                            run=welch_of_means, name=CLUSTER_MEANS_WELCH_T,
                            r_code='m <- aggregate(d[["{outcome}"]], by = list(cluster = d[["{cluster}"]], '
                                   'group = d[["{group}"]]), FUN = mean)\nres <- t.test(x ~ group, data = m)'),)
    medium = 0.5
    effect_unit = "Cohen's d (difference in means over the outcome's SD)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Share of the first-listed group's rows (:func:`kit.first_group_share`,
        reached by whole clusters), the number of clusters
        (:func:`_common.draw_clusters`) and the intraclass correlation."""
        return {"share": first_group_share(rng), **draw_clusters(scenario, n, rng),
                "icc": float(rng.uniform(*CLUSTER_ICC))}

    def validate(self, scenario):
        check_two_groups(scenario)
        check_location(scenario, "outcome")
        require_direction(scenario)

    def analyse(self, condition, data):
        return _t_test(condition, data, equal_var=True)

    def naive(self, condition, data):
        return _t_test(condition, data, equal_var=False, of_means=False)

    def effect_for_z(self, z, n, params):
        """Cohen's d at the critical t on clusters - 2 df, the cluster means'
        variance sd^2 (icc + (1 - icc) / m) for clusters of m = n / clusters rows."""
        k, icc = params["clusters"], params["icc"]
        k1 = min(max(round(k * params["share"]), 2), k - 2)   # as kit.nested_groups counts them
        spread = np.sqrt(icc + (1.0 - icc) * k / n)
        return float(t_critical(z, k - 2) * spread * np.sqrt(1.0 / k1 + 1.0 / (k - k1)))

    def hints(self, condition, data):
        return _describe.groups(data, condition.roles["outcome"], condition.roles["group"], condition.roles["cluster"])


register(ClusterMeansT())
