"""Welch two-sample t-test: two groups with unequal spreads and sizes.

R: ``t.test(outcome ~ group)``; the tempting wrong test is Student's t with
``var.equal = TRUE``, which is anti-conservative when the smaller group has the
larger spread.
"""

import numpy as np

from ..effects import t_critical
from ..kit import column_spec, crossed_clusters, finish, first_group_share, labels_for, split_sizes
from ..family import Family
from ..registry import register
from ._names import STUDENT_T, WELCH_T
from . import _describe
from ..scenarios import require_direction
from ._common import check_location, check_two_groups, draw_clusters, grouped, nonconstant
from ._ttest import two_sample


#: Share of datasets whose smaller group has the larger spread.
INVERSE_PAIRING = 0.8


def _sizes_sds(n, params, sd):
    sizes = split_sizes(n, [params["share"], 1.0 - params["share"]])
    return sizes, [sd * params["sd_scale"][0], sd * params["sd_scale"][1]]


def generate(condition, rng):
    dgp, params = condition.dgp, condition.params
    levels = column_spec(condition, "group")["levels"]
    sizes = split_sizes(condition.n, [params["share"], 1.0 - params["share"]])
    sd = [dgp["sd"] * params["sd_scale"][0], dgp["sd"] * params["sd_scale"][1]]
    shift = dgp.get("direction", 1) * condition.effect_value * np.sqrt((sd[0] ** 2 + sd[1] ** 2) / 2.0)
    y = np.concatenate([
        rng.normal(dgp["mean"], sd[0], sizes[0]),
        rng.normal(dgp["mean"] + shift, sd[1], sizes[1]),
    ])
    return finish(condition, rng, {
        condition.roles["outcome"]: y,
        condition.roles["group"]: labels_for(levels, sizes),
        **crossed_clusters(condition, condition.n, rng),
    })


def _t_test(condition, data, equal_var):
    _, (a, b) = grouped(data, condition.roles["outcome"], condition.roles["group"], k=2)
    nonconstant(a, b)
    return two_sample(a, b, equal_var=equal_var)


class WelchT(Family):
    name = "welch_t"
    title = "Welch two-sample t-test"
    category = "two-sample"
    question_kind = "two_groups"
    canonical = "t.test(outcome ~ group)"
    test_name = WELCH_T
    naive_name = STUDENT_T
    roles = {"outcome": "numeric", "group": "category", "cluster": "cluster"}
    optional_roles = ("cluster",)  # the schools or practices of cluster_means_t's scenarios: the test ignores them
    min_n = 40  # mann_whitney's (siblings share their range of N)
    dgp_keys = ("mean", "sd")
    naive_method = "Student two-sample t-test (var.equal = TRUE)"
    medium = 0.5
    effect_unit = "Cohen's d"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """Share of the first listed level (:func:`kit.first_group_share`), and the
        two groups' SDs relative to dgp.sd: the larger SD is dgp.sd, the smaller
        1.5 to 3 times smaller; in :data:`INVERSE_PAIRING` of datasets the smaller
        group has the larger SD (where Student's t rejects a true null too often),
        else the larger group."""
        share = first_group_share(rng)
        ratio = float(rng.uniform(1.5, 3.0))
        smaller_spreads_more = rng.random() < INVERSE_PAIRING
        scale = [1.0, 1.0 / ratio] if (share < 0.5) == smaller_spreads_more else [1.0 / ratio, 1.0]
        return {"share": share, "sd_scale": scale, **draw_clusters(scenario, n, rng)}

    def validate(self, scenario):
        check_two_groups(scenario)
        check_location(scenario, "outcome")
        require_direction(scenario)

    def analyse(self, condition, data):
        return _t_test(condition, data, equal_var=False)

    def naive(self, condition, data):
        return _t_test(condition, data, equal_var=True)

    def effect_for_z(self, z, n, params):
        """Cohen's d (mean difference over the root mean square of the two SDs)."""
        (n1, n2), (s1, s2) = _sizes_sds(n, params, 1.0)
        a, b = s1 * s1 / n1, s2 * s2 / n2
        df = (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))
        return t_critical(z, df) * np.sqrt(a + b) / np.sqrt((s1 * s1 + s2 * s2) / 2.0)

    def hints(self, condition, data):
        roles = condition.roles
        return _describe.groups(data, roles["outcome"], roles["group"], roles.get("cluster"))


register(WelchT())
