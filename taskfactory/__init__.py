"""taskfactory: verifiable statistical hypothesis-testing tasks with R-exact gold answers.

From Python::

    import taskfactory
    taskfactory.plan("grids/demo.yaml").total
    taskfactory.build("grids/demo.yaml", "corpus/", jobs=2)
    taskfactory.verify("corpus/", sample=200).ok
    taskfactory.analyse("welch_t", df, {"outcome": "sbp", "group": "arm"})
    for task in taskfactory.open("corpus/", split="test"):
        task.agent_view(), task.dataframe(), task.grade(completion)

The names below are imported when first used, so that importing the package
(and starting the command line) does not load numpy, pandas and scipy.
"""

import importlib
import sys
import types

from ._version import __version__
from .errors import CorpusError, DataError, GridError, ScenarioError, TaskFactoryError

#: Each lazily imported name and the module that defines it.
_LAZY = {
    "analyse": "analysis", "build": "build", "BuildSummary": "build", "plan": "plan", "Plan": "plan",
    "load_grid": "grid", "Grid": "grid", "families": "registry", "get_family": "registry", "Family": "family",
    "load_scenarios": "catalogue", "TestResult": "result", "z_of_p": "result", "verify": "verify",
    "VerifyReport": "verify", "open": "tasks", "Task": "tasks", "Corpus": "tasks",
}

__all__ = ["__version__", "TaskFactoryError", "GridError", "ScenarioError", "CorpusError", "DataError", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The package keeps the functions ``build``, ``plan`` and ``verify`` under
    their names when the modules of the same names are imported (the import
    system would otherwise set the modules there); the modules stay in
    ``sys.modules``."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
