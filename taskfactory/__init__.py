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

from ._version import __version__
from .errors import CorpusError, DataError, GridError, ScenarioError, TaskFactoryError

#: Each lazily imported name and the module that defines it.
_LAZY = {
    "analyse": "make.analysis", "build": "store.build", "BuildSummary": "store.build", "plan": "store.plan",
    "Plan": "store.plan", "load_grid": "design.grid", "Grid": "design.grid", "families": "registry",
    "get_family": "registry", "Family": "family", "load_scenarios": "design.catalogue", "TestResult": "result",
    "z_of_p": "result", "verify": "audit.verify", "VerifyReport": "audit.verify", "open": "use.tasks",
    "Task": "use.tasks", "Corpus": "use.tasks",
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

