"""Writing a copy of a built corpus with tasks left out or their split changed.

Two commands write such a copy: ``taskfactory split`` (every task, its split
by a new rule: :mod:`taskfactory.store.resplit`) and ``leakage --drop-out`` (the
tasks no benchmark item flagged: :mod:`taskfactory.audit.leakage.dropout`). Both
write through :func:`copy_tasks`: the tasks in the corpus's order, in shards
sized as the build sizes a corpus's (:func:`shard_sizes`), into a folder of
their own moved into place once whole (:func:`taskfactory.folders.staged`),
with the files the corpus's manifest lists (:func:`carried`) checked as they
are copied.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from ..errors import CorpusError
from ..folders import staged
from .corpus import (CARD, DATA, ORIGIN_REAL, SPLITS, count_shards, iter_records, load_manifest, sha256_file,
                     shard_name, write_manifest)
from .shards import ShardWriter

#: What decides a task's split in the copy: its record (with at least method, scenario, n and data_id), to
#: the split it goes to, or None where it is left out.
SplitOf = Callable[[dict], "str | None"]


def carried(manifest: dict) -> list[dict]:
    """The entries of the files a copy carries over from its corpus: every
    file its manifest lists but the card (which the copy's manifest writes)."""
    return [entry for entry in manifest["files"] if entry["path"] != CARD]


def check_carried(corpus, manifest: dict | None = None) -> None:
    """CorpusError unless the files a copy of ``corpus`` carries over are
    there, unchanged since the build (checked before any work, and again as
    they are copied)."""
    corpus = Path(corpus)
    for entry in carried(manifest or load_manifest(corpus)):
        source = corpus / entry["path"]
        if not source.is_file() or sha256_file(source) != entry["sha256"]:
            raise CorpusError(f"{source}: missing, or changed since the corpus was built")


def shard_sizes(manifest: dict, cells: dict) -> dict:
    """The rows of each shard of each split, as the build sizes them: a
    corpus of real data holds one shard per split
    (:func:`taskfactory.store.real.import_spec`); a grid's, as
    :func:`taskfactory.store.plan.fill_shards` fills them. ``cells`` gives each
    split's tasks in the order they are written, as [tasks, (method,
    scenario, n)] runs."""
    if manifest.get("origin") == ORIGIN_REAL:
        return {split: [sum(t for t, _ in runs)] for split, runs in cells.items() if runs}
    from ..design.grid import load_grid
    from .plan import estimate_task_bytes, fill_shards

    grid = load_grid(manifest["grid"], source="manifest.json grid")
    if grid.sha256 != manifest["grid_sha256"]:
        raise CorpusError("manifest.json: its grid does not match its grid_sha256")
    sizes = {key: estimate_task_bytes(*key) for runs in cells.values() for _, key in runs}
    return {split: fill_shards([(tasks, sizes[key]) for tasks, key in runs], grid.shard_rows)
            for split, runs in cells.items() if runs}


@contextmanager
def copy_tasks(corpus: Path, out: Path, manifest: dict, split_of: SplitOf, columns: list[str]):
    """A block given the folder the copy of ``corpus`` is staged in and the
    manifest so far (counts, shards, and the files carried over): its tasks that ``split_of`` (reading ``columns`` of each
    record) gives a split, with that split. The block adds what else the copy
    holds and sets the manifest's further keys; the manifest is written
    when it ends, and the copy moved into ``out``."""
    cells: dict[str, list] = {split: [] for split in SPLITS}
    for rec in iter_records(corpus, columns=sorted({"method", "scenario", "n", "data_id", *columns})):
        split = split_of(rec)
        if split is None:
            continue
        runs, key = cells[split], (rec["method"], rec["scenario"], rec["n"])
        if runs and runs[-1][1] == key:
            runs[-1][0] += 1
        else:
            runs.append([1, key])
    sizes = shard_sizes(manifest, cells)
    names = {split: [shard_name(split, i, len(rows)) for i in range(len(rows))] for split, rows in sizes.items()}
    with staged(out) as work:
        (work / DATA).mkdir()
        _write(corpus, work, manifest, split_of, names, sizes)
        counts, shards = count_shards(work, names)
        counts.update({k: v for k, v in manifest["counts"].items() if k.startswith("rejected")})
        for entry in carried(manifest):
            source, copy = corpus / entry["path"], work / entry["path"]
            try:
                shutil.copyfile(source, copy)
            except OSError:
                raise CorpusError(f"{source}: missing, or changed since the corpus was built") from None
            if sha256_file(copy) != entry["sha256"]:
                raise CorpusError(f"{source}: missing, or changed since the corpus was built")
        new = {**manifest, "counts": counts, "shards": shards, "files": carried(manifest)}
        yield work, new
        write_manifest(work, new)


def _write(corpus: Path, out: Path, manifest: dict, split_of: SplitOf, names: dict, sizes: dict) -> None:
    """Write the tasks of ``corpus`` that ``split_of`` keeps into the shards
    ``names`` of ``out``, of ``sizes`` rows, each with its split."""
    provenance = {"grid_name": manifest["name"], "grid_sha256": manifest["grid_sha256"]}
    writers: dict[str, ShardWriter] = {}
    written = Counter()
    try:
        for rec in iter_records(corpus):
            split = split_of(rec)
            if split is None:
                continue
            rec["split"] = split
            if split not in writers:
                writers[split] = ShardWriter(out / DATA / names[split][written[split]], provenance)
            writers[split].append(rec)
            if writers[split].rows == sizes[split][written[split]]:
                writers.pop(split).close()
                written[split] += 1
    finally:
        for writer in writers.values():
            writer.close()
