"""Running a family's test on a data frame, with the canonical data handling."""

from __future__ import annotations

import dataclasses
import io
import math

import numpy as np
import pandas as pd

from .condition import Condition
from .errors import DataError, TaskFactoryError
from .reference import role_columns
from .registry import get_family
from .result import TestResult


def read_csv_text(text: str) -> pd.DataFrame:
    """Parse released CSV text as R's ``read.csv(f, na.strings = "")`` does.

    Blank cells are missing; every other cell keeps its text; numbers are
    parsed with correct rounding (``float_precision="round_trip"``), so the
    doubles are the ones R reads.
    """
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""], float_precision="round_trip")


def prepare(family, data: pd.DataFrame, roles: dict, ranges: dict | None = None) -> pd.DataFrame:
    """The canonical handling: out-of-range values become missing, then
    complete cases on the test's columns (unless the family does its own)."""
    cols = role_columns(family, roles)
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise TaskFactoryError(f"data has no column '{missing[0]}' (role of {family.name}); columns: {', '.join(map(str, data.columns))}")
    d = data
    if ranges:
        d = data.copy()
        for col in cols:
            if col in ranges and pd.api.types.is_numeric_dtype(d[col]):
                lo, hi = ranges[col]
                d.loc[(d[col] < lo) | (d[col] > hi), col] = np.nan
    if family.complete_case:
        d = d.dropna(subset=cols)
    return d


def run_test(family, condition, data: pd.DataFrame, ranges: dict | None = None, which: str = "analyse",
             prepared: bool = False) -> TestResult:
    """Run the canonical (``which="analyse"``) or naive test of ``family``.

    ``prepared=True`` says ``data`` has had :func:`prepare` applied already.
    """
    d = data if prepared else prepare(family, data, condition.roles, ranges)
    func = family.analyse if which == "analyse" else family.naive
    res = func(condition, d)
    if not (isinstance(res.pvalue, float) and 0.0 <= res.pvalue <= 1.0 and math.isfinite(res.statistic)):
        raise DataError(f"{which} gave p = {res.pvalue!r}, statistic = {res.statistic!r}")
    if res.n is None:
        res = dataclasses.replace(res, n=len(d))
    return res


def analyse(method: str, data: pd.DataFrame, roles: dict, alpha: float = 0.05, ranges: dict | None = None) -> TestResult:
    """Run ``method``'s canonical test on any data frame.

    ``roles`` maps the family's roles (see ``taskfactory methods``) to column
    names or reference values, e.g. ``{"outcome": "sbp", "group": "arm"}``.
    ``ranges`` optionally maps columns to their plausible ``(low, high)``;
    values outside become missing. Rows with a missing cell in the test's
    columns are dropped. Example::

        >>> taskfactory.analyse("welch_t", df, {"outcome": "sbp", "group": "arm"}).pvalue
    """
    family = get_family(method)
    lacking = [r for r in family.roles if r not in roles]
    if lacking:
        raise TaskFactoryError(f"roles lack '{lacking[0]}'; {method} needs {', '.join(family.roles)}")
    unknown = sorted(set(roles) - set(family.roles))
    if unknown:
        raise TaskFactoryError(f"unknown role '{unknown[0]}' for {method}; allowed: {', '.join(family.roles)}")
    condition = Condition(method=method, roles=dict(roles), alpha=alpha)
    return run_test(family, condition, data, ranges)
