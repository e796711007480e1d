"""The result object every analysis returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy.special import ndtri

#: The cap of the z a record keeps (``gold_z``); the reward caps lower (:data:`taskfactory.answers.SCORE_Z_CAP`).
Z_CAP = 8.0


def z_of_p(p: float, cap: float = Z_CAP) -> float:
    """Two-sided z of a p-value, ``Phi^-1(1 - p/2)`` (0 at p = 1), capped at ``cap``.

    Computed as ``|ndtri(p / 2)|`` (``norm.isf(p / 2)`` without scipy.stats'
    overhead) so that tiny p-values keep their precision.
    """
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"p-value ({p!r}) must lie in [0, 1]")
    return float(min(abs(ndtri(p / 2.0)), cap))


@dataclass(frozen=True)
class Term:
    """One row of a coefficient table, as R's ``summary()`` prints it."""

    name: str
    estimate: float
    std_error: float
    statistic: float
    pvalue: float
    df: float | None = None


@dataclass(frozen=True)
class TestResult:
    """Outcome of one hypothesis test.

    ``statistic`` is the statistic R prints for the canonical call (``t``, ``W``,
    ``V``, ``F``, ``X-squared``, ``S`` ...), named by ``statistic_name``
    (None for an exact test that prints none, such as ``fisher.test``); ``df``
    holds its degrees of freedom (empty for exact and z tests); ``estimate`` is
    the effect estimate R reports, when it reports one; ``n`` is the number of
    rows the test used. A model's result also holds its table of ``terms`` and
    names the ``target`` term the question is about; the scalar fields are then
    the target row's (see :meth:`from_terms`).
    """

    __test__ = False  # not a pytest test class

    statistic: float | None
    pvalue: float
    method: str
    df: tuple[float, ...] = ()
    estimate: float | None = None
    n: int | None = None
    statistic_name: str = ""
    details: dict = field(default_factory=dict, compare=False)
    terms: tuple[Term, ...] = ()
    target: str | None = None

    @classmethod
    def from_terms(cls, terms, target: str, method: str, statistic_name: str, n: int | None = None) -> TestResult:
        """The result of a model whose question is about term ``target``."""
        terms = tuple(terms)
        row = next((t for t in terms if t.name == target), None)
        if row is None:
            raise ValueError(f"target term ({target!r}) is not among {', '.join(t.name for t in terms)}")
        return cls(statistic=row.statistic, pvalue=row.pvalue, method=method,
                   df=() if row.df is None else (row.df,), estimate=row.estimate, n=n,
                   statistic_name=statistic_name, terms=terms, target=target)

    def terms_json(self) -> list[dict] | None:
        """The table of terms as plain data, or None when there is none."""
        if not self.terms:
            return None
        return [{"term": t.name, "estimate": t.estimate, "std_error": t.std_error, "statistic": t.statistic,
                 "df": t.df, "p_value": t.pvalue, "target": t.name == self.target} for t in self.terms]

    @property
    def z(self) -> float:
        """Two-sided z of the p-value, capped at 8."""
        return z_of_p(self.pvalue)

    def decision(self, alpha: float = 0.05) -> str:
        """``"reject"`` when p < alpha, else ``"fail to reject"``."""
        return "reject" if self.pvalue < alpha else "fail to reject"
