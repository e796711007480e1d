"""Running a family's test on a data frame, with the canonical data handling."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .condition import Condition
from .errors import DataError, InputError
from .family import Alternative, shares_problem
from .registry import families, family_names, get_family
from .result import TestResult


# R's type.convert reads these as logicals; no other text is special.
R_TRUE = ["TRUE", "True", "true", "T"]
R_FALSE = ["FALSE", "False", "false", "F"]
R_INTEGER_MAX = 2**31 - 1


def read_csv_text(text: str, columns: list[str] | None = None) -> pd.DataFrame:
    """Parse released CSV text into the values R's ``read.csv(f, na.strings = "")`` reads
    (only ``columns``, in that order, when given: each column is read on its own),
    as a data frame of the arrays :func:`read_csv_columns` gives."""
    return pd.DataFrame(read_csv_columns(text, columns), copy=False)


def read_csv_columns(text: str, columns: list[str] | None = None) -> dict[str, np.ndarray]:
    """The columns of released CSV text by name, as R's ``read.csv(f, na.strings = "")``
    reads them (only ``columns``, in that order, when given).

    Blank cells are missing and no other text is (``NA`` stays text). Numbers
    are parsed with correct rounding (Arrow's parser), so every double equals
    the one R reads: the nearest double to the decimal text. A column of whole
    numbers is integer when all fit R's 32-bit integers, else double (as R's
    ``type.convert`` makes it); a column of blanks only is missing numbers; a
    column with any other text is text (dates and times included).
    """
    data = pa.py_buffer(text.encode("utf-8"))

    def read(types: dict):
        options = pacsv.ConvertOptions(null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False,
                                       true_values=R_TRUE, false_values=R_FALSE, column_types=types,
                                       include_columns=columns)
        # Arrow's streaming reader, on one block holding the whole text: the
        # types are inferred from every row, as read_csv infers them, at half
        # its fixed cost (read_csv starts a thread to read ahead).
        read_options = pacsv.ReadOptions(use_threads=False, block_size=max(len(data) + 1, 1 << 20))
        return pacsv.open_csv(data, convert_options=options, read_options=read_options).read_all()

    table = read({})
    temporal = {f.name: pa.string() for f in table.schema if pa.types.is_temporal(f.type)}
    if temporal:
        table = read(temporal)
    values = {}
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_null(field.type):
            column = column.cast(pa.float64())
        elif pa.types.is_integer(field.type):
            low, high = pc.min(column).as_py(), pc.max(column).as_py()
            if low is not None and max(-low, high) > R_INTEGER_MAX:
                column = column.cast(pa.float64(), safe=False)  # to the nearest double, as R
        array = column.to_numpy(zero_copy_only=False)   # integers with a missing value become doubles, as R's NA
        if pa.types.is_string(field.type) and column.null_count:
            array[pd.isna(array)] = np.nan   # missing text: NaN
        values[field.name] = array
    return values


def prepare(family, data: pd.DataFrame | dict, roles: dict, ranges: dict | None = None) -> pd.DataFrame:
    """The canonical handling: a value of a test column outside its plausible
    range becomes missing, then complete cases on the test's columns. The
    reference solutions emit the same rule (:mod:`taskfactory.reference`).

    ``data`` is a data frame, or the released columns by name as
    :func:`read_csv_columns` gives them, of which the frame is then built once,
    already cut to the complete cases (the same frame, index included, as
    ``prepare`` of ``pd.DataFrame(columns)`` gives)."""
    frame = isinstance(data, pd.DataFrame)
    names = data.columns if frame else data
    cols = family.role_columns(roles)
    missing = [c for c in cols if c not in names]
    if missing:
        raise DataError(f"data has no column '{missing[0]}' (role of {family.name}); columns: {', '.join(map(str, names))}")
    keep = np.ones(len(data) if frame else len(next(iter(data.values()), ())), dtype=bool)
    replaced = {}
    for col in cols:
        column = data[col]
        values = column.to_numpy() if frame else column
        if ranges and col in ranges and pd.api.types.is_numeric_dtype(column):
            if values.dtype.kind not in "iuf":   # pandas' nullable and boolean types
                values = column.to_numpy(dtype=float, na_value=np.nan) if frame else values.astype(float)
            lo, hi = ranges[col]
            outside = (values < lo) | (values > hi)
            if outside.any():
                values = values.astype(float)   # as pandas makes an integer column that gets a missing value
                values[outside] = np.nan
                replaced[col] = values
        keep &= ~pd.isna(values)
    if frame:
        d = data.assign(**replaced) if replaced else data
        return d.copy() if keep.all() else d[keep]
    columns = {name: replaced.get(name, values) for name, values in data.items()}
    if keep.all():
        return pd.DataFrame(columns)
    return pd.DataFrame({name: values[keep] for name, values in columns.items()}, index=np.flatnonzero(keep))


def run_test(family, condition, data: pd.DataFrame, ranges: dict | None = None,
             which: str | Alternative = "analyse", prepared: bool = False) -> TestResult:
    """Run the canonical (``which="analyse"``), naive (``"naive"``) or an
    accepted alternative test (``which`` one of ``family.accepted``) of ``family``.

    ``prepared=True`` says ``data`` has had :func:`prepare` applied already.
    """
    d = data if prepared else prepare(family, data, condition.roles, ranges)
    if isinstance(which, Alternative):
        func = which.run
    elif which in ("analyse", "naive"):
        func = family.analyse if which == "analyse" else family.naive
    else:
        raise ValueError(f"which ({which!r}) must be 'analyse', 'naive' or an accepted alternative")
    res = func(condition, d)
    if not (isinstance(res.pvalue, float) and 0.0 <= res.pvalue <= 1.0
            and (res.statistic is None or math.isfinite(res.statistic))):
        name = which.method if isinstance(which, Alternative) else which
        raise DataError(f"{name} gave p = {res.pvalue!r}, statistic = {res.statistic!r}")
    if res.n is None:
        res = dataclasses.replace(res, n=len(d))
    return res


def _check_arguments(family, data, roles, alpha, ranges) -> None:
    """Refuse arguments :func:`analyse` cannot use, naming what is wrong."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if not isinstance(roles, dict):
        raise InputError(f"roles must be a mapping of role to column, got {type(roles).__name__}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"alpha ({alpha!r}) must be a number between 0 and 1")
    lacking = [r for r in family.roles if r not in roles]
    if lacking:
        raise InputError(f"roles lack '{lacking[0]}'; {family.name} needs {', '.join(family.roles)}")
    unknown = sorted(set(map(str, roles)) - set(family.roles))
    if unknown:
        raise InputError(f"unknown role '{unknown[0]}' for {family.name}; allowed: {', '.join(family.roles)}")
    duplicated = data.columns[data.columns.duplicated()]
    if len(duplicated):
        raise DataError(f"data has the column '{duplicated[0]}' more than once")
    for role, kind in family.roles.items():
        value = roles[role]
        if kind == "value":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InputError(f"role '{role}' must be a finite number, got {value!r}")
        elif kind == "shares":
            problem = shares_problem(value)
            if problem:
                raise InputError(f"role '{role}' {problem}")
        elif kind == "level":
            if not isinstance(value, str) or not value:
                raise InputError(f"role '{role}' must be a level (text), got {value!r}")
        elif kind == "columns":
            if not (isinstance(value, list) and all(isinstance(c, str) for c in value)) or len(set(value)) < len(value):
                raise InputError(f"role '{role}' must be a list of distinct column names (possibly empty), got {value!r}")
        elif not isinstance(value, str):
            raise InputError(f"role '{role}' must be a column name, got {value!r}")
    for role, kind in family.roles.items():
        col = roles[role]
        if kind != "numeric" or col not in data.columns:  # prepare() names a missing column
            continue
        column = data[col]
        if pd.api.types.is_bool_dtype(column) or not pd.api.types.is_numeric_dtype(column):
            bad = next((v for v in column if isinstance(v, bool) or not isinstance(v, (int, float, np.number))), None)
            raise DataError(f"column '{col}' (role '{role}') must hold numbers; it holds {bad!r}")
    if ranges is None:
        return
    if not isinstance(ranges, dict):
        raise InputError(f"ranges must be a mapping of column to (low, high), got {type(ranges).__name__}")
    for col, bounds in ranges.items():
        if col not in data.columns:
            raise InputError(f"ranges name the column '{col}', which data does not have")
        if not pd.api.types.is_numeric_dtype(data[col]) or pd.api.types.is_bool_dtype(data[col]):
            raise InputError(f"ranges give column '{col}' a range, but it does not hold numbers")
        ok = isinstance(bounds, (list, tuple)) and len(bounds) == 2 and all(
            isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
        if not ok or not bounds[0] < bounds[1]:
            raise InputError(f"range of '{col}' must be (low, high) with finite low < high, got {bounds!r}")


def analyse(method: str, data: pd.DataFrame, roles: dict, alpha: float = 0.05, ranges: dict | None = None) -> TestResult:
    """Run ``method``'s canonical test on any data frame, as R's call would.

    ``roles`` maps the family's roles (see ``taskfactory methods``) to column
    names or reference values, e.g. ``{"outcome": "sbp", "group": "arm"}``.
    ``ranges`` optionally maps columns to their plausible ``(low, high)``;
    values outside become missing. Rows with a missing cell in the test's
    columns are dropped. Example::

        >>> taskfactory.analyse("welch_t", df, {"outcome": "sbp", "group": "arm"}).pvalue

    Raises :class:`~taskfactory.errors.InputError` for arguments it cannot use
    (an unknown method; roles that are missing, unknown or of the wrong kind;
    ``data`` that is not a DataFrame; ``alpha`` outside (0, 1); malformed
    ``ranges``) and its subclass :class:`~taskfactory.errors.DataError` for
    data that cannot give a reliable result (text in a numeric column, a column
    named twice or missing, too few rows, no variation). Both are
    :class:`~taskfactory.errors.TaskFactoryError`.
    """
    analysable = [f.name for f in families() if f.has_data]
    if method not in analysable:
        known = isinstance(method, str) and method in family_names()
        what = "asks a question without a dataset" if known else "is not a method"
        raise InputError(f"{method!r} {what}; analyse takes {', '.join(analysable)}")
    family = get_family(method)
    _check_arguments(family, data, roles, alpha, ranges)
    condition = Condition(method=method, roles=dict(roles), alpha=alpha)
    return run_test(family, condition, data, ranges)
