"""Data evidence: rows fingerprinted so that presentation cannot hide a copied dataset.

A dataset is read whatever its separator (comma, tab, semicolon or bar, told
apart by the column counts of its first lines), line endings (LF, CRLF or CR)
and decimal mark (a decimal comma where the separator is not a comma). Each
row is then hashed as the multiset of its normalised cells, so that
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
import functools
import io
import itertools
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


_ROW_HASH = np.uint64   # a row hash: its cells' hashes summed modulo 2**64

ID_NAME = re.compile(r"(^|_)(id|idx|index|key)$", re.I)
# The cells pandas reads as missing by default, lower-cased.
NA_CELLS = frozenset({"", "#n/a", "#n/a n/a", "#na", "-1.#ind", "-1.#qnan", "-nan", "1.#ind", "1.#qnan", "<na>",
                      "n/a", "na", "null", "nan", "none"})
SEPARATORS = (",", "\t", ";", "|")
#: The lines the separator is judged on.
SNIFF_LINES = 20
DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+\s*$")
#: A number: decimal or scientific notation, spaces around it allowed.
NUMBER = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
PLAIN_DECIMAL = re.compile(r"^\s*[-+]?\d*(?:\.(\d*))?\s*$")
#: The most decimals a benchmark dataset's numbers may carry for the rounded fingerprint.
MAX_ROUNDED_DECIMALS = 3
#: The most half-way cells of a row taken both ways (2 ** this many variants).
MAX_TIES = 3


@dataclass
class Table:
    """A dataset read: its header and its columns of cells (text, a row short of cells padded with blanks)."""

    header: list[str]
    columns: list[np.ndarray]
    rows: int


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
    """``csv_text`` as a :class:`Table`, its separator sniffed unless given
    (pandas' C reader; a row with more cells than the header is left out);
    :class:`csv.Error` on text it cannot read."""
    sep = separator or sniff_separator(csv_text)
    try:
        frame = pd.read_csv(io.StringIO(csv_text), sep=sep, dtype=str, keep_default_na=False, na_filter=False,
                            on_bad_lines="skip", engine="c")
    except pd.errors.EmptyDataError:
        return Table([], [], 0)
    except (pd.errors.ParserError, ValueError) as exc:
        raise csv.Error(" ".join(str(exc).split())) from None
    cells = frame.to_numpy(dtype=object)
    short = pd.isna(cells)   # the cells of a row short of them
    if short.any():
        cells[short] = ""
    columns = list(cells.T)
    if sep != ",":   # decimal commas to points
        columns = [np.array([c.replace(",", ".") if DECIMAL_COMMA.match(c) else c for c in col], dtype=object)
                   if any("," in c for c in col) else col for col in columns]
    return Table([str(name) for name in frame.columns], columns, len(frame))


def _is_id_column(name: str, column: _Column, counts: np.ndarray) -> bool:
    """A column that only identifies rows: id-like name, or all values distinct
    and either non-numeric or a run of consecutive integers (``counts``: how
    often each distinct cell occurs). Blank and missing cells are left out of
    the judgement, so that a blank among numbers cannot make a measurement look like text."""
    if ID_NAME.search(name.strip()):
        return True
    present = ~column.missing
    if present.sum() < 2 or (counts[present] > 1).any():
        return False
    if not column.numeric[present].all():
        return True
    nums = np.sort(column.values[present])
    return bool(np.all(nums == np.round(nums)) and nums[-1] - nums[0] == len(nums) - 1)


def _mix(bits: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: 64-bit patterns to well-spread 64-bit hashes."""
    with np.errstate(over="ignore"):
        z = bits + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _number_hashes(values: np.ndarray) -> np.ndarray:
    """The hash of each finite number, from its value (so "12.30" and "12.3" are alike)."""
    return _mix((values + 0.0).view(np.uint64))   # + 0.0: -0.0 is 0.0


def _as_numbers(uniques: np.ndarray) -> np.ndarray:
    """Each cell's value where it is a number written in decimal or
    scientific notation (:data:`NUMBER`), else NaN; so "1_000", "inf" and
    "0x1A" are text, the same on both sides."""
    values = np.full(len(uniques), np.nan)
    if len(uniques):
        numbers = pc.match_substring_regex(pa.array(uniques, type=pa.string()), NUMBER.pattern).to_numpy(
            zero_copy_only=False)
        values[numbers] = np.array(uniques[numbers], dtype=float)
    values[~np.isfinite(values)] = np.nan   # beyond a double's range
    return values


class _Column:
    """A column's distinct cells: their values (NaN for those that are not
    finite numbers), which are missing-value codes, and the hashes of the
    cells that are not numbers (their trimmed lower-case text)."""

    def __init__(self, uniques: np.ndarray):
        self.values = _as_numbers(uniques)
        self.numeric = ~np.isnan(self.values)
        self.text = np.zeros(len(uniques), dtype=_ROW_HASH)
        self.missing = np.zeros(len(uniques), dtype=bool)
        others = np.flatnonzero(~self.numeric)
        if len(others):
            cells = np.char.lower(np.char.strip(uniques[others].astype(str)))
            self.text[others] = pd.util.hash_array(cells.astype(object), categorize=False)
            self.missing[others] = np.isin(cells, list(NA_CELLS))

    def rounding_changes(self, places: int) -> bool:
        """Whether rounding to ``places`` decimals changes a number of the column."""
        x = self.values[self.numeric]
        return bool(np.any(np.floor(x * 10.0 ** places + 0.5) / 10.0 ** places != x))

    def hashes(self, places: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Per distinct cell: its hash, exact or rounded to ``places`` decimals,
        and what taking it the other way adds where it lies half-way (else 0);
        a cell that is not a finite number is hashed as its trimmed lower-case text."""
        first, other = self.text.copy(), np.zeros(len(self.text), dtype=_ROW_HASH)
        x = self.values[self.numeric]
        if places is None:
            first[self.numeric] = _number_hashes(x)
            return first, other
        step = 10.0 ** places
        scaled = x * step
        up, down = np.floor(scaled + 0.5), np.floor(scaled)   # an integer over 10 ** places is the nearest double
        tie = np.abs(scaled - down - 0.5) <= 1e-9 * np.maximum(1.0, np.abs(scaled))
        first[self.numeric] = _number_hashes(up / step)
        with np.errstate(over="ignore"):
            other[self.numeric] = np.where(tie, _number_hashes(down / step) - first[self.numeric], 0)
        return first, other


@functools.lru_cache(maxsize=1 << 18)
def _places(cell: str) -> int | None:
    """The decimals of a number written plainly (0 for a whole one), else None (an exponent)."""
    match = PLAIN_DECIMAL.match(cell)
    return len(match.group(1) or "") if match else None


class Rows:
    """The fingerprints of a table's rows. A row's hash is the sum, modulo
    2**64, of its cells' hashes (a number's from its value, other text's from
    pandas' ``hash_array``, SipHash with a fixed key): it ignores the order of
    the cells, as the multiset of them does. Each row has one with every
    column and one without the identifier columns (when there are some),
    exact or rounded; the work is done once per distinct cell of a column, in
    arrays."""

    def __init__(self, table: Table):
        width = len(table.header)
        self.rows = table.rows
        self.codes, self.uniques, self.columns = [], [], []
        for cells in table.columns:
            codes, uniques = pd.factorize(cells)
            self.codes.append(codes)
            self.uniques.append(uniques)
            self.columns.append(_Column(uniques))
        ids = [j for j in range(width) if _is_id_column(table.header[j], self.columns[j],
                                                         np.bincount(self.codes[j], minlength=len(self.uniques[j])))]
        self.selections = [list(range(width))]
        if ids and len(ids) < width:
            self.selections.append([j for j in range(width) if j not in ids])

    def precision(self) -> int | None:
        """The most decimals a number of the table carries (0 when all are
        whole), or None when it has no number or one not written plainly."""
        places = [_places(u) for column, uniques in zip(self.columns, self.uniques) for u in uniques[column.numeric]]
        return None if None in places else max(places, default=None)

    def _variants(self, places: int | None):
        """Per selection of columns: (row, hash) pairs, each row's hash and,
        for its half-way cells (at most :data:`MAX_TIES`), every choice of
        taking them the other way."""
        columns = {j: self.columns[j].hashes(places) for j in set().union(*self.selections)}
        for selection in self.selections:
            base = np.zeros(self.rows, dtype=_ROW_HASH)
            with np.errstate(over="ignore"):
                for j in selection:
                    base += columns[j][0][self.codes[j]]
            rows, hashes = np.arange(self.rows), base
            used = np.zeros(self.rows, dtype=int)
            for j in selection:
                delta = columns[j][1][self.codes[j]]
                tied = (delta != 0) & (used < MAX_TIES)
                if tied.any():
                    used += tied
                    take = tied[rows]
                    with np.errstate(over="ignore"):
                        hashes = np.concatenate([hashes, hashes[take] + delta[rows[take]]])
                    rows = np.concatenate([rows, rows[take]])
            yield rows, hashes

    def pairs(self, places: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Every (row, hash) of the table over every selection of columns,
        exact (``places`` None: one hash per row and selection, in row order
        selection after selection) or rounded to ``places`` decimals."""
        parts = list(self._variants(places))
        return np.concatenate([r for r, _ in parts]), np.concatenate([h for _, h in parts])

    def per_row(self, places: int | None = None) -> list[frozenset[int]]:
        """Each row's hashes, exact (``places`` None) or rounded to ``places`` decimals."""
        out = [set() for _ in range(self.rows)]
        for r, h in zip(*(a.tolist() for a in self.pairs(places))):
            out[r].add(h)
        return [frozenset(h) for h in out]

    def hashes(self, places: int | None = None) -> np.ndarray:
        """Every hash of every row, sorted and distinct, exact (``places``
        None) or rounded to ``places`` decimals (none where rounding changes
        no number: then they are the exact ones)."""
        if places is not None and not any(column.rounding_changes(places) for column in self.columns):
            return np.empty(0, dtype=_ROW_HASH)
        return np.unique(self.pairs(places)[1])
