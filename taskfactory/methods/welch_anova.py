"""Welch's one-way ANOVA: 3 to 5 normal groups with unequal spreads and sizes.

R: ``oneway.test(outcome ~ group)``, Welch's heteroscedastic F. The tempting
wrong test is the classical F (``var.equal = TRUE``), which is liberal when the
smaller groups have the larger spreads (as in most datasets here) and
conservative in the opposite case.
"""

import numpy as np

from ..effects import f_noncentrality
from ..kit import column_spec, crossed_clusters, finish, labels_for, split_sizes
from ..family import Family
from ..registry import register
from ._names import CLASSICAL_ANOVA, WELCH_ANOVA
from . import _describe
from ._common import check_location, draw_clusters
from ._anova import group_shares, exponents, level_count, oneway, unit_pattern, validate_groups, welch_terms

INVERSE_PAIRING = 0.7


def generate(condition, rng):
    dgp, params = condition.dgp, condition.params
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(condition.n, params["shares"])
    means = dgp["mean"] + condition.effect_value * dgp["sd"] * np.asarray(params["pattern"])
    sds = dgp["sd"] * np.asarray(params["sd_scale"])
    y = rng.normal(np.repeat(means, sizes), np.repeat(sds, sizes))
    return finish(condition, rng, {
        condition.roles["outcome"]: y,
        condition.roles["group"]: labels_for(levels, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


class WelchAnova(Family):
    name = "welch_anova"
    title = "Welch one-way ANOVA"
    category = "k-sample"
    question_kind = "k_groups"
    canonical = "oneway.test(outcome ~ group)"
    test_name = WELCH_ANOVA
    naive_name = CLASSICAL_ANOVA
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    optional_roles = ("cluster",)  # the clusters of cluster_means_anova's scenarios: the test ignores them
    min_n = 40  # kruskal_wallis's (siblings share their range of N)
    dgp_keys = ("mean", "sd")
    naive_method = "classical one-way ANOVA (oneway.test with var.equal = TRUE)"
    medium = 0.25
    effect_unit = "Cohen's f (size-weighted SD of the group means over the pooled within-group SD)"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Group shares (:func:`_anova.group_shares`), the groups' SDs relative to the pooled SD ``dgp.sd``
        (largest/smallest 1.5 to 3; in 70 % of datasets the larger SDs go to the
        smaller groups, else at random), and the unit pattern of the group means."""
        k = level_count(scenario)
        shares = group_shares(n, k, rng)
        sizes = np.array(split_sizes(n, shares), dtype=float)
        sds = float(rng.uniform(1.5, 3.0)) ** exponents(k, rng)
        scale = np.empty(k)
        if rng.random() < INVERSE_PAIRING:
            scale[np.argsort(-sizes, kind="stable")] = sds
        else:
            scale = sds[rng.permutation(k)]
        scale = scale / np.sqrt(np.sum(sizes * scale**2) / n)
        return {"shares": shares, "sd_scale": [float(s) for s in scale],
                "pattern": unit_pattern(sizes, rng, scenario.dgp.get("trend")), **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        validate_groups(scenario)
        check_location(scenario, "outcome")

    def analyse(self, condition, data):
        return oneway(condition, data, var_equal=False)

    def naive(self, condition, data):
        return oneway(condition, data, var_equal=True)

    def effect_for_z(self, z, n, params):
        """Cohen's f on the pooled SD: the size-weighted SD of the group means over
        sqrt(sum n_i sigma_i^2 / N). Calibrated with Welch's non-centrality
        sum w_i (mu_i - mu_w)^2, w_i = n_i / sigma_i^2, on F(k - 1, Welch's df)."""
        sizes = split_sizes(n, params["shares"])
        k = len(sizes)
        w, total, tmp = welch_terms(sizes, np.asarray(params["sd_scale"]) ** 2)
        mu = np.asarray(params["pattern"])
        unit = float(np.sum(w * (mu - np.sum(w * mu) / total) ** 2))
        return float(np.sqrt(f_noncentrality(z, k - 1, 1.0 / (3.0 * tmp)) / unit))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.groups(data, roles["outcome"], roles["group"], roles.get("cluster"))


register(WelchAnova())
