"""The agent's environment: sandboxed Python and R sessions and the episode API."""

from .episode import TOOLS, AgentTask, Environment, EpisodeInfo
from .sandbox import LANGUAGES, CallResult, IsolationError, Limits, Sandbox, Workspace, isolation_problem

__all__ = ["LANGUAGES", "TOOLS", "AgentTask", "CallResult", "Environment", "EpisodeInfo", "IsolationError", "Limits",
           "Sandbox", "Workspace", "isolation_problem"]
