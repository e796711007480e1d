"""A model's exposure given as a factor, as real data may give it.

The families that test one coefficient of a model (logistic_regression, the
count models, cox_ph) take their exposure as R's call takes it: a number
enters as it is; a text column as treatment-contrast dummies, its first
level (sorted) the baseline. With two levels the test is the Wald z of the
one dummy (the same row of R's summary as a number's). With k > 2 levels no
row answers the question, and the test is R's likelihood-ratio test of the
k - 1 dummies: ``anova`` of the model without the exposure against the model
with it. The record's roles hold ``levels`` = k for a factor, read from the
analysed data (:meth:`FactorExposure.roles_for_data`), which sets the
reference code, the R call and the title; a spec may not state it.
"""

from __future__ import annotations

import pandas as pd

from ..family import reference_template, rewrite
from ..result import TestResult

#: The role that holds the number of levels of an exposure given as a factor, and its domain.
LEVELS = "levels"
LEVELS_DOMAIN = (1.0, 1e6)
#: How a method's name ends when it is the Wald z of one coefficient.
WALD_ENDINGS = (", Wald z test of the coefficient", ", Wald z test of the group")


def factor_levels(column: pd.Series) -> int | None:
    """The levels of ``column`` as a model codes it: None for numbers, the
    number of distinct values for text, categories or booleans."""
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return None
    return int(column.astype(str).nunique())


def lr_method(method: str, levels: int) -> str:
    """The name of the likelihood-ratio test of a ``levels``-level exposure in the model ``method`` names."""
    for ending in WALD_ENDINGS:
        method = method.removesuffix(ending)
    return f"{method}, likelihood-ratio test of the exposure's {levels} levels (anova)"


def lr_result(statistic: float, pvalue: float, levels: int, method: str, n: int) -> TestResult:
    """The likelihood-ratio test of a ``levels``-level exposure."""
    return TestResult(statistic=float(statistic), pvalue=float(pvalue), method=lr_method(method, levels),
                      df=(float(levels - 1),), n=n, statistic_name="Chisq")


class FactorExposure:
    """What a family whose exposure (role :attr:`factor_role`) may be a factor
    adds: ``levels`` among its roles, read from the data, and the reference
    code, R call, title and p-value expression of the test where it is set
    (with more than two levels, the likelihood-ratio test of templates
    ``methods/reference/<name>.levels.R`` and ``.py``)."""

    factor_role: str = "exposure"
    #: The R call and the p-value in its result of the likelihood-ratio test (the family sets them).
    levels_canonical: str
    levels_r_pvalue: str
    #: How the Python reference finds the one dummy of an exposure of two levels (None: as a number's row).
    dummy_rewrite: tuple[str, str] | None = None

    def roles_for_data(self, roles: dict, data: pd.DataFrame) -> dict:
        levels = factor_levels(data[roles[self.factor_role]])
        return roles if levels is None else {**roles, LEVELS: float(levels)}

    def _several(self, roles: dict) -> bool:
        return roles.get(LEVELS) is not None and roles[LEVELS] > 2

    def code_for(self, roles: dict, lang: str) -> str:
        if self._several(roles):
            return reference_template(f"{self.name}.{LEVELS}", "R" if lang == "r" else "py")
        code = super().code_for(roles, lang)
        if roles.get(LEVELS) is None or lang == "r" or self.dummy_rewrite is None:
            return code
        return rewrite(code, [self.dummy_rewrite], self.name)

    def canonical_for(self, roles: dict) -> str:
        return self.levels_canonical if self._several(roles) else super().canonical_for(roles)

    def title_for(self, roles: dict) -> str:
        title = super().title_for(roles)
        return lr_method(title.removesuffix(" (Wald z)"), int(roles[LEVELS])) if self._several(roles) else title

    def r_pvalue_for(self, roles: dict) -> str:
        return self.levels_r_pvalue if self._several(roles) else super().r_pvalue_for(roles)
