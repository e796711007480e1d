"""A corpus folder: its layout, its manifest, and reading it safely.

Layout of a finished corpus::

    OUT/manifest.json                     format, version, grid, counts, every file + sha256
    OUT/README.md                         dataset card
    OUT/data/train-00000-of-00003.parquet
    OUT/data/test-00000-of-00001.parquet  when the grid has a split
    OUT/rejected.jsonl                    tasks no attempt could make
    OUT/leakage_report.json               only in a corpus written by ``leakage --drop-out``

While a build runs, ``OUT/.build/`` holds its state: ``layout.json`` (the grid and
the names of the shards and parts it will write); each chunk's part
(``train-00000-of-00003-part-00007.parquet``) and its rejects, each written by
its worker under a name of its own (``<part>.<pid>-<8 hex>.partial``) and
renamed when complete, so that two attempts at one chunk never share a file;
each shard as the build assembles it from its parts, and each shard's rejects.

Everything read from a corpus is validated before use: the manifest's
structure and every shard path it names (only
``data/<split>-NNNNN-of-NNNNN.parquet``), so that a hostile corpus cannot
steer a reader to files outside its folder; every shard's size and sha256
against the manifest; every task id (only ``<method>-<12 hex digits>``, and
each once); and, as each row group is read, the values a reader acts on in the
columns it reads (:data:`COLUMN_RULES`: golds, accepted tests, p-values and
decisions, splits, methods). A folder is replaced
(``build --overwrite``) only when it is provably a corpus, and then only the
files the corpus lists, unchanged since it wrote them, are deleted.

The package's modules, one job each: :mod:`.layout` (the names of files),
:mod:`.manifest` (reading and checking the manifest), :mod:`.shardfile` (a
checked shard's file, read only while it is the one checked), :mod:`.checks`
(the shards and task ids checked before reading), :mod:`.rules` (the values
checked in each row group read), :mod:`.reading` (tasks read),
:mod:`.writing` (the manifest and card written), :mod:`.state` (a build's
state and lock), :mod:`.replacing` (``build --overwrite``). Their names are
exported here.
"""

from __future__ import annotations

from .checks import SETTLED_NS, check_shards
from .layout import (ATTEMPT_NAME, CARD, DATA, FORMAT, LEAKAGE_REPORT, MANIFEST, MAX_MANIFEST_BYTES, ORIGINS,
                     ORIGIN_GRID, ORIGIN_REAL, PART_NAME, REJECTED, SHA256, SHARD_PATH, SPLITS, STATE, STATE_LAYOUT,
                     TASK_ID, atomic_write_text, attempt_path, is_task_id, part_name, part_rejects, sha256_file,
                     shard_name, shown)
from .manifest import check_manifest, listed_file, load_manifest
from .reading import find_task, iter_records, shard_records
from .replacing import audit, clear
from .rules import COLUMN_RULES, P_DECISIONS, VALUE_RULES, check_rows
from .shardfile import Shard, open_shard, read_columns, read_row_group, row_group_rows
from .state import attempt_of, locked, read_build_layout, state_files, write_build_layout
from .writing import COUNTED, count_shards, file_entry, write_manifest

__all__ = ["ATTEMPT_NAME", "CARD", "COLUMN_RULES", "COUNTED", "DATA", "FORMAT", "LEAKAGE_REPORT", "MANIFEST",
           "MAX_MANIFEST_BYTES", "ORIGINS", "ORIGIN_GRID", "ORIGIN_REAL", "PART_NAME", "P_DECISIONS", "REJECTED",
           "SETTLED_NS", "SHA256", "SHARD_PATH", "SPLITS", "STATE", "STATE_LAYOUT", "Shard", "TASK_ID", "VALUE_RULES",
           "atomic_write_text", "attempt_of", "attempt_path", "audit", "check_manifest", "check_rows", "check_shards",
           "clear", "count_shards", "file_entry", "find_task", "is_task_id", "iter_records", "listed_file",
           "load_manifest", "locked", "open_shard", "part_name", "part_rejects", "read_build_layout", "read_columns",
           "read_row_group", "row_group_rows", "sha256_file", "shard_name", "shard_records", "shown", "state_files",
           "write_build_layout", "write_manifest"]
