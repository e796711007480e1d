"""The registry of method families.

A family is one module under ``taskfactory/methods/`` that ends with one
``register(Family(...))`` call. Modules are discovered, not listed: adding a family
is adding its module and its scenario file, ``scenarios/<name>.yaml``.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from dataclasses import dataclass
from typing import Callable

from .errors import InputError, ScenarioError

ROLE_KINDS = ("numeric", "category", "column", "value", "level", "numeric list", "category list")
#: Kinds whose role holds a reference value (a number, a level), not a column.
VALUE_KINDS = ("value", "level")


@dataclass(frozen=True)
class Family:
    """Everything taskfactory knows about one method family.

    ``generate(condition, rng) -> DataFrame`` draws a dataset (numpy and pandas
    only, see :mod:`taskfactory.kit`); ``analyse(condition, data) -> TestResult``
    runs the canonical test, as R's ``canonical`` call does, reading only
    ``condition.roles``; ``naive`` is the tempting wrong test. ``effect_for_z(z,
    n, params)`` returns the effect whose expected test statistic sits at the
    two-sided z (the borderline calibration); ``medium`` is the conventional
    medium effect, in ``effect_unit``.

    ``r_code`` and ``py_code`` are templates of the reference solutions, filled
    with the roles (``{outcome}``, ``{group}`` ...): the R code must leave the
    test in ``res`` (its p-value at ``r_pvalue``), the Python code must set
    ``p_value``. The data frame is ``d`` in both.

    ``retry_on`` names exceptions, beside :class:`DataError` and warnings, that
    mean "this dataset cannot give a reliable gold" and send a task to its next
    attempt; any other exception stops the build.
    """

    name: str
    order: int
    title: str
    category: str
    canonical: str
    roles: dict
    generate: Callable
    analyse: Callable
    effect_for_z: Callable
    medium: float
    effect_unit: str
    r_code: str
    py_code: str
    r_pvalue: str = "res$p.value"
    r_packages: tuple = ()
    min_n: int = 10
    naive: Callable | None = None
    naive_method: str | None = None
    hints: Callable | None = None
    draw_params: Callable | None = None
    dgp_keys: tuple = ()
    validate: Callable | None = None
    null_value: float = 0.0
    effect_bounds: tuple = (-math.inf, math.inf)
    complete_case: bool = True
    cost: float = 1.0
    retry_on: tuple = ()

    def check_scenario(self, scen) -> None:
        """Raise :class:`ScenarioError` unless ``scen`` gives what this family needs.

        ``validate`` raises ``ValueError`` naming what is wrong; a ``TypeError``,
        ``ArithmeticError`` or ``LookupError`` from it (a value of the wrong kind
        that it did not check) is reported the same way, as one line.
        """
        where = f"{scen.source or f'scenarios/{self.name}.yaml'}, scenario '{scen.id}'"
        names = {v.name: v for v in scen.variables}
        for role, kind in self.roles.items():
            if role not in scen.roles:
                raise ScenarioError(f"{where}: roles lack '{role}'; {self.name} needs {', '.join(self.roles)}")
            value = scen.roles[role]
            cols = value if kind.endswith("list") else [value]
            if kind.endswith("list") and not (isinstance(value, list) and value):
                raise ScenarioError(f"{where}: role '{role}' must be a non-empty list of columns")
            if kind in VALUE_KINDS:
                continue
            for col in cols:
                var = names.get(col)
                if var is None:
                    raise ScenarioError(f"{where}: role '{role}' names '{col}', which is not a variable")
                want = kind.split()[0]
                if want == "numeric" and var.type not in ("numeric", "integer"):
                    raise ScenarioError(f"{where}: role '{role}' needs a numeric column, '{col}' is {var.type}")
                if want == "category" and var.type != "category":
                    raise ScenarioError(f"{where}: role '{role}' needs a category column, '{col}' is {var.type}")
        extra = sorted(set(scen.roles) - set(self.roles))
        if extra:
            raise ScenarioError(f"{where}: unknown role '{extra[0]}'; {self.name} takes {', '.join(self.roles)}")
        missing = [k for k in self.dgp_keys if k not in scen.dgp]
        if missing:
            raise ScenarioError(f"{where}: dgp lacks '{missing[0]}'; {self.name} needs {', '.join(self.dgp_keys)}")
        if self.validate is not None:
            try:
                self.validate(scen)
            except ValueError as exc:
                raise ScenarioError(f"{where}: {exc}") from None
            except (TypeError, ArithmeticError, LookupError) as exc:
                raise ScenarioError(f"{where}: the dgp does not fit {self.name} ({type(exc).__name__}: "
                                    f"{' '.join(str(exc).split())})") from None

    def describe(self) -> dict:
        """A JSON-ready summary, as ``taskfactory methods --json`` prints it."""
        from .scenarios import load_scenarios

        return {
            "name": self.name,
            "title": self.title,
            "category": self.category,
            "canonical": self.canonical,
            "naive": self.naive_method,
            "roles": dict(self.roles),
            "min_n": self.min_n,
            "medium": self.medium,
            "effect_unit": self.effect_unit,
            "scenarios": [s.id for s in load_scenarios(self.name)],
        }


_REGISTRY: dict[str, Family] = {}
_LOADED = False


def register(family: Family) -> Family:
    """Add ``family`` to the registry; its name must be new."""
    if family.name in _REGISTRY:
        raise ValueError(f"family '{family.name}' is registered twice")
    for role, kind in family.roles.items():
        if kind not in ROLE_KINDS:
            raise ValueError(f"family '{family.name}': role kind ({kind!r}) must be one of {', '.join(ROLE_KINDS)}")
    _REGISTRY[family.name] = family
    return family


def _ensure_loaded() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import methods

    for info in sorted(pkgutil.iter_modules(methods.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{methods.__name__}.{info.name}")


def families() -> list[Family]:
    """Every registered family, in catalogue order."""
    _ensure_loaded()
    return sorted(_REGISTRY.values(), key=lambda f: (f.order, f.name))


def family_names() -> list[str]:
    return [f.name for f in families()]


def get_family(name: str) -> Family:
    """The family called ``name``; the error lists the known names."""
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown method '{name}'; allowed: {', '.join(family_names())}") from None
