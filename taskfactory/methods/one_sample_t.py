"""One-sample t-test: does a population mean differ from a stated reference value?

R: ``t.test(outcome, mu = mu0)``, where ``mu0`` (a labelled content, a
regulatory limit, a published norm) is part of the question, not of the data.
There is no tempting wrong test of the same data: the usual mistakes here are
choosing the wrong reference value or a one-sided test.
"""

import numpy as np

from ..effects import t_critical
from ..kit import finish
from ..family import Family
from ..registry import register
from ._names import ONE_SAMPLE_T
from . import _describe
from ..scenarios import require_direction, require_number
from ._common import numeric, require_varies
from ._ttest import one_sample


def generate(condition, rng):
    dgp = condition.dgp
    mean = condition.roles["mu0"] + dgp.get("direction", 1) * condition.effect_value * dgp["sd"]
    return finish(condition, rng, {condition.roles["outcome"]: rng.normal(mean, dgp["sd"], condition.n)})


class OneSampleT(Family):
    name = "one_sample_t"
    title = "One-sample t-test"
    category = "one-sample"
    question_kind = "one_sample"
    canonical = "t.test(outcome, mu = mu0)"
    test_name = ONE_SAMPLE_T
    roles = {"outcome": "numeric", "mu0": "value"}
    min_n = 10
    dgp_keys = ("sd",)
    medium = 0.5
    effect_unit = "Cohen's d"
    generate = staticmethod(generate)

    def validate(self, scenario):
        mu0 = require_number(scenario.roles["mu0"], "mu0")
        outcome = scenario.variable(scenario.roles["outcome"])
        lo, hi = outcome.range
        if not lo < mu0 < hi:
            raise ValueError(f"mu0 ({mu0!r}) lies outside the outcome's range")
        step = 10.0 ** -outcome.decimals
        if abs(mu0 / step - round(mu0 / step)) > 1e-9:
            raise ValueError(f"mu0 ({mu0!r}) must be a multiple of the outcome's rounding step {step:g}, "
                             "so that rounding keeps the null mean exactly at mu0")
        if not require_number(scenario.dgp["sd"], "dgp sd") > 0:
            raise ValueError("dgp sd must be positive")
        require_direction(scenario)

    def analyse(self, condition, data):
        require_varies(data, condition.roles["outcome"])
        return one_sample(numeric(data, condition.roles["outcome"]), float(condition.roles["mu0"]), "One Sample t-test")

    def effect_for_z(self, z, n, params):
        """Cohen's d, (mean - mu0) / sd: the t statistic's non-centrality is d sqrt(n)."""
        return t_critical(z, n - 1) / np.sqrt(n)

    def hints(self, condition, data):
        return _describe.sample(data, condition.roles["outcome"])


register(OneSampleT())
