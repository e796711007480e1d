"""Reading back what evaluation frameworks wrote: their result files as predictions.

``taskfactory score --from FORMAT FILE`` (and ``report --from``) reads a
result file of a framework a corpus was exported to (``taskfactory export``)
as rows of the predictions format, ``{"task_id", "run", "completion"}``:

- ``lm-eval``: the samples file lm-evaluation-harness writes with
  ``--log_samples`` (``samples_<task>_<date>.jsonl``): one line per
  document, whose ``doc`` holds the task id and whose ``filtered_resps``
  (``resps`` where a filter left none) hold the replies, one run each;
- ``inspect``: an Inspect log (``.eval``, a zip of JSON files, or ``.json``):
  each sample's ``id`` is the task id, its ``epoch`` the run plus one, its
  ``output.completion`` the reply;
- ``verifiers``: the ``traces.jsonl`` of a verifiers (0.4, ``verifiers.v1``)
  run: one episode per line, whose task data hold the task id; each trace's
  reply is its ``root_reply``, else its last sampled assistant message;
  a task's traces are its runs, in the order the file gives them.

Every file is untrusted: a line, a zip entry, all of a zip's entries and a
whole file are read only up to a size, one sample at a time, JSON may nest at
most :data:`~taskfactory.readers.MAX_DEPTH` levels and give no key twice, and
a file that is not of the format (or a zip that does not unpack) is one
:class:`InputError` line naming what was expected. A sample that names no task
id or holds no reply comes back as a row without one, which ``score`` counts
as a problem. Rows are numbered by their line (lm-eval, verifiers) or their
place among the log's samples (inspect).
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..readers import open_regular, parse_json

FORMATS = ("lm-eval", "inspect", "verifiers")
#: The longest line of a JSONL result file (a trace holds the whole conversation).
MAX_LINE_BYTES = 64 << 20
#: The largest result file; the largest Inspect log written as one JSON file
#: (read whole: Inspect's own .eval format is read one sample at a time).
MAX_FILE_BYTES = 4 << 30
MAX_JSON_LOG_BYTES = 256 << 20
#: The largest JSON file inside an Inspect .eval log, and all of them together, unpacked.
MAX_ENTRY_BYTES = 64 << 20
MAX_UNPACKED_BYTES = 4 << 30
#: What a zip that does not unpack raises: a bad archive, a corrupt or
#: truncated stream, an encrypted entry or an unknown compression.
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, OSError)


def framework_rows(path, fmt: str) -> Iterator[tuple[int, dict]]:
    """(line or sample number, predictions row) of each sample of the ``fmt``
    result file at ``path``, read one sample at a time."""
    if fmt not in FORMATS:
        raise InputError(f"--from ({fmt!r}) must be one of {', '.join(FORMATS)}")
    path = Path(path)
    with open_regular(path, InputError, f"{fmt} results", f"the {fmt} result file") as fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        if size > MAX_FILE_BYTES:
            raise InputError(f"{path}: the {fmt} results are larger than {MAX_FILE_BYTES >> 30} GB")
        samples = 0
        for samples, numbered_row in enumerate(READERS[fmt](fh, path), 1):
            yield numbered_row
    if not samples:
        raise InputError(f"{path}: holds no {fmt} sample; {EXPECTED[fmt]}")


EXPECTED = {
    "lm-eval": "expected the samples_<task>_<date>.jsonl that lm_eval --log_samples writes",
    "inspect": "expected an Inspect log (.eval or .json) that inspect eval writes",
    "verifiers": "expected the traces.jsonl of a verifiers run",
}


def _json(text: bytes, where: str):
    return parse_json(text, where, InputError)


def _jsonl(fh, path: Path, fmt: str) -> Iterator[tuple[int, dict]]:
    """(line number, JSON object) of each line of a JSONL result file (a line that is not one ends the reading)."""
    number = 0
    while line := fh.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise InputError(f"{path} line {number}: longer than {MAX_LINE_BYTES >> 20} MB")
        if line.strip():
            row = _json(line, f"{path} line {number}")
            if not isinstance(row, dict):
                raise InputError(f"{path} line {number}: not a JSON object; {EXPECTED[fmt]}")
            yield number, row


def _text(value) -> str | None:
    """A reply as text: a string, or the text parts of a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        parts = [p.get("text") for p in value if p.get("type") in (None, "text")]
        return "".join(parts) if parts and all(isinstance(t, str) for t in parts) else None
    return None


def _row(task_id, run, completion) -> dict:
    """A predictions row; without a run (the task's next) or a completion where the file gives none."""
    row = {"task_id": task_id if isinstance(task_id, str) else None}
    if run is not None:
        row["run"] = run
    return {**row, "completion": completion} if isinstance(completion, str) else row


def _lm_eval(fh, path: Path) -> Iterator[tuple[int, dict]]:
    for number, sample in _jsonl(fh, path, "lm-eval"):
        if "doc" not in sample or not ({"filtered_resps", "resps"} & sample.keys()):
            raise InputError(f"{path}: a line without doc and resps; {EXPECTED['lm-eval']}")
        doc = sample["doc"] if isinstance(sample["doc"], dict) else {}
        replies = sample.get("filtered_resps") or sample.get("resps") or []
        first = replies[0] if isinstance(replies, list) and replies else None
        first = first if isinstance(first, list) else [first]   # one request: its replies, one per repeat
        for run, reply in enumerate(first):
            yield number, _row(doc.get("task_id"), run, reply)


def _inspect(fh, path: Path) -> Iterator[tuple[int, dict]]:
    if zipfile.is_zipfile(fh):
        samples = _inspect_zip(fh, path)
    else:
        if fh.seek(0, 2) > MAX_JSON_LOG_BYTES:
            raise InputError(f"{path}: a JSON Inspect log larger than {MAX_JSON_LOG_BYTES >> 20} MB; "
                             "write the log as .eval (Inspect's default), which is read one sample at a time")
        fh.seek(0)
        log = _json(fh.read(), str(path))
        if not isinstance(log, dict) or not isinstance(log.get("samples", []), list) or "eval" not in log:
            raise InputError(f"{path}: not an Inspect log; {EXPECTED['inspect']}")
        samples = log.get("samples", [])
    for number, sample in enumerate(samples, 1):
        sample = sample if isinstance(sample, dict) else {}
        epoch = sample.get("epoch")
        output = sample.get("output") if isinstance(sample.get("output"), dict) else {}
        run = epoch - 1 if isinstance(epoch, int) and not isinstance(epoch, bool) and epoch >= 1 else None
        yield number, _row(sample.get("id"), run, _text(output.get("completion")))


def _inspect_zip(fh, path: Path) -> Iterator:
    """The samples of an ``.eval`` log, one at a time: its ``samples/<id>_epoch_<n>.json``
    entries, each unpacked only up to :data:`MAX_ENTRY_BYTES` (whatever size the
    archive declares), all of them up to :data:`MAX_UNPACKED_BYTES`."""
    unpacked = 0
    try:
        with zipfile.ZipFile(fh) as archive:
            names = [i for i in archive.infolist() if i.filename.startswith("samples/") and i.filename.endswith(".json")]
            if "header.json" not in archive.namelist() and not names:
                raise InputError(f"{path}: a zip file but not an Inspect log; {EXPECTED['inspect']}")
            for info in names:
                with archive.open(info) as entry:
                    data = entry.read(MAX_ENTRY_BYTES + 1)
                unpacked += len(data)
                if len(data) > MAX_ENTRY_BYTES:
                    raise InputError(f"{path}: the entry {info.filename} is larger than {MAX_ENTRY_BYTES >> 20} MB")
                if unpacked > MAX_UNPACKED_BYTES:
                    raise InputError(f"{path}: the samples unpack to more than {MAX_UNPACKED_BYTES >> 30} GB")
                yield _json(data, f"{path}: {info.filename}")
    except ZIP_ERRORS as exc:
        raise InputError(f"{path}: cannot unpack the Inspect log ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]})") from None


def _verifiers(fh, path: Path) -> Iterator[tuple[int, dict]]:
    for number, episode in _jsonl(fh, path, "verifiers"):
        if "traces" not in episode or "task" not in episode:
            raise InputError(f"{path}: a line without task and traces; {EXPECTED['verifiers']}")
        task = episode["task"] if isinstance(episode["task"], dict) else {}
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        for trace in episode["traces"] if isinstance(episode["traces"], list) else []:
            yield number, _row(data.get("task_id"), None, _reply(trace))


def _reply(trace) -> str | None:
    """A trace's reply: its root reply, else its last sampled assistant message (``Trace.last_reply``)."""
    if not isinstance(trace, dict):
        return None
    if isinstance(trace.get("root_reply"), str):
        return trace["root_reply"].strip()
    nodes = trace.get("nodes") if isinstance(trace.get("nodes"), list) else []
    sampled = [n["message"] for n in nodes if isinstance(n, dict) and n.get("sampled")
               and isinstance(n.get("message"), dict) and n["message"].get("role") == "assistant"]
    if not sampled:
        return None
    text = _text(sampled[-1].get("content") or "")
    return None if text is None else text.strip()


READERS = {"lm-eval": _lm_eval, "inspect": _inspect, "verifiers": _verifiers}
