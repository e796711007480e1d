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

Every file is untrusted: a line, a zip entry and a whole file are read only
up to a size, JSON may nest at most :data:`~taskfactory.readers.MAX_DEPTH`
levels, and a file that is not of the format is one :class:`InputError`
line naming what was expected. A sample that names no task id or holds no
reply comes back as a row without one, which ``score`` counts as a problem.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from .errors import InputError

FORMATS = ("lm-eval", "inspect", "verifiers")
#: The longest line of a JSONL result file (a trace holds the whole conversation).
MAX_LINE_BYTES = 64 << 20
#: The largest result file, and the largest JSON file inside an Inspect log.
MAX_FILE_BYTES = 4 << 30
MAX_ENTRY_BYTES = 64 << 20


def framework_rows(path, fmt: str) -> list[dict]:
    """The predictions rows of the ``fmt`` result file at ``path``."""
    if fmt not in FORMATS:
        raise InputError(f"--from ({fmt!r}) must be one of {', '.join(FORMATS)}")
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {fmt} results ({exc.strerror or type(exc).__name__})") from None
    if not path.is_file():
        raise InputError(f"{path}: not a regular file; give the {fmt} result file")
    if size > MAX_FILE_BYTES:
        raise InputError(f"{path}: the {fmt} results are larger than {MAX_FILE_BYTES >> 30} GB")
    rows = {"lm-eval": _lm_eval, "inspect": _inspect, "verifiers": _verifiers}[fmt](path)
    if not rows:
        raise InputError(f"{path}: holds no {fmt} sample; {EXPECTED[fmt]}")
    return rows


EXPECTED = {
    "lm-eval": "expected the samples_<task>_<date>.jsonl that lm_eval --log_samples writes",
    "inspect": "expected an Inspect log (.eval or .json) that inspect eval writes",
    "verifiers": "expected the traces.jsonl of a verifiers run",
}


def _json(text: str | bytes, where: str):
    from .readers import parse_json

    return parse_json(text, where, InputError)


def _jsonl(path: Path, fmt: str):
    """Each line of a JSONL result file as a JSON object (a line that is not one ends the reading)."""
    with open(path, "rb") as fh:
        number = 0
        while line := fh.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(line) > MAX_LINE_BYTES:
                raise InputError(f"{path} line {number}: longer than {MAX_LINE_BYTES >> 20} MB")
            if line.strip():
                row = _json(line, f"{path} line {number}")
                if not isinstance(row, dict):
                    raise InputError(f"{path} line {number}: not a JSON object; {EXPECTED[fmt]}")
                yield row


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


def _lm_eval(path: Path) -> list[dict]:
    rows = []
    for sample in _jsonl(path, "lm-eval"):
        if "doc" not in sample or not ({"filtered_resps", "resps"} & sample.keys()):
            raise InputError(f"{path}: a line without doc and resps; {EXPECTED['lm-eval']}")
        doc = sample["doc"] if isinstance(sample["doc"], dict) else {}
        replies = sample.get("filtered_resps") or sample.get("resps") or []
        first = replies[0] if isinstance(replies, list) and replies else None
        first = first if isinstance(first, list) else [first]   # one request: its replies, one per repeat
        rows += [_row(doc.get("task_id"), run, reply) for run, reply in enumerate(first)]
    return rows


def _inspect(path: Path) -> list[dict]:
    if zipfile.is_zipfile(path):
        samples = _inspect_zip(path)
    else:
        with open(path, "rb") as fh:
            log = _json(fh.read(), str(path))
        if not isinstance(log, dict) or not isinstance(log.get("samples", []), list) or "eval" not in log:
            raise InputError(f"{path}: not an Inspect log; {EXPECTED['inspect']}")
        samples = log.get("samples", [])
    rows = []
    for sample in samples:
        sample = sample if isinstance(sample, dict) else {}
        epoch = sample.get("epoch")
        output = sample.get("output") if isinstance(sample.get("output"), dict) else {}
        rows.append(_row(sample.get("id"), epoch - 1 if isinstance(epoch, int) and epoch >= 1 else None,
                         _text(output.get("completion"))))
    return rows


def _inspect_zip(path: Path) -> list:
    """The samples of an ``.eval`` log: its ``samples/<id>_epoch_<n>.json`` entries, each size-checked before read."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [i for i in archive.infolist() if i.filename.startswith("samples/") and i.filename.endswith(".json")]
            if "header.json" not in archive.namelist() and not names:
                raise InputError(f"{path}: a zip file but not an Inspect log; {EXPECTED['inspect']}")
            too_large = next((i.filename for i in names if i.file_size > MAX_ENTRY_BYTES), None)
            if too_large:
                raise InputError(f"{path}: the entry {too_large} is larger than {MAX_ENTRY_BYTES >> 20} MB")
            return [_json(archive.read(i), f"{path}: {i.filename}") for i in names]
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{path}: cannot read the Inspect log ({exc})") from None


def _verifiers(path: Path) -> list[dict]:
    rows = []
    for episode in _jsonl(path, "verifiers"):
        if "traces" not in episode or "task" not in episode:
            raise InputError(f"{path}: a line without task and traces; {EXPECTED['verifiers']}")
        task = episode["task"] if isinstance(episode["task"], dict) else {}
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        for trace in episode["traces"] if isinstance(episode["traces"], list) else []:
            rows.append(_row(data.get("task_id"), None, _reply(trace)))
    return rows


def _reply(trace) -> str | None:
    """A trace's reply: its root reply, else its last sampled assistant message (``Trace.last_reply``)."""
    if not isinstance(trace, dict):
        return None
    if isinstance(trace.get("root_reply"), str):
        return trace["root_reply"].strip()
    sampled = [n["message"] for n in trace.get("nodes") or [] if isinstance(n, dict) and n.get("sampled")
               and isinstance(n.get("message"), dict) and n["message"].get("role") == "assistant"]
    if not sampled:
        return None
    text = _text(sampled[-1].get("content") or "")
    return None if text is None else text.strip()
