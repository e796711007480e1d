"""Closed-form statistics of proportions, as R computes them: the Wilson
score interval (``prop.test(x, n, correct = FALSE)$conf.int``) and the pooled
two-proportion z (the signed square root of ``prop.test(c(x1, x2), c(n1, n2),
correct = FALSE)$statistic``)."""

from __future__ import annotations

import math

from scipy.stats import norm


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """R's ``prop.test(successes, n, correct = FALSE)$conf.int``."""
    z = float(norm.isf((1.0 - level) / 2.0))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pooled_z(x1: int, n1: int, x2: int, n2: int) -> float:
    """(p1 - p2) over its standard error under the pooled proportion."""
    pooled = (x1 + x2) / (n1 + n2)
    return (x1 / n1 - x2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))


def draw_count(n: int, low: float, high: float, rng) -> int:
    """Successes of ``n`` trials at a share drawn from [low, high], redrawn
    until at least one success and one failure."""
    while True:
        x = int(rng.binomial(n, rng.uniform(low, high)))
        if 0 < x < n:
            return x


def check_share_range(scenario, key: str = "share") -> None:
    """Raise ValueError unless ``dgp[key]`` is [low, high] with 0 < low <= high < 1."""
    value = scenario.dgp.get(key)
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            or not 0 < value[0] <= value[1] < 1):
        raise ValueError(f"dgp {key} ({value!r}) must be [low, high] with 0 < low <= high < 1")


def draw_two_groups(n: int, low: float, high: float, rng) -> dict:
    """Two groups splitting ``n`` trials (each 40-60 %), the first at a share
    drawn from [low, high] and the second 0 to 2 times the sum of the two 95 %
    margins away, either way, so that about half the pairs of Wilson intervals
    overlap; each group has at least one success and one failure."""
    while True:
        n1 = int(round(n * rng.uniform(0.4, 0.6)))
        n2 = n - n1
        p1 = rng.uniform(low, high)
        margins = 1.96 * (math.sqrt(p1 * (1 - p1) / n1) + math.sqrt(p1 * (1 - p1) / n2))
        p2 = min(0.98, max(0.02, p1 + rng.choice([-1.0, 1.0]) * rng.uniform(0.0, 2.0) * margins))
        x1, x2 = int(rng.binomial(n1, p1)), int(rng.binomial(n2, p2))
        if 0 < x1 < n1 and 0 < x2 < n2:
            return {"x1": x1, "n1": n1, "x2": x2, "n2": n2}
