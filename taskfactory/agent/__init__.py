"""The agent's environment: sandboxed code sessions and the episode API."""

from .sandbox import LANGUAGES, CallResult, IsolationError, Limits, Sandbox, Workspace, isolation_problem

__all__ = ["LANGUAGES", "CallResult", "IsolationError", "Limits", "Sandbox", "Workspace", "isolation_problem"]
