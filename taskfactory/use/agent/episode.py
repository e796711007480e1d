"""One episode of an agent on one task: chat messages in, tool results out, a reward at the end.

:meth:`Environment.reset` opens a workspace holding the task's CSV and
returns the first observation: OpenAI chat messages (a system message saying
what the tools are and where the data are, then the task's prompt) and the
tool schemas (:data:`TOOLS`: ``run_python`` and ``run_r``, each taking one
string ``code``). :meth:`Environment.step` takes the assistant's message,
runs its tool calls in the episode's sessions and returns ``(observation,
reward, done, info)``. The episode ends on an assistant message without a
tool call, at the turn limit or at the time limit; the reward is
:func:`taskfactory.use.reward.reward` of the final assistant message's text
alone, never of anything a tool printed.

With ``mode="fences"`` (for endpoints without tool calling) the code is
```python or ```r blocks in the assistant's text, and their outputs come
back as one user message.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..reward import RewardResult, ground_truth, reward
from .sandbox import Sandbox, Workspace

MODES = ("tools", "fences")
TOOL_LANGUAGE = {"run_python": "python", "run_r": "r"}
_DESCRIPTIONS = {
    "python": "Run Python 3 code (numpy, pandas, scipy, statsmodels) in this task's session and return what it "
              "printed, and the value of a last bare expression. Variables persist between calls.",
    "r": "Run R code (with the recommended packages, survival, MASS, sandwich, lmtest and the others the tasks use) "
         "in this task's session and return what it printed. Variables persist between calls.",
}
_OPENER = re.compile(r"```[ \t]*(python|py|r|R)[ \t]*")
_CLOSER = re.compile(r"```[ \t]*")


def code_blocks(text: str) -> list[tuple[str, str]]:
    """The ```python / ```r blocks of ``text``, as (language, code), in one pass
    over its lines (a block not closed is not run)."""
    blocks, language, lines = [], None, []
    for line in text.split("\n"):
        if language is None:
            opener = _OPENER.fullmatch(line)
            if opener:
                language, lines = ("python" if opener.group(1).lower() in ("python", "py") else "r"), []
        elif _CLOSER.fullmatch(line):
            blocks.append((language, "\n".join(lines) + "\n"))
            language = None
        else:
            lines.append(line)
    return blocks


def tool_schema(language: str) -> dict:
    """The OpenAI function schema of the tool that runs ``language``."""
    name = next(n for n, lang in TOOL_LANGUAGE.items() if lang == language)
    return {"type": "function", "function": {
        "name": name, "description": _DESCRIPTIONS[language],
        "parameters": {"type": "object", "properties": {"code": {"type": "string", "description": "the code to run"}},
                       "required": ["code"], "additionalProperties": False}}}


TOOLS = [tool_schema(lang) for lang in ("python", "r")]


@dataclass(frozen=True)
class AgentTask:
    """What an episode needs of a task: its prompt, its file and what grading needs."""

    task_id: str
    prompt: str
    answer_kind: str
    ground_truth: dict
    data_filename: str | None = None
    data_csv: str | None = None

    @classmethod
    def from_record(cls, record: Mapping) -> AgentTask:
        """From a corpus record (a row of :func:`taskfactory.store.corpus.iter_records`)."""
        return cls(record["task_id"], record["prompt"], record["answer_kind"], ground_truth(record),
                   record.get("data_filename") if record.get("data_csv") is not None else None,
                   record.get("data_csv"))

    def files(self) -> dict[str, bytes]:
        return {self.data_filename: self.data_csv.encode()} if self.data_filename else {}


def system_message(data_filename: str | None, languages: tuple[str, ...], mode: str, output_chars: int) -> str:
    """What the agent is told first: its tools, where the data are, how to answer."""
    names = {"python": "Python", "r": "R"}
    if mode == "tools":
        how = " and ".join(f"`{n}`" for n, lang in TOOL_LANGUAGE.items() if lang in languages)
        tools = f"You can run code with the tools {how}; each takes one argument, `code`."
    else:
        fences = " or ".join(f"```{lang}" for lang in languages)
        tools = (f"You can run code: put it in {fences} blocks in your message; the next message gives what each "
                 "block printed.")
    data = (f" The data file `{data_filename}` is in the working folder." if data_filename
            else " This task has no data file.")
    return (f"You are a statistician with {' and '.join(names[lang] for lang in languages)} sessions. {tools}"
            f"{data} Variables persist between calls; each call's output is cut to {output_chars:,} characters. "
            "Check the data and the assumptions, choose the test from what they show, run it, and give your final "
            "answer in a message without code, in the format the task asks for.")


@dataclass
class EpisodeInfo:
    """What happened in an episode so far."""

    turns: int = 0
    calls: int = 0
    code_seconds: float = 0.0
    ended: str | None = None            # answered, turn limit, time limit
    result: RewardResult | None = None
    tool_calls: list = field(default_factory=list)


class Environment:
    """Episodes on a :class:`~taskfactory.use.agent.Sandbox`, one at a time per instance."""

    def __init__(self, sandbox: Sandbox, max_turns: int = 20, max_seconds: float = 900.0, mode: str = "tools"):
        if mode not in MODES:
            raise ValueError(f"mode ({mode!r}) must be one of {', '.join(MODES)}")
        self.sandbox, self.max_turns, self.max_seconds, self.mode = sandbox, max_turns, max_seconds, mode
        self.tools = [tool_schema(lang) for lang in sandbox.languages]
        self.task: AgentTask | None = None
        self.workspace: Workspace | None = None
        self.messages: list[dict] = []
        self.info = EpisodeInfo()
        self._started = 0.0

    def reset(self, task: AgentTask | Mapping) -> dict:
        """Start an episode on ``task`` (an :class:`AgentTask` or a corpus record)."""
        self.close()
        self.task = task if isinstance(task, AgentTask) else AgentTask.from_record(task)
        self.workspace = self.sandbox.workspace(self.task.files())
        system = system_message(self.task.data_filename, self.sandbox.languages, self.mode, self.sandbox.limits.output_chars)
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": self.task.prompt}]
        self.info = EpisodeInfo()
        self._started = time.monotonic()
        return self.observation()

    def observation(self) -> dict:
        return {"messages": list(self.messages), "tools": self.tools if self.mode == "tools" else []}

    def step(self, message: Mapping) -> tuple[dict, float, bool, EpisodeInfo]:
        """Take the assistant's ``message`` (an OpenAI chat message); run its code."""
        if self.task is None or self.info.ended:
            raise RuntimeError("step() needs an episode: call reset(task) first")
        message = _assistant(message)
        self.messages.append(message)
        self.info.turns += 1
        results = self._run_tools(message) if self.mode == "tools" else self._run_fences(message["content"] or "")
        if results is None:
            return self._end("answered")
        self.messages.extend(results)
        if self.info.turns >= self.max_turns:
            return self._end("turn limit")
        if time.monotonic() - self._started >= self.max_seconds:
            return self._end("time limit")
        return self.observation(), 0.0, False, self.info

    def _end(self, why: str) -> tuple[dict, float, bool, EpisodeInfo]:
        final = next(m for m in reversed(self.messages) if m["role"] == "assistant")
        self.info.ended = why
        self.info.result = reward(self.task.ground_truth, final.get("content") or "")
        self.close()
        return self.observation(), self.info.result.reward, True, self.info

    def _run(self, language: str, code: str) -> str:
        result = self.workspace.run(language, code)
        self.info.calls += 1
        self.info.code_seconds += result.seconds
        return result.output if result.output else "[no output]"

    def _run_tools(self, message: dict) -> list[dict] | None:
        calls = message.get("tool_calls") or []
        if not calls:
            return None
        replies = []
        for call in calls:
            name, code, problem = _read_call(call)
            self.info.tool_calls.append({"name": name, "code": code})
            text = problem or self._run(TOOL_LANGUAGE[name], code)
            replies.append({"role": "tool", "tool_call_id": str(call.get("id") or ""), "name": name, "content": text})
        return replies

    def _run_fences(self, text: str) -> list[dict] | None:
        blocks = code_blocks(text)
        if not blocks:
            return None
        parts = []
        for number, (language, code) in enumerate(blocks, 1):
            self.info.tool_calls.append({"name": f"run_{language}", "code": code})
            parts.append(f"Output of block {number} ({language}):\n```\n{self._run(language, code)}\n```")
        return [{"role": "user", "content": "\n\n".join(parts)}]

    def close(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None


def _assistant(message) -> dict:
    """The assistant message as a plain dict of the fields the chat protocol has
    (a reply that is not a mapping is a message without content)."""
    if not isinstance(message, Mapping):
        message = {}
    out = {"role": "assistant", "content": message.get("content") if isinstance(message.get("content"), str) else None}
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [dict(c) if isinstance(c, Mapping) else {} for c in calls]
    return out


def _read_call(call: Mapping) -> tuple[str, str, str | None]:
    """(tool name, code, a problem to report instead of running)."""
    function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
    name = function.get("name")
    if name not in TOOL_LANGUAGE:
        return "run_python", "", (f"[no tool {str(name)[:80]!r}; the tools are "
                                  f"{', '.join(TOOL_LANGUAGE)}]")
    arguments = function.get("arguments")
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except (ValueError, RecursionError):   # not JSON, or nested past the parser's depth
        parsed = None
    code = parsed.get("code") if isinstance(parsed, Mapping) else None
    if not isinstance(code, str):
        return name, "", f'[{name} takes a JSON object with one string, "code"; nothing ran]'
    return name, code, None
