"""The pooled two-proportion z statistic of two groups whose counts the question states.

z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2)), p the pooled proportion, the
first group named in the question first. R: the signed square root of
``prop.test(c(x1, x2), c(n1, n2), correct = FALSE)$statistic``. Scored within
0.001 (the question asks for 4 decimals).
"""

from ..answers import ESTIMATE
from ..registry import register
from ._closed import ClosedForm
from ._proportions import check_share_range, draw_two_groups, pooled_z


class TwoPropZ(ClosedForm):
    name = "two_prop_z"
    title = "Pooled two-proportion z statistic"
    canonical = "sign(p1 - p2) * sqrt(prop.test(c(x1, x2), c(n1, n2), correct = FALSE)$statistic)"
    answer = ESTIMATE
    prompt_fields = ("x1", "n1", "x2", "n2")
    dgp_keys = ("share",)

    def draw_params(self, scenario, n, rng):
        return draw_two_groups(n, *scenario.dgp["share"], rng)

    def validate(self, scenario):
        check_share_range(scenario)

    def solve(self, condition):
        p = condition.params
        return {"estimate": pooled_z(p["x1"], p["n1"], p["x2"], p["n2"])}


register(TwoPropZ())
