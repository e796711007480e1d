"""Scenarios: the real-world settings a family's tasks are dressed in.

A scenario is data, not code. Families that answer the same kind of question
(two independent groups, paired measurements, k groups ...) are siblings and
share their scenarios: ``scenarios/<kind>.yaml`` holds every scenario of one
question kind, worded the same whichever sibling drew the data::

    kind: two_groups
    scenarios:
      - id: bp_trial
        domain: medicine
        title: Blood pressure under a new antihypertensive
        context: A clinic randomised {n} adults with hypertension ...
        question: Does systolic blood pressure differ between the two arms?
        roles: {outcome: sbp, group: arm}
        variables:
          - {name: patient, label: Patient identifier, type: id, prefix: P}
          - {name: arm, label: Treatment arm, type: category, levels: [drug, placebo]}
          - {name: sbp, label: Systolic blood pressure, unit: mmHg, type: numeric,
             range: [70, 250], decimals: 0}
          - {name: age, label: Age, unit: years, type: integer, range: [18, 100],
             dist: {normal: [58, 11]}}
        dgp:
          welch_t: {mean: 142, sd: 16, direction: -1}
          mann_whitney: {median: 138, shape: 1.6, shifted: placebo}

``dgp`` names the siblings the scenario supports (a 1-5 rating cannot be
normal) and gives each the parameters it needs; only the data differ between
them.

``context`` and ``question`` may name ``{n}`` and the family's reference values
(``{mu0}``, ``{p0}`` ...; stated shares, a role mapping each level to its
share, read "red 25 %, pink 50 % and white 25 %") as bare fields (no format spec, conversion, attribute
or index); write ``{{`` and ``}}`` for literal braces. They may also name a
question word every family of the scenario's ``dgp`` defines
(``Family.question_words``: ``{error_rate}`` reads "the false discovery rate"
for one sibling and "the family-wise error rate" for the other).
Variables not named in ``roles`` (besides the id) are extras, drawn from ``dist``;
a numeric extra may relate to a numeric column of the test as in the field
(``relates: {to: sbp, r: 0.3}``: the same values, reordered to a rank
correlation of about ``r``), and then drives the MAR blanks.
Designs beyond a flat table label rows with a ``cluster``, a ``unit`` (measured
repeatedly) and a ``period`` variable; the family numbers them, and each plays
a role of its test. An extra that is a property of the unit (population, floor
area) says ``per: unit``: it is drawn once per unit and repeats in its rows.

The file is read strictly (see :mod:`taskfactory.readers`), its shape checked
by pydantic models (:func:`scenario_file_model`, which ``taskfactory schema
scenario`` prints as JSON Schema), and every problem found is reported at once,
in one line (see :mod:`taskfactory.validation`). Everything that
reaches the emitted scripts as a Python literal is plain data: a number is
finite, not a boolean and at most :data:`MAX_MAGNITUDE` in magnitude; a text
matches :data:`LEVEL`; a dgp value is a number, a text, a flat list of those,
or one mapping of names to those. Category levels are quoted texts that R's
``read.csv`` keeps as text (not ``NA``, ``TRUE``, ``Inf``, a number ...).
Plausible ranges must leave generated values alone: the grid's plan refuses a
scenario whose ranges clip more than :data:`SCENARIO_CLIPPED_SHARE` of a column.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import kit
from .errors import ScenarioError
from .readers import load_yaml
from .validation import Problems, translate, worded

IDENT = re.compile(r"^[a-z][a-z0-9_]*$")
LEVEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.+<>=/-]*$")
TYPES = ("id", "cluster", "unit", "period", "numeric", "integer", "category")
#: The types of a variable that holds numbers.
NUMERIC_TYPES = ("numeric", "integer")
#: Types whose values label rows rather than measure them: the row id (numbered
#: by the factory); the cluster a row belongs to, the unit (subject, firm,
#: region) measured repeatedly, and the period of that measurement (all three
#: numbered by the family, 1, 2, ...).
LABEL_TYPES = ("id", "cluster", "unit", "period")
#: Label types only a family's design fills: each must play a role of the test.
DESIGN_TYPES = kit.DESIGN_TYPES
DISTS = ("normal", "lognormal", "uniform", "poisson", "integers", "choice")
MAX_RELATION = 0.9           # largest |r| of an extra column's relation to a test column
# Texts R's read.csv reads as a logical, NA, NaN or an infinity (type.convert;
# NaN, Inf and Infinity in any case).
R_SPECIAL = re.compile(r"^(?:NA|T|F|TRUE|FALSE|True|False|true|false|(?i:nan|inf|infinity))$")
HEX = re.compile(r"^0[xX][0-9a-fA-F]+$")
MAX_MAGNITUDE = 1e9          # largest |x| of any number in a scenario file
MAX_CLIPPED_SHARE = 0.01     # a dataset whose range clipped more of a column (and more than one value) is rejected
SCENARIO_CLIPPED_SHARE = 0.005  # a scenario whose ranges clip more than this share of drawn values is refused
DIST_PARAMETERS = {"normal": "[mean, sd] with sd > 0", "lognormal": "[meanlog, sdlog] with sdlog > 0",
                   "uniform": "[low, high] with low < high", "integers": "[low, high], integers with low <= high",
                   "poisson": "one positive number (the mean)",
                   "choice": "one weight per level, none negative, summing to more than 0"}


@dataclass(frozen=True)
class Variable:
    """One column of a scenario's dataset, as its data dictionary describes it."""

    name: str
    label: str
    type: str
    unit: str = ""
    range: tuple[float, float] | None = None
    decimals: int = 0
    levels: tuple[str, ...] | None = None
    dist: dict | None = None
    prefix: str = ""
    relates: dict | None = None
    per_unit: bool = False

    def spec(self) -> dict:
        """The column specification the data-generating code sees."""
        out = {"name": self.name, "type": self.type}
        if self.type in LABEL_TYPES:
            out["prefix"] = self.prefix
        if self.range is not None:
            out["range"] = [float(self.range[0]), float(self.range[1])]
        if self.type == "numeric":
            out["decimals"] = self.decimals
        if self.levels is not None:
            out["levels"] = list(self.levels)
        if self.dist is not None:
            out["dist"] = self.dist
        if self.relates is not None:
            out["relates"] = self.relates
        return out

    def dictionary_entry(self) -> dict:
        """The entry of the data dictionary shown with the task."""
        out = {"name": self.name, "label": self.label, "type": self.type, "unit": self.unit or None}
        out["range"] = list(self.range) if self.range is not None else None
        if self.type == "numeric":
            out["decimals"] = self.decimals
        out["levels"] = list(self.levels) if self.levels is not None else None
        return out


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: as read from a question kind's file (``kind``,
    ``dgp`` the parameters of each family it supports), or as one family
    sees it (:meth:`for_family`: ``family`` set, ``dgp`` its parameters)."""

    id: str
    kind: str
    domain: str
    title: str
    context: str
    question: str
    roles: dict
    variables: tuple[Variable, ...]
    dgp: dict = field(default_factory=dict)
    source: str = field(default="", compare=False)
    family: str | None = None

    def for_family(self, family: str) -> Scenario:
        """The scenario as ``family`` (one of those its dgp lists) sees it."""
        return dataclasses.replace(self, family=family, dgp=self.dgp[family])

    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def id_column(self) -> str:
        return next(v.name for v in self.variables if v.type == "id")

    def columns(self) -> list[dict]:
        """The column specifications the data-generating code sees; an extra
        column drawn per unit names the unit column (``per``)."""
        unit = next((v.name for v in self.variables if v.type == "unit"), None)
        return [{**v.spec(), "per": unit} if v.per_unit else v.spec() for v in self.variables]

    def data_dictionary(self) -> list[dict]:
        return [v.dictionary_entry() for v in self.variables]

    def ranges(self) -> dict[str, tuple[float, float]]:
        """Plausible range of every numeric column, by name."""
        return {v.name: v.range for v in self.variables if v.range is not None}

    def fill(self, text: str, n: int, params: dict | None = None) -> str:
        """Fill ``{n}``, the reference values and (for a question without a
        dataset) the drawn ``params`` into a context or question. Stated
        shares (a mapping of level to share) read as "a 25 %, b 50 % and c 25 %"."""
        values = {**(params or {}), "n": n}
        for role, value in self.roles.items():
            if isinstance(value, dict):
                values[role] = shares_text(value)
            elif not isinstance(value, list):
                values[role] = value
        return text.format_map(values)


def shares_text(shares: dict) -> str:
    """Stated shares in words: ``{"a": 0.25, "b": 0.75}`` reads "a 25 % and b 75 %"."""
    parts = [f"{level} {round(100.0 * share, 4):g} %" for level, share in shares.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


#: The environment variable naming a scenario folder other than the shipped one.
SCENARIOS_ENV = "TASKFACTORY_SCENARIOS"


def scenario_root() -> Path:
    """The folder holding ``<kind>.yaml`` scenario files.

    ``$TASKFACTORY_SCENARIOS`` when set; else the copy installed with the
    package; else ``scenarios/`` beside the package (an editable install).
    """
    env = os.environ.get(SCENARIOS_ENV)
    if env:
        return Path(env)
    return _shipped_root()


def scenario_setting() -> str | None:
    """This process's ``$TASKFACTORY_SCENARIOS`` (None: the shipped scenarios),
    to hand to the workers of a build."""
    return os.environ.get(SCENARIOS_ENV) or None


def use_scenario_setting(setting: str | None) -> None:
    """Make ``setting`` (from :func:`scenario_setting`) this process's: a
    build's worker may have started under another, or on another machine
    (where None names its own shipped scenarios)."""
    if setting is None:
        os.environ.pop(SCENARIOS_ENV, None)
    else:
        os.environ[SCENARIOS_ENV] = setting


@lru_cache(maxsize=1)
def _shipped_root() -> Path:
    here = Path(__file__).resolve().parent
    packaged = here / "_scenarios"
    return packaged if packaged.is_dir() else here.parent / "scenarios"


class _Problem(Exception):
    """One problem of a scenario: where it is (``scenario 'x', variable 'y'``) and what is wrong."""

    def __init__(self, where: str, message: str):
        super().__init__(where, message)
        self.where, self.message = where, message


def _fail(where: str, message: str):
    raise _Problem(where, message)


def is_number(value) -> bool:
    """True for a finite int or float (not a bool) of magnitude at most :data:`MAX_MAGNITUDE`."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and abs(value) <= MAX_MAGNITUDE)


def require_number(value, what: str):
    """``value`` when :func:`is_number` holds; else ``ValueError`` naming ``what``
    (for the families' scenario checks: a text, a list or a boolean where the
    family computes with a number)."""
    if not is_number(value):
        raise ValueError(f"{what} ({value!r}) must be a number")
    return value


def require_direction(scenario) -> None:
    """Raise ``ValueError`` unless ``dgp.direction`` is absent, 1 or -1."""
    direction = scenario.dgp.get("direction", 1)
    if isinstance(direction, bool) or direction not in (1, -1):
        raise ValueError(f"dgp direction ({direction!r}) must be 1 or -1")


def _check_scalar(value, what: str, where: str) -> None:
    if isinstance(value, bool):
        _fail(where, f"{what} ({value!r}) must be a number or a name, not a boolean")
    if isinstance(value, (int, float)):
        if not is_number(value):
            _fail(where, f"{what} ({value!r}) must be a finite number of magnitude at most {MAX_MAGNITUDE:g}")
        return
    if isinstance(value, str):
        if not LEVEL.fullmatch(value):
            _fail(where, f"{what} ({value!r}) must be a number or a name matching {LEVEL.pattern}")
        return
    _fail(where, f"{what} ({value!r}) must be a number or a name")


def _check_plain(value, what: str, where: str, mapping_ok: bool) -> None:
    """Refuse anything but a number, a name, a flat list of those, or (when
    ``mapping_ok``) one mapping of names to those."""
    if isinstance(value, dict):
        if not mapping_ok:
            _fail(where, f"{what} is a mapping nested in a mapping; use numbers, names and flat lists of those")
        for key, item in value.items():
            if not (isinstance(key, str) and IDENT.fullmatch(key)):
                _fail(where, f"{what} has the key {key!r}; keys must match {IDENT.pattern}")
            _check_plain(item, f"{what}.{key}", where, mapping_ok=False)
        return
    if isinstance(value, list):
        if not value:
            _fail(where, f"{what} is an empty list")
        for i, item in enumerate(value):
            if isinstance(item, (list, dict)):
                _fail(where, f"{what} nests a {'list' if isinstance(item, list) else 'mapping'} in a list; "
                      "lists hold numbers and names only")
            _check_scalar(item, f"{what}[{i}]", where)
        return
    _check_scalar(value, what, where)


def _template_fields(text: str, key: str, where: str) -> set[str]:
    """The names ``text`` fills in; each field must be bare, like ``{n}``."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        _fail(where, f"{key} is not a valid template ({exc}); write {{{{ and }}}} for braces")
    names = set()
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if spec or conversion is not None or not IDENT.fullmatch(name):
            shown = "{" + name + (f"!{conversion}" if conversion is not None else "") + (f":{spec}" if spec else "") + "}"
            _fail(where, f"{key} holds the field '{shown}'; only bare fields such as {{n}} are allowed "
                  "(no format spec, conversion, attribute or index)")
        names.add(name)
    return names


def _is_number_text(text: str) -> bool:
    """True when R or pandas could read ``text`` as a number."""
    if HEX.fullmatch(text):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_levels(levels, where: str) -> tuple[str, ...]:
    if not (isinstance(levels, list) and len(levels) >= 2):
        _fail(where, "a category variable needs a list of at least 2 levels")
    for lv in levels:
        if not isinstance(lv, str):
            kind = "a boolean" if isinstance(lv, bool) else "a number" if isinstance(lv, (int, float)) else \
                f"a {type(lv).__name__}"
            _fail(where, f"level {lv!r} is {kind}; levels must be names (quote them in the file)")
        if not LEVEL.fullmatch(lv):
            _fail(where, f"level {lv!r} must match {LEVEL.pattern}")
        if R_SPECIAL.fullmatch(lv):
            _fail(where, f"level {lv!r} is read by R as a logical, NA or a special number; choose another name")
        if _is_number_text(lv):
            _fail(where, f"level {lv!r} is a number; levels must not be numbers (R and pandas would read the "
                  "column as numeric)")
    if len(set(levels)) != len(levels):
        _fail(where, "levels must be distinct")
    if sorted(levels) != sorted(levels, key=str.lower):
        _fail(where, "levels must sort the same with and without case (R's collation differs by locale)")
    return tuple(levels)


def _dist_ok(kind: str, arg, levels) -> bool:
    if kind == "poisson":
        return is_number(arg) and arg > 0
    if kind == "choice":
        return (isinstance(arg, list) and levels is not None and len(arg) == len(levels)
                and all(is_number(w) and w >= 0 for w in arg) and sum(arg) > 0)
    if not (isinstance(arg, list) and len(arg) == 2 and all(is_number(x) for x in arg)):
        return False
    if kind in ("normal", "lognormal"):
        return arg[1] > 0
    if kind == "integers":
        return all(isinstance(x, int) for x in arg) and arg[0] <= arg[1]
    return arg[0] < arg[1]


def _parse_dist(dist: dict, vtype: str, levels, where: str) -> dict:
    kind, arg = next(iter(dist.items()))
    if vtype in LABEL_TYPES:
        _fail(where, f"a{'n' if vtype in ('id', 'unit') else ''} {vtype} variable takes no dist")
    if (kind == "choice") != (vtype == "category"):
        _fail(where, "a category variable takes dist 'choice', and only it does")
    if not _dist_ok(kind, arg, levels):
        _fail(where, f"dist {kind} ({arg!r}) needs {DIST_PARAMETERS[kind]}; numbers finite and at most "
              f"{MAX_MAGNITUDE:g} in magnitude")
    return dict(dist)


def _parse_variable(entry, where: str) -> Variable:
    """A :class:`Variable` from a well-formed variable entry (see
    :func:`scenario_file_model`): the rules that tie its keys to its type."""
    where = f"{where}, variable '{entry.name}'"
    given, vtype = entry.model_fields_set, entry.type
    rng = entry.range
    if vtype in NUMERIC_TYPES:
        if rng is None:
            _fail(where, f"range ({rng!r}) must be [low, high] with low < high, finite numbers at most "
                  f"{MAX_MAGNITUDE:g} in magnitude")
        rng = (float(rng[0]), float(rng[1]))
    elif rng is not None:
        _fail(where, f"a {vtype} variable takes no range")
    if "decimals" in given and vtype != "numeric":
        _fail(where, f"a {vtype} variable takes no decimals")
    levels = entry.levels
    if vtype == "category":
        levels = _parse_levels(levels, where)
    elif levels is not None:
        _fail(where, f"a {vtype} variable takes no levels")
    dist = entry.dist
    if dist is not None:
        dist = _parse_dist(dist, vtype, levels, where)
    if "prefix" in given and vtype not in ("id", "cluster", "unit"):
        _fail(where, f"a {vtype} variable takes no prefix")
    relates = entry.relates
    if relates is not None:
        if vtype not in NUMERIC_TYPES or dist is None:
            _fail(where, "only a numeric extra column with a 'dist' takes 'relates'")
        relates = {"to": relates.to, "r": float(relates.r)}
    if entry.per is not None and dist is None:
        _fail(where, "only an extra column with a 'dist' takes 'per'")
    return Variable(name=entry.name, label=entry.label.strip(), type=vtype, unit=entry.unit or "", range=rng,
                    decimals=entry.decimals, levels=levels, dist=dist, prefix=entry.prefix, relates=relates,
                    per_unit=entry.per == "unit")


@lru_cache(maxsize=1)
def _models() -> tuple:
    """The pydantic models of a scenario file and of one scenario: their keys,
    the type and range of each, and what each means (``taskfactory schema
    scenario`` prints them as JSON Schema). What ties keys together (a
    variable's type and its range, levels and dist; the roles, extras and
    templates of a scenario) :func:`parse_scenario` checks by hand. Built on
    first use, so that pydantic loads only when a scenario file is read."""
    from typing import Annotated, Any, Literal

    from pydantic import AfterValidator, AllowInfNan, BaseModel, ConfigDict, Field, Strict, StrictInt, StrictStr

    def text(key: str) -> Any:
        return Annotated[StrictStr, AfterValidator(_non_blank), worded(f"needs a non-empty '{key}'")]

    def identifier(what: str) -> Any:
        return Annotated[StrictStr, Field(pattern=IDENT.pattern), worded(f"{what} ({{got}}) must match {IDENT.pattern}")]

    Number = Annotated[float, Strict(), AllowInfNan(False), Field(ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]

    class Relates(BaseModel):
        """How an extra column relates to a numeric column of the test."""

        model_config = ConfigDict(extra="forbid")
        to: StrictStr = Field(description="The numeric column of the test the extra column relates to.")
        r: Annotated[Number, AfterValidator(_relation)] = Field(
            description=f"The rank correlation the values are reordered to, 0 < |r| <= {MAX_RELATION:g}.")

    class VariableEntry(BaseModel):
        """One column of the scenario's dataset, as its data dictionary describes it."""

        model_config = ConfigDict(extra="forbid")
        name: identifier("variable name") = Field(description="Column name in the CSV.")
        label: text("label") = Field(description="What the column holds, in words (the data dictionary's label).")
        type: Annotated[Literal[TYPES], worded(f"type ({{got}}) must be one of {', '.join(TYPES)}")] = Field(
            description="id (the row id), cluster, unit or period (row labels a family's design numbers), "
                        "numeric, integer or category.")
        unit: Annotated[StrictStr, worded("unit ({got}) must be text")] | None = Field(
            None, description="Unit of measurement shown in the data dictionary.")
        range: Annotated[list[Number], Field(min_length=2, max_length=2), AfterValidator(_increasing),
                         worded(f"range ({{got}}) must be [low, high] with low < high, finite numbers at most "
                                f"{MAX_MAGNITUDE:g} in magnitude", inside=True)] | None = Field(
            None, description="Plausible range [low, high] of a numeric or integer column (required for them); "
                              "values outside it are impossible.")
        decimals: Annotated[StrictInt, Field(ge=0, le=6), worded("decimals ({got}) must be an integer from 0 to 6")] \
            = Field(0, description="Decimals a numeric column is rounded to.")
        levels: Annotated[list[Any], worded("levels ({got}) must be a list of names")] | None = Field(
            None, description="The levels of a category column: at least 2 distinct quoted names that R reads as "
                              "text, sorting the same with and without case.")
        dist: Annotated[dict[Literal[DISTS], Any], Field(min_length=1, max_length=1),
                        worded(f"dist ({{got}}) must be one mapping with one of {', '.join(DISTS)}", inside=True)] \
            | None = Field(None, description="How an extra column is drawn: one of "
                                             + "; ".join(f"{k}: {v}" for k, v in DIST_PARAMETERS.items()) + ".")
        prefix: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_-]*$"),
                          worded("prefix ({got}) must be letters, digits, '_' or '-'")] = Field(
            "", description="Text before the number of an id, cluster or unit label (P1, P2 ...).")
        relates: Annotated[Relates, worded(f"relates ({{got}}) must be {{to: <a numeric test column>, r: <a rank "
                                           f"correlation, 0 < |r| <= {MAX_RELATION:g}>}}", inside=True)] | None = \
            Field(None, description="An extra numeric column related to a numeric column of the test (and then "
                                    "driving the MAR blanks).")
        per: Annotated[Literal["unit"], worded("per ({got}) must be unit")] | None = Field(
            None, description="unit: the extra column is a property of the unit measured repeatedly (population, "
                              "floor area), drawn once per unit and the same in all its rows; without it a value "
                              "is drawn per row (a reading of that period).")

    class ScenarioEntry(BaseModel):
        """One real-world setting the tasks of a question kind are dressed in."""

        model_config = ConfigDict(extra="forbid")
        id: identifier("scenario id") = Field(description="Identifier of the scenario, unique in its file.")
        domain: text("domain") = Field(description="Field of application (medicine, ecology ...).")
        title: text("title") = Field(description="One-line title.")
        context: text("context") = Field(
            description="The setting put to the agent; may name {n}, the roles that are not lists, the drawn fields "
                        "of a question without a dataset and the question words of the dgp's families, as bare "
                        "fields; {{ and }} are literal braces.")
        question: text("question") = Field(description="The question put to the agent; fields as in context.")
        roles: Annotated[dict[Any, Any], worded("needs a 'roles' mapping")] | None = Field(
            None, description="What each column or reference value plays in the test (outcome, group, mu0 ...): "
                              "numbers, names, flat lists of those, or one mapping of names to those; required "
                              "when the kind has a dataset.")
        variables: Annotated[list[VariableEntry], worded("needs a 'variables' list")] | None = Field(
            None, description="The columns of the dataset: exactly one id, the columns the roles name, and 1 to 3 "
                              "extras; none for a question without a dataset.")
        dgp: Annotated[dict[Any, Any], Field(min_length=1), worded(
            "needs a 'dgp' mapping from each method the scenario supports to its parameters")] = Field(
            description="The families (siblings of the kind) the scenario supports, each mapped to the parameters "
                        "of its data-generating process.")

    class ScenarioFile(BaseModel):
        """The scenarios of one question kind, shared by the families that answer it."""

        model_config = ConfigDict(extra="forbid", title="taskfactory scenario file")
        kind: Annotated[StrictStr, worded("kind ({got}) must be text")] = Field(
            description="The question kind; must match the file name (two_groups for two_groups.yaml).")
        scenarios: Annotated[list[ScenarioEntry], Field(min_length=1),
                             worded("'scenarios' must be a non-empty list")] = Field(
            description="The scenarios of the kind.")

    return ScenarioFile, ScenarioEntry


def scenario_file_model():
    """The pydantic model of a scenario file (see :func:`_models`)."""
    return _models()[0]


def _non_blank(text: str) -> str:
    if not text.strip():
        raise ValueError(text)
    return text


def _increasing(pair: list) -> list:
    if not pair[0] < pair[1]:
        raise ValueError(pair)
    return pair


def _relation(r: float) -> float:
    if not 0 < abs(r) <= MAX_RELATION:
        raise ValueError(r)
    return r


def _scenario_where(raw, loc: tuple, label: str | None) -> str | None:
    """Where ``loc`` (inside scenario ``raw``) is: ``scenario 'x'``, and
    ``variable 'y'`` inside one of its variables; ``label`` names a scenario
    whose id is unusable."""
    sid = raw.get("id") if isinstance(raw, dict) else None
    where = f"scenario '{sid}'" if isinstance(sid, str) and IDENT.fullmatch(sid) else label
    if len(loc) >= 2 and loc[0] == "variables":
        var = raw["variables"][loc[1]]
        name = var.get("name") if isinstance(var, dict) else None
        part = f"variable '{name}'" if isinstance(name, str) and IDENT.fullmatch(name) else f"variables[{loc[1]}]"
        where = f"{where}, {part}" if where else part
    return where


def _structure(model, raw, problems: Problems, label: str | None = None):
    """``raw`` validated by scenario ``model``; None, with its problems, when malformed."""
    from pydantic import ValidationError

    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            problems.add(*translate(error, model, lambda loc: _scenario_where(raw, loc, label),
                                    "each scenario must be a mapping"))
    return None


def parse_scenario(raw, kind: str, where: str, has_data: bool = True, fields: tuple[str, ...] = (),
                   words: dict | None = None) -> Scenario:
    """Validate one scenario mapping of question kind ``kind``'s file (``where``
    names the file); every problem is reported in one :class:`ScenarioError`
    line. Its ``dgp`` maps each family the scenario supports to that family's
    parameters.

    A family without a dataset (``has_data`` False: a closed-form task) has
    no variables and may have no roles; its texts may name the drawn
    ``fields`` (``{successes}``), which the task fills in.

    The texts may also name a question word (``{error_rate}``) that every
    family of the scenario's ``dgp`` defines (``words`` maps a family to the
    names of its words, ``Family.question_words``); a word one of them lacks
    is refused."""
    problems = Problems(where, ScenarioError, joiner=", ")
    entry = _structure(_models()[1], raw, problems)
    scenario = entry and _check_scenario(entry, kind, where, has_data, fields, words, problems)
    problems.raise_any()
    return scenario


def _check_scenario(entry, kind: str, source: str, has_data: bool, fields: tuple[str, ...], words: dict | None,
                    problems: Problems) -> Scenario | None:
    """The :class:`Scenario` of a well-formed entry when the rules that tie
    its keys together hold; else None, with every problem found in ``problems``."""
    where = f"scenario '{entry.id}'"
    found = len(problems)
    roles = entry.roles if entry.roles is not None else ({} if not has_data else None)
    raw_vars = entry.variables if entry.variables is not None else ([] if not has_data else None)
    try:
        if roles is None or (has_data and not roles):
            _fail(where, "needs a 'roles' mapping")
        for role, value in roles.items():
            if not (isinstance(role, str) and IDENT.fullmatch(role)):
                _fail(where, f"role ({role!r}) must match {IDENT.pattern}")
            _check_plain(value, f"role '{role}'", where, mapping_ok=True)
        if raw_vars is None:
            _fail(where, "needs a 'variables' list")
        if not has_data and raw_vars:
            _fail(where, f"'{kind}' asks a question without a dataset; its scenarios take no variables")
    except _Problem as problem:
        problems.add(problem.message, problem.where)
        return None
    variables = []
    for raw_var in raw_vars:
        try:
            variables.append(_parse_variable(raw_var, where))
        except _Problem as problem:
            problems.add(problem.message, problem.where)
    dgp = {}
    try:
        for method, params in entry.dgp.items():
            if not (isinstance(method, str) and IDENT.fullmatch(method)):
                _fail(where, f"dgp method ({method!r}) must match {IDENT.pattern}")
            params = {} if params is None else params
            if not isinstance(params, dict):
                _fail(where, f"dgp must map each method the scenario supports to its parameters; '{method}' holds "
                      f"{params!r}")
            for key, value in params.items():
                if not (isinstance(key, str) and IDENT.fullmatch(key)):
                    _fail(where, f"dgp key ({key!r}) of {method} must match {IDENT.pattern}")
                _check_plain(value, f"dgp {method}.{key}", where, mapping_ok=True)
            dgp[method] = dict(params)
    except _Problem as problem:
        problems.add(problem.message, problem.where)
        dgp = None
    try:
        if len(variables) == len(raw_vars):
            _check_columns(variables, roles, has_data, where)
        texts = _check_texts(entry, roles, dgp, fields, words, where) if dgp is not None else None
    except _Problem as problem:
        problems.add(problem.message, problem.where)
        return None
    if len(problems) > found:
        return None
    return Scenario(id=entry.id, kind=kind, domain=entry.domain.strip(), title=entry.title.strip(),
                    context=texts["context"], question=texts["question"], roles=dict(roles),
                    variables=tuple(variables), dgp=dgp, source=source)


def _check_columns(variables: list[Variable], roles: dict, has_data: bool, where: str) -> None:
    """The columns of a scenario: distinct names, one id, the design labels
    the test uses, 1 to 3 extras each with a dist, and relations to a numeric
    column of the test only."""
    names = [v.name for v in variables]
    if len(set(names)) != len(names):
        _fail(where, "variable names must be distinct")
    if has_data and sum(v.type == "id" for v in variables) != 1:
        _fail(where, "needs exactly one variable of type 'id'")
    used = set()
    for value in roles.values():
        for col in value if isinstance(value, list) else [value]:
            if isinstance(col, str) and col in names:
                used.add(col)
    extras = [v for v in variables if v.type != "id" and v.name not in used]
    unused_labels = [v for v in extras if v.type in DESIGN_TYPES]
    if unused_labels:
        _fail(where, f"{unused_labels[0].type} variable '{unused_labels[0].name}' must play a role of the test")
    if has_data and not 1 <= len(extras) <= 3:
        _fail(where, f"needs 1 to 3 extra columns the test does not use, has {len(extras)}")
    for v in extras:
        if v.dist is None:
            _fail(where, f"extra variable '{v.name}' needs a 'dist'")
        if v.per_unit and not any(u.type == "unit" for u in variables):
            _fail(where, f"extra variable '{v.name}' is drawn per unit, but the dataset has no unit column")
    numeric_used = {v.name for v in variables if v.name in used and v.type in NUMERIC_TYPES}
    for v in variables:
        if v.relates is not None and (v.name in used or v.relates["to"] not in numeric_used):
            _fail(where, f"variable '{v.name}' relates to '{v.relates['to']}'; an extra column may relate only to a "
                  f"numeric column the test uses ({', '.join(sorted(numeric_used)) or 'none'})")


def _check_texts(entry, roles: dict, dgp: dict, fields: tuple[str, ...], words: dict | None, where: str) -> dict:
    """The context and question on one line each, once each field they name
    is ``{n}``, a role, a drawn field or a question word every family of the
    dgp defines."""
    allowed = {"n"} | {k for k, v in roles.items() if not isinstance(v, list)} | set(fields)
    defined = {m: frozenset((words or {}).get(m, ())) for m in dgp}
    texts = {}
    for key in ("context", "question"):
        texts[key] = " ".join(getattr(entry, key).split())
        bad = sorted(_template_fields(texts[key], key, where) - allowed)
        for word in list(bad):
            lacking = sorted(m for m in dgp if word not in defined[m])
            if not lacking:
                bad.remove(word)
            elif len(lacking) < len(dgp):
                _fail(where, f"{key} names '{{{word}}}', a question word '{lacking[0]}' does not define; every "
                      "method of the dgp must define the words its scenario names")
        if bad:
            _fail(where, f"{key} names '{{{bad[0]}}}'; allowed: {', '.join('{' + a + '}' for a in sorted(allowed))}")
    return texts


def parse_file(path: Path, has_data: bool = True, fields: tuple[str, ...] = (),
               words: dict | None = None) -> list[Scenario]:
    """Read and validate the scenario file of one question kind; every
    problem is reported in one :class:`ScenarioError` line. The scenarios it
    returns are shared by the kind's families: ``method`` holds the kind and
    ``dgp`` the parameters per family (see :meth:`Scenario.for_family`).
    ``fields`` and ``words`` are the template fields the texts may name
    besides ``{n}`` and the roles (see :func:`parse_scenario`)."""
    from pydantic import ValidationError

    source = str(path)
    raw = load_yaml(path, ScenarioError, "scenario file")
    problems = Problems(source, ScenarioError, joiner=", ")
    file_model, entry_model = _models()
    try:
        entries = list(enumerate(file_model.model_validate(raw).scenarios))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        whole = [e for e in errors if len(e["loc"]) < 2 or e["loc"][0] != "scenarios"]
        for error in whole:
            problems.add(*translate(error, file_model, lambda loc: None,
                                    "must be a mapping with exactly the keys 'kind' and 'scenarios'"))
        problems.raise_any()
        listed = raw["scenarios"]
        entries = [(i, _structure(entry_model, s, problems, f"scenarios[{i}]")) for i, s in enumerate(listed)]
    if raw["kind"] != path.stem:
        problems.add(f"kind ({raw['kind']!r}) must match the file name ({path.stem!r})")
    out = [_check_scenario(entry, path.stem, source, has_data, fields, words, problems)
           for _, entry in entries if entry is not None]
    ids = [s.get("id") for s in raw["scenarios"] if isinstance(s, dict)]
    dup = sorted({i for i in ids if isinstance(i, str) and ids.count(i) > 1})
    if dup:
        problems.add(f"scenario id '{dup[0]}' appears twice")
    problems.raise_any()
    return out
