"""A toy family without a dataset: the Wilson score interval of a proportion
whose counts the question states (R: ``prop.test(x, n, correct = FALSE)$conf.int``)."""

from __future__ import annotations

import math

from taskfactory.answers import INTERVAL
from taskfactory.family import Family
from taskfactory.methods._proportions import wilson


class ToyWilson(Family):
    name = "toy_wilson"
    title = "Toy: Wilson score interval of a proportion"
    category = "closed-form"
    canonical = "prop.test(x, n, correct = FALSE)$conf.int"
    roles = {}
    answer = INTERVAL
    has_data = False
    prompt_fields = ("successes",)
    min_n = 10
    medium = 0.2
    effect_unit = "proportion above one half"
    r_code = 'res <- prop.test({successes}, {n}, correct = FALSE)$conf.int\ncat(sprintf("LOWER: %.6f\\nUPPER: %.6f\\n", res[1], res[2]))'
    py_code = "from statsmodels.stats.proportion import proportion_confint\nprint(proportion_confint({successes}, {n}, method='wilson'))"

    def draw_params(self, scenario, n, rng):
        return {"successes": int(rng.binomial(n, rng.uniform(0.2, 0.8)))}

    def solve(self, condition):
        low, high = wilson(condition.params["successes"], condition.n)
        return {"low": low, "high": high}

    def effect_for_z(self, z, n, params):
        return z * 0.5 / math.sqrt(n)

