"""Reading held-out benchmarks: Parquet or JSONL files, or folders of them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BenchError

ID_FIELDS = ("id", "task_id", "item_id", "uid", "qid")
QUESTION_FIELDS = ("question", "prompt", "text", "query", "instruction")
CONTEXT_FIELDS = ("context", "background")
DATA_FIELDS = ("data_csv", "csv", "dataset_csv", "data_path", "csv_path", "data_file")
SUFFIXES = (".parquet", ".jsonl")


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


def _item(record, bench: str, where: str, folder: Path, fields: Fields) -> Item:
    if not isinstance(record, dict):
        raise BenchError(f"{where}: not a JSON object")
    _, ident = _first(record, fields.id)
    if ident is None:
        raise BenchError(f"{where}: no id (looked for {', '.join(fields.id)})")
    _, question = _first(record, fields.question)
    _, context = _first(record, fields.context)
    _, data = _first(record, fields.data)
    for name, value in (("question", question), ("context", context), ("data", data)):
        if value is not None and not isinstance(value, str):
            raise BenchError(f"{where}: item '{ident}' has a {name} that is not text ({type(value).__name__})")
    if not (question or "").strip() and data is None:
        raise BenchError(f"{where}: item '{ident}' has neither a question text ({', '.join(fields.question)}) "
                         f"nor a dataset ({', '.join(fields.data)})")
    csv_text = None
    if data is not None:
        if "\n" in data.strip():  # CSV text; a single line is a path to a CSV file
            csv_text = data
        else:
            path = (folder / data) if not Path(data).is_absolute() else Path(data)
            if not path.is_file():
                raise BenchError(f"{where}: item '{ident}' names a data file that does not exist: {path}")
            csv_text = path.read_text(encoding="utf-8", errors="replace")
    return Item(bench=bench, id=str(ident), where=where, question=question or "", context=context or "",
                data_csv=csv_text)


def _read_jsonl(path: Path, fields: Fields) -> list[Item]:
    items = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path} line {lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BenchError(f"{where}: not valid JSON ({exc.msg})") from None
            items.append(_item(record, str(path), where, path.parent, fields))
    return items


def _read_parquet(path: Path, fields: Fields) -> list[Item]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise BenchError(f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})") from None
    return [_item(r, str(path), f"{path} row {i}", path.parent, fields) for i, r in enumerate(rows)]


def load_bench(path, fields: Fields = Fields()) -> list[Item]:
    """Every item of a benchmark file or folder, validated."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        if not files:
            raise BenchError(f"{path}: a benchmark folder must hold .parquet or .jsonl files; found none")
    elif path.is_file():
        if path.suffix not in SUFFIXES:
            raise BenchError(f"{path}: a benchmark must be a .parquet or .jsonl file, or a folder of them")
        files = [path]
    else:
        raise BenchError(f"{path}: no such benchmark file or folder")
    items = []
    for f in files:
        items += _read_parquet(f, fields) if f.suffix == ".parquet" else _read_jsonl(f, fields)
    if not items:
        raise BenchError(f"{path}: the benchmark holds no items")
    return items
