"""The 95 % Wilson score interval of a proportion whose counts the question states.

R: ``prop.test(x, n, correct = FALSE)$conf.int``, the score interval without
continuity correction. The answer is both ends, scored within 0.001.
"""

from ..answers import INTERVAL
from ..registry import register
from ._closed import ClosedForm
from ._proportions import check_share_range, draw_count, wilson


class WilsonCI(ClosedForm):
    name = "wilson_ci"
    title = "95 % Wilson score interval of a proportion"
    canonical = "prop.test(x, n, correct = FALSE)$conf.int"
    answer = INTERVAL
    prompt_fields = ("successes",)
    dgp_keys = ("share",)

    def draw_params(self, scenario, n, rng):
        """Successes of the ``n`` trials at a share drawn from the scenario's range."""
        return {"successes": draw_count(n, *scenario.dgp["share"], rng)}

    def validate(self, scenario):
        check_share_range(scenario)

    def solve(self, condition):
        low, high = wilson(condition.params["successes"], condition.n)
        return {"low": low, "high": high}


register(WilsonCI())
