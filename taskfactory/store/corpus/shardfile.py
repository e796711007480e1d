"""A shard file of a checked corpus: what was checked of it (:class:`Shard`), read only while the file is
still the one checked, row group by row group."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ...errors import CorpusError
from ...make.columns import FIELDS, is_roles_type

@dataclass(frozen=True)
class Shard:
    """A shard of a checked corpus: its path, the split the manifest gives
    it, and the stamp (device, inode, size, mtime, ctime) of the file that was
    checked; it is read only while the file still has that stamp."""

    path: Path
    split: str
    stamp: tuple


def _stamp(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@contextmanager
def _unchanged(shard: Shard):
    """The file of ``shard`` open for reading, while it is the file that was checked."""
    try:
        fh = open(shard.path, "rb")
    except OSError as exc:
        raise CorpusError(f"{shard.path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    with fh:
        if _stamp(os.fstat(fh.fileno())) != shard.stamp:
            raise CorpusError(f"{shard.path}: changed while this command was reading the corpus")
        yield fh


def open_shard(path: Path, source=None):
    """Open a shard (from ``source``, a file open for reading, when given),
    reporting a corrupt or truncated file as a CorpusError."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path if source is None else source)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"{path}: not a readable Parquet shard ({' '.join(str(exc).split())})") from None


@contextmanager
def _parquet(shard: Shard):
    """A checked shard, open as Parquet from the file that was checked."""
    with _unchanged(shard) as fh:
        yield open_shard(shard.path, fh)


def read_row_group(pf, path: Path, index: int, columns: list[str] | None):
    """One row group of a shard. A missing column, a column of another type
    than the corpus schema's, a null where the schema allows none, or a
    damaged page is a CorpusError."""
    have = set(pf.schema_arrow.names)
    lacking = [c for c in (columns if columns is not None else [name for name, *_ in FIELDS]) if c not in have]
    if lacking:
        raise CorpusError(f"{path}: the shard has no column '{lacking[0]}'")
    try:
        table = pf.read_row_group(index, columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"{path}: row group {index} cannot be read ({' '.join(str(exc).split())})") from None
    expected = {name: (kind, nullable) for name, kind, nullable, _ in FIELDS}
    for name, column in zip(table.column_names, table.columns):
        if name not in expected:
            continue
        kind, nullable = expected[name]
        if not (is_roles_type(column.type) if kind is None else column.type == kind):
            raise CorpusError(f"{path}: column '{name}' holds {column.type}, not {'a struct of roles' if kind is None else kind}")
        if not nullable and column.null_count:
            raise CorpusError(f"{path}: column '{name}' has an empty cell in row group {index}")
    return table


def _row_groups(pf, path: Path, columns: list[str] | None, groups: range | None = None):
    """(index, first row, table) of each row group of a shard (those of ``groups``, or all)."""
    groups = range(pf.num_row_groups) if groups is None else groups
    row = sum(pf.metadata.row_group(i).num_rows for i in range(groups.start))
    for i in groups:
        table = read_row_group(pf, path, i, columns)
        yield i, row, table
        row += table.num_rows


def read_columns(path: Path, columns: list[str]):
    """Whole columns of one shard."""
    pf = open_shard(path)
    return pa.concat_tables([read_row_group(pf, path, i, columns) for i in range(pf.num_row_groups)]) \
        if pf.num_row_groups else pf.schema_arrow.empty_table().select(columns)


def row_group_rows(shard: Shard) -> list[int]:
    """The number of tasks in each row group of a checked shard."""
    with _parquet(shard) as pf:
        return [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)]
