"""Two groups of clusters, a binary outcome: Student's t-test on the clusters' proportions.

R: the share of the ``positive`` outcome within each cluster (and group),
``m <- aggregate(d$outcome == positive, by = list(cluster = d$cluster, group =
d$group), FUN = mean)``, then ``t.test(x ~ group, data = m, var.equal =
TRUE)``: Student's t on clusters - 2 degrees of freedom, the cluster-level
analysis of a trial that assigned whole clusters (schools, practices,
villages, farms) to the groups.

Every row of a cluster is in its group, and the clusters differ: a cluster's
rate of the positive outcome is drawn from a beta law around its group's rate,
so that the outcome's intraclass correlation is drawn per dataset between 0.10
and 0.25. The effect is a log odds ratio of the second-listed group against
the first, split evenly about the baseline on the logit scale (so no effect
pushes a rate past 0 or 1). Rows of one cluster are not independent, so the
tempting wrong test, Fisher's exact test of the rows' table (valid for any
sample of independent rows), rejects a true null far too often, the more so
the larger the clusters. Welch's t on the clusters' proportions is accepted
beside Student's. Its siblings, two_proportion_z and fisher_exact, take the
same scenarios with the groups assigned one row at a time (every cluster
holds both groups).
"""

import dataclasses
import math

import numpy as np
import pandas as pd
from scipy import optimize

from ..effects import t_critical
from ..family import Alternative, Family
from ..kit import cluster_sizes, column_spec, finish, first_group_share, nested_groups
from ..registry import register
from ..scenarios import require_direction
from . import _describe
from ._common import check_two_proportions, cluster_means, counts_2x2, draw_clusters, grouped, indicator, require_varies
from ._names import CLUSTER_PROPORTIONS_T, CLUSTER_PROPORTIONS_WELCH_T, FISHER
from ._ttest import two_sample
from .fisher_exact import fisher_2x2

#: The range the outcome's intraclass correlation is drawn from: binary
#: outcomes of people or animals in practices, schools or herds.
BINARY_ICC = (0.10, 0.25)
#: The jitter of the scenario's baseline rate on the logit scale.
BASELINE_JITTER = 0.25
#: The largest log odds ratio calibration goes to (an odds ratio of about 400).
MAX_LOG_OR = 6.0


def rates(baseline: float, effect: float) -> np.ndarray:
    """The two groups' rates: the second's log odds ``effect`` above the
    first's, the two placed evenly about the ``baseline``'s log odds."""
    logit = np.log(baseline / (1.0 - baseline))
    return 1.0 / (1.0 + np.exp(-np.array([logit - effect / 2.0, logit + effect / 2.0])))


def generate(condition, rng):
    """Clusters of :func:`kit.cluster_sizes` rows, whole clusters in a group
    (:func:`kit.nested_groups`), each cluster's rate drawn from a beta law
    about its group's rate with the dataset's intraclass correlation."""
    params, n = condition.params, condition.n
    levels = np.asarray(column_spec(condition, "group")["levels"], dtype=object)
    positive = condition.roles["positive"]
    negative = next(lv for lv in column_spec(condition, "outcome")["levels"] if lv != positive)
    sizes = cluster_sizes(n, params["clusters"], rng)
    group = nested_groups(len(sizes), [params["share"], 1.0 - params["share"]], rng)
    mean = rates(params["baseline"], condition.dgp.get("direction", 1) * condition.effect_value)[group]
    concentration = (1.0 - params["icc"]) / params["icc"]   # a beta(a, b) with a + b + 1 = 1 / icc
    cluster_rate = rng.beta(mean * concentration, (1.0 - mean) * concentration)
    success = rng.random(n) < np.repeat(cluster_rate, sizes)
    return finish(condition, rng, {
        condition.roles["cluster"]: np.repeat(np.arange(1, len(sizes) + 1), sizes),
        condition.roles["group"]: np.repeat(levels[group], sizes),
        condition.roles["outcome"]: np.where(success, positive, negative).astype(object),
    })


def share_column(condition) -> str:
    return f"share of {condition.roles['positive']} per cluster"


def cluster_shares(condition, data) -> pd.DataFrame:
    """Each cluster's (and group's) share of the positive outcome, in column
    :func:`share_column`, as R's ``aggregate()`` gives it."""
    roles = condition.roles
    require_varies(data, roles["outcome"], roles["group"])
    share = indicator(data, roles["outcome"], roles["positive"]).astype(float)
    rows = data.assign(**{share_column(condition): share})
    return cluster_means(rows, share_column(condition), roles["group"], roles["cluster"])


def _t_test(condition, data, equal_var: bool):
    _, (a, b) = grouped(cluster_shares(condition, data), share_column(condition), condition.roles["group"], k=2,
                        unit="clusters")
    return dataclasses.replace(two_sample(a, b, equal_var=equal_var), n=len(data))


def welch_of_shares(condition, data):
    return _t_test(condition, data, equal_var=False)


class ClusterProportionsT(Family):
    name = "cluster_proportions_t"
    title = "Two-sample t-test on cluster proportions"
    category = "proportions"
    question_kind = "two_proportions"
    canonical = ("t.test(share ~ group, data = aggregate(share ~ cluster + group, "
                 "transform(d, share = outcome == positive), mean), var.equal = TRUE)")
    test_name = CLUSTER_PROPORTIONS_T
    naive_name = FISHER
    roles = {"outcome": "category", "group": "category", "positive": "level", "cluster": "cluster"}
    min_n = 60  # two_proportion_z's (siblings share their range of N)
    dgp_keys = ("p",)
    naive_method = "Fisher's exact test of the rows' 2 x 2 table, fisher.test(table(group, outcome))"
    accepted = (Alternative(method="Welch Two Sample t-test",
                            call="t.test(share ~ group, data = aggregate(share ~ cluster + group, "
                                 "transform(d, share = outcome == positive), mean))",
                            run=welch_of_shares, name=CLUSTER_PROPORTIONS_WELCH_T,
                            r_code='m <- aggregate(d[["{outcome}"]] == "{positive}", by = list(cluster = '
                                   'd[["{cluster}"]], group = d[["{group}"]]), FUN = mean)\n'
                                   'res <- t.test(x ~ group, data = m)'),)
    medium = math.log(2.5)
    effect_unit = "log odds ratio of the second listed group against the first"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Share of the first-listed group's rows (:func:`kit.first_group_share`,
        reached by whole clusters), the number of clusters (as
        :func:`_common.draw_clusters` draws it), the intraclass correlation and
        the baseline rate (the scenario's, jittered on the logit scale)."""
        share = first_group_share(rng)
        p = float(scenario.dgp["p"])
        logit = math.log(p / (1.0 - p)) + float(rng.normal(0.0, BASELINE_JITTER))
        return {"share": share, "baseline": 1.0 / (1.0 + math.exp(-logit)), **draw_clusters(scenario, n, rng),
                "icc": float(rng.uniform(*BINARY_ICC))}

    def validate(self, scenario):
        check_two_proportions(scenario, lowest=0.15)
        require_direction(scenario)

    def analyse(self, condition, data):
        return _t_test(condition, data, equal_var=True)

    def naive(self, condition, data):
        return fisher_2x2(counts_2x2(condition, data))

    def effect_for_z(self, z, n, params):
        """The log odds ratio whose difference in rates is the critical t on
        clusters - 2 df times its standard error, each group's cluster shares
        varying by p (1 - p) (icc + (1 - icc) / m) for clusters of m = n /
        clusters rows; ``MAX_LOG_OR`` where even it falls short."""
        k, icc = params["clusters"], params["icc"]
        k1 = min(max(round(k * params["share"]), 2), k - 2)   # as kit.nested_groups counts them
        critical, spread = t_critical(z, k - 2), icc + (1.0 - icc) * k / n

        def margin(effect):
            p = rates(params["baseline"], effect)
            v = p * (1.0 - p) * spread
            return float(p[1] - p[0] - critical * np.sqrt(v[0] / k1 + v[1] / (k - k1)))

        if margin(MAX_LOG_OR) < 0.0:
            return MAX_LOG_OR
        return float(optimize.brentq(margin, 0.0, MAX_LOG_OR, xtol=1e-8))

    def hints(self, condition, data):
        return _describe.two_proportions(data, condition.roles)


register(ClusterProportionsT())
