"""Scoring a model's answers on a corpus: Raw and Strict pass@1 and pass@k,
mean reward, invalid share and method-name accuracy, overall and by any
column of the record (``taskfactory score``).

Predictions are JSON Lines, one answer per line: ``{"task_id",
"completion"}`` or ``{"task_id", "p_value", "decision", "method"}``
(closed-form kinds: the fields of their kind), with an optional ``run``, a
whole number (several answers per task; ``"3"`` is run 3). The file is read
as JSON Lines is written: a regular file, split on ``\n`` only (U+2028 inside
a string is not a line break), lines of at most :data:`MAX_LINE_BYTES`, each
nested at most :data:`~taskfactory.readers.MAX_DEPTH` deep, a leading UTF-8
byte-order mark read past and noted. Each completion is read into its answer
as its line is read, so memory grows with the answers, not their text. Lines
that are not JSON objects, unknown task ids, answers without a completion and
duplicate (task_id, run) pairs are counted and listed by line number; a file
with no JSON object line at all is refused.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..readers import MAX_DEPTH, KeyTwice, nested_within, open_regular, unique_keys
from ..store.corpus import is_task_id, iter_records
from .completions import Answer, answer_from_fields, gives_fields, parse_answer
from .difficulty import FIELDS as DIFFICULTY_FIELDS, difficulty, difficulty_bin
from .frameworks import framework_rows
from .reward import RewardResult, reward

#: Record columns a breakdown may group by, and ``difficulty`` (its bin of 0.2, :mod:`taskfactory.use.difficulty`).
BREAKDOWNS = ("method", "effect", "prompt_style", "perturbation", "trap", "n", "split", "scenario", "answer_kind",
              "difficulty")
COLUMNS = list(dict.fromkeys(["task_id", "method", "scenario", "n", "effect", "prompt_style", "perturbation", "trap",
                              "split", "answer_kind", "gold", "accepted", "gold_method", "naive_method", "naive_p",
                              "naive_decision", *DIFFICULTY_FIELDS]))
BASELINES = ("gold", "naive")
#: Unscored lines listed by line number, at most this many per kind (all are counted).
MAX_LISTED = 20
#: A predictions line longer than this is not read (a completion of 1 MB fits, even with many characters escaped).
MAX_LINE_BYTES = 8 << 20
#: The largest run number.
MAX_RUN = 10**9
BOM = b"\xef\xbb\xbf"
NOT_AN_OBJECT = "not a JSON object"
#: The problem of a line that names no task id.
NO_TASK_ID = "no valid task_id"
#: pass@k is reported for k up to this, then at powers of two and at the fewest runs of any task.
EVERY_K_UP_TO = 10


@dataclass
class UnscoredLines:
    """Prediction lines that were not scored, by kind: their count and the
    first :data:`MAX_LISTED` line numbers; and notes on the file."""

    counts: dict = field(default_factory=lambda: defaultdict(int))
    lines: dict = field(default_factory=lambda: defaultdict(list))
    notes: list = field(default_factory=list)

    def add(self, kind: str, line: int) -> None:
        self.counts[kind] += 1
        if len(self.lines[kind]) < MAX_LISTED:
            self.lines[kind].append(line)

    def as_dict(self) -> dict:
        return {kind: {"count": count, "lines": self.lines[kind]} for kind, count in self.counts.items()}


def _lines(fh, path: Path, problems: UnscoredLines):
    """(line number, text) of each line of ``fh`` split on ``\n`` only, the
    text without its line ending; a line longer than :data:`MAX_LINE_BYTES`
    is counted as a problem and skipped. Not UTF-8 is an InputError naming
    the byte's offset."""
    offset, number = 0, 0
    while line := fh.readline(MAX_LINE_BYTES + 1):
        number += 1
        start, offset = offset, offset + len(line)
        if len(line) > MAX_LINE_BYTES:
            while line and not line.endswith(b"\n"):
                line = fh.readline(1 << 20)
                offset += len(line)
            problems.add(f"longer than {MAX_LINE_BYTES} bytes", number)
            continue
        if number == 1 and line.startswith(BOM):
            problems.notes.append("the file starts with a UTF-8 byte-order mark (U+FEFF), read past")
            line, start = line[len(BOM):], start + len(BOM)
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {start + exc.start})") from None
        yield number, text.removesuffix("\n").removesuffix("\r")


def _run(row: dict, default: int) -> int | None:
    """The run of a predictions row as a whole number (``3``, ``3.0`` and
    ``"3"`` are run 3; ``default`` when it names none); None when it is not
    a whole number from 0 to :data:`MAX_RUN`."""
    run = row.get("run", default)
    if isinstance(run, str) and run.isascii() and run.isdigit() and len(run) <= 10:
        run = int(run)
    elif isinstance(run, float) and run.is_integer():
        run = int(run)
    if isinstance(run, bool) or not isinstance(run, int) or not 0 <= run <= MAX_RUN:
        return None
    return run


def _json_row(text: str) -> dict | str:
    """The JSON object of a line, or the kind of problem it is."""
    try:
        row = json.loads(text, object_pairs_hook=unique_keys)
    except RecursionError:
        return f"nested more than {MAX_DEPTH} levels deep"
    except KeyTwice:
        return "a key given twice"
    except ValueError:
        return NOT_AN_OBJECT
    if not isinstance(row, dict):
        return NOT_AN_OBJECT
    return row if nested_within(row, MAX_DEPTH) else f"nested more than {MAX_DEPTH} levels deep"


def _jsonl_rows(path: Path, problems: UnscoredLines):
    """(line number, JSON object) of each line of a predictions file that is one."""
    with open_regular(path, InputError, "predictions", "a JSONL file") as fh:
        for number, text in _lines(fh, path, problems):
            if not text.strip():
                continue
            row = _json_row(text)
            if isinstance(row, str):
                problems.add(row, number)
                continue
            yield number, row


def read_predictions(path, kinds: dict[str, str], fmt: str | None = None) -> tuple[dict, UnscoredLines]:
    """{task_id: {run: Answer or Invalid}} from a JSONL file (or the result
    file of the framework ``fmt``, see :mod:`taskfactory.use.frameworks`, its
    samples numbered as lines), and the lines not used. ``kinds`` maps each
    task id of the corpus to its answer kind."""
    path = Path(path)
    problems = UnscoredLines()
    answers: dict[str, dict] = defaultdict(dict)
    objects = 0
    rows = _jsonl_rows(path, problems) if fmt is None else framework_rows(path, fmt)
    for number, row in rows:
        objects += 1
        problem = _add_answer(row, kinds, answers)
        if problem:
            problems.add(problem, number)
    if objects == 0:
        other = next(((kind, lines[0]) for kind, lines in problems.lines.items() if kind != NOT_AN_OBJECT), None)
        why = f"line {other[1]} is {other[0]}" if other else 'expected {"task_id": ..., "completion": ...} per line'
        raise InputError(f"{path}: not JSONL: no line is a JSON object ({why})")
    if problems.counts.get(NO_TASK_ID) == objects:
        if fmt is not None:
            raise InputError(f"{path}: no {fmt} sample names a task id ({objects} samples); was it run on an "
                             "export of this corpus (taskfactory export)?")
        raise InputError(f"{path}: no line names a task_id ({objects} JSON objects); expected "
                         '{"task_id": ..., "completion": ...} per line; what an evaluation framework wrote is read '
                         "with --from verifiers|inspect|lm-eval")
    return {k: v for k, v in answers.items() if v}, problems


def _add_answer(row: dict, kinds: dict[str, str], answers: dict) -> str | None:
    """Read the answer of one predictions row into ``answers``; the kind of
    problem that keeps it out, or None."""
    task_id = row.get("task_id")
    if not is_task_id(task_id):
        return NO_TASK_ID
    if task_id not in kinds:
        return "unknown task_id"
    run = _run(row, len(answers[task_id]))
    if run is None:
        return "run is not a whole number"
    if run in answers[task_id]:
        return "duplicate (task_id, run)"
    if "completion" in row:
        if not isinstance(row["completion"], str):
            return "completion is not text"
        answers[task_id][run] = parse_answer(row["completion"], kinds[task_id])
    elif gives_fields(row, kinds[task_id]):
        answers[task_id][run] = answer_from_fields(row, kinds[task_id])
    else:
        return "neither a completion nor answer fields"
    return None


def baseline_answers(records: list[dict], which: str) -> dict:
    """{task_id: {0: answer}}: the corpus's own gold or naive answers (tasks
    without a naive test get none)."""
    from ..registry import get_family

    if which not in BASELINES:
        raise InputError(f"baseline ({which!r}) must be one of {', '.join(BASELINES)}")
    out = {}
    for rec in records:
        gold = rec["gold"]
        if which == "gold":
            values = {k: gold[k] for k in gold if k != "kind" and gold[k] is not None}
            out[rec["task_id"]] = {0: Answer(values, get_family(rec["method"]).test_name.label)}
        elif rec["naive_p"] is not None:
            values = {"p_value": rec["naive_p"], "decision": rec["naive_decision"]}
            out[rec["task_id"]] = {0: Answer(values, rec["naive_method"])}
    return out


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator from ``n`` runs of which ``c`` pass,
    1 - C(n - c, k) / C(n, k), as a product of ``c`` factors (no big integers)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def reported_ks(max_k: int) -> list[int]:
    """The k > 1 of the pass@k a group reports: every k up to
    :data:`EVERY_K_UP_TO`, then powers of two, and ``max_k`` (the fewest runs
    of any of its tasks)."""
    powers = {1 << j for j in range(max_k.bit_length()) if 1 << j <= max_k}
    return sorted(k for k in {*range(2, min(max_k, EVERY_K_UP_TO) + 1), *powers, max_k} if k > 1)


def _share(flags: list) -> float:
    """The share of true values among ``flags`` (booleans)."""
    return sum(flags) / len(flags)


@dataclass
class Cell:
    """The scored runs of the tasks in one group."""

    results: dict = field(default_factory=lambda: defaultdict(dict))   # task_id -> run -> RewardResult

    def summary(self) -> dict:
        tasks = list(self.results.values())
        runs = [r for task in tasks for r in task.values()]
        if not runs:
            return {"tasks": 0, "answers": 0}
        out = {"tasks": len(tasks), "answers": len(runs),
               "mean_reward": float(np.mean([r.reward for r in runs])),
               "invalid_share": float(np.mean([not r.valid for r in runs]))}
        named = [r.method_ok for r in runs if r.method_ok is not None]
        out["method_named"] = len(named)
        out["method_accuracy"] = float(np.mean(named)) if named else None
        ks = reported_ks(min(len(task) for task in tasks))
        for metric in ("raw", "strict"):
            by_run = defaultdict(list)
            for task in tasks:
                for key, result in task.items():
                    by_run[key].append(getattr(result, metric))
            # raw and strict are booleans: their sums are exact, so sum / count is np.mean to the bit
            per_run = [_share(flags) for _, flags in sorted(by_run.items())]
            passes = [(len(task), sum(getattr(r, metric) for r in task.values())) for task in tasks]
            out[f"{metric}_pass@1"] = float(np.mean([c / n for n, c in passes]))
            out[f"{metric}_pass@1_sd_over_runs"] = float(np.std(per_run, ddof=1)) if len(per_run) > 1 else 0.0
            for k in ks:
                out[f"{metric}_pass@{k}"] = float(np.mean([pass_at_k(n, c, k) for n, c in passes]))
        return out


@dataclass
class ScoreReport:
    """Scores overall and per breakdown, the corpus's coverage, the
    prediction lines not used and notes on the predictions file."""

    overall: dict
    breakdowns: dict
    corpus_tasks: int
    problems: dict
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"corpus_tasks": self.corpus_tasks, "overall": self.overall, "by": self.breakdowns,
                "problems": self.problems, "notes": self.notes}


def score(corpus, predictions=None, by=("method",), baseline: str | None = None,
          method_aware: bool = True, fmt: str | None = None) -> ScoreReport:
    """Score a predictions file (the result file of the framework ``fmt``,
    when given) or a ``baseline`` (``gold`` or ``naive``) against
    ``corpus``; group the figures ``by`` record columns."""
    unknown = [b for b in by if b not in BREAKDOWNS]
    if unknown:
        raise InputError(f"--by: unknown column '{unknown[0]}'; choose from {', '.join(BREAKDOWNS)}")
    if (predictions is None) == (baseline is None):
        raise InputError("score needs a predictions file or --baseline, not both")
    records = {rec["task_id"]: rec for rec in iter_records(corpus, columns=COLUMNS)}
    if "difficulty" in by:
        for rec in records.values():
            rec["difficulty"] = difficulty_bin(difficulty(rec))
    if baseline is not None:
        answers, problems = baseline_answers(list(records.values()), baseline), UnscoredLines()
    else:
        answers, problems = read_predictions(predictions, {t: r["answer_kind"] for t, r in records.items()}, fmt)
    overall, groups = Cell(), {b: defaultdict(Cell) for b in by}
    for task_id, runs in answers.items():
        rec = records[task_id]
        for run, answer in runs.items():
            result: RewardResult = reward(rec, answer, method_aware=method_aware)
            overall.results[task_id][run] = result
            for b in by:
                groups[b][_key(rec[b])].results[task_id][run] = result
    breakdowns = {b: {key: cell.summary() for key, cell in sorted(cells.items(), key=lambda kv: _order(kv[0]))}
                  for b, cells in groups.items()}
    return ScoreReport(overall.summary(), breakdowns, len(records), problems.as_dict(), problems.notes)


def _key(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _order(key: str):
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


#: The score table's columns: the group, then the numbers of each.
SCORE_COLUMNS = ("", "tasks", "answers", "reward", "Raw@1", "Strict@1", "invalid", "method")


def format_report(report: ScoreReport) -> str:
    """The text ``taskfactory score`` prints."""
    from ..tables import render_table

    o = report.overall
    lines = [f"scored {o.get('answers', 0)} answers to {o.get('tasks', 0)} of {report.corpus_tasks} tasks"]
    for kind, p in report.problems.items():
        shown = ", ".join(map(str, p["lines"])) + (", ..." if p["count"] > len(p["lines"]) else "")
        lines.append(f"  not scored: {p['count']} line(s) {kind} (line {shown})")
    lines += [f"  note: {note}" for note in report.notes]
    rows = [_row("overall", o)]
    for b, cells in report.breakdowns.items():
        rows.append((f"by {b}:",) + ("",) * (len(SCORE_COLUMNS) - 1))
        rows += [_row(f"  {key}", cell) for key, cell in cells.items()]
    lines += ["", render_table(SCORE_COLUMNS, rows, align=("left",) + ("right",) * (len(SCORE_COLUMNS) - 1))]
    ks = sorted({int(k.split("@")[1]) for k in o if k.startswith("raw_pass@") and k[9:].isdigit()})
    if len(ks) > 1:
        lines.append("")
        lines.append("pass@k overall: " + ", ".join(
            f"k={k} Raw {o[f'raw_pass@{k}']:.3f} Strict {o[f'strict_pass@{k}']:.3f}" for k in ks))
    return "\n".join(lines)


def _row(label: str, s: dict) -> tuple[str, ...]:
    """One line of the score table: ``label`` and the numbers of summary ``s``."""
    if not s.get("answers"):
        return (label, "0") + ("",) * (len(SCORE_COLUMNS) - 2)
    method = "-" if s["method_accuracy"] is None else f"{s['method_accuracy']:.3f}"
    return (label, str(s["tasks"]), str(s["answers"]), f"{s['mean_reward']:.3f}", f"{s['raw_pass@1']:.3f}",
            f"{s['strict_pass@1']:.3f}", f"{s['invalid_share']:.3f}", method)
