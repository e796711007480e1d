"""A corpus's ``manifest.json``: its structure checked, read."""

from __future__ import annotations

from pathlib import Path

from ...errors import CorpusError
from ...readers import parse_json, read_text
from .layout import (CARD, FORMAT, LEAKAGE_REPORT, MANIFEST, MAX_MANIFEST_BYTES, ORIGINS, ORIGIN_GRID, REJECTED, SHA256,
                     SHARD_PATH, SPLITS, shown)

# --- the manifest ------------------------------------------------------------------

def _require(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise CorpusError(f"{where}: {what}")


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_file_entry(entry, where: str, path_rule) -> None:
    _require(isinstance(entry, dict), where, "must be a mapping")
    _require(path_rule(entry.get("path")), where, f"path {shown(entry.get('path'))} is not a file of a corpus")
    _require(isinstance(entry.get("sha256"), str) and SHA256.fullmatch(entry["sha256"]) is not None, where,
             f"sha256 {shown(entry.get('sha256'))} is not 64 hex digits")
    for key in ("rows", "bytes"):
        if key in entry:
            _require(_is_count(entry[key]), where, f"{key} {shown(entry[key])} is not a count")


def check_manifest(manifest, where: str) -> dict:
    """``manifest`` if it has the structure this version writes, else CorpusError."""
    _require(isinstance(manifest, dict), where, f"must be a JSON object, not {type(manifest).__name__}")
    fmt = manifest.get("format")
    _require(fmt == FORMAT, where, f"format {shown(fmt)} is not {FORMAT!r}; this taskfactory reads only corpora "
                                   "it can vouch for")
    for key, kind in (("factory_version", str), ("name", str), ("grid_sha256", str), ("grid", dict),
                      ("counts", dict), ("shards", list), ("files", list)):
        _require(isinstance(manifest.get(key), kind), where, f"'{key}' must be a {kind.__name__} "
                                                             f"(got {type(manifest.get(key)).__name__})")
    _require(manifest.get("origin", ORIGIN_GRID) in ORIGINS, where,
             f"'origin' {shown(manifest.get('origin'))} is not one of {', '.join(ORIGINS)}")
    seen = set()
    for i, entry in enumerate(manifest["shards"]):
        _check_file_entry(entry, f"{where}: shards[{i}]", lambda p: isinstance(p, str) and SHARD_PATH.fullmatch(p))
        _require(entry.get("split") in SPLITS and entry["path"].startswith(f"data/{entry['split']}-"),
                 f"{where}: shards[{i}]", f"split {shown(entry.get('split'))} does not match its path")
        _require("rows" in entry and "bytes" in entry, f"{where}: shards[{i}]", "needs 'rows' and 'bytes'")
        _require(entry["path"] not in seen, f"{where}: shards[{i}]", f"path {entry['path']} is listed twice")
        seen.add(entry["path"])
    for i, entry in enumerate(manifest["files"]):
        _check_file_entry(entry, f"{where}: files[{i}]", lambda p: p in (CARD, REJECTED, LEAKAGE_REPORT))
    return manifest


def load_manifest(corpus) -> dict:
    """The validated manifest of the corpus in folder ``corpus``."""
    path = Path(corpus) / MANIFEST
    if not path.is_file():
        raise CorpusError(f"{corpus}: not a taskfactory corpus (no {MANIFEST})")
    text = read_text(path, CorpusError, "manifest", limit=MAX_MANIFEST_BYTES)
    return check_manifest(parse_json(text, str(path), CorpusError), str(path))


def listed_file(manifest: dict, name: str) -> dict | None:
    """The manifest's entry of the file ``name`` (card, rejects, leakage report)."""
    return next((e for e in manifest["files"] if e["path"] == name), None)
