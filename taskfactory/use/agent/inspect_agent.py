"""Inspect AI pieces of a taskfactory export: samples, the reward scorer and a
ReAct agent whose ``run_python`` / ``run_r`` tools run in this package's sandbox.

The agent is Inspect's ``react()`` without a submit tool: it ends on an
assistant message without a tool call, and that message is what the scorer
grades, as in :class:`taskfactory.use.agent.Environment`. Each sample gets its
own workspace (the task's CSV in the working folder), closed when the sample
ends; the sandbox's pool is shared by the samples of one process.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef
from inspect_ai.util import concurrency, message_limit

from ..reward import reward
from .episode import TOOL_LANGUAGE, system_message, tool_schema
from .sandbox import shared_sandbox

#: Samples whose code runs at once in one process (each holds a session per language).
SESSIONS = 4


def samples(export: Path, split: str) -> list[Sample]:
    """The samples of ``tasks-<split>.jsonl`` in an export folder."""
    out = []
    with open(Path(export) / f"tasks-{split}.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            path = str(Path(export) / row["data_file"]) if row["data_file"] else None
            out.append(Sample(
                id=row["task_id"], input=row["prompt"], target=json.dumps(row["ground_truth"]),
                files={row["data_filename"]: path} if path else None,
                metadata={"data_filename": row["data_filename"] if path else None, "data_path": path,
                          **{k: row[k] for k in ("method", "effect", "n", "prompt_style", "perturbation", "trap",
                                                 "answer_kind")}}))
    return out


@scorer(metrics={"reward": [mean()], "raw": [mean()], "strict": [mean()]})
def taskfactory_reward():
    """The reward of the final assistant message (``state.output.completion``)."""
    async def score(state: TaskState, target: Target) -> Score:
        result = reward(json.loads(target.text), state.output.completion)
        return Score(value={"reward": result.reward, "raw": float(result.raw), "strict": float(result.strict)},
                     explanation=result.reason, metadata=result.as_dict())
    return score


def _code_tool(space, language: str) -> ToolDef:
    schema = tool_schema(language)["function"]

    async def execute(code: str) -> str:
        async with concurrency("taskfactory-sandbox", SESSIONS * 2):
            result = await _in_thread(space.run, language, code)
        return result.output or "[no output]"

    return ToolDef(execute, name=schema["name"], description=schema["description"],
                   parameters={"code": "the code to run"}, max_output=0)


async def _in_thread(function, *args):
    import anyio

    return await anyio.to_thread.run_sync(function, *args)


@solver
def code_agent(max_turns: int = 20) -> Solver:
    """``react()`` with the sandbox's tools; one workspace per sample."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box = shared_sandbox(SESSIONS)
        meta = state.metadata
        files = {meta["data_filename"]: Path(meta["data_path"]).read_bytes()} if meta.get("data_path") else {}
        space = await _in_thread(box.workspace, files)
        try:
            tools = [_code_tool(space, TOOL_LANGUAGE[name]) for name in TOOL_LANGUAGE
                     if TOOL_LANGUAGE[name] in box.languages]
            agent = react(prompt=system_message(meta.get("data_filename"), box.languages, "tools",
                                                box.limits.output_chars), tools=tools, submit=False)
            return await as_solver(agent, limits=[message_limit(2 * max_turns + 2)])(state, generate)
        finally:
            await _in_thread(space.close)
    return solve
