"""Wilcoxon-Mann-Whitney rank sum test: two independent groups, skewed outcome.

R: ``wilcox.test(outcome ~ group)`` with its defaults: the exact p-value when
both groups have fewer than 50 values and no value is tied, otherwise the
normal approximation with continuity correction and tie-corrected variance.
The outcome is Weibull with a shape near or below 1 (a long right tail) and
the groups differ in scale; the tempting wrong test is Welch's t-test, whose
comparison of means is dominated by the few very large values and misses
shifts that the ranks detect.

The effect is the probability of superiority P(X > Y) of a value X of the
shifted group over a value Y of the reference group. For Weibull variables
with a common shape k and scales a and b it is a^k / (a^k + b^k), so the
scale ratio that gives P(X > Y) = theta is (theta / (1 - theta))^(1/k).
"""

import numpy as np

from ..kit import column_spec, crossed_clusters, finish, first_group_share, labels_for, split_sizes
from ..family import Alternative, Family
from ..registry import register
from ._names import RANK_SUM, RANK_SUM_CORRECTED, WELCH_T
from . import _describe
from ..scenarios import require_number
from ._common import check_location, check_two_groups, draw_clusters, grouped, nonconstant
from ._ranks import rank_sum_test
from ._ttest import two_sample


def generate(condition, rng):
    dgp, params = condition.dgp, condition.params
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(condition.n, [params["share"], 1.0 - params["share"]])
    k = params["shape"]
    theta = condition.effect_value
    ref_scale = dgp["median"] / np.log(2.0) ** (1.0 / k)
    scales = [ref_scale * (theta / (1.0 - theta)) ** (1.0 / k) if lv == dgp["shifted"] else ref_scale for lv in levels]
    y = np.concatenate([scales[0] * rng.weibull(k, sizes[0]), scales[1] * rng.weibull(k, sizes[1])])
    return finish(condition, rng, {
        condition.roles["outcome"]: y,
        condition.roles["group"]: labels_for(levels, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


def large_sample(condition, data):
    """``wilcox.test(outcome ~ group, exact = FALSE)``: the normal approximation
    even where R's default is exact (a convention, so it is accepted)."""
    _, (x, y) = grouped(data, condition.roles["outcome"], condition.roles["group"], k=2, min_size=1)
    return rank_sum_test(x, y, exact=False)


class MannWhitney(Family):
    name = "mann_whitney"
    title = "Wilcoxon-Mann-Whitney rank sum test"
    category = "two-sample"
    question_kind = "two_groups"
    canonical = "wilcox.test(outcome ~ group)"
    test_name = RANK_SUM
    naive_name = WELCH_T
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    optional_roles = ("cluster",)  # the schools or practices of cluster_means_t's scenarios: the test ignores them
    min_n = 40  # where a normality test at 5 % sees the skew in 90 % of datasets
    dgp_keys = ("median", "shape", "shifted")
    naive_method = "Welch two-sample t-test"
    accepted = (Alternative(method="Wilcoxon rank sum test with continuity correction",
                            call="wilcox.test(outcome ~ group, exact = FALSE)", run=large_sample,
                            r_code="res <- wilcox.test({outcome} ~ {group}, data = d, exact = FALSE)",
                            name=RANK_SUM_CORRECTED),)
    medium = 0.64
    effect_unit = "probability of superiority P(X > Y), X from the shifted group, Y from the reference group"
    null_value = 0.5
    effect_bounds = (0.0, 1.0)
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Share of the first listed level (:func:`kit.first_group_share`), and the
        Weibull shape (the scenario's shape, jittered by up to 15 %)."""
        return {"share": first_group_share(rng), "shape": float(scenario.dgp["shape"] * rng.uniform(0.85, 1.15)),
                **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        check_two_groups(scenario)
        group = scenario.variable(scenario.roles["group"])
        if scenario.dgp["shifted"] not in group.levels:
            raise ValueError(f"dgp shifted ({scenario.dgp['shifted']!r}) must be a level of '{group.name}'")
        check_location(scenario, "outcome", "median", spread=None)
        if not 0.3 <= require_number(scenario.dgp["shape"], "dgp shape") <= 3.0:
            raise ValueError("dgp shape must lie in [0.3, 3]")

    def analyse(self, condition, data):
        _, (x, y) = grouped(data, condition.roles["outcome"], condition.roles["group"], k=2, min_size=1)
        return rank_sum_test(x, y)

    def naive(self, condition, data):
        _, (a, b) = grouped(data, condition.roles["outcome"], condition.roles["group"], k=2)
        nonconstant(a, b)
        return two_sample(a, b)

    def effect_for_z(self, z, n, params):
        """P(X > Y) whose expected W lies z null standard deviations from its null
        mean: E[W] - m n / 2 = m n (theta - 1/2), Var0[W] = m n (m + n + 1) / 12."""
        m, k = split_sizes(n, [params["share"], 1.0 - params["share"]])
        return float(min(0.5 + z * np.sqrt((n + 1.0) / (12.0 * m * k)), 0.99))

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.groups(data, roles["outcome"], roles["group"], roles.get("cluster"))


register(MannWhitney())
