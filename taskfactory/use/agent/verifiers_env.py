"""verifiers (0.4, ``verifiers.v1``) pieces of a taskfactory export: a Taskset of the
export's tasks, graded on ``trace.last_reply``, with the sandbox's tools as a Toolset.

verifiers runs each rollout's toolset as its own tool server (``python -m
taskfactory.use.agent.verifiers_env``); the server opens a workspace holding the
rollout's CSV in ``setup_task`` and closes it when the rollout ends.
The exported package ``taskfactory_env`` subclasses :class:`ExportTaskset`
with the folder its tasks are in, and lists that subclass in ``__all__``, as
``vf-eval`` expects.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import verifiers.v1 as vf

from ..reward import reward
from .episode import system_message
from .sandbox import Limits, shared_sandbox


class TaskfactoryData(vf.TaskData):
    """One task: the prompt (system and user messages), what grading needs, the CSV."""

    task_id: str
    ground_truth: dict
    data_filename: str | None = None
    data_csv: str | None = None


class CodeToolset(vf.Toolset[vf.ToolsetConfig]):
    """``run_python`` and ``run_r`` in this rollout's workspace."""

    TOOL_PREFIX = None   # the tools keep their own names

    async def setup(self) -> None:
        # The tool server's web server re-raises SIGTERM after its shutdown, which would end the
        # process before the workspace is closed; as SystemExit the cleanup runs.
        def stop(signum, frame):
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, stop)

    async def setup_task(self, task) -> None:
        files = {task.data_filename: task.data_csv.encode()} if task.data_filename and task.data_csv else {}
        self.workspace = shared_sandbox(1).workspace(files)
        self._exit_stack.callback(self.workspace.close)

    @vf.tool
    def run_python(self, code: str) -> str:
        """Run Python 3 code (numpy, pandas, scipy, statsmodels) in this task's session and return what it
        printed, and the value of a last bare expression. Variables persist between calls."""
        return self.workspace.run("python", code).output or "[no output]"

    @vf.tool
    def run_r(self, code: str) -> str:
        """Run R code in this task's session and return what it printed. Variables persist between calls."""
        return self.workspace.run("r", code).output or "[no output]"


class TaskfactoryTaskConfig(vf.TaskConfig):
    tools: vf.ToolsetConfig = vf.ToolsetConfig()


class TaskfactoryTask(vf.Task[TaskfactoryData, vf.State, TaskfactoryTaskConfig]):
    @classmethod
    def toolsets(cls, config: TaskfactoryTaskConfig) -> list[vf.Toolset]:
        return [CodeToolset(config.tools)]

    @property
    def key(self) -> str:
        return self.data.task_id

    @vf.reward(weight=1.0)
    async def reward(self, trace: vf.Trace) -> float:
        """taskfactory's reward of the final assistant message."""
        return reward(self.data.ground_truth, trace.last_reply or "").reward

    @vf.metric
    async def grading(self, trace: vf.Trace) -> dict:
        result = reward(self.data.ground_truth, trace.last_reply or "")
        return {"raw": float(result.raw), "strict": float(result.strict), "valid": float(result.valid)}


class TaskfactoryConfig(vf.TasksetConfig):
    split: str = "test"
    """The export's split: train or test."""
    task: TaskfactoryTaskConfig = TaskfactoryTaskConfig()


def read_tasks(folder: Path, split: str) -> list[TaskfactoryData]:
    """The tasks of ``tasks-<split>.jsonl`` in ``folder`` (the exported package's data)."""
    path = Path(folder) / f"tasks-{split}.jsonl"
    if not path.is_file():
        held = sorted(p.name[len("tasks-"):-len(".jsonl")] for p in Path(folder).glob("tasks-*.jsonl"))
        raise ValueError(f"this export has no {split!r} split; it has {', '.join(held) or 'none'}")
    tasks = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            system = system_message(row["data_filename"], ("python", "r"), "tools", Limits().output_chars)
            tasks.append(TaskfactoryData(
                id=row["task_id"], task_id=row["task_id"], ground_truth=row["ground_truth"],
                prompt=[{"role": "system", "content": system}, {"role": "user", "content": row["prompt"]}],
                data_filename=row["data_filename"], data_csv=row["data_csv"]))
    return tasks


class ExportTaskset(vf.Taskset[TaskfactoryTask, TaskfactoryConfig]):
    """The tasks of an export; a subclass sets ``FOLDER``."""

    FOLDER: Path

    def load(self) -> list[TaskfactoryTask]:
        return [TaskfactoryTask(data, self.config.task) for data in read_tasks(self.FOLDER, self.config.split)]


if __name__ == "__main__":
    CodeToolset.run()
