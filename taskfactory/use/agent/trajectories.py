"""``taskfactory trajectories``: worked conversations for supervised warm-up, each the sandbox's real outputs.

:class:`~taskfactory.use.agent.statistician.Statistician` plays every selected
task through the agent environment. A trajectory is kept when the test it
chose is the task's canonical test or one of its accepted tests and its
answer passes the paper's filter (:func:`taskfactory.use.reward.sft_keep`);
otherwise it is left out, with the reason.

The folder holds the kept trajectories in ``trajectories.parquet`` and
``trajectories.jsonl``, ready to train on, and the others in ``left_out.jsonl``
(one row per task: ``messages`` in the OpenAI chat format, tool calls with their
arguments as objects and tool messages with ``tool_call_id`` and ``name``;
``tools``, the schemas; ``task_id``, ``split``, ``method``, ``language``,
``chosen``, ``choice``, ``kept``, ``reason``), ``summary.json`` (retention per
family) and ``README.md``, the card.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from ...errors import InputError
from ...folders import check_new_folder
from ..reward import sft_keep
from .episode import MODES, Environment
from .evaluate import COLUMNS, run_episode, select_tasks
from .sandbox import Limits, Sandbox
from .statistician import MissingCheck, Statistician, in_sentence, right_choices

FILES = ("trajectories.parquet", "trajectories.jsonl", "left_out.jsonl", "summary.json", "README.md")


@dataclass
class TrajectorySummary:
    tasks: int = 0
    kept: int = 0
    seconds: float = 0.0
    families: dict = field(default_factory=dict)   # family: {tasks, kept, gold, accepted, reasons}

    def line(self) -> str:
        rate = self.tasks / self.seconds if self.seconds else 0.0
        return (f"wrote {self.tasks} trajectories ({self.kept} kept) in {self.seconds:.1f} s "
                f"({rate:.1f} per second)")


def play(record: dict, box: Sandbox, agent: Statistician) -> dict:
    """One task's trajectory row."""
    episode, mode = agent.episode(record), agent.mode
    env = Environment(box, max_turns=len(episode.steps) + 1, max_seconds=box.limits.episode_seconds, mode=mode)
    try:
        row = run_episode(env, episode, record)
    except MissingCheck as exc:   # a check failed on these data: no test is chosen, nothing is claimed
        row = {"messages": env.messages, "tool_calls": env.info.tool_calls, "reward": 0.0, "ended": str(exc)}
    finally:
        env.close()
    chosen = episode.chosen
    choice = (None if chosen is None else "gold" if chosen.name == record["method"] else
              "accepted" if chosen.name in right_choices(record) else "other")
    if chosen is None:
        reason = f"no test was chosen: {row['ended']}"
    elif row["ended"] != "answered":
        reason = f"the episode ended at the {row['ended']}"
    elif choice == "other":
        reason = f"chose the {in_sentence(chosen.test_name.label)}, neither the canonical test nor an accepted one"
    elif not sft_keep(record, row["completion"]):
        reason = "the answer fails the filter (decision, or p-value beyond a factor of 10)"
    else:
        reason = None
    tools_used = {call["name"] for call in row["tool_calls"]}
    return {"task_id": record["task_id"], "split": record["split"], "method": record["method"],
            "language": "+".join(lang for lang, tool in (("python", "run_python"), ("r", "run_r")) if tool in tools_used),
            "mode": mode, "messages": row["messages"], "tools": env.tools if mode == "tools" else [],
            "chosen": chosen.name if chosen else None, "choice": choice, "kept": reason is None, "reason": reason,
            "reward": row["reward"]}


def write_trajectories(corpus, out, split: str | None = None, method: str | None = None, limit: int | None = None,
                       jobs: int = 1, language: str = "python", mode: str = "tools",
                       progress: bool | None = None, sandbox: Sandbox | None = None) -> TrajectorySummary:
    """Play the selected tasks of ``corpus`` and write the folder ``out`` (new or empty).

    Rows are written as they are played, so memory holds one batch of them."""
    if jobs < 1:
        raise InputError("--jobs must be at least 1")
    if mode not in MODES:
        raise InputError(f"--mode ({mode!r}) must be one of {', '.join(MODES)}")
    try:
        agent = Statistician(language, mode)
    except ValueError as exc:
        raise InputError(f"--language: {exc}") from None
    dest = check_new_folder(out, "-o", [corpus])
    records = select_tasks(corpus, split, method, limit, columns=(*COLUMNS, "roles", "data_dictionary"))
    started = time.monotonic()
    own = sandbox is None
    box = sandbox or Sandbox(limits=Limits(), pool=min(jobs, 4))
    show = sys.stderr.isatty() if progress is None else progress
    outcomes = []   # per row: what the summary counts
    try:
        with _Writer(dest) as writer, ThreadPoolExecutor(jobs) as pool, \
                tqdm(total=len(records), disable=not show, unit="task", file=sys.stderr) as bar:
            for row in pool.map(lambda rec: play(rec, box, agent), records):
                writer.add(row)
                outcomes.append({key: row[key] for key in ("method", "kept", "choice", "reason")})
                bar.update()
            summary = TrajectorySummary(tasks=len(outcomes), kept=sum(r["kept"] for r in outcomes),
                                        seconds=time.monotonic() - started, families=retention(outcomes))
            writer.finish(summary, str(corpus))
    finally:
        if own:
            box.close()
    return summary


def retention(rows: list[dict]) -> dict:
    """Per family: tasks, kept, the share kept, how many chose the canonical
    test and an accepted one, and why the others were left out."""
    out = {}
    for name in sorted({r["method"] for r in rows}):
        mine = [r for r in rows if r["method"] == name]
        kept = sum(r["kept"] for r in mine)
        out[name] = {"tasks": len(mine), "kept": kept, "kept_share": round(kept / len(mine), 4),
                     "chose_gold": sum(r["choice"] == "gold" for r in mine),
                     "chose_accepted": sum(r["choice"] == "accepted" for r in mine),
                     "reasons": dict(Counter(r["reason"] for r in mine if r["reason"]))}
    return out


_TEXT = pa.string()
_CALL = pa.struct([("id", _TEXT), ("type", _TEXT),
                   ("function", pa.struct([("name", _TEXT), ("arguments", pa.struct([("code", _TEXT)]))]))])
#: A chat message of a trajectory: every key any role's message has (absent ones null).
MESSAGE = pa.struct([("role", _TEXT), ("content", _TEXT), ("tool_calls", pa.list_(_CALL)),
                     ("tool_call_id", _TEXT), ("name", _TEXT)])


def _schema(tools: list) -> pa.Schema:
    """The Parquet schema of the kept rows (``tools`` are the same for every row of a mode)."""
    return pa.schema([("task_id", _TEXT), ("split", _TEXT), ("method", _TEXT), ("language", _TEXT), ("mode", _TEXT),
                      ("messages", pa.list_(MESSAGE)), ("tools", pa.array([tools]).type), ("chosen", _TEXT),
                      ("choice", _TEXT), ("kept", pa.bool_()), ("reason", _TEXT), ("reward", pa.float64())])


class _Writer:
    """Streams rows into the folder: the kept ones to Parquet (a row group per
    :attr:`BATCH`) and JSONL, the others to JSONL. Each file is written under a
    temporary name and renamed when all are complete, so none is ever half written."""

    BATCH = 256

    def __init__(self, dest: Path):
        self.dest, self.batch, self.parquet = dest, [], None

    def _partial(self, name: str) -> Path:
        return self.dest / f".{name}.partial"

    def __enter__(self):
        self.dest.mkdir(parents=True, exist_ok=True)
        self.kept = self._partial(FILES[1]).open("w", encoding="utf-8")
        self.left_out = self._partial(FILES[2]).open("w", encoding="utf-8")
        return self

    def add(self, row: dict) -> None:
        (self.kept if row["kept"] else self.left_out).write(json.dumps(row, ensure_ascii=False) + "\n")
        if row["kept"]:
            self.batch.append(row)
            if len(self.batch) == self.BATCH:
                self._flush()

    def _flush(self) -> None:
        if self.parquet is None:
            self.parquet = pq.ParquetWriter(self._partial(FILES[0]), _schema(self.batch[0]["tools"]))
        self.parquet.write_table(pa.Table.from_pylist(self.batch, schema=self.parquet.schema))
        self.batch = []

    def finish(self, summary: TrajectorySummary, corpus: str) -> None:
        if self.batch:
            self._flush()
        if self.parquet is None:   # nothing kept: an empty table of the rows' schema
            self.parquet = pq.ParquetWriter(self._partial(FILES[0]), _schema([]))
        self.parquet.close()
        self._partial(FILES[3]).write_text(json.dumps({"corpus": corpus, "tasks": summary.tasks, "kept": summary.kept,
                                                        "families": summary.families}, indent=1) + "\n")
        self._partial(FILES[4]).write_text(card(summary))
        self.kept.close()
        self.left_out.close()
        for name in FILES:
            self._partial(name).replace(self.dest / name)

    def __exit__(self, *exc) -> None:
        """Close what is open; where the files were not all renamed, remove the partial ones."""
        self.kept.close()
        self.left_out.close()
        if self.parquet is not None and self.parquet.is_open:
            self.parquet.close()
        for name in FILES:
            self._partial(name).unlink(missing_ok=True)


def card(summary: TrajectorySummary) -> str:
    """The folder's README: what the rows are, how to load them, retention per family."""
    lines = ["# Worked trajectories", "",
             "Each row is one task played in the sandbox by a scripted statistician: it reads the file, describes "
             "the variables, runs the checks that separate the candidate tests, names the test they point to and "
             "runs it, then answers. Every tool message is the sandbox's output for that call.", "",
             "`trajectories.parquet` (and `.jsonl`) holds the kept ones, `left_out.jsonl` the others with the "
             "reason. Load them with `datasets.load_dataset(\"parquet\", data_files=\"trajectories.parquet\")`; "
             "`messages` and `tools` are the keys of verl's multi-turn SFT "
             "dataset and of TRL's conversational format.", "",
             f"{summary.kept} of {summary.tasks} kept.", "",
             "| family | tasks | kept | share kept | chose the canonical test | chose an accepted test |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, row in summary.families.items():
        lines.append(f"| {name} | {row['tasks']} | {row['kept']} | {row['kept_share']:.3f} | {row['chose_gold']} "
                     f"| {row['chose_accepted']} |")
    return "\n".join(lines) + "\n"
