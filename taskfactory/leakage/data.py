"""Data evidence: rows fingerprinted so that presentation cannot hide a copied dataset.

A dataset is read whatever its separator (comma, tab, semicolon or bar, told
apart by the column counts of its first lines), line endings (LF, CRLF or CR)
and decimal mark (a decimal comma where the separator is not a comma). Each
row is then hashed as the sorted multiset of its normalised cells, so that
shuffling rows, reordering or renaming columns and keeping only some rows do
not change it; both with every column and without the columns that only
identify rows (the same rule on both sides, from the values alone, so a
cluster or subject column counts the same in the corpus and in a benchmark).

A coarser fingerprint survives rounding: a benchmark dataset whose numbers
carry at most :data:`MAX_ROUNDED_DECIMALS` decimals is compared with corpus
rows rounded to that many decimals (a cell exactly half-way is taken both
ways, since programs round ties differently).
"""

from __future__ import annotations

import csv
import decimal
import functools
import io
import itertools
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .text import stable_hash

_cell_hash = functools.lru_cache(maxsize=1 << 18)(stable_hash)

ID_NAME = re.compile(r"(^|_)(id|idx|index|key)$", re.I)
# The cells pandas reads as missing by default, lower-cased.
NA_CELLS = frozenset({"", "#n/a", "#n/a n/a", "#na", "-1.#ind", "-1.#qnan", "-nan", "1.#ind", "1.#qnan", "<na>",
                      "n/a", "na", "null", "nan", "none"})
CELL_SEPARATOR = "\x1f"  # ASCII unit separator between the cells of a hashed row
SEPARATORS = (",", "\t", ";", "|")
#: The lines the separator is judged on.
SNIFF_LINES = 20
DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+\s*$")
PLAIN_DECIMAL = re.compile(r"^\s*[-+]?\d*(?:\.(\d*))?\s*$")
#: The most decimals a benchmark dataset's numbers may carry for the rounded fingerprint.
MAX_ROUNDED_DECIMALS = 3
#: The most half-way cells of a row taken both ways (2 ** this many variants).
MAX_TIES = 3
_TIE_ROUNDINGS = (decimal.ROUND_HALF_EVEN, decimal.ROUND_HALF_UP, decimal.ROUND_HALF_DOWN)


@dataclass
class Table:
    """A dataset read: its header and the rows of the header's width."""

    header: list[str]
    body: list[list[str]]


def _lines(text: str) -> io.StringIO:
    return io.StringIO(text, newline=None)   # universal newlines: LF, CRLF and CR alike


def sniff_separator(text: str) -> str:
    """The separator whose first lines have the most columns, all alike (a comma when none fits better)."""
    head = list(itertools.islice((line for line in _lines(text) if line.strip()), SNIFF_LINES))

    def fit(sep: str) -> tuple:
        widths = [len(row) for row in csv.reader(head, delimiter=sep)]
        return (len(widths) > 0 and widths[0] > 1 and len(set(widths)) == 1, widths[0] if widths else 0)

    return max(SEPARATORS, key=fit)   # ties go to the first, the comma


def read_table(csv_text: str, separator: str | None = None) -> Table:
    """``csv_text`` as a :class:`Table`, its separator sniffed unless given;
    :class:`csv.Error` on text the CSV reader refuses."""
    sep = separator or sniff_separator(csv_text)
    rows = list(csv.reader(_lines(csv_text), delimiter=sep))
    if len(rows) < 2:
        return Table(rows[0] if rows else [], [])
    header = rows[0]
    body = [r for r in rows[1:] if len(r) == len(header)]
    if sep != ",":
        body = [[c.replace(",", ".") if DECIMAL_COMMA.match(c) else c for c in r] for r in body]
    return Table(header, body)


def is_na(cell: str) -> bool:
    """True for a blank cell or a missing-value code (NA, NaN, null, ...)."""
    return cell.strip().lower() in NA_CELLS


def _is_id_column(name: str, uniques: list[str], counts: np.ndarray) -> bool:
    """A column that only identifies rows: id-like name, or all values distinct
    and either non-numeric or a run of consecutive integers (the column's
    distinct values ``uniques``, each found ``counts`` times). Blank and
    missing cells are left out of the judgement, so that a blank among
    numbers cannot make a measurement look like text."""
    if ID_NAME.search(name.strip()):
        return True
    values = [(u, c) for u, c in zip(uniques, counts.tolist()) if not is_na(u)]
    if len(values) < 2 or any(c > 1 for _, c in values):
        return False
    try:
        nums = sorted(float(u) for u, _ in values)
    except ValueError:
        return True
    return all(x.is_integer() for x in nums) and nums[-1] - nums[0] == len(nums) - 1


@functools.lru_cache(maxsize=1 << 18)
def _norm(cell: str) -> str:
    s = cell.strip()
    try:
        value = float(s)
    except ValueError:
        return s.lower()
    return repr(value + 0.0) if value == value else "nan"


@functools.lru_cache(maxsize=1 << 18)
def _rounded(cell: str, places: int) -> tuple[str, ...]:
    """The normal forms of ``cell`` rounded to ``places`` decimals: two where
    it lies exactly half-way, else one; a cell that is not a finite number as it is."""
    try:
        value = decimal.Decimal(cell.strip())
    except decimal.InvalidOperation:
        return (_norm(cell),)
    if not value.is_finite():
        return (_norm(cell),)
    step = decimal.Decimal(1).scaleb(-places)
    return tuple(sorted({repr(float(value.quantize(step, rounding=r)) + 0.0) for r in _TIE_ROUNDINGS}))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=1 << 18)
def _places(cell: str) -> int | None:
    """The decimals of a number written plainly (0 for a whole one), -1 for
    one written otherwise (an exponent, inf), None for a cell that is not a number."""
    match = PLAIN_DECIMAL.match(cell)
    if match and any(ch.isdigit() for ch in cell):
        return len(match.group(1) or "")
    return -1 if not is_na(cell) and _is_number(cell) else None


_ROW_HASH = np.uint64


class Rows:
    """The fingerprints of a table's rows. A row's hash is the sum, modulo
    2**64, of its cells' :func:`stable_hash` values: it ignores the order of
    the cells, as the sorted multiset of them would. Each row has one with
    every column and one without the identifier columns (when there are
    some), exact or rounded; the work is done once per distinct cell of a
    column, not per cell."""

    def __init__(self, table: Table):
        width = len(table.header)
        columns = list(zip(*table.body)) if table.body else [()] * width
        self.rows = len(table.body)
        self.codes, self.uniques = [], []
        for values in columns:
            codes, uniques = pd.factorize(np.array(values, dtype=object))
            self.codes.append(codes)
            self.uniques.append([str(u) for u in uniques])
        ids = [j for j in range(width)
               if _is_id_column(table.header[j], self.uniques[j], np.bincount(self.codes[j], minlength=len(self.uniques[j])))]
        self.selections = [list(range(width))]
        if ids and len(ids) < width:
            self.selections.append([j for j in range(width) if j not in ids])

    def precision(self) -> int | None:
        """The most decimals a number of the table carries (0 when all are
        whole), or None when it has no number or one not written plainly."""
        places = [_places(u) for values in self.uniques for u in values]
        if -1 in places:
            return None
        return max((p for p in places if p is not None), default=None)

    def _column(self, j: int, places: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Per row, column ``j``'s cell hash, and what taking a half-way cell the other way adds (0 for most)."""
        forms = [(_norm(u),) if places is None else _rounded(u, places) for u in self.uniques[j]]
        first = np.array([_cell_hash(f[0]) for f in forms], dtype=_ROW_HASH)
        other = np.array([_cell_hash(f[-1]) for f in forms], dtype=_ROW_HASH) - first
        return first[self.codes[j]], other[self.codes[j]]

    def per_row(self, places: int | None = None) -> list[frozenset[int]]:
        """Each row's hashes, exact (``places`` None) or rounded to ``places`` decimals."""
        out = [set() for _ in range(self.rows)]
        columns = {}
        for selection in self.selections:
            for j in selection:
                if j not in columns:
                    columns[j] = self._column(j, places)
            base = np.zeros(self.rows, dtype=_ROW_HASH)
            for j in selection:
                base += columns[j][0]
            ties = np.column_stack([columns[j][1] for j in selection]) if selection else np.zeros((self.rows, 0))
            for r, h in enumerate(base.tolist()):
                out[r].add(h)
            for r in np.flatnonzero(ties.any(axis=1)).tolist():
                deltas = [d for d in ties[r].tolist() if d][:MAX_TIES]
                for chosen in itertools.product((0, 1), repeat=len(deltas)):
                    out[r].add((int(base[r]) + sum(d for d, c in zip(deltas, chosen) if c)) % (1 << 64))
        return [frozenset(h) for h in out]

    def hashes(self, places: int | None = None) -> set[int]:
        """Every hash of every row, exact (``places`` None) or rounded to ``places`` decimals."""
        return set().union(*self.per_row(places))
