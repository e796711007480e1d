"""The smallest sample for a target margin of error of a proportion.

n = ceiling(z^2 p (1 - p) / E^2) at p = 0.5 and z = 1.96, E the margin the
question states in percentage points. The answer is a whole number, scored
exactly. Margins whose exact n is a whole number (1, 2, 3.5, 7 points ...)
are not drawn: floating point would put R's ``ceiling`` one above it.
"""

from fractions import Fraction

from ..answers import INTEGER
from ..registry import register
from ._closed import ClosedForm

Z = Fraction(196, 100)
P = Fraction(1, 2)


def required_n(margin_points) -> int:
    """ceiling(1.96^2 * 0.25 / (margin_points / 100)^2), in exact arithmetic."""
    exact = Z * Z * P * (1 - P) / (Fraction(str(margin_points)) / 100) ** 2
    return -(-exact.numerator // exact.denominator)


def is_whole(margin_points) -> bool:
    exact = Z * Z * P * (1 - P) / (Fraction(str(margin_points)) / 100) ** 2
    return exact.denominator == 1


class SampleSize(ClosedForm):
    name = "sample_size"
    title = "Sample size for a margin of error of a proportion"
    canonical = "ceiling(1.96^2 * 0.25 / E^2)"
    answer = INTEGER
    prompt_fields = ("margin_points",)
    dgp_keys = ("margins",)

    def draw_params(self, scenario, n, rng):
        """A margin, in percentage points, from the scenario's list (those
        whose exact n is not whole)."""
        usable = [m for m in scenario.dgp["margins"] if not is_whole(m)]
        return {"margin_points": usable[int(rng.integers(len(usable)))]}

    def validate(self, scenario):
        margins = scenario.dgp["margins"]
        if (not isinstance(margins, list) or not margins
                or not all(isinstance(m, (int, float)) and not isinstance(m, bool) and 0 < m < 50 for m in margins)):
            raise ValueError(f"dgp margins ({margins!r}) must be a list of margins in percentage points, "
                             "each above 0 and below 50")
        if all(is_whole(m) for m in margins):
            raise ValueError("dgp margins: every margin gives a whole exact n; add one that does not")

    def solve(self, condition):
        return {"integer": required_n(condition.params["margin_points"])}


register(SampleSize())
