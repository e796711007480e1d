"""Data evidence: rows hashed so that shuffling rows, reordering or renaming
columns, and keeping only some rows cannot hide a copied dataset."""

from __future__ import annotations

import csv
import io
import re

ID_NAME = re.compile(r"(^|_)(id|idx|index|key)$", re.I)


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


def _is_id_column(name: str, values: list[str]) -> bool:
    """A column that only identifies rows: id-like name, or all values distinct
    and either non-numeric or a run of consecutive integers."""
    if ID_NAME.search(name.strip()):
        return True
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
    None they are detected)."""
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
    return {hash(tuple(sorted(_norm(r[j], cache) for j in keep))) for r in body}
