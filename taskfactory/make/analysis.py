"""Running a family's test on a data frame, with the canonical data handling."""

from __future__ import annotations

import dataclasses
import decimal
import math
import numbers

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..condition import Condition
from ..errors import DataError, InputError
from ..family import ANY_NUMBER, VALUE_KINDS, Alternative, shares_problem, value_problem
from ..methods._common import require_held, shown
from ..registry import families, family_names, get_family
from ..result import TestResult


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
    reference solutions emit the same rule (:mod:`taskfactory.make.reference`).

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
    tested = [t for t in res.terms if t.name == res.target]
    require_held([t.std_error * t.std_error for t in tested], [t.name for t in tested])
    if not (isinstance(res.pvalue, float) and 0.0 <= res.pvalue <= 1.0
            and (res.statistic is None or math.isfinite(res.statistic))):
        name = which.method if isinstance(which, Alternative) else which
        raise DataError(f"{name} gave p = {res.pvalue!r}, statistic = {res.statistic!r}")
    if res.n is None:
        res = dataclasses.replace(res, n=len(d))
    return res


def complete_roles(family, roles) -> dict:
    """``roles`` checked against ``family``'s, with R's default for a role
    left out where R's call has one (a list of columns, such as a model's
    covariates: none); :class:`InputError` naming a role that is missing,
    unknown, or of the wrong kind or outside its domain."""
    if not isinstance(roles, dict):
        raise InputError(f"roles must be a mapping of role to column, got {type(roles).__name__}")
    roles = {**dict.fromkeys(family.optional_roles), **{r: [] for r, kind in family.roles.items() if kind == "columns"},
             **roles}
    lacking = [r for r in family.roles if r not in roles]
    if lacking:
        raise InputError(f"roles lack '{lacking[0]}'; {family.name} needs {family.roles_text()}")
    unknown = sorted(set(map(str, roles)) - set(family.roles))
    if unknown:
        raise InputError(f"unknown role '{unknown[0]}' for {family.name}; allowed: {family.roles_text()}")
    for role, kind in family.roles.items():
        value = roles[role]
        if value is None and role in family.optional_roles:
            continue
        if kind == "value":
            problem = value_problem(value, family.value_domains.get(role, ANY_NUMBER))
            if problem:
                raise InputError(f"role '{role}' {problem}")
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
    return roles


def _check_arguments(family, data, alpha) -> None:
    """Refuse arguments :func:`analyse` cannot use, naming what is wrong."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"alpha ({alpha!r}) must be a number between 0 and 1")
    duplicated = data.columns[data.columns.duplicated()]
    if len(duplicated):
        raise DataError(f"data has the column '{duplicated[0]}' more than once")


def _is_missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _is_real(value) -> bool:
    """A real number (an int, float, numpy number, Fraction, or a Decimal as
    databases return numbers), not a boolean."""
    return isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, (bool, np.bool_))


def _is_label(value) -> bool:
    """A cell a category or design column can hold: a single value (a text,
    real number or boolean), not a sequence or a complex number."""
    return pd.api.types.is_scalar(value) and not isinstance(value, (complex, np.complexfloating))


def _first_bad(column: pd.Series, ok) -> tuple | None:
    """``(row label, cell)`` of the first cell of ``column`` that is neither missing nor ``ok``, or None."""
    return next(((label, v) for label, v in column.items() if not (_is_missing(v) or ok(v))), None)


def _as_float(value) -> float:
    if _is_missing(value):
        return math.nan
    try:
        return float(value)   # the nearest double, as R reads the number's decimal text
    except OverflowError:   # an integer beyond the doubles: R reads it as Inf
        return math.inf if value > 0 else -math.inf


#: Kinds of role whose cells must be real numbers: measurements, and periods
#: (numbered in time order, so that a series can be put in order and its
#: consecutive periods found).
NUMBER_KINDS = ("numeric", "period")


def _holds_only(column: pd.Series, kind: str) -> bool:
    """Whether ``column``'s type alone shows its cells fit a role of ``kind``:
    real numbers (any kind), or texts (any kind but :data:`NUMBER_KINDS`)."""
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_complex_dtype(dtype):
        return False
    if pd.api.types.is_numeric_dtype(dtype):
        return True
    return kind not in NUMBER_KINDS and pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty")


def _test_columns(family, roles: dict) -> list[tuple[str, str, str]]:
    """``(role, kind, column)`` of every column the test uses, in role order
    (as :meth:`~taskfactory.family.Family.role_columns` lists them)."""
    return [(role, kind, col) for role, kind in family.roles.items() if kind not in VALUE_KINDS
            and roles.get(role) is not None for col in (roles[role] if kind == "columns" else [roles[role]])]


def _role_cells(family, data: pd.DataFrame, roles: dict) -> pd.DataFrame:
    """``data`` with the cells of its role columns checked.

    A numeric or period role's column must hold real numbers and missing values; a
    column of the ``columns`` kind (a covariate) may instead hold labels, as
    must a category or design role's column: texts, real numbers, booleans.
    A column of Python objects that are real numbers and missing values
    (``None``, ``NaN``, ``pd.NA``) is taken as numbers with missing values,
    as R's ``read.csv`` reads such a column, and returned converted to floats.
    Raises :class:`DataError` naming the column, its role and the first bad
    cell with its row."""
    converted = {}
    for role, kind, col in _test_columns(family, roles):
        if col not in data.columns or _holds_only(data[col], kind):   # prepare() names a missing column
            continue
        cells = data[col].astype(object)
        if _first_bad(cells, _is_real) is None:
            if kind in ("numeric", "columns"):
                converted[col] = np.array([_as_float(v) for v in cells], dtype=float)
            continue
        found = _first_bad(cells, _is_real if kind in NUMBER_KINDS else _is_label)
        if found:
            what = "real numbers" if kind in NUMBER_KINDS else "texts or real numbers"
            raise DataError(f"column '{col}' (role '{role}') must hold {what}; it holds {shown(found[1])} "
                            f"at row {shown(found[0])}")
    return data.assign(**converted) if converted else data


def _check_ranges(data: pd.DataFrame, ranges) -> None:
    """Refuse ``ranges`` :func:`analyse` cannot use, naming what is wrong."""
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


def _refuse_infinite(family, data: pd.DataFrame, roles: dict) -> None:
    """Raise :class:`DataError` naming the first infinite value left in a
    numeric column of the test (R keeps it: it is not missing, and no test
    of it is reliable)."""
    for role, _, col in _test_columns(family, roles):
        column = data[col]
        if not pd.api.types.is_float_dtype(column):
            continue
        infinite = np.isinf(column.to_numpy(dtype=float, na_value=np.nan))
        if infinite.any():
            at = int(np.argmax(infinite))
            raise DataError(f"column '{col}' (role '{role}') holds an infinite value ({shown(column.iloc[at])}) "
                            f"at row {shown(column.index[at])}")


def analyse(method: str, data: pd.DataFrame, roles: dict, alpha: float = 0.05, ranges: dict | None = None) -> TestResult:
    """Run ``method``'s canonical test on any data frame, as R's call would.

    ``roles`` maps the family's roles (see ``taskfactory methods``) to column
    names or reference values, e.g. ``{"outcome": "sbp", "group": "arm"}``;
    a reference value must lie in its domain (``p0`` of ``binomial_exact``
    strictly between 0 and 1); a list of columns left out (a model's
    covariates) is empty, and a count model's exposure time may be left out
    (no offset), as in R's call without them. ``ranges`` optionally maps columns to their
    plausible ``(low, high)``; values outside become missing. Rows with a
    missing cell in the test's columns are then dropped. Example::

        >>> taskfactory.analyse("welch_t", df, {"outcome": "sbp", "group": "arm"}).pvalue

    The data are read as R's ``read.csv`` would hold them: a numeric role's
    column holds real numbers; missing cells are ``NaN``, ``None`` or
    ``pd.NA``, so a column of Python objects that are numbers and ``None``
    counts as numbers with missing values, as R reads them. Category and
    design columns hold single values (texts, real numbers, booleans).

    Raises :class:`~taskfactory.errors.InputError` for arguments it cannot use
    (an unknown method; roles that are missing, unknown, of the wrong kind or
    outside their domain; ``data`` that is not a DataFrame; ``alpha`` outside
    (0, 1); malformed ``ranges``) and its subclass
    :class:`~taskfactory.errors.DataError` for data that cannot give a
    reliable result, naming the column, role, value and row where there is
    one: a cell that is not a real number in a numeric column (text, a
    boolean, a complex number, a tuple), an infinite value left after the
    ranges, a column named twice or missing, too few rows, a constant
    outcome, exposure or group, or magnitudes so extreme that double
    precision cannot hold the test's products (where R's result is noise
    too). Both are :class:`~taskfactory.errors.TaskFactoryError`.
    """
    analysable = [f.name for f in families() if f.has_data]
    if method not in analysable:
        known = isinstance(method, str) and method in family_names()
        what = "asks a question without a dataset" if known else "is not a method"
        raise InputError(f"{method!r} {what}; analyse takes {', '.join(analysable)}")
    family = get_family(method)
    _check_arguments(family, data, alpha)
    roles = complete_roles(family, roles)
    data = _role_cells(family, data, roles)
    if ranges is not None:
        _check_ranges(data, ranges)
    prepared = prepare(family, data, roles, ranges)
    _refuse_infinite(family, prepared, roles)
    condition = Condition(method=method, roles=dict(roles), alpha=alpha)
    return run_test(family, condition, prepared, prepared=True)
