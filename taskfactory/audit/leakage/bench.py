"""Reading held-out benchmarks: Parquet or JSONL files, or folders of them.

A benchmark is untrusted input. JSONL is read one line at a time, each line at
most :data:`MAX_LINE_BYTES`, UTF-8 and nested at most
:data:`taskfactory.readers.MAX_DEPTH` levels. An item's id is text or a whole
number; its question, context and dataset are text. A dataset given as a path
is relative to the benchmark file's folder and must stay inside the benchmark
(the folder given, or the file's own folder), also after following symlinks;
the file it names is UTF-8 text of at most :data:`MAX_DATA_BYTES`, read once
however many items name it. A Parquet file is read a batch of rows at a time,
and each row's text is measured before it is expanded (a dictionary-encoded
column can hold gigabytes in a few kilobytes): at most :data:`MAX_LINE_BYTES`
per item, as in JSONL, and :data:`MAX_FILE_TEXT_BYTES` per file.
"""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import BenchError
from ...readers import decode, parse_json, read_text

ID_FIELDS = ("id", "task_id", "item_id", "uid", "qid")
QUESTION_FIELDS = ("question", "prompt", "text", "query", "instruction")
CONTEXT_FIELDS = ("context", "background")
DATA_FIELDS = ("data_csv", "csv", "dataset_csv", "data_path", "csv_path", "data_file")
SUFFIXES = (".parquet", ".jsonl")
MAX_LINE_BYTES = 16 << 20     # one JSONL line: one item, its CSV text included
MAX_DATA_BYTES = 64 << 20     # one data file an item names
MAX_FILE_TEXT_BYTES = 2 << 30  # the text of all the items of one Parquet file
PARQUET_BATCH_ROWS = 256


@dataclass(frozen=True)
class Fields:
    """Which fields of a benchmark item hold its id, question, context and dataset."""

    id: tuple = ID_FIELDS
    question: tuple = QUESTION_FIELDS
    context: tuple = CONTEXT_FIELDS
    data: tuple = DATA_FIELDS


@dataclass
class Item:
    """One benchmark item."""

    bench: str
    id: str
    where: str
    question: str = ""
    context: str = ""
    data_csv: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        return f"{self.context}\n{self.question}".strip()


def _first(record: dict, names: tuple):
    for name in names:
        value = record.get(name)
        if value is not None and value != "":
            return name, value
    return None, None


def _unpaired_surrogate(text: str) -> int | None:
    """The position of the first character UTF-8 cannot encode, else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _check_id(ident, where: str) -> str:
    """``ident`` as the text that names the item in reports and messages."""
    if isinstance(ident, bool) or not isinstance(ident, (str, int)):
        raise BenchError(f"{where}: the id is not text or a whole number ({type(ident).__name__})")
    ident = str(ident)
    bad = _unpaired_surrogate(ident)
    if bad is not None:
        raise BenchError(f"{where}: the id is not valid Unicode text (an unpaired surrogate at character {bad})")
    bad = next((i for i, c in enumerate(ident) if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise BenchError(f"{where}: the id holds a control character at character {bad}")
    return ident


def _data_file_text(data: str, where: str, ident: str, folder: Path, root: Path, read: dict) -> str:
    """The text of the data file ``data`` names, relative to ``folder`` and
    inside ``root``, from ``read`` (the files read so far, by resolved path)
    where it is there; BenchError naming the item and the path otherwise."""
    item = f"{where}: item '{ident}'"
    if "\x00" in data:
        raise BenchError(f"{item} names a data file whose path holds a NUL character")
    if Path(data).is_absolute():
        raise BenchError(f"{item} names a data file by an absolute path ({data}); give it relative to the "
                         f"benchmark's folder")
    path = folder / data
    try:
        inside = path.resolve().is_relative_to(root.resolve())
        exists = path.exists()
    except RuntimeError:  # a symlink loop
        raise BenchError(f"{item} names a data file in a symlink loop: {data}") from None
    except OSError as exc:
        raise BenchError(f"{item} names a data file that cannot be read ({exc.strerror or exc}): {data}") from None
    if not inside:
        raise BenchError(f"{item} names a data file outside the benchmark's folder {root}: {data}")
    if not exists:
        raise BenchError(f"{item} names a data file that does not exist: {path}")
    key = path.resolve()
    if key not in read:
        read[key] = read_text(path, lambda message: BenchError(f"{item}: {message}"), "data file", MAX_DATA_BYTES)
    return read[key]


def _item(record, bench: str, where: str, folder: Path, root: Path, fields: Fields, read: dict) -> Item:
    if not isinstance(record, dict):
        raise BenchError(f"{where}: not a JSON object")
    _, ident = _first(record, fields.id)
    if ident is None:
        raise BenchError(f"{where}: no id (looked for {', '.join(fields.id)})")
    ident = _check_id(ident, where)
    _, question = _first(record, fields.question)
    _, context = _first(record, fields.context)
    _, data = _first(record, fields.data)
    for name, value in (("question", question), ("context", context), ("data", data)):
        if value is None:
            continue
        if not isinstance(value, str):
            raise BenchError(f"{where}: item '{ident}' has a {name} that is not text ({type(value).__name__})")
        bad = _unpaired_surrogate(value)
        if bad is not None:
            raise BenchError(f"{where}: item '{ident}' has a {name} that is not valid Unicode text (an unpaired "
                             f"surrogate at character {bad})")
    if not (question or "").strip() and data is None:
        raise BenchError(f"{where}: item '{ident}' has neither a question text ({', '.join(fields.question)}) "
                         f"nor a dataset ({', '.join(fields.data)})")
    csv_text = None
    if data is not None:
        if any(end in data.strip() for end in "\n\r"):  # CSV text; a single line is a path to a CSV file
            csv_text = data
        else:
            csv_text = _data_file_text(data.strip(), where, ident, folder, root, read)
    return Item(bench=bench, id=ident, where=where, question=question or "", context=context or "",
                data_csv=csv_text)


def _json_line(text: str, where: str):
    try:
        return parse_json(text, where, BenchError)
    except ValueError:  # json refuses an integer longer than Python converts
        raise BenchError(f"{where}: not valid JSON (a number of more than {sys.get_int_max_str_digits()} "
                         f"digits)") from None


def _read_jsonl(path: Path, root: Path, fields: Fields, read: dict) -> list[Item]:
    items = []
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise BenchError(f"{path}: cannot read the benchmark file ({exc.strerror or exc})") from None
    with fh:
        for lineno, raw in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), 1):
            where = f"{path} line {lineno}"
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise BenchError(f"{where}: the line is longer than {MAX_LINE_BYTES >> 20} MB, the most one "
                                 f"benchmark item may take")
            text = decode(raw, where, BenchError, "line").strip()
            if lineno == 1:
                text = text.removeprefix("\ufeff")
            if text:
                items.append(_item(_json_line(text, where), str(path), where, path.parent, root, fields, read))
    return items


def _row_bytes(batch) -> list[int]:
    """Each row's bytes of text in ``batch``, measured without expanding a dictionary-encoded column."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    total = np.zeros(batch.num_rows, dtype=np.int64)
    for column in batch.columns:
        if pa.types.is_dictionary(column.type):
            sizes = _sizes(column.dictionary).take(column.indices)
        else:
            sizes = _sizes(column)
        total += pc.fill_null(sizes, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return total.tolist()


def _sizes(array):
    """Per value, its bytes where it is text or binary, else 0 (a number or a nested value, refused later)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if _is_text(array.type):
        return pc.binary_length(array).cast(pa.int64())
    return pa.array([0] * len(array), pa.int64())


def _is_text(kind) -> bool:
    import pyarrow as pa

    return any(test(kind) for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                       pa.types.is_large_binary))


def _read_parquet(path: Path, root: Path, fields: Fields, read: dict) -> list[Item]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = {*fields.id, *fields.question, *fields.context, *fields.data}
    try:
        schema = pq.ParquetFile(path).schema_arrow
        columns = [name for name in schema.names if name in wanted]
        text = [name for name in columns if _is_text(schema.field(name).type)]
        pf = pq.ParquetFile(path, read_dictionary=text)   # text columns stay dictionary-encoded until measured
        _measure(pf, columns, path)
        rows = (record for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns)
                for record in batch.to_pylist())
        return [_item(r, str(path), f"{path} row {i}", path.parent, root, fields, read) for i, r in enumerate(rows)]
    except (OSError, ValueError, OverflowError, pa.ArrowException) as exc:
        raise BenchError(f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})") from None


def _measure(pf, columns: list[str], path: Path) -> None:
    """BenchError where a row's text, or the file's, is larger than a benchmark may take, before any is expanded."""
    total = row = 0
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
        sizes = _row_bytes(batch)
        big = next((k for k, size in enumerate(sizes) if size > MAX_LINE_BYTES), None)
        if big is not None:
            raise BenchError(f"{path} row {row + big}: the item's text is {sizes[big] >> 20} MB, more than the "
                             f"{MAX_LINE_BYTES >> 20} MB one benchmark item may take")
        total, row = total + sum(sizes), row + len(sizes)
        if total > MAX_FILE_TEXT_BYTES:
            raise BenchError(f"{path}: the items' text is more than the {MAX_FILE_TEXT_BYTES >> 30} GB one "
                             "benchmark file may hold")


def _not_regular(path: Path) -> BenchError:
    return BenchError(f"{path}: not a regular file or folder (a broken or looping symlink, or a special file)")


def load_bench(path, fields: Fields = Fields()) -> list[Item]:
    """Every item of a benchmark file or folder, validated."""
    path = Path(path)
    if path.is_dir():
        root, files = path, []
        for entry in sorted(path.rglob("*")):  # does not descend into symlinked folders: they are refused
            if entry.is_symlink() and entry.is_dir():
                raise BenchError(f"{entry}: a symbolic link to a folder, which is not followed; give the folder "
                                 "itself with another --against")
            if entry.suffix.lower() in SUFFIXES and not entry.is_dir():
                if not entry.is_file():
                    raise _not_regular(entry)
                files.append(entry)
        if not files:
            raise BenchError(f"{path}: a benchmark folder must hold .parquet or .jsonl files; found none")
    elif path.is_file():
        if path.suffix.lower() not in SUFFIXES:
            raise BenchError(f"{path}: a benchmark must be a .parquet or .jsonl file, or a folder of them")
        root, files = path.parent, [path]
    elif path.is_symlink() or path.exists():
        raise _not_regular(path)
    else:
        raise BenchError(f"{path}: no such benchmark file or folder")
    items, read = [], {}
    for f in files:
        items += (_read_parquet if f.suffix.lower() == ".parquet" else _read_jsonl)(f, root, fields, read)
    if not items:
        raise BenchError(f"{path}: the benchmark holds no items")
    return items
