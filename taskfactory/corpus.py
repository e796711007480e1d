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
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Iterator, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from ._version import __version__
from .answers import DECISIONS, KINDS
from .errors import CorpusError, InputError, MissingTask, did_you_mean
from .methods import FAMILY_ORDER
from .registry import family_names
from .readers import parse_json, read_text
from .shards import FIELDS, is_roles_type

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
#: a grid, or a spec of real datasets (:mod:`taskfactory.real`), which ``grid`` then holds.
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


# --- checking a corpus before reading it -------------------------------------------

#: A check is remembered only for shards last written longer ago than this:
#: file times advance in clock ticks (whole seconds on some file systems), so
#: a shard rewritten within the tick of its check would keep its stamp.
SETTLED_NS = 2_000_000_000
_CHECKED: dict[str, list] = {}   # corpus folder (resolved) -> what its last passed check saw


@dataclass(frozen=True)
class Shard:
    """A shard of a checked corpus: its path, the split the manifest gives
    it, and the stamp (device, inode, size, mtime, ctime) of the file that was
    checked; it is read only while the file still has that stamp."""

    path: Path
    split: str
    stamp: tuple


def _stamp(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


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


@contextmanager
def _unchanged(shard: Shard):
    """The file of ``shard`` open for reading, while it is the file that was checked."""
    try:
        fh = open(shard.path, "rb")
    except OSError as exc:
        raise CorpusError(f"{shard.path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    with fh:
        if _stamp(os.fstat(fh.fileno())) != shard.stamp:
            raise CorpusError(f"{shard.path}: changed while this command was reading the corpus")
        yield fh


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


# --- what a reader may use of a record ---------------------------------------------

class _Rule(NamedTuple):
    """A rule over values of a row group: ``ok`` is true where a value keeps
    it (false or null where it breaks it). ``rows`` gives each value's row
    when the values are the items of a list column (then ``{j}`` in
    ``field`` stands for the item's index in its list)."""

    field: str
    what: str
    values: pa.Array
    ok: pa.Array
    rows: pa.Array | None = None


_DECISIONS = pa.array(DECISIONS)
_KINDS = pa.array(list(KINDS))
_KNOWN_METHODS = pa.array(FAMILY_ORDER)


def _is_p_value(values):
    return pc.and_(pc.greater_equal(values, 0.0), pc.less_equal(values, 1.0))


#: What a field of a gold or of an accepted test must hold, and the test of
#: its values (a null passes none).
VALUE_RULES = {
    "p_value": ("a p-value in [0, 1]", _is_p_value),
    "decision": (" or ".join(DECISIONS), lambda values: pc.is_in(values, value_set=_DECISIONS)),
    "estimate": ("a finite number", pc.is_finite),
    "low": ("a finite number", pc.is_finite),
    "high": ("a finite number", pc.is_finite),
    "integer": ("a whole number", pc.is_valid),
    "yes_no": ("true or false", pc.is_valid),
}
#: Each optional p-value column and the decision column that goes with it.
P_DECISIONS = {"gold_p": "gold_decision", "naive_p": "naive_decision", "kept_impossible_p": "kept_impossible_decision"}


def _unless(exempt, ok):
    """``ok``, and true where ``exempt`` (no nulls) is true."""
    return pc.or_kleene(exempt, ok)


#: The answer kinds whose gold has each field.
_KINDS_OF = {field: pa.array([k for k, spec in KINDS.items() if field in spec.fields]) for field in VALUE_RULES}


def _other_kind(kind, field: str):
    """True where a gold's ``kind`` has no ``field``."""
    return pc.invert(pc.is_in(kind, value_set=_KINDS_OF[field]))


def _kind_rule(field: str, values) -> _Rule:
    return _Rule(field, f"one of {', '.join(KINDS)}", values, pc.is_in(values, value_set=_KINDS))


def _gold_rules(table, name: str, shard: Shard):
    gold = table[name]
    kind = pc.struct_field(gold, "kind")
    yield _kind_rule("gold.kind", kind)
    if "answer_kind" in table.column_names:
        yield _Rule("gold.kind", "the task's answer_kind", kind, pc.equal(kind, table["answer_kind"]))
    for field, (what, ok) in VALUE_RULES.items():
        values = pc.struct_field(gold, field)
        yield _Rule(f"gold.{field}", what, values, _unless(_other_kind(kind, field), ok(values)))
    low, high = pc.struct_field(gold, "low"), pc.struct_field(gold, "high")
    yield _Rule("gold.low", "at most gold.high", low,
                _unless(_other_kind(kind, "low"), pc.less_equal(low, high)))


def _accepted_rules(table, name: str, shard: Shard):
    tests, rows = pc.list_flatten(table[name]), pc.list_parent_indices(table[name])
    method = pc.struct_field(tests, "method")
    yield _Rule(f"{name}[{{j}}].method", "a test's name", method, pc.is_valid(method), rows)
    for field in ("p_value", "decision"):
        what, ok = VALUE_RULES[field]
        values = pc.struct_field(tests, field)
        yield _Rule(f"{name}[{{j}}].{field}", what, values, ok(values), rows)


def _p_rules(table, name: str, shard: Shard):
    values = table[name]
    yield _Rule(name, f"{VALUE_RULES['p_value'][0]} or null", values, _unless(pc.is_null(values), _is_p_value(values)))


def _decision_rules(table, name: str, shard: Shard):
    """A decision wherever one is given or its p-value is."""
    values = table[name]
    p_value = next(p for p, d in P_DECISIONS.items() if d == name)
    given = pc.is_valid(values)
    if p_value in table.column_names:
        given = pc.or_(given, pc.is_valid(table[p_value]))
    what, ok = VALUE_RULES["decision"]
    yield _Rule(name, what, values, _unless(pc.invert(given), ok(values)))


def _method_rules(table, name: str, shard: Shard):
    """A registered family. The catalogue's names are registered (it lists the
    families taskfactory ships) and known without loading every family; any
    other name is looked up in the registry."""
    values = table[name]
    ok = pc.is_in(values, value_set=_KNOWN_METHODS)
    if ok.true_count < len(ok):
        ok = pc.is_in(values, value_set=pa.array(family_names()))
    yield _Rule(name, "a method family of this taskfactory", values, ok)


def _split_rules(table, name: str, shard: Shard):
    yield _Rule(name, f"the split of its shard ({shard.split!r})", table[name], pc.equal(table[name], shard.split))


def _answer_kind_rules(table, name: str, shard: Shard):
    yield _kind_rule(name, table[name])


#: The rules of each column a reader may ask for, by column (a column not
#: listed holds what its type allows): functions of (the row group, the
#: column's name, its shard) giving :class:`_Rule` s.
COLUMN_RULES = {
    "method": _method_rules,
    "split": _split_rules,
    "answer_kind": _answer_kind_rules,
    "gold": _gold_rules,
    "accepted": _accepted_rules,
    **{name: _p_rules for name in P_DECISIONS},
    **{name: _decision_rules for name in P_DECISIONS.values()},
}


def _raise_first(path: Path, first_row: int, rules) -> None:
    """CorpusError naming the first row (then the first rule) that ``rules`` find broken."""
    found = None
    for rule in rules:
        if rule.ok.true_count == len(rule.ok):
            continue
        i = pc.index(pc.fill_null(rule.ok, False), False).as_py()
        row = i if rule.rows is None else rule.rows[i].as_py()
        if found is None or row < found[0]:
            found = (row, i, rule)
    if found is not None:
        row, i, rule = found
        item = None if rule.rows is None else i - pc.index(rule.rows, row).as_py()
        raise CorpusError(f"{path}: row {first_row + row}: {rule.field.format(j=item)} is "
                          f"{shown(rule.values[i].as_py())}, not {rule.what}")


def check_rows(table, shard: Shard, first_row: int) -> None:
    """CorpusError unless every value of ``table`` (rows of ``shard`` from
    ``first_row`` on) keeps the rules of its column (:data:`COLUMN_RULES`)."""
    names = [name for name in table.column_names if name in COLUMN_RULES]
    batch = pa.RecordBatch.from_arrays([_array(table[name]) for name in names], names)
    _raise_first(shard.path, first_row, (rule for name in names for rule in COLUMN_RULES[name](batch, name, shard)))


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


# --- reading tasks -----------------------------------------------------------------

def open_shard(path: Path, source=None):
    """Open a shard (from ``source``, a file open for reading, when given),
    reporting a corrupt or truncated file as a CorpusError."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path if source is None else source)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"{path}: not a readable Parquet shard ({' '.join(str(exc).split())})") from None


@contextmanager
def _parquet(shard: Shard):
    """A checked shard, open as Parquet from the file that was checked."""
    with _unchanged(shard) as fh:
        yield open_shard(shard.path, fh)


def read_row_group(pf, path: Path, index: int, columns: list[str] | None):
    """One row group of a shard. A missing column, a column of another type
    than the corpus schema's, a null where the schema allows none, or a
    damaged page is a CorpusError."""
    have = set(pf.schema_arrow.names)
    lacking = [c for c in (columns if columns is not None else [name for name, *_ in FIELDS]) if c not in have]
    if lacking:
        raise CorpusError(f"{path}: the shard has no column '{lacking[0]}'")
    try:
        table = pf.read_row_group(index, columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise CorpusError(f"{path}: row group {index} cannot be read ({' '.join(str(exc).split())})") from None
    expected = {name: (kind, nullable) for name, kind, nullable, _ in FIELDS}
    for name, column in zip(table.column_names, table.columns):
        if name not in expected:
            continue
        kind, nullable = expected[name]
        if not (is_roles_type(column.type) if kind is None else column.type == kind):
            raise CorpusError(f"{path}: column '{name}' holds {column.type}, not {'a struct of roles' if kind is None else kind}")
        if not nullable and column.null_count:
            raise CorpusError(f"{path}: column '{name}' has an empty cell in row group {index}")
    return table


def _row_groups(pf, path: Path, columns: list[str] | None, groups: range | None = None):
    """(index, first row, table) of each row group of a shard (those of ``groups``, or all)."""
    groups = range(pf.num_row_groups) if groups is None else groups
    row = sum(pf.metadata.row_group(i).num_rows for i in range(groups.start))
    for i in groups:
        table = read_row_group(pf, path, i, columns)
        yield i, row, table
        row += table.num_rows


def read_columns(path: Path, columns: list[str]):
    """Whole columns of one shard."""
    pf = open_shard(path)
    return pa.concat_tables([read_row_group(pf, path, i, columns) for i in range(pf.num_row_groups)]) \
        if pf.num_row_groups else pf.schema_arrow.empty_table().select(columns)


def row_group_rows(shard: Shard) -> list[int]:
    """The number of tasks in each row group of a checked shard."""
    with _parquet(shard) as pf:
        return [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)]


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


# --- writing the manifest ----------------------------------------------------------

COUNTED = ["data_id", "method", "effect", "prompt_style", "perturbation", "trap", "naive_method"]


def count_shards(out: Path, names_by_split: dict) -> tuple[dict, list]:
    """Counts over the shards ``data/NAME`` (read column by column) and their
    manifest entries."""
    shards = []
    counts = {"tasks": 0, "datasets": 0, "traps": 0, "by_split": Counter(), "by_method": Counter(),
              "by_effect": Counter(), "by_prompt_style": Counter(), "by_perturbation": Counter(),
              "traps_by_method": Counter(), "naive_by_method": Counter(), "traps_by_perturbation": Counter()}
    last_data = None
    for split, names in names_by_split.items():
        for name in names:
            path = out / DATA / name
            t = read_columns(path, COUNTED).to_pydict()
            rows = len(t["data_id"])
            for i in range(rows):
                if t["data_id"][i] != last_data:
                    counts["datasets"] += 1
                    last_data = t["data_id"][i]
                m = t["method"][i]
                counts["by_method"][m] += 1
                counts["by_effect"][t["effect"][i]] += 1
                counts["by_prompt_style"][t["prompt_style"][i]] += 1
                counts["by_perturbation"][t["perturbation"][i]] += 1
                if t["naive_method"][i] is not None:
                    counts["naive_by_method"][m] += 1
                if t["trap"][i]:
                    counts["traps"] += 1
                    counts["traps_by_method"][m] += 1
                    counts["traps_by_perturbation"][t["perturbation"][i]] += 1
            counts["tasks"] += rows
            counts["by_split"][split] += rows
            shards.append({"split": split, "path": f"{DATA}/{name}", "rows": rows, "bytes": path.stat().st_size,
                           "sha256": sha256_file(path)})
    return counts, shards


def file_entry(out: Path, name: str, **extra) -> dict:
    path = out / name
    return {"path": name, **extra, "bytes": path.stat().st_size, "sha256": sha256_file(path)}


def write_manifest(out: Path, manifest: dict) -> None:
    """Write the dataset card, then ``manifest.json`` (last: its presence means
    the corpus is complete). The manifest lists the card with its sha256."""
    from .card import render_card

    manifest["format"] = FORMAT
    manifest["counts"] = {k: (dict(sorted(v.items())) if isinstance(v, Counter) else v)
                          for k, v in manifest["counts"].items()}
    files = [e for e in manifest.get("files", []) if e["path"] != CARD]
    manifest["files"] = files
    atomic_write_text(out / CARD, render_card(manifest))
    manifest["files"] = [file_entry(out, CARD), *files]
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=False) + "\n")


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
