"""``taskfactory agent-eval``: every task of a corpus through the environment, against a chat endpoint.

An agent is asked for one assistant message at a time: :class:`ChatAgent`
asks any OpenAI-compatible chat-completions endpoint; :class:`ReferenceAgent`
plays each task's own reference solution (R where the sandbox has R, else
Python) through the same tools, then answers from what it printed, which
proves the sandbox, the data's delivery and the grading end to end.

The runs file has one JSON line per (task, run): task_id, run, completion
(the final assistant message), the whole message list, the tool calls, turns,
why the episode ended, seconds, tokens and the reward. ``score`` and
``report --predictions`` read it as they read any predictions file. A run
that is already in the file is not run again (resume); a run whose endpoint
failed is not written, and is counted, so that the next run of the command
tries it again.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tqdm import tqdm

from ...errors import InputError, TaskFactoryError
from ...registry import get_family
from ...store.corpus import SPLITS, is_task_id, iter_records
from .episode import MODES, AgentTask, Environment
from .sandbox import Limits, Sandbox

COLUMNS = ["task_id", "split", "method", "prompt", "answer_kind", "gold", "accepted", "data_csv", "data_filename",
           "reference_r", "reference_py", "alpha"]


class EndpointError(TaskFactoryError):
    """The chat endpoint did not give a usable reply."""


@dataclass
class ChatAgent:
    """An OpenAI-compatible chat-completions endpoint (``POST {base_url}/chat/completions``)."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 300.0
    retries: int = 3
    backoff: float = 2.0     # seconds before the first retry, doubling
    _client: httpx.Client = field(init=False, repr=False)

    def __post_init__(self):
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._client = httpx.Client(base_url=self.base_url.rstrip("/"), headers=headers, timeout=self.timeout)

    def episode(self, record: dict):
        return self.reply

    def reply(self, messages: list[dict], tools: list[dict]) -> tuple[dict, dict]:
        """(the assistant message, the usage) for ``messages``."""
        body = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        body.update({k: v for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens))
                     if v is not None})
        for attempt in range(self.retries + 1):
            try:
                response = self._client.post("/chat/completions", json=body)
                if response.status_code < 500 and response.status_code != 429:
                    break
                why = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                why = f"{type(exc).__name__}: {exc}"
            if attempt == self.retries:
                raise EndpointError(f"{self.base_url}: {why} after {self.retries + 1} tries")
            time.sleep(min(30.0, self.backoff * 2.0 ** attempt))
        if response.status_code != 200:
            raise EndpointError(f"{self.base_url}: HTTP {response.status_code}: {response.text[:200]}")
        try:
            data = response.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise EndpointError(f"{self.base_url}: the reply is not a chat completion") from None
        if not isinstance(message, dict):
            raise EndpointError(f"{self.base_url}: the reply's message is not an object")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return message, usage

    def close(self) -> None:
        self._client.close()


#: The lines a final answer consists of (as the reference solutions print them).
ANSWER_LINE = re.compile(r"^(P_VALUE|LOWER|UPPER|ESTIMATE|ANSWER|COUNT): *(\S+) *$", re.M)


def answer_text(printed: str, label: str, alpha: float) -> str:
    """The final answer from a reference solution's printed lines: METHOD,
    P_VALUE and DECISION for a test, else the answer lines as printed."""
    lines = dict(ANSWER_LINE.findall(printed))
    try:
        p_value = float(lines["P_VALUE"]) if "P_VALUE" in lines else None
    except ValueError:   # NA: the answer stays without a decision, and is graded so
        p_value = None
    if p_value is None:
        return "\n".join(f"{key}: {value}" for key, value in lines.items())
    decision = "reject" if p_value <= alpha else "fail to reject"
    return "\n".join([f"METHOD: {label}", f"P_VALUE: {lines['P_VALUE']}", f"DECISION: {decision}"])


class ReferenceAgent:
    """Plays each task's reference solution, then answers from its printed lines."""

    def __init__(self, languages: tuple[str, ...]):
        self.language = "r" if "r" in languages else "python"

    def episode(self, record: dict):
        code = record["reference_r"] if self.language == "r" else record["reference_py"]
        tool = "run_r" if self.language == "r" else "run_python"
        label = get_family(record["method"]).test_name.label
        alpha = record.get("alpha") or 0.05

        def reply(messages: list[dict], tools: list[dict]) -> tuple[dict, dict]:
            if messages[-1]["role"] != "tool":
                call = {"id": "call_0", "type": "function",
                        "function": {"name": tool, "arguments": json.dumps({"code": code})}}
                return {"role": "assistant", "content": None, "tool_calls": [call]}, {}
            return {"role": "assistant", "content": answer_text(messages[-1]["content"], label, alpha)}, {}
        return reply

    def close(self) -> None:
        pass


def select_tasks(corpus, split: str | None = None, method: str | None = None, limit: int | None = None,
                 columns=COLUMNS) -> list[dict]:
    """The corpus's tasks to run, in corpus order (the record ``columns``)."""
    if split is not None and split not in SPLITS:
        raise InputError(f"--split ({split!r}) must be one of {', '.join(SPLITS)}")
    if method is not None:
        get_family(method)
    chosen = []
    for record in iter_records(corpus, columns=list(columns), method=method):
        if split is None or record["split"] == split:
            chosen.append(record)
            if limit is not None and len(chosen) >= limit:
                break
    if not chosen:
        raise InputError(f"{corpus}: no tasks" + (f" in split {split}" if split else "")
                         + (f" of method {method}" if method else ""))
    return chosen


def read_done(path: Path) -> set[tuple[str, int]]:
    """The (task_id, run) pairs a runs file already holds. A last line cut off
    mid-write is dropped from the file; any other line that is not a run is an error."""
    if path.is_symlink():
        raise InputError(f"-o ({path}) is a symbolic link; give a regular file")
    if not path.exists():
        return set()
    if not path.is_file():
        raise InputError(f"-o ({path}) is not a regular file")
    data = path.read_bytes()
    complete, _, partial = data.rpartition(b"\n")
    done = set()
    for number, line in enumerate(complete.split(b"\n") if complete else [], 1):
        try:
            row = json.loads(line)
            key = (row["task_id"], row["run"])
        except (ValueError, KeyError, TypeError):
            row, key = None, None
        if not (key and is_task_id(key[0]) and isinstance(key[1], int) and "messages" in row):
            raise InputError(f"{path}: line {number} is not a run of agent-eval; give a new file or a runs file "
                             "agent-eval wrote")
        done.add(key)
    if partial:
        with path.open("r+b") as fh:
            fh.truncate(len(complete) + 1 if complete else 0)
    return done


@dataclass
class EvalSummary:
    ran: int = 0
    skipped: int = 0
    failed: dict = field(default_factory=dict)   # reason: count
    reward: float = 0.0
    seconds: float = 0.0

    def line(self) -> str:
        mean = self.reward / self.ran if self.ran else 0.0
        text = (f"ran {self.ran} episode(s) in {self.seconds:.1f} s (mean reward {mean:.3f}); "
                f"{self.skipped} already in the runs file")
        if self.failed:
            text += "; failed: " + "; ".join(f"{n} x {why}" for why, n in sorted(self.failed.items()))
        return text


def run_episode(env: Environment, reply, record: dict) -> dict:
    """One episode; the runs-file row (without its run number)."""
    started = time.monotonic()
    observation = env.reset(AgentTask.from_record(record))
    tokens = {"prompt": 0, "completion": 0}
    done = False
    while not done:
        message, usage = reply(observation["messages"], observation["tools"])
        for key in tokens:
            value = usage.get(f"{key}_tokens")
            tokens[key] += value if isinstance(value, int) else 0
        observation, reward, done, info = env.step(message)
    final = next(m for m in reversed(observation["messages"]) if m["role"] == "assistant")
    return {"task_id": record["task_id"], "completion": final.get("content") or "",
            "messages": observation["messages"], "tool_calls": info.tool_calls, "turns": info.turns,
            "ended": info.ended, "seconds": round(time.monotonic() - started, 3),
            "code_seconds": round(info.code_seconds, 3), "tokens": tokens, "reward": reward}


def agent_eval(corpus, out, agent, runs: int = 1, concurrency: int = 1, max_turns: int = 20,
               split: str | None = None, method: str | None = None, limit: int | None = None,
               limits: Limits = Limits(), mode: str = "tools", local: bool = False,
               progress: bool | None = None, sandbox: Sandbox | None = None) -> EvalSummary:
    """Run ``agent`` (a :class:`ChatAgent`, a :class:`ReferenceAgent`, or the
    name ``"reference"``) on the selected tasks, ``runs`` times each, writing
    the runs file ``out``."""
    if runs < 1 or concurrency < 1 or max_turns < 1:
        raise InputError("--runs, --concurrency and --max-turns must be at least 1")
    if mode not in MODES:
        raise InputError(f"--mode ({mode!r}) must be one of {', '.join(MODES)}")
    out = Path(out)
    if not out.parent.is_dir():
        raise InputError(f"-o ({out}): folder {out.parent} does not exist")
    records = select_tasks(corpus, split, method, limit)
    done = read_done(out)
    todo = [(rec, run) for rec in records for run in range(runs) if (rec["task_id"], run) not in done]
    summary = EvalSummary(skipped=len(records) * runs - len(todo))
    if not todo:
        return summary
    own = sandbox is None
    box = sandbox or Sandbox(limits=limits, pool=min(concurrency, 4), local=local)
    if agent == "reference":
        agent = ReferenceAgent(box.languages)
    lock = threading.Lock()
    started = time.monotonic()
    show = sys.stderr.isatty() if progress is None else progress

    def one(rec: dict, run: int) -> None:
        env = Environment(box, max_turns=max_turns, max_seconds=limits.episode_seconds, mode=mode)
        try:
            row = run_episode(env, agent.episode(rec), rec)
        finally:
            env.close()
        line = json.dumps({"task_id": row["task_id"], "run": run, **row}, ensure_ascii=False) + "\n"
        with lock, out.open("a", encoding="utf-8") as fh:
            fh.write(line)
            summary.ran += 1
            summary.reward += row["reward"]

    try:
        with ThreadPoolExecutor(concurrency) as pool, tqdm(total=len(todo), disable=not show, unit="episode",
                                                          file=sys.stderr) as bar:
            futures = [pool.submit(one, rec, run) for rec, run in todo]
            for future in as_completed(futures):
                bar.update()
                if (exc := future.exception()) is not None:
                    if not isinstance(exc, TaskFactoryError):
                        raise exc
                    why = str(exc)
                    summary.failed[why] = summary.failed.get(why, 0) + 1
    finally:
        if own:
            box.close()
        agent.close()
    summary.seconds = time.monotonic() - started
    return summary
