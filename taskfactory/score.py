"""Scoring a model's answers on a corpus: Raw and Strict pass@1 and pass@k,
mean reward, invalid share and method-name accuracy, overall and by any
column of the record (``taskfactory score``).

Predictions are JSONL, one answer per line: ``{"task_id", "completion"}`` or
``{"task_id", "p_value", "decision", "method"}`` (closed-form kinds: the
fields of their kind), with an optional ``run`` (several answers per task).
Lines that are not JSON objects, unknown task ids, answers without a
completion and duplicate (task_id, run) pairs are counted and listed by line
number; a file with no JSON object line at all is refused.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .corpus import is_task_id, iter_records
from .errors import InputError
from .reward import Answer, Invalid, RewardResult, answer_from_fields, reward

#: Record columns a breakdown may group by.
BREAKDOWNS = ("method", "effect", "prompt_style", "perturbation", "trap", "n", "split", "scenario", "answer_kind")
COLUMNS = ["task_id", "method", "scenario", "n", "effect", "prompt_style", "perturbation", "trap", "split",
           "answer_kind", "gold", "accepted", "gold_method", "naive_method", "naive_p", "naive_decision"]
BASELINES = ("gold", "naive")
#: Problems listed by line number, at most this many per kind (all are counted).
MAX_LISTED = 20


@dataclass
class Problems:
    """Prediction lines that were not scored, by kind: line numbers."""

    lines: dict = field(default_factory=lambda: defaultdict(list))

    def add(self, kind: str, line: int) -> None:
        self.lines[kind].append(line)

    def as_dict(self) -> dict:
        return {kind: {"count": len(lines), "lines": lines[:MAX_LISTED]} for kind, lines in self.lines.items()}


def read_predictions(path, kinds: dict[str, str]) -> tuple[dict, Problems]:
    """{task_id: {run: answer}} from a JSONL file, and the lines not used.
    ``kinds`` maps each task id of the corpus to its answer kind."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the predictions ({exc.strerror or type(exc).__name__})") from None
    problems = Problems()
    answers: dict[str, dict] = defaultdict(dict)
    objects = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            problems.add("not a JSON object", number)
            continue
        if not isinstance(row, dict):
            problems.add("not a JSON object", number)
            continue
        objects += 1
        task_id = row.get("task_id")
        if not is_task_id(task_id):
            problems.add("no valid task_id", number)
            continue
        if task_id not in kinds:
            problems.add("unknown task_id", number)
            continue
        run = row.get("run", len(answers[task_id]))
        if isinstance(run, bool) or not isinstance(run, (int, str)) or (isinstance(run, str) and len(run) > 64):
            problems.add("run is not a number or a short name", number)
            continue
        if run in answers[task_id]:
            problems.add("duplicate (task_id, run)", number)
            continue
        if "completion" in row:
            completion = row["completion"]
            if not isinstance(completion, str):
                problems.add("completion is not text", number)
                continue
            answers[task_id][run] = completion
        elif any(k in row for k in ("p_value", "estimate", "low", "integer", "yes_no", "answer")):
            answers[task_id][run] = answer_from_fields(row, kinds[task_id])
        else:
            problems.add("neither a completion nor answer fields", number)
    if objects == 0:
        raise InputError(f"{path}: not JSONL: no line is a JSON object (expected "
                         '{"task_id": ..., "completion": ...} per line)')
    return {k: v for k, v in answers.items() if v}, problems


def baseline_answers(records: list[dict], which: str) -> dict:
    """{task_id: {0: answer}}: the corpus's own gold or naive answers (tasks
    without a naive test get none)."""
    from .registry import get_family

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
    """The unbiased pass@k estimator from ``n`` runs of which ``c`` pass."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


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
        max_k = min(len(task) for task in tasks)
        run_keys = sorted({key for task in tasks for key in task}, key=str)
        for metric in ("raw", "strict"):
            # raw and strict are booleans: their sums are exact, so sum / count is np.mean to the bit
            per_run = [_share([getattr(task[key], metric) for task in tasks if key in task]) for key in run_keys]
            out[f"{metric}_pass@1"] = float(np.mean([_share([getattr(r, metric) for r in task.values()])
                                                     for task in tasks]))
            out[f"{metric}_pass@1_sd_over_runs"] = float(np.std(per_run, ddof=1)) if len(per_run) > 1 else 0.0
            for k in range(2, max_k + 1):
                out[f"{metric}_pass@{k}"] = float(np.mean([
                    pass_at_k(len(task), sum(getattr(r, metric) for r in task.values()), k) for task in tasks]))
        return out


@dataclass
class ScoreReport:
    """Scores overall and per breakdown, the corpus's coverage and the
    prediction lines not used."""

    overall: dict
    breakdowns: dict
    corpus_tasks: int
    problems: dict

    def as_dict(self) -> dict:
        return {"corpus_tasks": self.corpus_tasks, "overall": self.overall, "by": self.breakdowns,
                "problems": self.problems}


def score(corpus, predictions=None, by=("method",), baseline: str | None = None,
          method_aware: bool = True) -> ScoreReport:
    """Score a predictions file (or a ``baseline``: ``gold`` or ``naive``)
    against ``corpus``; group the figures ``by`` record columns."""
    unknown = [b for b in by if b not in BREAKDOWNS]
    if unknown:
        raise InputError(f"--by: unknown column '{unknown[0]}'; choose from {', '.join(BREAKDOWNS)}")
    if (predictions is None) == (baseline is None):
        raise InputError("score needs a predictions file or --baseline, not both")
    records = {rec["task_id"]: rec for rec in iter_records(corpus, columns=COLUMNS)}
    if baseline is not None:
        answers, problems = baseline_answers(list(records.values()), baseline), Problems()
    else:
        answers, problems = read_predictions(predictions, {t: r["answer_kind"] for t, r in records.items()})
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
    return ScoreReport(overall.summary(), breakdowns, len(records), problems.as_dict())


def _key(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _order(key: str):
    return (0, int(key), "") if key.isdigit() else (1, 0, key)


#: The score table's columns: the group, then the numbers of each.
SCORE_COLUMNS = ("", "tasks", "answers", "reward", "Raw@1", "Strict@1", "invalid", "method")


def format_report(report: ScoreReport) -> str:
    """The text ``taskfactory score`` prints."""
    from .tables import render_table

    o = report.overall
    lines = [f"scored {o.get('answers', 0)} answers to {o.get('tasks', 0)} of {report.corpus_tasks} tasks"]
    for kind, p in report.problems.items():
        shown = ", ".join(map(str, p["lines"])) + (", ..." if p["count"] > len(p["lines"]) else "")
        lines.append(f"  not scored: {p['count']} line(s) {kind} (line {shown})")
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
