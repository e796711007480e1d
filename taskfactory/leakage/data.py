"""Data evidence: rows hashed so that shuffling rows, reordering or renaming
columns, and keeping only some rows cannot hide a copied dataset."""

from __future__ import annotations

import csv
import io
import re

from .text import stable_hash

ID_NAME = re.compile(r"(^|_)(id|idx|index|key)$", re.I)
# The cells pandas reads as missing by default, lower-cased.
NA_CELLS = frozenset({"", "#n/a", "#n/a n/a", "#na", "-1.#ind", "-1.#qnan", "-nan", "1.#ind", "1.#qnan", "<na>",
                      "n/a", "na", "null", "nan", "none"})
CELL_SEPARATOR = "\x1f"  # ASCII unit separator between the cells of a hashed row


def _norm(cell: str, cache: dict) -> str:
    out = cache.get(cell)
    if out is None:
        s = cell.strip()
        try:
            value = float(s)
            out = repr(value + 0.0) if value == value else "nan"
        except ValueError:
            out = s.lower()
        cache[cell] = out
    return out


def is_na(cell: str) -> bool:
    """True for a blank cell or a missing-value code (NA, NaN, null, ...)."""
    return cell.strip().lower() in NA_CELLS


def _is_id_column(name: str, values: list[str]) -> bool:
    """A column that only identifies rows: id-like name, or all values distinct
    and either non-numeric or a run of consecutive integers. Blank and missing
    cells are left out of the judgement, so that a blank among numbers cannot
    make a measurement look like text."""
    if ID_NAME.search(name.strip()):
        return True
    values = [v for v in values if not is_na(v)]
    if len(set(values)) != len(values) or len(values) < 2:
        return False
    try:
        nums = sorted(float(v) for v in values)
    except ValueError:
        return True
    return all(x.is_integer() for x in nums) and nums[-1] - nums[0] == len(nums) - 1


def row_hashes(csv_text: str, drop: tuple[str, ...] | None = None) -> set[int]:
    """The set of row hashes of a CSV: each row as the sorted multiset of its
    normalised cells, without identifier columns (``drop`` names them; when
    None they are detected). Raises :class:`csv.Error` on unreadable CSV."""
    rows = list(csv.reader(io.StringIO(csv_text)))
    if len(rows) < 2:
        return set()
    header, body = rows[0], [r for r in rows[1:] if r]
    width = len(header)
    body = [r for r in body if len(r) == width]
    if drop is None:
        keep = [j for j in range(width) if not _is_id_column(header[j], [r[j] for r in body])]
    else:
        keep = [j for j in range(width) if header[j] not in drop]
    cache: dict = {}
    return {stable_hash(CELL_SEPARATOR.join(sorted(_norm(r[j], cache) for j in keep))) for r in body}
