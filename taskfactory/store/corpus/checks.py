"""What is checked of a corpus before it is read: its shards against the manifest (size, sha256, the
file's stamp remembered once settled) and its task ids."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from stat import S_ISREG

import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CorpusError
from .layout import MANIFEST, TASK_ID, shown
from .manifest import load_manifest
from .rules import _Rule, _array, _raise_first
from .shardfile import Shard, _parquet, _row_groups, _stamp, _unchanged

#: A check is remembered only for shards last written longer ago than this:
#: file times advance in clock ticks (whole seconds on some file systems), so
#: a shard rewritten within the tick of its check would keep its stamp.
SETTLED_NS = 2_000_000_000
_CHECKED: dict[str, list] = {}   # corpus folder (resolved) -> what its last passed check saw


def _listed_shard(corpus, entry: dict) -> Shard:
    path = Path(corpus) / entry["path"]
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if st is None or not S_ISREG(st.st_mode):
        raise CorpusError(f"{path}: listed in {MANIFEST} but missing")
    return Shard(path, entry["split"], _stamp(st))


def check_shards(corpus, manifest: dict | None = None) -> list[Shard]:
    """The shards of ``corpus``, once every shard the manifest lists is there
    with its size and sha256 (a corpus changed after it was built is not
    read: ``taskfactory verify`` names what changed) and every task id is
    well formed and unique across them; else a CorpusError. The hashes are
    streamed, and a process hashes a corpus again only when a shard's file or
    its manifest entry has changed since the last check it passed."""
    manifest = manifest or load_manifest(corpus)
    shards = [_listed_shard(corpus, entry) for entry in manifest["shards"]]
    seen = [(dict(entry), shard.stamp) for entry, shard in zip(manifest["shards"], shards)]
    folder = str(Path(corpus).resolve())
    if _CHECKED.get(folder) == seen:
        return shards
    for entry, shard in zip(manifest["shards"], shards):
        with _unchanged(shard) as fh:
            if shard.stamp[2] != entry["bytes"] or hashlib.file_digest(fh, "sha256").hexdigest() != entry["sha256"]:
                raise CorpusError(f"{shard.path}: differs from {MANIFEST} (size or sha256); the corpus was changed "
                                  "after it was built; taskfactory verify names what changed")
    _check_ids(shards)
    if all(time.time_ns() - max(shard.stamp[3:]) > SETTLED_NS for shard in shards):
        _CHECKED[folder] = seen
    return shards


def _check_ids(shards: list[Shard]) -> None:
    """Every task id of ``shards``: of the id pattern, and unique across them."""
    read = []   # (shard, first row, ids) of each row group
    for shard in shards:
        with _parquet(shard) as pf:
            for _, row, table in _row_groups(pf, shard.path, ["task_id"]):
                ids = _array(table["task_id"])
                _raise_first(shard.path, row, [_Rule("task_id", "a taskfactory task id (<method>-<12 hex digits>)", ids,
                                                     pc.match_substring_regex(ids, TASK_ID.pattern))])
                read.append((shard, row, ids))
    every = pa.chunked_array([ids for *_, ids in read], pa.string())
    if pc.count_distinct(every).as_py() == len(every):
        return
    first: dict[str, str] = {}
    for shard, row, ids in read:
        for i, task_id in enumerate(ids.to_pylist()):
            if task_id in first:
                raise CorpusError(f"{shard.path}: row {row + i}: task_id {shown(task_id)} is not unique (also "
                                  f"{first[task_id]})")
            first[task_id] = f"{shard.path} row {row + i}"
