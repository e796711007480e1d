"""Classical one-way ANOVA: 3 to 5 normal groups with a common spread.

R: ``oneway.test(outcome ~ group, var.equal = TRUE)``, the F test of equal
means that ``anova(lm(outcome ~ group))`` also gives. Its assumptions hold by
construction (normal errors, one SD), so there is no tempting wrong test;
Welch's F (R's ``oneway.test`` default) is accepted beside it.
"""

import numpy as np

from ..effects import f_noncentrality
from ..kit import column_spec, crossed_clusters, finish, labels_for, split_sizes
from ..family import Family
from ..registry import register
from ._names import CLASSICAL_ANOVA
from . import _describe
from ._common import check_location, draw_clusters
from ._anova import WELCH_F, draw_groups, oneway, validate_groups



def generate(condition, rng):
    dgp, params = condition.dgp, condition.params
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(condition.n, params["shares"])
    means = dgp["mean"] + condition.effect_value * dgp["sd"] * np.asarray(params["pattern"])
    y = rng.normal(np.repeat(means, sizes), dgp["sd"])
    return finish(condition, rng, {
        condition.roles["outcome"]: y,
        condition.roles["group"]: labels_for(levels, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


class OneWayAnova(Family):
    name = "one_way_anova"
    title = "One-way ANOVA"
    category = "k-sample"
    question_kind = "k_groups"
    canonical = "oneway.test(outcome ~ group, var.equal = TRUE)"
    test_name = CLASSICAL_ANOVA
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    optional_roles = ("cluster",)  # the clusters of cluster_means_anova's scenarios: the test ignores them
    min_n = 40  # kruskal_wallis's (siblings share their range of N)
    dgp_keys = ("mean", "sd")
    accepted = (WELCH_F,)
    medium = 0.25
    effect_unit = "Cohen's f"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Group shares and the unit pattern of the group means (size-weighted
        mean 0, SD 1; :func:`_anova.draw_groups`), and the number of clusters
        where the scenario has them."""
        return {**draw_groups(scenario, n, rng), **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        validate_groups(scenario)
        check_location(scenario, "outcome")

    def analyse(self, condition, data):
        return oneway(condition, data, var_equal=True)

    def effect_for_z(self, z, n, params):
        """Cohen's f (size-weighted SD of the group means over the within-group SD):
        the F test's non-centrality is N f^2 for the group sizes used."""
        k = len(params["shares"])
        return float(np.sqrt(f_noncentrality(z, k - 1, n - k) / n))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.groups(data, roles["outcome"], roles["group"], roles.get("cluster"))


register(OneWayAnova())
