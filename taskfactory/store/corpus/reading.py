"""Reading the tasks of a checked corpus, shard by shard and row group by row group, each row group's
values checked as it is read (:mod:`.rules`)."""

from __future__ import annotations

from typing import Iterator

import pyarrow.compute as pc

from ...errors import InputError, MissingTask, did_you_mean
from ...registry import family_names
from .checks import check_shards
from .layout import is_task_id, shown
from .rules import check_rows
from .shardfile import Shard, _parquet, _row_groups, read_row_group

def shard_records(shard: Shard, columns: list[str] | None = None, method: str | None = None,
                  groups: range | None = None) -> Iterator[dict]:
    """The tasks of a checked shard (of its row groups ``groups``, or all) as
    :func:`iter_records` reads them."""
    wanted = None if columns is None else list(dict.fromkeys(columns))
    read = wanted if wanted is None or method is None else list(dict.fromkeys([*wanted, "method"]))
    with _parquet(shard) as pf:
        for _, row, table in _row_groups(pf, shard.path, read, groups):
            check_rows(table, shard, row)
            if method is not None:
                table = table.filter(pc.equal(table["method"], method))
            yield from (table if read == wanted else table.select(wanted)).to_pylist()


def iter_records(corpus, columns: list[str] | None = None, method: str | None = None) -> Iterator[dict]:
    """Every task of a corpus as a dict (its ``columns``, or all), shard by
    shard, row group by row group: from shards checked against the manifest
    (:func:`check_shards`), each row group's values checked as it is read
    (:func:`check_rows`)."""
    for shard in check_shards(corpus):
        yield from shard_records(shard, columns, method)


def find_task(corpus, task_id: str | None = None, method: str | None = None) -> dict:
    """One task: by id, else the first of ``method``, else the first of the
    corpus; read as :func:`iter_records` reads it."""
    if task_id is not None and not is_task_id(task_id):
        raise InputError(f"{shown(task_id)} is not a task id (<method>-<12 hex digits>)")
    for shard in check_shards(corpus):
        with _parquet(shard) as pf:
            for i, row, keys in _row_groups(pf, shard.path, ["task_id", "method"]):
                key, value = ("task_id", task_id) if task_id is not None else ("method", method)
                hit = pc.index(keys[key], value).as_py() if value is not None else 0 if keys.num_rows else -1
                if hit >= 0:
                    task = read_row_group(pf, shard.path, i, None).slice(hit, 1)
                    check_rows(task, shard, row + hit)
                    return task.to_pylist()[0]
    what = f"task '{task_id}'" if task_id else f"task of method '{method}'" if method else "task"
    hint = "" if task_id or not method or method in family_names() else did_you_mean(method, family_names())
    raise MissingTask(f"{corpus}: holds no {what}{hint}")
