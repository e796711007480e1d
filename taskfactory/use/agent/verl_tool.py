"""verl's multi-turn tool agent loop on the sandbox: ``run_python`` and ``run_r`` as a ``BaseTool``.

verl creates and releases a tool instance around every call
(``create(create_kwargs=...)``, ``execute(instance_id, parameters,
agent_data=...)``, ``release(instance_id)``), so the code session cannot live
on the instance. It lives on the trajectory: the first call of a trajectory
opens a workspace holding the task's CSV (given in the row's
``tools_kwargs.<tool>.create_kwargs``), keeps it in ``agent_data.extra_fields``,
and closes it when verl lets the trajectory's ``agent_data`` go, so every
call of one trajectory, in either language, shares its sessions.

The tool config YAML that ``taskfactory export --to verl`` writes names this
class; its ``config`` may set ``pool`` (ready sessions per language) and
``call_seconds``.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse

from .episode import TOOL_LANGUAGE
from .sandbox import Workspace, shared_sandbox

WORKSPACE_FIELD = "taskfactory_workspace"
_OPENING = threading.Lock()


def files_of(create_kwargs: dict | None) -> dict[str, bytes]:
    """The task's file from a row's create_kwargs ({data_filename, data_csv})."""
    kwargs = create_kwargs or {}
    name, csv = kwargs.get("data_filename"), kwargs.get("data_csv")
    return {name: csv.encode()} if isinstance(name, str) and isinstance(csv, str) else {}


class CodeTool(BaseTool):
    """``run_python`` or ``run_r``, by the name in its schema."""

    def __init__(self, config: dict, tool_schema):
        super().__init__(config, tool_schema)
        if self.name not in TOOL_LANGUAGE:
            raise ValueError(f"CodeTool runs {', '.join(TOOL_LANGUAGE)}, not {self.name!r}")
        self.language = TOOL_LANGUAGE[self.name]
        self.pool = int((config or {}).get("pool", 4))
        self._calls: dict[str, dict] = {}          # instance id -> create_kwargs, between create and release
        self._own: dict[str, Workspace] = {}       # instance id -> workspace, when no agent_data comes

    async def create(self, instance_id: str | None = None, create_kwargs: dict | None = None, **kwargs):
        instance_id = instance_id or uuid4().hex
        self._calls[instance_id] = create_kwargs or {}
        return instance_id, ToolResponse()

    def _workspace(self, instance_id: str, agent_data) -> Workspace:
        files = files_of(self._calls.get(instance_id))
        if agent_data is None:
            space = self._own[instance_id] = shared_sandbox(self.pool).workspace(files)
            return space
        with _OPENING:   # both tools of a trajectory may open it at once
            space = agent_data.extra_fields.get(WORKSPACE_FIELD)
            if space is None:
                space = agent_data.extra_fields[WORKSPACE_FIELD] = shared_sandbox(self.pool).workspace(files)
                weakref.finalize(agent_data, space.close)
        return space

    async def execute(self, instance_id: str, parameters: dict, agent_data=None, **kwargs):
        code = parameters.get("code") if isinstance(parameters, dict) else None
        if not isinstance(code, str):
            return ToolResponse(text=f'[{self.name} takes a JSON object with one string, "code"; nothing ran]'), 0.0, {}
        space = await asyncio.to_thread(self._workspace, instance_id, agent_data)
        result = await asyncio.to_thread(space.run, self.language, code)
        return (ToolResponse(text=result.output or "[no output]"), 0.0,
                {"status": result.status, "seconds": result.seconds})

    async def release(self, instance_id: str, **kwargs) -> None:
        self._calls.pop(instance_id, None)
        space = self._own.pop(instance_id, None)
        if space is not None:
            await asyncio.to_thread(space.close)
