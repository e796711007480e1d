"""Kruskal-Wallis test: 3 to 5 right-skewed (lognormal) groups that differ in location.

R: ``kruskal.test(outcome ~ group)``, the chi-square approximation with the tie
correction. The groups are lognormal with a common log-scale SD and shifted
log-scale locations, so their means and spreads move together and the long
upper tail makes the classical one-way ANOVA (the tempting wrong test) lose
power or mislead.
"""

import numpy as np
from scipy import optimize

from ..effects import chi2_noncentrality
from ..kit import column_spec, crossed_clusters, finish, labels_for, split_sizes
from ..family import Family
from ..registry import register
from ._names import CLASSICAL_ANOVA, KRUSKAL_WALLIS
from . import _describe
from ._common import check_location, draw_clusters
from ._anova import draw_groups, kruskal, oneway, validate_groups
from ._dist import norm_cdf



def generate(condition, rng):
    dgp, params = condition.dgp, condition.params
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(condition.n, params["shares"])
    loc = condition.effect_value * np.asarray(params["pattern"])
    y = dgp["median"] * np.exp(dgp["log_sd"] * rng.normal(np.repeat(loc, sizes), 1.0))
    return finish(condition, rng, {
        condition.roles["outcome"]: y,
        condition.roles["group"]: labels_for(levels, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


class KruskalWallis(Family):
    name = "kruskal_wallis"
    title = "Kruskal-Wallis rank sum test"
    category = "k-sample"
    question_kind = "k_groups"
    canonical = "kruskal.test(outcome ~ group)"
    test_name = KRUSKAL_WALLIS
    naive_name = CLASSICAL_ANOVA
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    optional_roles = ("cluster",)  # the clusters of cluster_means_anova's scenarios: the test ignores them
    min_n = 40  # where a normality test at 5 % sees the skew in 90 % of datasets
    dgp_keys = ("median", "log_sd")
    naive_method = "classical one-way ANOVA (oneway.test with var.equal = TRUE)"
    medium = 0.25
    effect_unit = "Cohen's f of the log-scale group locations"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Group shares and the unit pattern of the log-scale group locations
        (size-weighted mean 0, SD 1; :func:`_anova.draw_groups`), and the
        number of clusters where the scenario has them."""
        return {**draw_groups(scenario, n, rng), **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        validate_groups(scenario)
        check_location(scenario, "outcome", "median", "log_sd")

    def analyse(self, condition, data):
        return kruskal(condition, data)

    def naive(self, condition, data):
        return oneway(condition, data, var_equal=True)

    def effect_for_z(self, z, n, params):
        """Cohen's f of the log-scale locations (size-weighted SD of the group
        locations over the log-scale SD). Ranks do not see the log transform. A
        value of group i has expected rank excess sum_j n_j (P(X_i > X_j) - 1/2)
        with P = Phi((mu_i - mu_j) / sqrt 2) for normal shifts mu = f * pattern,
        which puts H's non-centrality at 12 / (N (N + 1)) sum_i n_i excess_i^2
        (about (3 / pi) N f^2 for small f; exact in the shifts, where that
        approximation undershoots at small N and large f)."""
        sizes = np.asarray(split_sizes(n, params["shares"]), dtype=float)
        pattern = np.asarray(params["pattern"], dtype=float)
        target = chi2_noncentrality(z, len(sizes) - 1)

        def noncentrality(f):
            p = norm_cdf(f * (pattern[:, None] - pattern[None, :]) / np.sqrt(2.0))
            excess = (p - 0.5) @ sizes
            return 12.0 / (n * (n + 1.0)) * float(np.sum(sizes * excess**2)) - target

        if noncentrality(10.0) <= 0.0:
            return 10.0
        return float(optimize.brentq(noncentrality, 0.0, 10.0, xtol=1e-12))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.groups(data, roles["outcome"], roles["group"], roles.get("cluster"))


register(KruskalWallis())
