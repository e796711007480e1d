"""A corpus folder's layout: the names of its files and of a build's, and writing a file whole."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path


FORMAT = "taskfactory-corpus/4"   # 4: no JSON text in any column (roles, dgp_params and gold_terms are Arrow types)
MANIFEST = "manifest.json"
CARD = "README.md"
REJECTED = "rejected.jsonl"
LEAKAGE_REPORT = "leakage_report.json"
DATA = "data"
STATE = ".build"
STATE_LAYOUT = "layout.json"
MAX_MANIFEST_BYTES = 64 << 20

TASK_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}-[0-9a-f]{12}$")
SHARD_PATH = re.compile(r"^data/(train|test)-(\d{5})-of-(\d{5})\.parquet$")
PART_NAME = re.compile(r"^(train|test)-\d{5}-of-\d{5}-part-\d{5}\.parquet$")
#: A file a worker writes before renaming it to its part or the part's rejects.
ATTEMPT_NAME = re.compile(r"^(?P<name>.+)\.\d{1,10}-[0-9a-f]{8}\.partial$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
SPLITS = ("train", "test")
#: What a corpus was made from (``manifest.json``'s ``origin``; a grid when it has none):
#: a grid, or a spec of real datasets (:mod:`taskfactory.store.real`), which ``grid`` then holds.
ORIGIN_GRID, ORIGIN_REAL = "grid", "real"
ORIGINS = (ORIGIN_GRID, ORIGIN_REAL)


def is_task_id(value) -> bool:
    """True for a string of the form ``<method>-<12 hex digits>``."""
    return isinstance(value, str) and TASK_ID.fullmatch(value) is not None


def shown(value, width: int = 60) -> str:
    """A value read from a file, quoted and shortened for an error message."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def shard_name(split: str, index: int, count: int) -> str:
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def part_name(shard: str, index: int) -> str:
    """The name of chunk ``index`` of ``shard`` in the build state."""
    return f"{shard.removesuffix('.parquet')}-part-{index:05d}.parquet"


def part_rejects(part: str) -> str:
    """The name of the rejects of a part, or of a shard, in the build state."""
    return f"{part}.rejects.jsonl"


def attempt_path(path: Path) -> Path:
    """A name of its own, beside ``path``, for one process to write ``path``
    under before renaming it into place."""
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")


def sha256_file(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``path`` under a temporary name, then rename it into place."""
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
