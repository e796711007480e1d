"""taskfactory: verifiable statistical hypothesis-testing tasks with R-exact gold answers.

From Python::

    import taskfactory
    taskfactory.plan("grids/demo.yaml").total
    taskfactory.build("grids/demo.yaml", "corpus/", jobs=2)
    taskfactory.verify("corpus/", sample=200).ok
    taskfactory.analyse("welch_t", df, {"outcome": "sbp", "group": "arm"})
"""

from ._version import __version__
from .analysis import analyse
from .build import BuildSummary, build
from .errors import CorpusError, DataError, GridError, ScenarioError, TaskFactoryError
from .grid import Grid, load_grid
from .plan import Plan, plan
from .family import Family
from .registry import families, get_family
from .result import TestResult, z_of_p
from .catalogue import load_scenarios
from .verify import VerifyReport, verify

__all__ = [
    "__version__", "analyse", "build", "BuildSummary", "plan", "Plan", "load_grid", "Grid", "families",
    "get_family", "Family", "load_scenarios", "TestResult", "z_of_p", "TaskFactoryError", "GridError",
    "ScenarioError", "CorpusError", "DataError", "verify", "VerifyReport",
]
