"""A build's state in ``OUT/.build/``: the layout it writes, the names of its files, and the lock on its folder."""

from __future__ import annotations

import errno
import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path

from ..._version import __version__
from ...errors import CorpusError, InputError
from ...readers import parse_json, read_text
from .layout import (ATTEMPT_NAME, FORMAT, MAX_MANIFEST_BYTES, PART_NAME, SHARD_PATH, STATE, STATE_LAYOUT,
                     atomic_write_text, part_rejects)
from .manifest import _require

# --- the build state ---------------------------------------------------------------

def write_build_layout(out: Path, grid_sha256: str, grid: dict, shards: list[str], parts: list[str],
                       finalizing: bool = False) -> None:
    """Record an unfinished build: its grid, the shards it will write and the
    parts it builds them from; ``finalizing`` once it starts writing the card
    and the rejects."""
    state = out / STATE
    state.mkdir(exist_ok=True)
    layout = {"format": FORMAT, "factory_version": __version__, "grid_sha256": grid_sha256, "grid": grid,
              "shards": shards, "parts": parts, "finalizing": finalizing}
    atomic_write_text(state / STATE_LAYOUT, json.dumps(layout, sort_keys=True, indent=1) + "\n")


def read_build_layout(out: Path) -> dict:
    """The layout of the unfinished build in ``out``, validated: every shard
    and part name has its pattern, and every part belongs to a listed shard. A
    layout without ``parts`` (written before builds had chunks) lists none."""
    path = out / STATE / STATE_LAYOUT
    layout = parse_json(read_text(path, CorpusError, "build layout", limit=MAX_MANIFEST_BYTES), str(path), CorpusError)
    where = str(path)
    _require(isinstance(layout, dict) and layout.get("format") == FORMAT, where,
             f"is not the layout of a build of this taskfactory (format {FORMAT!r})")
    _require(isinstance(layout.get("shards"), list) and all(isinstance(s, str) and SHARD_PATH.fullmatch(f"data/{s}")
                                                         for s in layout["shards"]),
             where, "'shards' must list shard file names")
    parts = layout.setdefault("parts", [])
    shards = {name.removesuffix(".parquet") for name in layout["shards"]}
    _require(isinstance(parts, list) and all(isinstance(p, str) and PART_NAME.fullmatch(p)
                                             and p.rsplit("-part-", 1)[0] in shards for p in parts),
             where, "'parts' must list part file names of the listed shards")
    for key in ("grid_sha256", "factory_version"):
        _require(isinstance(layout.get(key), str), where, f"'{key}' must be a string")
    return layout


def state_files(shards: list[str], parts: list[str]) -> set[str]:
    """The names a build writes in its state folder for ``shards`` and their
    ``parts`` (besides the attempts' temporary names, see :func:`attempt_of`)."""
    names = {STATE_LAYOUT, f".{STATE_LAYOUT}.partial"}
    for name in shards:
        names |= {name, part_rejects(name), f".{part_rejects(name)}.partial"}
    for name in parts:
        names |= {name, part_rejects(name)}
    return names


def attempt_of(name: str) -> str | None:
    """The file a worker's temporary ``name`` (see :func:`attempt_path`)
    stands for, or None when ``name`` is not such a name."""
    found = ATTEMPT_NAME.fullmatch(name)
    return found["name"] if found else None


@contextmanager
def locked(out: Path):
    """Hold an exclusive lock on folder ``out`` (released when the process ends,
    however it ends); a second build of the same folder is refused."""
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise InputError(f"output folder {out} is being written by another taskfactory build; wait for it "
                                 "to finish") from None
            raise
        yield
    finally:
        os.close(fd)
