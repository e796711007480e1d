"""Paired t-test: the same units measured before and after, in two columns.

R: ``t.test(after, before, paired = TRUE)``, a one-sample t-test of the
differences ``after - before``. The tempting wrong test is Welch's two-sample
t-test on the two columns, which ignores the pairing: with the positive
within-unit correlation of repeated measurements it overstates the standard
error and misses real changes.
"""

import dataclasses

import numpy as np

from ..effects import t_critical
from ..kit import finish
from ..family import Family
from ..registry import register
from ._names import PAIRED_T, WELCH_T
from . import _describe
from ..scenarios import require_direction
from ._common import check_paired, numeric
from ._ttest import one_sample, two_sample


def generate(condition, rng):
    dgp, rho, n = condition.dgp, condition.params["rho"], condition.n
    sd_diff = dgp["sd"] * np.sqrt(2.0 * (1.0 - rho))
    shift = dgp.get("direction", 1) * condition.effect_value * sd_diff
    before = rng.normal(0.0, dgp["sd"], n)
    after = rho * before + np.sqrt(1.0 - rho * rho) * rng.normal(0.0, dgp["sd"], n)
    return finish(condition, rng, {
        condition.roles["before"]: dgp["mean"] + before,
        condition.roles["after"]: dgp["mean"] + shift + after,
    })


def _columns(condition, data):
    return numeric(data, condition.roles["after"]), numeric(data, condition.roles["before"])


class PairedT(Family):
    name = "paired_t"
    title = "Paired t-test"
    category = "paired"
    question_kind = "paired"
    canonical = "t.test(after, before, paired = TRUE)"
    test_name = PAIRED_T
    naive_name = WELCH_T
    roles = {"before": "numeric", "after": "numeric"}
    min_n = 60  # wilcoxon_signed_rank's (siblings share their range of N)
    dgp_keys = ("mean", "sd")
    naive_method = "Welch two-sample t-test ignoring the pairing"
    medium = 0.5
    effect_unit = "Cohen's dz"
    generate = staticmethod(generate)

    def draw_params(self, scenario, n, rng):
        """The correlation of the before and after measurements of one unit."""
        return {"rho": float(rng.uniform(0.4, 0.8))}

    def validate(self, scenario):
        check_paired(scenario)
        require_direction(scenario)

    def analyse(self, condition, data):
        after, before = _columns(condition, data)
        return one_sample(after - before, 0.0, "Paired t-test")

    def naive(self, condition, data):
        after, before = _columns(condition, data)
        return dataclasses.replace(two_sample(after, before), n=len(after))

    def effect_for_z(self, z, n, params):
        """Cohen's dz, the mean difference over the SD of the differences: the t
        statistic's non-centrality is dz sqrt(n)."""
        return t_critical(z, n - 1) / np.sqrt(n)

    def hints(self, condition, data):
        return _describe.pairs(data, condition.roles["before"], condition.roles["after"])


register(PairedT())
