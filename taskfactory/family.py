"""The contract every method family fulfils.

A family is a subclass of :class:`Family` in its own module under
``taskfactory/methods/``, registered once with
:func:`taskfactory.registry.register`. Its parts:

- **identity**: ``name``, ``title``, ``category``, the ``question_kind`` it
  shares with its siblings (and so its scenario file), the canonical R call,
  the ``roles`` its test reads, what the grid's ``n`` counts (``n_unit``) and
  the kind of answer a task asks for (``answer``, see :mod:`taskfactory.answers`);
- **design and DGP**: ``draw_params`` (nuisance parameters of one dataset),
  ``generate`` (a module-level function whose source the emitted script
  carries), ``dgp_keys`` and ``validate`` (what a scenario must give);
- **canonical test**: ``analyse``, exactly as R's call computes it;
- **naive test**: ``naive`` and ``naive_method``, the tempting wrong test;
- **accepted alternatives**: ``accepted``, tests experts would accept as
  equally right on the data as released (never the naive test);
- **wording**: ``question_words``, the words (such as the error rate a
  researcher controls) a family fills into the question its siblings share;
- **names**: ``test_name`` and ``naive_name``, how answers name the canonical
  and the naive test (see :mod:`taskfactory.testnames`), for grading;
- **calibration**: ``effect_for_z``, ``medium``, ``effect_unit``,
  ``null_value`` and ``effect_bounds``;
- **reference solutions**: ``r_code`` and ``py_code`` templates;
- **hints**: what a look at the sample shows, for guided prompts.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from .answers import P_VALUE, AnswerSpec
from .errors import ScenarioError
from .scenarios import NUMERIC_TYPES
from .testnames import TestName
from .validation import Problems

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .condition import Condition
    from .result import TestResult
    from .scenarios import Scenario

#: What a role holds: a numeric or category column, a list of such columns
#: (the covariates a model adjusts for), a column labelling the
#: design (cluster, unit measured repeatedly, period of measurement), or a
#: reference value (a number such as mu0, a level such as the positive outcome,
#: or the stated shares of a category column's levels, a mapping of level to share).
ROLE_KINDS = ("numeric", "category", "columns", "cluster", "unit", "period", "value", "level", "shares")
#: Kinds whose role holds a reference value, not a column.
VALUE_KINDS = ("value", "level", "shares")
#: What a role of each kind holds, as a record stores it: one name (a column's
#: or a level's), a list of column names, a number, or stated shares. A role
#: name holds the same in every family (the registry checks), so that the
#: record's ``roles`` has one type per role name.
ROLE_HOLDS = {"numeric": "name", "category": "name", "cluster": "name", "unit": "name", "period": "name",
              "level": "name", "columns": "names", "value": "number", "shares": "shares"}
#: Kinds whose column labels the design (kept whole by blank cells).
DESIGN_KINDS = ("cluster", "unit", "period")
#: What the grid's ``n`` counts for a family: rows of a flat table, the
#: clusters of a clustered design (each holding several rows), or the units of
#: a panel or repeated-measures design (each measured in several periods or
#: conditions, one row per measurement).
N_UNITS = ("rows", "clusters", "units")
#: What a family's gold p-value does under the null (see ``Family.null_p``).
NULL_P = ("uniform", "discrete", "adjusted", "conservative")


#: How far stated shares may sum from 1 (R's chisq.test: sqrt(.Machine$double.eps)).
SHARES_TOLERANCE = 1.4901161193847656e-08


def shares_problem(value) -> str | None:
    """What is wrong with ``value`` as stated shares (a mapping of at least two
    levels, given as texts, to positive numbers summing to 1), or None."""
    if not (isinstance(value, dict) and len(value) >= 2):
        return f"must map at least two levels to their shares, got {value!r}"
    for level, share in value.items():
        if not (isinstance(level, str) and level):
            return f"has the level {level!r}; levels are texts"
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 < share < 1.0:
            return f"gives '{level}' the share {share!r}; shares are numbers between 0 and 1"
    total = math.fsum(float(s) for s in value.values())
    if abs(total - 1.0) > SHARES_TOLERANCE:
        return f"sums to {total:.10g}; shares must sum to 1"
    return None


#: The domain of a ``value`` role a family does not narrow: any finite number.
ANY_NUMBER = (-math.inf, math.inf)


def value_problem(value, domain: tuple[float, float] = ANY_NUMBER) -> str | None:
    """What is wrong with ``value`` as a ``value`` role's number (a finite real
    number strictly inside ``domain``, see ``Family.value_domains``), or None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        return f"must be a finite number, got {value!r}"
    low, high = domain
    if not low < value < high:
        return f"must be a number between {low:g} and {high:g} (both excluded), got {value!r}"
    return None


@dataclass(frozen=True)
class Alternative:
    """A test experts accept as equally right as the canonical one on a
    family's data as released (Welch's F beside the classical F; Kendall beside
    Spearman; the uncorrected beside R's corrected statistic). The record lists
    its p-value beside the gold, and an answer naming it is graded against it.
    The naive test is never an alternative."""

    #: The method as R's output names it (what an answer's METHOD line says).
    method: str
    #: The R call, with R's defaults, as ``canonical`` writes it.
    call: str
    #: ``run(condition, data) -> TestResult``: the test as R computes it, on
    #: the data after the canonical handling.
    run: Callable[[Condition, pd.DataFrame], TestResult]
    #: R code leaving the test in ``res`` (``{role}`` fields, as ``r_code``).
    r_code: str
    r_pvalue: str = "res$p.value"
    #: How answers name it (defaults to ``method`` and ``call``).
    name: TestName | None = None

    def __post_init__(self):
        if self.name is None:
            object.__setattr__(self, "name", TestName(self.method, (self.call,)))


REFERENCE_FOLDER = Path(__file__).resolve().parent / "methods" / "reference"


@lru_cache(maxsize=None)
def reference_template(name: str, suffix: str) -> str:
    """The reference solution template ``methods/reference/<name>.<suffix>``,
    without its leading comment lines."""
    path = REFERENCE_FOLDER / f"{name}.{suffix}"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        raise ValueError(f"family '{name}' has no reference file {path}") from None
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines).strip("\n")


def number_literal(x: float) -> str:
    """``x`` as a literal both R and Python read back exactly (short when it can be)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def rewrite(template: str, changes, family: str) -> str:
    """``template`` with each ``(term, instead)`` of ``changes`` replaced, as
    :meth:`Family.code_for` adapts a reference template to a task's roles;
    ``ValueError`` naming a term the template lacks (a template edited
    without its family)."""
    for term, instead in changes:
        if term not in template:
            raise ValueError(f"{family}'s reference template has no {term!r} to rewrite")
        template = template.replace(term, instead)
    return template


class Family(ABC):
    """One method family: its data, its canonical and naive tests, its
    calibration and its reference solutions (see the module docstring)."""

    # -- identity -----------------------------------------------------------------
    name: ClassVar[str]
    title: ClassVar[str]
    category: ClassVar[str]
    #: The question the family answers, shared with its siblings (families
    #: whose tasks read the same and differ only in what the data show); its
    #: scenarios are ``scenarios/<question_kind>.yaml``. Defaults to ``name``.
    question_kind: ClassVar[str]
    canonical: ClassVar[str]
    roles: ClassVar[dict[str, str]]
    #: The open interval the number of each ``value`` role must lie in, where
    #: the test narrows it (``{"p0": (0.0, 1.0)}``: a probability); a role not
    #: listed takes any finite number. :func:`taskfactory.analyse` holds the
    #: role to it (:func:`value_problem`); a scenario's ``validate`` checks its
    #: own, narrower design range.
    value_domains: ClassVar[dict[str, tuple[float, float]]] = {}
    n_unit: ClassVar[str] = "rows"
    #: Roles that label the design rather than measure something (the
    #: conditions every subject goes through), kept whole by blank cells.
    design_roles: ClassVar[tuple[str, ...]] = ()
    #: Roles a user may leave out, as R's call leaves them out: a column role
    #: as None (a count model's exposure time: no offset), a list of columns as
    #: empty (further instruments: none); a scenario may leave them out too.
    optional_roles: ClassVar[tuple[str, ...]] = ()
    #: The role whose column real data may give as text of several levels where
    #: the family's own data hold numbers (:mod:`taskfactory.methods._factor`), or None.
    factor_role: ClassVar[str | None] = None
    min_n: ClassVar[int] = 10
    #: The largest N the family's design makes sense at (None: no limit); a
    #: small-sample family (an exact test of sparse counts) sets it.
    max_n: ClassVar[int | None] = None
    answer: ClassVar[AnswerSpec] = P_VALUE

    # -- design and DGP -------------------------------------------------------------
    #: ``generate(condition, rng) -> dict``: the drawn table, numpy arrays by
    #: column name (:func:`taskfactory.kit.finish`); a module-level function
    #: using numpy and taskfactory.kit only (the emitted script carries its
    #: source); set it in the class body as ``generate = staticmethod(generate)``.
    generate: ClassVar[Callable[[Condition, np.random.Generator], dict]]
    dgp_keys: ClassVar[tuple[str, ...]] = ()
    #: False for a closed-form task: no dataset; the question carries its
    #: numbers (the drawn params named in ``prompt_fields``) and ``solve``
    #: gives the gold. Such a family needs no ``generate`` and no naive test.
    has_data: ClassVar[bool] = True
    prompt_fields: ClassVar[tuple[str, ...]] = ()
    #: Words the family fills into its scenarios' ``context`` and ``question``
    #: (``{error_rate}``: "the false discovery rate"), for siblings that differ
    #: in what the researcher wants, which no dataset can show, so the question
    #: must say it. A scenario's texts may name a word only when every family
    #: its ``dgp`` names defines it (see :func:`taskfactory.scenarios.parse_scenario`);
    #: the task fills it in at record time.
    question_words: ClassVar[dict[str, str]] = {}

    def draw_params(self, scenario: Scenario, n: int, rng: np.random.Generator) -> dict:
        """Nuisance parameters of one dataset: numbers and lists of numbers
        (the record stores them as such)."""
        return {}

    def shown_params(self, params: dict) -> dict:
        """The drawn ``params`` as a closed-form task's question and reference
        code show them (``{p_list}``: "0.0012, 0.34"); by default as drawn."""
        return params

    def rows(self, n: int, params: dict | None = None) -> int:
        """Rows of a dataset of ``n`` units drawn with ``params``; with
        ``params`` None, the most it can have (for planning). Rows are units
        unless the family's design says otherwise."""
        return n

    def validate(self, scenario: Scenario) -> None:
        """Raise ``ValueError`` naming what makes ``scenario`` unfit for the family."""

    # -- canonical test -------------------------------------------------------------
    #: Exceptions, beside DataError and warnings, that mean a dataset cannot
    #: give a reliable gold (the task is redrawn); any other exception is a bug.
    retry_on: ClassVar[tuple[type[Exception], ...]] = ()

    def analyse(self, condition: Condition, data: pd.DataFrame) -> TestResult:
        """The canonical test, as R's call computes it, reading only
        ``condition.roles``; ``data`` is complete cases on the test's columns.
        Every family with a dataset defines it."""
        raise NotImplementedError(f"{self.name} has no dataset to analyse")

    def solve(self, condition: Condition) -> dict:
        """A closed-form task's gold: the fields of its answer kind, computed
        from ``condition.params`` as R's reference call would."""
        raise NotImplementedError(f"{self.name} analyses a dataset; it has nothing to solve")

    def gold(self, result: TestResult, alpha: float) -> dict:
        """The record's ``gold`` struct from the canonical result (by default a
        p-value and its decision at ``alpha``)."""
        return self.answer.gold(p_value=result.pvalue, decision=result.decision(alpha))

    #: What the gold p-value does when the null holds: "uniform"; "discrete"
    #: (an exact test of sparse counts: discrete and conservative);
    #: "adjusted" (multiplicity-adjusted: at least the raw p, conservative by
    #: construction); "conservative" (a continuity correction). Calibration
    #: checks and reports expect uniform null p-values only of "uniform".
    null_p: ClassVar[str] = "uniform"

    # -- naive test -----------------------------------------------------------------
    naive_method: ClassVar[str | None] = None

    def naive(self, condition: Condition, data: pd.DataFrame) -> TestResult:
        """The tempting wrong test; only called when ``naive_method`` is set."""
        raise NotImplementedError(f"{self.name} has no naive test")

    # -- accepted alternatives ------------------------------------------------------
    accepted: ClassVar[tuple[Alternative, ...]] = ()

    # -- names ----------------------------------------------------------------------
    #: How answers name the canonical test (defaults to ``title`` and
    #: ``canonical``) and the naive one (none by default; naming it lets a
    #: grader tell an answer that used the naive test from one it cannot read).
    test_name: ClassVar[TestName]
    naive_name: ClassVar[TestName | None] = None

    # -- calibration ----------------------------------------------------------------
    medium: ClassVar[float]
    effect_unit: ClassVar[str]
    null_value: ClassVar[float] = 0.0
    effect_bounds: ClassVar[tuple[float, float]] = (-math.inf, math.inf)

    @abstractmethod
    def effect_for_z(self, z: float, n: int, params: dict) -> float:
        """The effect whose expected test statistic sits at two-sided ``z``."""

    # -- reference solutions --------------------------------------------------------
    #: R code leaving the test in ``res`` (its p-value at ``r_pvalue``) and
    #: Python code setting ``p_value``; both see ``d``, the data after the
    #: canonical handling; ``{role}`` fields are filled with the roles. They
    #: are read from ``methods/reference/<name>.R`` and ``<name>.py`` (files
    #: that can be read, parsed and linted) unless the class sets them.
    r_pvalue: ClassVar[str] = "res$p.value"

    @property
    def r_code(self) -> str:
        return reference_template(self.name, "R")

    @property
    def py_code(self) -> str:
        return reference_template(self.name, "py")

    def code_for(self, roles: dict, lang: str) -> str:
        """The reference template (``lang`` ``r`` or ``py``) for ``roles``: the
        family's, which a family with :attr:`optional_roles` adapts to the roles
        a task leaves out."""
        return self.r_code if lang == "r" else self.py_code

    def canonical_for(self, roles: dict) -> str:
        """The canonical R call for ``roles`` (see :meth:`code_for`)."""
        return self.canonical

    def title_for(self, roles: dict) -> str:
        """The family's title for ``roles`` (see :meth:`code_for`)."""
        return self.title

    def r_pvalue_for(self, roles: dict) -> str:
        """Where the R code for ``roles`` leaves the p-value (see :meth:`code_for`)."""
        return self.r_pvalue

    def roles_for_data(self, roles: dict, data: pd.DataFrame) -> dict:
        """``roles`` with what the analysed ``data`` of a real dataset add to
        them (the levels of a factor exposure, :mod:`taskfactory.methods._factor`)."""
        return roles

    # -- hints ----------------------------------------------------------------------
    def hints(self, condition: Condition, data: pd.DataFrame) -> list[str]:
        """Guided-prompt hints: what a look at the analysed sample ``data``
        shows (siblings share one function of :mod:`taskfactory.methods._describe`),
        never a test's name."""
        return []

    # -- shared behaviour -----------------------------------------------------------
    def role_columns(self, roles: dict) -> list[str]:
        """The columns the test uses, in role order (a ``columns`` role's in its order)."""
        return [col for role, kind in self.roles.items() if kind not in VALUE_KINDS and roles.get(role) is not None
                for col in (roles[role] if kind == "columns" else [roles[role]])]

    def measured_columns(self, roles: dict) -> list[str]:
        """The columns the test uses that hold measurements (those a blank
        cell may hit): all but the labels of the design (clusters, units,
        periods, and the roles named in ``design_roles``)."""
        return [col for role, kind in self.roles.items()
                if kind not in (*VALUE_KINDS, *DESIGN_KINDS) and role not in self.design_roles
                and roles.get(role) is not None
                for col in (roles[role] if kind == "columns" else [roles[role]])]

    def check_scenario(self, scen: Scenario) -> None:
        """Raise :class:`ScenarioError` unless ``scen`` gives what this family
        needs, naming every problem on one line (see :meth:`scenario_problems`)."""
        problems = Problems(self.scenario_file(scen), ScenarioError, joiner=", ")
        self.scenario_problems(scen, problems)
        problems.raise_any()

    def scenario_file(self, scen: Scenario) -> str:
        """The file ``scen`` comes from, as messages name it."""
        return scen.source or f"scenarios/{self.question_kind}.yaml"

    def scenario_problems(self, scen: Scenario, problems: Problems) -> None:
        """Add to ``problems`` what ``scen`` lacks for this family: each role
        (missing, of the wrong kind, naming no variable or a variable of the
        wrong type), unknown roles, missing dgp keys, then, when those are
        sound, what ``validate`` finds. ``validate`` raises ``ValueError``
        naming what is wrong; a ``TypeError``, ``ArithmeticError`` or
        ``LookupError`` from it (a value of the wrong kind that it did not
        check) is reported the same way."""
        where = f"scenario '{scen.id}' ({self.name})"
        found = len(problems)
        names = {v.name: v for v in scen.variables}
        for role, kind in self.roles.items():
            if role not in scen.roles:
                if role not in self.optional_roles:
                    problems.add(f"roles lack '{role}'; {self.name} needs {self.roles_text()}", where)
                continue
            value = scen.roles[role]
            wrong_shares = shares_problem(value) if kind == "shares" else None
            if wrong_shares:
                problems.add(f"role '{role}' {wrong_shares}", where)
            if kind in VALUE_KINDS:
                continue
            if kind == "columns" and not isinstance(value, list):
                problems.add(f"role '{role}' needs a list of columns, got {value!r}", where)
                continue
            for col in value if kind == "columns" else [value]:
                var = names.get(col) if isinstance(col, str) else None
                if var is None:
                    problems.add(f"role '{role}' names '{col}', which is not a variable", where)
                elif kind == "numeric" and var.type not in NUMERIC_TYPES:
                    problems.add(f"role '{role}' needs a numeric column, '{col}' is {var.type}", where)
                elif kind == "columns" and var.type not in (*NUMERIC_TYPES, "category"):
                    problems.add(f"role '{role}' needs numeric or category columns, '{col}' is {var.type}", where)
                elif kind not in ("numeric", "columns") and var.type != kind:
                    problems.add(f"role '{role}' needs a {kind} column, '{col}' is {var.type}", where)
        for extra in sorted(set(scen.roles) - set(self.roles)):
            problems.add(f"unknown role '{extra}'; {self.name} takes {self.roles_text()}", where)
        for key in (k for k in self.dgp_keys if k not in scen.dgp):
            problems.add(f"dgp lacks '{key}'; {self.name} needs {', '.join(self.dgp_keys)}", where)
        if len(problems) > found:
            return
        try:
            self.validate(scen)
        except ValueError as exc:
            problems.add(str(exc), where)
        except (TypeError, ArithmeticError, LookupError) as exc:
            problems.add(f"the dgp does not fit {self.name} ({type(exc).__name__}: {' '.join(str(exc).split())})",
                         where)

    def roles_text(self) -> str:
        """The roles as messages list them: ``outcome, group (optional: cluster)``."""
        required = [r for r in self.roles if r not in self.optional_roles]
        optional = [r for r in self.roles if r in self.optional_roles]
        return ", ".join(required) + (f" (optional: {', '.join(optional)})" if optional else "")

    def describe(self) -> dict:
        """A JSON-ready summary, as ``taskfactory methods --json`` prints it."""
        return {
            "name": self.name,
            "title": self.title,
            "category": self.category,
            "question_kind": self.question_kind,
            "canonical": self.canonical,
            "naive": self.naive_method,
            "accepted": [alt.call for alt in self.accepted],
            "roles": dict(self.roles),
            "n_unit": self.n_unit,
            "has_data": self.has_data,
            "answer": self.answer.kind,
            "min_n": self.min_n,
            "max_n": self.max_n,
            "medium": self.medium,
            "effect_unit": self.effect_unit,
        }

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and not any("question_kind" in base.__dict__ for base in cls.__mro__):
            cls.question_kind = cls.name  # a family of its own kind, unless a base class names the kind
        if "test_name" not in cls.__dict__ and "title" in cls.__dict__ and "canonical" in cls.__dict__:
            cls.test_name = TestName(cls.title, (cls.canonical,))

    def __repr__(self) -> str:
        return f"<family {self.name}>"

    @classmethod
    def check_definition(cls) -> None:
        """Raise ``ValueError`` when the class misses a part of the contract."""
        needed = ["name", "title", "category", "canonical", "roles", "medium", "effect_unit"]
        needed += ["generate"] if cls.has_data else []
        for attr in needed:
            if not hasattr(cls, attr):
                raise ValueError(f"family {cls.__name__} lacks '{attr}'")
        method = "analyse" if cls.has_data else "solve"
        if getattr(cls, method) is getattr(Family, method):
            raise ValueError(f"family {cls.__name__} lacks '{method}'")
        if not cls.has_data and (cls.naive_method or cls.n_unit != "rows"):
            raise ValueError(f"family {cls.__name__} has no dataset, so no naive test and no design")
        for role, kind in cls.roles.items():
            if kind not in ROLE_KINDS:
                raise ValueError(f"family '{cls.name}': role kind ({kind!r}) of '{role}' must be one of "
                                 f"{', '.join(ROLE_KINDS)}")
        for role, domain in cls.value_domains.items():
            numbers_ok = isinstance(domain, tuple) and len(domain) == 2 and all(
                isinstance(b, (int, float)) and not isinstance(b, bool) for b in domain)
            if cls.roles.get(role) != "value" or not (numbers_ok and domain[0] < domain[1]):
                raise ValueError(f"family '{cls.name}': value_domains gives '{role}' {domain!r}; each must be "
                                 "(low, high) with low < high, for a role of kind value")
        if not isinstance(getattr(cls, "test_name", None), TestName) or not isinstance(cls.naive_name, (TestName, type(None))):
            raise ValueError(f"family '{cls.name}': test_name must be a TestName and naive_name a TestName or None")
        for alt in cls.accepted:
            if not isinstance(alt, Alternative) or alt.call == cls.canonical or alt.method == cls.naive_method:
                raise ValueError(f"family '{cls.name}': accepted holds {alt!r}; each must be an Alternative other "
                                 "than the canonical and the naive test")
        words = cls.question_words
        if not (isinstance(words, dict) and all(isinstance(k, str) and k.isidentifier() and k == k.lower()
                                                and k != "n" and isinstance(v, str) and v.strip()
                                                for k, v in words.items())):
            raise ValueError(f"family '{cls.name}': question_words must map lowercase names (not 'n') to texts")
        if cls.n_unit not in N_UNITS:
            raise ValueError(f"family '{cls.name}': n_unit ({cls.n_unit!r}) must be one of {', '.join(N_UNITS)}")
        if cls.null_p not in NULL_P:
            raise ValueError(f"family '{cls.name}': null_p ({cls.null_p!r}) must be one of {', '.join(NULL_P)}")
