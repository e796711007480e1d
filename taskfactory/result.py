"""The result object every analysis returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy.stats import norm

Z_CAP = 8.0


def z_of_p(p: float) -> float:
    """Two-sided z of a p-value, ``Phi^-1(1 - p/2)``, capped at 8.

    Computed as ``norm.isf(p / 2)`` so that tiny p-values keep their precision.
    """
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"p-value ({p!r}) must lie in [0, 1]")
    return float(min(norm.isf(p / 2.0), Z_CAP))


@dataclass(frozen=True)
class TestResult:
    """Outcome of one hypothesis test.

    ``statistic`` is the statistic R prints for the canonical call (``t``, ``W``,
    ``V``, ``F``, ``X-squared``, ``S`` ...), named by ``statistic_name``; ``df``
    holds its degrees of freedom (empty for exact and z tests); ``estimate`` is
    the effect estimate R reports, when it reports one; ``n`` is the number of
    rows the test used.
    """

    __test__ = False  # not a pytest test class

    statistic: float
    pvalue: float
    method: str
    df: tuple[float, ...] = ()
    estimate: float | None = None
    n: int | None = None
    statistic_name: str = ""
    details: dict = field(default_factory=dict, compare=False)

    @property
    def z(self) -> float:
        """Two-sided z of the p-value, capped at 8."""
        return z_of_p(self.pvalue)

    def decision(self, alpha: float = 0.05) -> str:
        """``"reject"`` when p < alpha, else ``"fail to reject"``."""
        return "reject" if self.pvalue < alpha else "fail to reject"
