"""Exceptions raised by taskfactory.

Everything a user can cause (a bad grid, a bad scenario file, a corrupt corpus,
a malformed benchmark, bad arguments) raises a :class:`TaskFactoryError`
subclass whose message is one line naming what is wrong; the command line
turns it into ``error: <message>`` and exits with the class's ``exit_code``:
2 for bad input, 1 for a check that failed.
"""

import os


class TaskFactoryError(Exception):
    """Base class of every error taskfactory reports to its user."""

    exit_code = 1


class InputError(TaskFactoryError):
    """Bad input: a malformed file or argument. Exit code 2."""

    exit_code = 2


class GridError(InputError):
    """The grid file is malformed: unknown key, unknown value, empty product."""


class ScenarioError(InputError):
    """A scenario file does not describe a usable scenario."""


class CorpusError(InputError):
    """A corpus folder is missing, malformed or unreadable."""


class MissingTask(CorpusError):
    """A corpus holds no task of the id (or the family) asked for."""


class BenchError(InputError):
    """A benchmark file is malformed."""


def check_count(value, name: str, low: int = 1) -> None:
    """Raise :class:`InputError` unless ``value`` is a whole number >= ``low``
    (for arguments such as ``jobs`` and ``sample``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"{name} ({value!r}) must be a whole number of at least {low}")


def check_path(value, name: str) -> None:
    """Raise :class:`InputError` unless ``value`` is a non-empty path."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise InputError(f"{name} must be a path, got {value!r}")


class DataError(InputError):
    """Data that cannot give a reliable test result.

    :func:`taskfactory.analyse` raises it for unusable data (a column of text
    where numbers are needed, a degenerate group, an expected count below 5).
    Inside a build, a family's ``generate`` or ``analyse`` raises it for a
    degenerate draw; the builder then redraws the task on the next attempt of
    its own random stream, and after the last attempt records it in
    ``rejected.jsonl``.
    """


def did_you_mean(name, choices) -> str:
    """`` (did you mean 'X'?)`` naming the choice closest to ``name``, or
    nothing when none is close; for the messages that refuse an unknown name."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""
