"""Exports of a corpus for training and evaluation frameworks (``taskfactory export``).

Each task says how its data reach the agent: ``inline`` (the CSV inside the
prompt, fenced, before the answer format) or ``file`` (the CSV written to
``DEST/files/<task_id>/<data file name>``, the prompt naming it, for a
sandbox). ``--data auto`` inlines datasets of at most ``inline_max``
characters and writes the others as files. Closed-form tasks have no data.

Formats (each also writes ``tasks-<split>.jsonl`` for the splits that hold
tasks, the tasks as the other formats read them):

- ``jsonl``: one task per line: task_id, split, prompt, delivery, data_file,
  answer_kind, ground_truth (what :func:`taskfactory.use.reward.reward` grades
  against), difficulty (:mod:`taskfactory.use.difficulty`) and the task's
  coordinates;
- ``verl``: ``<split>.parquet`` for verl's multi-turn tool agent loop
  (data_source, agent_name, prompt as chat messages, ability, reward_model
  {style: rule, ground_truth: JSON}, extra_info with the difficulty and
  tools_kwargs), the tool
  config naming :class:`taskfactory.use.agent.verl_tool.CodeTool`, ``reward.py``
  and ``prompt_lengths.json``;
- ``lm-eval``: a task folder (``taskfactory_<split>.yaml`` and ``utils.py``)
  for ``lm_eval --include_path DEST``; the data always inline;
- ``inspect``: ``taskfactory_inspect.py``, Inspect AI tasks whose samples
  carry the CSV in ``Sample.files``: a ReAct agent with the sandbox's tools,
  and a single-turn variant; the scorer is the reward;
- ``verifiers``: a package folder ``taskfactory_env/`` (verifiers 0.4) whose
  Taskset holds its tasks, the CSV in each, with the sandbox's tools as a
  Toolset (:mod:`taskfactory.use.agent.verifiers_env`).

Only files this module writes are written; DEST must be a new or empty folder
(:func:`taskfactory.folders.check_new_folder`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..answers import KINDS
from ..errors import InputError
from ..folders import check_new_folder
from ..store.corpus import SPLITS, atomic_write_text, is_task_id, iter_records
from .agent.episode import TOOL_LANGUAGE, system_message, tool_schema
from .agent.sandbox import Limits
from .difficulty import FIELDS as DIFFICULTY_FIELDS, difficulty
from .reward import ground_truth

FORMATS = ("jsonl", "verl", "lm-eval", "inspect", "verifiers")
DELIVERIES = ("inline", "file", "auto")
INLINE_MAX = 16_000
DATA_SOURCE = "taskfactory"
ABILITY = "statistics"
COLUMNS = list(dict.fromkeys(["task_id", "split", "method", "scenario", "n", "effect", "prompt_style", "perturbation",
                              "trap", "prompt", "data_csv", "data_filename", "answer_kind", "gold", "accepted",
                              *DIFFICULTY_FIELDS]))
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.csv$")


def deliver(record: dict, delivery: str, inline_max: int = INLINE_MAX) -> tuple[str, str | None]:
    """(the prompt as the agent receives it, ``inline``/``file``/``none``)."""
    csv = record["data_csv"]
    if csv is None:
        return record["prompt"], "none"
    mode = delivery if delivery != "auto" else ("inline" if len(csv) <= inline_max else "file")
    if mode == "file":
        return record["prompt"], "file"
    block = KINDS[record["answer_kind"]].block
    head, sep, tail = record["prompt"].rpartition(block)
    if not sep:
        raise InputError(f"task {record['task_id']}: the prompt does not end with its answer format")
    fence = "```"
    while fence in csv:
        fence += "`"
    data = f"The contents of `{record['data_filename']}`:\n\n{fence}csv\n{csv.rstrip(chr(10))}\n{fence}\n\n"
    return head + data + sep + tail, "inline"


def _data_file(record: dict) -> str:
    """The relative path the CSV of ``record`` is written to (checked names only)."""
    name, task_id = record["data_filename"], record["task_id"]
    if not is_task_id(task_id) or not isinstance(name, str) or not _SAFE_NAME.match(name):
        raise InputError(f"task {task_id!r}: data file name {name!r} is not a plain CSV file name")
    return f"files/{task_id}/{name}"


def export(corpus, to: str, dest, data: str = "auto", inline_max: int = INLINE_MAX,
           splits=("train", "test")) -> dict:
    """Write ``corpus`` in format ``to`` into ``dest``; returns counts per split and delivery."""
    if to not in FORMATS:
        raise InputError(f"--to ({to!r}) must be one of {', '.join(FORMATS)}")
    if data not in DELIVERIES:
        raise InputError(f"--data ({data!r}) must be one of {', '.join(DELIVERIES)}")
    unknown = [s for s in splits if s not in SPLITS]
    if unknown or not splits:
        raise InputError(f"--split ({','.join(splits)}) must name some of {', '.join(SPLITS)}")
    if to == "lm-eval":
        if data == "file":
            raise InputError("--to lm-eval puts the data in the prompt; --data file needs a sandbox (verl, inspect, "
                             "verifiers or jsonl)")
        data = "inline"
    dest = check_new_folder(dest, "-o", [corpus])
    rows_by_split: dict[str, list[dict]] = {s: [] for s in splits}
    files: dict[str, str] = {}
    csvs: dict[str, str] = {}
    counts: dict = {}
    for rec in iter_records(corpus, columns=COLUMNS):
        if rec["split"] not in rows_by_split:
            continue
        prompt, delivery = deliver(rec, data, inline_max)
        data_file = _data_file(rec) if delivery == "file" else None
        if data_file:
            files[data_file] = rec["data_csv"]
        if rec["data_csv"] is not None:
            csvs[rec["task_id"]] = rec["data_csv"]
        rows_by_split[rec["split"]].append({
            "task_id": rec["task_id"], "split": rec["split"], "prompt": prompt, "delivery": delivery,
            "data_file": data_file, "data_filename": rec["data_filename"], "answer_kind": rec["answer_kind"],
            "ground_truth": ground_truth(rec), "difficulty": difficulty(rec),
            **{k: rec[k] for k in ("method", "scenario", "n", "effect", "prompt_style", "perturbation", "trap")}})
        key = f"{rec['split']}/{delivery}"
        counts[key] = counts.get(key, 0) + 1
    rows_by_split = {split: rows for split, rows in rows_by_split.items() if rows}
    if not rows_by_split:
        raise InputError(f"{corpus}: no tasks in split {', '.join(splits)}")
    dest.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    for split, rows in rows_by_split.items():
        atomic_write_text(dest / f"tasks-{split}.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    if to in ("verl", "verifiers"):
        (_verl if to == "verl" else _verifiers)(dest.resolve(), rows_by_split, csvs)
    elif to != "jsonl":
        {"lm-eval": _lm_eval, "inspect": _inspect}[to](dest.resolve(), rows_by_split)
    return counts


# -- verl -----------------------------------------------------------------------------

#: The agent loop every verl row names: verl's multi-turn loop with tools.
VERL_AGENT = "tool_agent"
#: What a verl tool call may return before verl cuts it (the sandbox cuts output to this too).
VERL_TOOL_RESPONSE = Limits().output_chars
#: Characters per token assumed for the prompt-length estimate (CSV and prose; an estimate, not a tokenizer).
CHARS_PER_TOKEN = 3
_VERL_REWARD = '''"""verl's reward entry point for a taskfactory export (loaded by file path: absolute imports only)."""

from taskfactory.use.reward import compute_score  # noqa: F401  (custom_reward_function.name=compute_score)
'''


def _verl_tool_config(languages=("python", "r")) -> str:
    import yaml

    tools = [{"class_name": "taskfactory.use.agent.verl_tool.CodeTool",
              "config": {"type": "native", "pool": 4}, "tool_schema": tool_schema(lang)} for lang in languages]
    return yaml.safe_dump({"tools": tools}, sort_keys=False, allow_unicode=True)


def _lengths(prompts: list[str]) -> dict:
    sizes = sorted(len(p) for p in prompts)
    return {"prompts": len(sizes), "chars_median": sizes[len(sizes) // 2],
            "chars_p95": sizes[min(len(sizes) - 1, int(0.95 * len(sizes)))], "chars_max": sizes[-1],
            "tokens_max_estimate": -(-sizes[-1] // CHARS_PER_TOKEN)}


def _verl(dest: Path, rows_by_split: dict, csvs: dict) -> None:
    """Rows for verl's tool agent loop: the system message naming the tools, the task's CSV for the
    tools (in every row that has data, whatever its delivery), the tool config, the reward entry point,
    and the prompts' lengths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    create = pa.struct([("create_kwargs", pa.struct([("data_filename", pa.string()), ("data_csv", pa.string())]))])
    schema = pa.schema([
        ("data_source", pa.string()),
        ("agent_name", pa.string()),
        ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", pa.struct([("task_id", pa.string()), ("split", pa.string()), ("index", pa.int64()),
                                  ("data_file", pa.string()), ("difficulty", pa.float64()),
                                  ("tools_kwargs", pa.struct([(name, create) for name in TOOL_LANGUAGE]))])),
    ])
    lengths = {}
    for split, rows in rows_by_split.items():
        records = []
        for i, r in enumerate(rows):
            system = system_message(r["data_filename"] if r["task_id"] in csvs else None, ("python", "r"), "tools",
                                    VERL_TOOL_RESPONSE)
            csv = csvs.get(r["task_id"])
            data = {"data_filename": r["data_filename"] if csv is not None else None, "data_csv": csv}
            records.append({
                "data_source": DATA_SOURCE, "agent_name": VERL_AGENT,
                "prompt": [{"role": "system", "content": system}, {"role": "user", "content": r["prompt"]}],
                "ability": ABILITY,
                "reward_model": {"style": "rule", "ground_truth": json.dumps(r["ground_truth"])},
                "extra_info": {"task_id": r["task_id"], "split": split, "index": i, "data_file": r["data_file"],
                               "difficulty": r["difficulty"],
                               "tools_kwargs": {name: {"create_kwargs": data} for name in TOOL_LANGUAGE}}})
        pq.write_table(pa.Table.from_pylist(records, schema=schema), dest / f"{split}.parquet")
        lengths[split] = _lengths([rec["prompt"][0]["content"] + rec["prompt"][1]["content"] for rec in records])
    atomic_write_text(dest / "tool_config.yaml", _verl_tool_config())
    atomic_write_text(dest / "reward.py", _VERL_REWARD)
    atomic_write_text(dest / "prompt_lengths.json", json.dumps(lengths, indent=1) + "\n")


# -- lm-evaluation-harness ------------------------------------------------------------

_LM_EVAL_UTILS = '''"""Scoring for the taskfactory lm-evaluation-harness tasks (written by taskfactory export)."""

import json

from taskfactory.use.reward import reward


def process_results(doc, results):
    result = reward(json.loads(doc["ground_truth"]), results[0])
    return {"reward": result.reward, "raw": float(result.raw), "strict": float(result.strict),
            "valid": float(result.valid)}
'''


def _lm_eval(dest: Path, rows_by_split: dict) -> None:
    import yaml

    for split, rows in rows_by_split.items():
        data = dest / f"lm-eval-{split}.jsonl"
        atomic_write_text(data, "".join(json.dumps({"task_id": r["task_id"], "prompt": r["prompt"],
                                                    "ground_truth": json.dumps(r["ground_truth"])}) + "\n"
                                        for r in rows))
        config = {
            "task": f"taskfactory_{split}",
            "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": str(data)}},
            "test_split": "test",
            "output_type": "generate_until",
            "doc_to_text": "{{prompt}}",
            "doc_to_target": "",
            "generation_kwargs": {"until": [], "max_gen_toks": 4096, "do_sample": False},
            "process_results": "!function utils.process_results",
            "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True}
                            for m in ("reward", "raw", "strict", "valid")],
            "metadata": {"version": 1.0},
        }
        text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
        text = text.replace("'!function utils.process_results'", "!function utils.process_results")
        atomic_write_text(dest / f"taskfactory_{split}.yaml", text)
    atomic_write_text(dest / "utils.py", _LM_EVAL_UTILS)


# -- Inspect AI -----------------------------------------------------------------------

_INSPECT = '''"""Inspect AI tasks of a taskfactory export.

    inspect eval taskfactory_inspect.py@taskfactory -T split=test --model MODEL
        a ReAct agent with run_python and run_r, sandboxed, on each task's CSV;
    inspect eval taskfactory_inspect.py@taskfactory_single_turn -T split=test --model MODEL
        one reply, no tools (the CSV inline where the export put it there).
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import generate

from taskfactory.use.agent.inspect_agent import code_agent, samples, taskfactory_reward

HERE = Path(__file__).resolve().parent


@task
def taskfactory(split="test", max_turns=20):
    return Task(dataset=MemoryDataset(samples(HERE, split)), solver=code_agent(max_turns), scorer=taskfactory_reward())


@task
def taskfactory_single_turn(split="test"):
    return Task(dataset=MemoryDataset(samples(HERE, split)), solver=generate(), scorer=taskfactory_reward())
'''


def _inspect(dest: Path, rows_by_split: dict) -> None:
    atomic_write_text(dest / "taskfactory_inspect.py", _INSPECT)


# -- verifiers ------------------------------------------------------------------------

_VERIFIERS = '''"""A verifiers environment of a taskfactory export (verifiers 0.4, ``verifiers.v1``).

    pip install -e taskfactory_env
    vf-eval taskfactory-env --env.agent.harness.id null --env.agent.runtime.type subprocess \\
        --env.taskset.split test -m MODEL --client.base-url URL -n 20 -r 1
"""

from pathlib import Path

from taskfactory.use.agent.verifiers_env import ExportTaskset


class TaskfactoryTaskset(ExportTaskset):
    FOLDER = Path(__file__).resolve().parent


__all__ = ["TaskfactoryTaskset"]
'''

_VERIFIERS_PYPROJECT = '''[project]
name = "taskfactory-env"
version = "0.1.0"
description = "A verifiers environment of a taskfactory export"
requires-python = ">=3.11"
# verifiers is not named: installing this package never changes the verifiers a user has (0.4 or newer).
dependencies = ["taskfactory"]

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["taskfactory_env"]
'''


def _verifiers(dest: Path, rows_by_split: dict, csvs: dict) -> None:
    """A package whose Taskset reads its own copy of the tasks (the CSV in each task, no paths)."""
    package = dest / "taskfactory_env"
    (package / "taskfactory_env").mkdir(parents=True)
    atomic_write_text(package / "taskfactory_env" / "__init__.py", _VERIFIERS)
    atomic_write_text(package / "pyproject.toml", _VERIFIERS_PYPROJECT)
    for split, rows in rows_by_split.items():
        lines = [json.dumps({"task_id": r["task_id"], "prompt": r["prompt"], "ground_truth": r["ground_truth"],
                             "data_filename": r["data_filename"] if r["task_id"] in csvs else None,
                             "data_csv": csvs.get(r["task_id"])}) + "\n" for r in rows]
        atomic_write_text(package / "taskfactory_env" / f"tasks-{split}.jsonl", "".join(lines))
