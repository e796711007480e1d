"""Replacing a corpus (``build --overwrite``): only a folder that is provably a corpus, and then only the
files it lists, unchanged since it wrote them, are deleted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...errors import CorpusError, InputError
from .layout import CARD, DATA, MANIFEST, PART_NAME, REJECTED, STATE, STATE_LAYOUT, is_task_id, sha256_file
from .manifest import load_manifest
from .shardfile import open_shard
from .state import attempt_of, read_build_layout, state_files

# --- replacing a corpus ------------------------------------------------------------

def _foreign(out: Path, what: str, exc: CorpusError) -> InputError:
    """The error for an output folder holding ``what`` (why: ``exc``)."""
    reason = str(exc).split(": ", 1)[1]
    return InputError(f"output folder {out} holds {what} ({reason}); refusing to touch it")


def _shard_of(grid_sha256: str):
    """A check that a file is a complete shard a build of this grid wrote."""
    def check(path: Path) -> bool:
        try:
            meta = open_shard(path).schema_arrow.metadata or {}
            return json.loads(meta.get(b"taskfactory", b"{}")).get("grid_sha256") == grid_sha256
        except (CorpusError, ValueError, AttributeError):
            return False
    return check


def _card_of(grid_sha256: str):
    """A check that a file is the dataset card of a corpus of this grid."""
    def check(path: Path) -> bool:
        try:
            return f"`{grid_sha256[:16]}`" in path.read_text(encoding="utf-8")[:20000]
        except (OSError, UnicodeDecodeError):
            return False
    return check


def _rejects(path: Path) -> bool:
    """True when every line of ``path`` is a reject entry a build writes."""
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                entry = json.loads(line)
                if not (isinstance(entry, dict) and is_task_id(entry.get("task_id")) and "reasons" in entry):
                    return False
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return True


def _owned(out: Path) -> tuple[dict, str]:
    """The files of the corpus in ``out`` (relative path -> the sha256 to
    match, a check of the content a build writes, or None for the build's own
    state files), and what the folder is."""
    owned: dict = {}
    kind = None
    if (out / MANIFEST).exists():
        try:
            manifest = load_manifest(out)
        except CorpusError as exc:
            raise _foreign(out, f"a {MANIFEST} that is not a taskfactory corpus's", exc) from None
        owned[MANIFEST] = None
        owned[f".{MANIFEST}.partial"] = None
        for entry in manifest["shards"] + manifest["files"]:
            owned[entry["path"]] = entry["sha256"]
        kind = "corpus"
    if (out / STATE).exists():
        try:
            layout = read_build_layout(out)
        except CorpusError as exc:
            raise _foreign(out, f"a {STATE} folder that is not a taskfactory build's", exc) from None
        for name in layout["shards"]:
            owned.setdefault(f"{DATA}/{name}", _shard_of(layout["grid_sha256"]))
        for name in state_files(layout["shards"], layout["parts"]):
            owned[f"{STATE}/{name}"] = None
        if layout.get("finalizing"):
            owned.setdefault(CARD, _card_of(layout["grid_sha256"]))
            owned.setdefault(REJECTED, _rejects)
            for name in (CARD, REJECTED):
                owned[f".{name}.partial"] = None
        kind = kind or "unfinished build"
    if kind is None:
        raise InputError(f"output folder {out} is not a taskfactory corpus (no {MANIFEST} or {STATE}/{STATE_LAYOUT}); "
                         "refusing to touch it")
    return owned, kind


def _attempt_leftover(rel: str, owned: dict) -> bool:
    """True for a worker's temporary file (a part or its rejects, see
    :func:`attempt_path`) of a part the build state lists: what a killed
    worker, or an attempt at a chunk that a scheduler ran twice, leaves."""
    folder, _, name = rel.rpartition("/")
    target = attempt_of(name)
    return folder == STATE and target is not None and PART_NAME.fullmatch(target.removesuffix(".rejects.jsonl")) \
        is not None and f"{STATE}/{target}" in owned


def audit(out: Path) -> list[Path]:
    """The files of the corpus (or unfinished build) in ``out``; InputError,
    naming the first, when anything else is there or a listed file changed."""
    owned, kind = _owned(out)
    found = []
    for root, dirs, files in os.walk(out):
        rel_root = Path(root).relative_to(out)
        for name in sorted(dirs + files):
            path = Path(root) / name
            rel = (rel_root / name).as_posix()
            refuse = None
            if path.is_symlink():
                refuse = f"{rel}, a symbolic link the {kind} did not write"
            elif name in dirs:
                if rel not in (DATA, STATE):
                    refuse = f"the folder {rel}, which the {kind} does not list"
            elif rel not in owned and not _attempt_leftover(rel, owned):
                refuse = f"{rel}, which the {kind} does not list"
            elif callable(owned.get(rel)) and not owned[rel](path):
                refuse = f"{rel}, which the {kind} did not write"
            elif isinstance(owned.get(rel), str) and sha256_file(path) != owned[rel]:
                refuse = f"{rel}, which differs from the file the {kind} wrote (edited since?)"
            else:
                found.append(path)
            if refuse:
                raise InputError(f"output folder {out} holds {refuse}; refusing to touch it")
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]
    return found


def clear(out: Path) -> int:
    """Delete the corpus (or unfinished build) in ``out``: only the files it
    lists, and only when nothing else is there. Returns the files deleted."""
    found = audit(out)
    for path in found:
        path.unlink()
    for folder in (out / DATA, out / STATE):
        if folder.is_dir():
            folder.rmdir()
    return len(found)
