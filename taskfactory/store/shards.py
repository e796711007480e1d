"""The Parquet shards of a corpus: one explicit schema, deterministic bytes,
written in bounded row groups so that memory does not grow with a shard."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .._version import __version__
from ..make.columns import FIELDS, fields

ROW_GROUP_ROWS = 256
ROW_GROUP_BYTES = 32 << 20   # text held before a row group is flushed (the writer's memory, loky's 300 MB growth check)
DICTIONARY_COLUMNS = ["method", "category", "scenario", "domain", "effect", "prompt_style", "perturbation", "split",
                      "gold_decision"]
TEXT_COLUMNS = ("data_csv", "script", "prompt", "reference_r", "reference_py", "context")
#: Columns whose min/max statistics the footer carries: the flat ones a reader
#: filters on (ids, design, results), not the long texts, whose min and max
#: only bloat the footer, nor the nested columns (``roles``, typed None here).
STATISTICS_COLUMNS = [name for name, typ, _, _ in FIELDS
                      if typ is not None and not pa.types.is_nested(typ) and name not in (*TEXT_COLUMNS, "question")]


def schema(provenance: dict | None = None) -> pa.Schema:
    """The task schema; ``provenance`` goes into its metadata as JSON."""
    columns = [pa.field(name, typ, nullable=nullable) for name, typ, nullable, _ in fields()]
    meta = {"taskfactory": json.dumps({"version": __version__, **(provenance or {})}, sort_keys=True)}
    return pa.schema(columns, metadata=meta)


def text_chars(record: dict) -> int:
    """The characters of a record's long text columns (:data:`TEXT_COLUMNS`)."""
    return sum(len(record[c]) for c in TEXT_COLUMNS if record.get(c))


class ShardWriter:
    """Writes records to one shard (zstd, explicit schema, no timestamps,
    statistics on :data:`STATISTICS_COLUMNS` only),
    flushing a row group every ``ROW_GROUP_ROWS`` records or once the buffered
    text reaches ``ROW_GROUP_BYTES``, whichever comes first. The row groups
    depend only on the records, so the bytes are the same on every run.
    ``transient=True`` writes a file that is read once and deleted (a part of
    a shard, see :mod:`taskfactory.store.build`) with lz4, cheaper to write and
    read than zstd and about twice as large."""

    def __init__(self, path: Path | pa.NativeFile, provenance: dict, transient: bool = False):
        self.schema = schema(provenance)
        codec = {"compression": "lz4"} if transient else {"compression": "zstd", "compression_level": 6}
        self.writer = pq.ParquetWriter(path, self.schema, **codec,
                                       write_statistics=STATISTICS_COLUMNS, use_dictionary=DICTIONARY_COLUMNS)
        self.buffer: list[dict] = []
        self.buffered_bytes = 0
        self.rows = 0

    def append(self, record: dict) -> None:
        self.buffer.append(record)
        self.rows += 1
        self.buffered_bytes += text_chars(record)
        if len(self.buffer) >= ROW_GROUP_ROWS or self.buffered_bytes >= ROW_GROUP_BYTES:
            self.flush()

    def append_row_group(self, table: pa.Table) -> None:
        """Write ``table`` (a row group of another shard of this schema, at
        most ``ROW_GROUP_ROWS`` rows) as one row group of its own."""
        self.flush()
        self.writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self.rows += table.num_rows

    def flush(self) -> None:
        if self.buffer:
            self.writer.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema),
                                    row_group_size=ROW_GROUP_ROWS)
            self.buffer, self.buffered_bytes = [], 0

    def close(self) -> None:
        self.flush()
        self.writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_shard(path: Path, records, provenance: dict) -> int:
    """Write ``records`` (any iterable) to the shard ``path``; returns the rows written."""
    with ShardWriter(path, provenance) as writer:
        for rec in records:
            writer.append(rec)
    return writer.rows
