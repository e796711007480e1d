"""How many of the stated p-values the Holm-Bonferroni procedure rejects.

The question lists m p-values (4 significant digits) and asks for the count
rejected at a family-wise error rate of 5 %. R: ``sum(p.adjust(p, method =
"holm") <= 0.05)``. The answer is a count, scored exactly. A list with a
product (m - i + 1) p_(i) within 1e-6 of 0.05 is redrawn, so no comparison
rests on rounding.
"""

import numpy as np

from ..answers import COUNT
from ..registry import register
from ._closed import ClosedForm
from ._dist import norm_sf

#: The family-wise error rate the questions state.
FWER = 0.05
#: Products this close to FWER are redrawn.
MIN_MARGIN = 1e-6
#: Share of the hypotheses with a real effect, and its z range.
ALTERNATIVE_SHARE = 0.4
ALTERNATIVE_Z = (1.5, 4.5)


def holm_rejections(p_values, alpha: float = FWER) -> int:
    """Hypotheses Holm's step-down procedure rejects: the sorted p_(i) while
    (m - i + 1) p_(i) <= alpha."""
    ordered = sorted(p_values)
    m = len(ordered)
    for i, p in enumerate(ordered):
        if (m - i) * p > alpha:
            return i
    return m


def _near_threshold(p_values) -> bool:
    ordered = sorted(p_values)
    m = len(ordered)
    return any(abs((m - i) * p - FWER) < MIN_MARGIN for i, p in enumerate(ordered))


class Holm(ClosedForm):
    name = "holm"
    title = "Holm-Bonferroni rejections among stated p-values"
    canonical = 'sum(p.adjust(p, method = "holm") <= 0.05)'
    answer = COUNT
    prompt_fields = ("m", "p_list")
    dgp_keys = ("tests",)

    def draw_params(self, scenario, n, rng):
        """m from the scenario's range; each hypothesis null (uniform p) or,
        with probability 0.4, a z drawn from 1.5 to 4.5; p rounded to 4
        significant digits as the question shows them."""
        low, high = scenario.dgp["tests"]
        while True:
            m = int(rng.integers(low, high + 1))
            real = rng.random(m) < ALTERNATIVE_SHARE
            z = np.where(real, rng.uniform(*ALTERNATIVE_Z, m) + rng.normal(0.0, 1.0, m), 0.0)
            p = np.where(real, 2.0 * norm_sf(np.abs(z)), rng.random(m))
            values = [float(f"{float(v):.4g}") for v in p]
            if min(values) > 0.0 and not _near_threshold(values):
                return {"m": m, "p_list": values}

    def shown_params(self, params):
        """``p_list`` as the question lists it: "0.0012, 0.34" (each value
        has at most 4 significant digits, so ``.4g`` gives it back exactly)."""
        return {**params, "p_list": ", ".join(f"{v:.4g}" for v in params["p_list"])}

    def validate(self, scenario):
        tests = scenario.dgp["tests"]
        if (not isinstance(tests, list) or len(tests) != 2 or not all(isinstance(t, int) for t in tests)
                or not 2 <= tests[0] <= tests[1] <= 30):
            raise ValueError(f"dgp tests ({tests!r}) must be [low, high], whole numbers with 2 <= low <= high <= 30")

    def solve(self, condition):
        return {"integer": holm_rejections(condition.params["p_list"])}


register(Holm())
