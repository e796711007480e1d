"""A toy family without a dataset: the Wilson score interval of a proportion
whose counts the question states (R: ``prop.test(x, n, correct = FALSE)$conf.int``)."""

from __future__ import annotations

import math

from scipy.stats import norm

from taskfactory.answers import INTERVAL
from taskfactory.family import Family


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """R's prop.test(successes, n, correct = FALSE)$conf.int."""
    z = float(norm.isf((1.0 - level) / 2.0))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


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

