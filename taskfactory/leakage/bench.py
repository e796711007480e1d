"""Reading held-out benchmarks: Parquet or JSONL files, or folders of them.

A benchmark is untrusted input. JSONL is read one line at a time, each line at
most :data:`MAX_LINE_BYTES`, UTF-8 and nested at most
:data:`taskfactory.readers.MAX_DEPTH` levels. An item's id is text or a whole
number; its question, context and dataset are text. A dataset given as a path
is relative to the benchmark file's folder and must stay inside the benchmark
(the folder given, or the file's own folder), also after following symlinks;
the file it names is UTF-8 text of at most :data:`MAX_DATA_BYTES`.
"""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BenchError
from ..readers import decode, parse_json, read_text

ID_FIELDS = ("id", "task_id", "item_id", "uid", "qid")
QUESTION_FIELDS = ("question", "prompt", "text", "query", "instruction")
CONTEXT_FIELDS = ("context", "background")
DATA_FIELDS = ("data_csv", "csv", "dataset_csv", "data_path", "csv_path", "data_file")
SUFFIXES = (".parquet", ".jsonl")
MAX_LINE_BYTES = 16 << 20     # one JSONL line: one item, its CSV text included
MAX_DATA_BYTES = 64 << 20     # one data file an item names


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


def _data_file_text(data: str, where: str, ident: str, folder: Path, root: Path) -> str:
    """The text of the data file ``data`` names, relative to ``folder`` and
    inside ``root``; BenchError naming the item and the path otherwise."""
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
    return read_text(path, lambda message: BenchError(f"{item}: {message}"), "data file", MAX_DATA_BYTES)


def _item(record, bench: str, where: str, folder: Path, root: Path, fields: Fields) -> Item:
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
            csv_text = _data_file_text(data.strip(), where, ident, folder, root)
    return Item(bench=bench, id=ident, where=where, question=question or "", context=context or "",
                data_csv=csv_text)


def _json_line(text: str, where: str):
    try:
        return parse_json(text, where, BenchError)
    except ValueError:  # json refuses an integer longer than Python converts
        raise BenchError(f"{where}: not valid JSON (a number of more than {sys.get_int_max_str_digits()} "
                         f"digits)") from None


def _read_jsonl(path: Path, root: Path, fields: Fields) -> list[Item]:
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
                items.append(_item(_json_line(text, where), str(path), where, path.parent, root, fields))
    return items


def _read_parquet(path: Path, root: Path, fields: Fields) -> list[Item]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = {*fields.id, *fields.question, *fields.context, *fields.data}
    try:
        pf = pq.ParquetFile(path)
        columns = [name for name in pf.schema_arrow.names if name in wanted]
        rows = pf.read(columns=columns).to_pylist()
    except (OSError, ValueError, OverflowError, pa.ArrowException) as exc:
        raise BenchError(f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})") from None
    return [_item(r, str(path), f"{path} row {i}", path.parent, root, fields) for i, r in enumerate(rows)]


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
    items = []
    for f in files:
        items += _read_parquet(f, root, fields) if f.suffix.lower() == ".parquet" else _read_jsonl(f, root, fields)
    if not items:
        raise BenchError(f"{path}: the benchmark holds no items")
    return items
