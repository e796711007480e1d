"""Reading a built corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pyarrow.compute as pc

from .errors import CorpusError
from .shards import open_shard


def load_manifest(corpus) -> dict:
    path = Path(corpus) / "manifest.json"
    if not path.is_file():
        raise CorpusError(f"{corpus}: not a taskfactory corpus (no manifest.json)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def shard_paths(corpus) -> list[Path]:
    manifest = load_manifest(corpus)
    return [Path(corpus) / s["path"] for s in manifest["shards"]]


def iter_records(corpus, columns: list[str] | None = None, method: str | None = None) -> Iterator[dict]:
    """Every task of a corpus as a dict, shard by shard, row group by row group."""
    for path in shard_paths(corpus):
        pf = open_shard(path)
        for i in range(pf.num_row_groups):
            table = pf.read_row_group(i, columns=columns)
            if method is not None:
                table = table.filter(pc.equal(table["method"], method))
            yield from table.to_pylist()


def find_task(corpus, task_id: str | None = None, method: str | None = None) -> dict:
    """One task: by id, else the first of ``method``, else the first of the corpus."""
    for path in shard_paths(corpus):
        pf = open_shard(path)
        for i in range(pf.num_row_groups):
            ids = pf.read_row_group(i, columns=["task_id", "method"])
            mask = None
            if task_id is not None:
                mask = pc.equal(ids["task_id"], task_id)
            elif method is not None:
                mask = pc.equal(ids["method"], method)
            if mask is None:
                hit = 0 if ids.num_rows else None
            else:
                idx = pc.indices_nonzero(mask)
                hit = idx[0].as_py() if len(idx) else None
            if hit is not None:
                return pf.read_row_group(i).slice(hit, 1).to_pylist()[0]
    what = f"task '{task_id}'" if task_id else f"a task of method '{method}'" if method else "any task"
    raise CorpusError(f"{corpus}: holds no {what}")
