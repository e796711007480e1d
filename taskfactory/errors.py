"""Exceptions raised by taskfactory.

Everything a user can cause (a bad grid, a bad scenario file, a corrupt corpus)
raises a :class:`TaskFactoryError` subclass whose message is one line naming what
is wrong; the command line turns it into ``error: <message>`` and a non-zero exit.
"""


class TaskFactoryError(Exception):
    """Base class of every error taskfactory reports to its user."""

    exit_code = 1


class GridError(TaskFactoryError):
    """The grid file is malformed: unknown key, unknown value, empty product."""

    exit_code = 2


class ScenarioError(TaskFactoryError):
    """A scenario file does not describe a usable scenario."""

    exit_code = 2


class CorpusError(TaskFactoryError):
    """A corpus folder is missing, incomplete or corrupt."""


class DataError(Exception):
    """One task's data cannot give a reliable gold answer.

    Raised by a family's ``generate`` or ``analyse`` for degenerate data (a
    constant group, an expected count below 5, a warning that makes the p-value
    unreliable). The builder catches it, redraws the task on the next attempt of
    its own random stream, and after the last attempt records it in
    ``rejected.jsonl``.
    """
