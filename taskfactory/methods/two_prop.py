"""Do two proportions differ, judged by their 95 % Wilson score intervals?

The question states both counts and the rule: the proportions differ when the
two intervals (R: ``prop.test(x, n, correct = FALSE)$conf.int`` of each group)
do not overlap. The answer is yes or no. A pair whose intervals miss or touch
by less than 1e-4 is redrawn, so rounding cannot change the answer.
"""

from ..answers import YES_NO
from ..registry import register
from ._closed import ClosedForm
from ._proportions import check_share_range, draw_two_groups, wilson

#: Intervals closer than this to touching are redrawn.
MIN_GAP = 1e-4


def separated(params: dict) -> tuple[bool, float]:
    """(the two Wilson intervals do not overlap, the distance of the nearer
    ends: positive apart, negative overlapping)."""
    low1, high1 = wilson(params["x1"], params["n1"])
    low2, high2 = wilson(params["x2"], params["n2"])
    gap = max(low2 - high1, low1 - high2)
    return gap > 0.0, gap


class TwoProp(ClosedForm):
    name = "two_prop"
    title = "Do two proportions differ (non-overlapping 95 % Wilson intervals)"
    canonical = "prop.test(x1, n1, correct = FALSE)$conf.int vs prop.test(x2, n2, correct = FALSE)$conf.int"
    answer = YES_NO
    prompt_fields = ("x1", "n1", "x2", "n2")
    dgp_keys = ("share",)

    def draw_params(self, scenario, n, rng):
        while True:
            params = draw_two_groups(n, *scenario.dgp["share"], rng)
            if abs(separated(params)[1]) >= MIN_GAP:
                return params

    def validate(self, scenario):
        check_share_range(scenario)

    def solve(self, condition):
        return {"yes_no": separated(condition.params)[0]}


register(TwoProp())
