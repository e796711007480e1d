"""Scenarios: the real-world settings a family's tasks are dressed in.

A scenario is data, not code. ``scenarios/<method>.yaml`` holds every scenario of
one family::

    method: welch_t
    scenarios:
      - id: bp_trial
        domain: medicine
        title: Blood pressure under a new antihypertensive
        context: A clinic randomised {n} adults with hypertension ...
        question: Does mean systolic blood pressure differ between the arms?
        roles: {outcome: sbp, group: arm}
        variables:
          - {name: patient, label: Patient identifier, type: id, prefix: P}
          - {name: arm, label: Treatment arm, type: category, levels: [drug, placebo]}
          - {name: sbp, label: Systolic blood pressure, unit: mmHg, type: numeric,
             range: [70, 250], decimals: 0}
          - {name: age, label: Age, unit: years, type: integer, range: [18, 100],
             dist: {normal: [58, 11]}}
        dgp: {mean: 142, sd: 16, direction: -1}

``context`` and ``question`` may name ``{n}`` and the family's reference values
(``{mu0}``, ``{p0}`` ...); write ``{{`` and ``}}`` for literal braces.
Variables not named in ``roles`` (besides the id) are extras, drawn from ``dist``.
"""

from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from .errors import ScenarioError

IDENT = re.compile(r"^[a-z][a-z0-9_]*$")
LEVEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.+<>=/-]*$")
TYPES = ("id", "numeric", "integer", "category")
DISTS = ("normal", "lognormal", "uniform", "poisson", "integers", "choice")
SCENARIO_KEYS = ("id", "domain", "title", "context", "question", "roles", "variables", "dgp")
VARIABLE_KEYS = ("name", "label", "type", "unit", "range", "decimals", "levels", "dist", "prefix")
R_NA_STRINGS = ("NA", "NaN", "Inf", "-Inf", "TRUE", "FALSE", "T", "F")


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

    def spec(self) -> dict:
        """The column specification the data-generating code sees."""
        out = {"name": self.name, "type": self.type}
        if self.type == "id":
            out["prefix"] = self.prefix
        if self.range is not None:
            out["range"] = [float(self.range[0]), float(self.range[1])]
        if self.type == "numeric":
            out["decimals"] = self.decimals
        if self.levels is not None:
            out["levels"] = list(self.levels)
        if self.dist is not None:
            out["dist"] = self.dist
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
    """A validated scenario of one family."""

    id: str
    method: str
    domain: str
    title: str
    context: str
    question: str
    roles: dict
    variables: tuple[Variable, ...]
    dgp: dict = field(default_factory=dict)

    def variable(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def id_column(self) -> str:
        return next(v.name for v in self.variables if v.type == "id")

    def columns(self) -> list[dict]:
        return [v.spec() for v in self.variables]

    def data_dictionary(self) -> list[dict]:
        return [v.dictionary_entry() for v in self.variables]

    def ranges(self) -> dict[str, tuple[float, float]]:
        """Plausible range of every numeric column, by name."""
        return {v.name: v.range for v in self.variables if v.range is not None}

    def fill(self, text: str, n: int) -> str:
        """Fill ``{n}`` and the reference values into a context or question."""
        values = {"n": n, **{k: v for k, v in self.roles.items() if not isinstance(v, (list, dict))}}
        return text.format_map(values)


def scenario_root() -> Path:
    """The folder holding ``<method>.yaml`` scenario files.

    ``$TASKFACTORY_SCENARIOS`` when set; else the copy installed with the
    package; else ``scenarios/`` beside the package (an editable install).
    """
    env = os.environ.get("TASKFACTORY_SCENARIOS")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    packaged = here / "_scenarios"
    if packaged.is_dir():
        return packaged
    return here.parent / "scenarios"


def _fail(where: str, message: str):
    raise ScenarioError(f"{where}: {message}")


def _template_fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_variable(raw, where: str) -> Variable:
    if not isinstance(raw, dict):
        _fail(where, "each variable must be a mapping")
    unknown = sorted(set(raw) - set(VARIABLE_KEYS))
    if unknown:
        _fail(where, f"unknown variable key '{unknown[0]}'; allowed: {', '.join(VARIABLE_KEYS)}")
    name = raw.get("name")
    if not isinstance(name, str) or not IDENT.match(name):
        _fail(where, f"variable name ({name!r}) must match {IDENT.pattern}")
    where = f"{where}, variable '{name}'"
    vtype = raw.get("type")
    if vtype not in TYPES:
        _fail(where, f"type ({vtype!r}) must be one of {', '.join(TYPES)}")
    label = raw.get("label")
    if not isinstance(label, str) or not label.strip():
        _fail(where, "needs a non-empty 'label'")
    rng = raw.get("range")
    if vtype in ("numeric", "integer"):
        if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) for x in rng) and rng[0] < rng[1]):
            _fail(where, f"range ({rng!r}) must be [low, high] with low < high")
        rng = (float(rng[0]), float(rng[1]))
    elif rng is not None:
        _fail(where, f"a {vtype} variable takes no range")
    decimals = raw.get("decimals", 0)
    if vtype == "numeric" and not (isinstance(decimals, int) and 0 <= decimals <= 6):
        _fail(where, f"decimals ({decimals!r}) must be an integer from 0 to 6")
    levels = raw.get("levels")
    if vtype == "category":
        if not (isinstance(levels, list) and len(levels) >= 2):
            _fail(where, "a category variable needs a list of at least 2 levels")
        levels = tuple(str(x) for x in levels)
        if len(set(levels)) != len(levels):
            _fail(where, "levels must be distinct")
        for lv in levels:
            if not LEVEL.match(lv) or lv in R_NA_STRINGS:
                _fail(where, f"level ({lv!r}) must match {LEVEL.pattern} and not be one of {', '.join(R_NA_STRINGS)}")
        if any(_is_number(lv) for lv in levels):
            _fail(where, "levels must not be numbers (R and pandas would read the column as numeric)")
        if sorted(levels) != sorted(levels, key=str.lower):
            _fail(where, "levels must sort the same with and without case (R's collation differs by locale)")
    elif levels is not None:
        _fail(where, f"a {vtype} variable takes no levels")
    dist = raw.get("dist")
    if dist is not None:
        if not (isinstance(dist, dict) and len(dist) == 1 and next(iter(dist)) in DISTS):
            _fail(where, f"dist ({dist!r}) must be one mapping with one of {', '.join(DISTS)}")
        kind = next(iter(dist))
        if (kind == "choice") != (vtype == "category"):
            _fail(where, "a category variable takes dist 'choice', and only it does")
        if kind == "choice" and len(dist["choice"]) != len(levels):
            _fail(where, "dist 'choice' needs one weight per level")
    prefix = raw.get("prefix", "")
    if not isinstance(prefix, str) or not re.match(r"^[A-Za-z0-9_-]*$", prefix):
        _fail(where, f"prefix ({prefix!r}) must be letters, digits, '_' or '-'")
    return Variable(name=name, label=label.strip(), type=vtype, unit=str(raw.get("unit") or ""),
                    range=rng, decimals=decimals if vtype == "numeric" else 0,
                    levels=levels, dist=dist, prefix=prefix)


def parse_scenario(raw, method: str, where: str) -> Scenario:
    """Validate one scenario mapping of ``method``'s file."""
    if not isinstance(raw, dict):
        _fail(where, "each scenario must be a mapping")
    sid = raw.get("id")
    if not isinstance(sid, str) or not IDENT.match(sid):
        _fail(where, f"scenario id ({sid!r}) must match {IDENT.pattern}")
    where = f"{where}, scenario '{sid}'"
    unknown = sorted(set(raw) - set(SCENARIO_KEYS))
    if unknown:
        _fail(where, f"unknown key '{unknown[0]}'; allowed: {', '.join(SCENARIO_KEYS)}")
    for key in ("domain", "title", "context", "question"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            _fail(where, f"needs a non-empty '{key}'")
    roles = raw.get("roles")
    if not isinstance(roles, dict) or not roles:
        _fail(where, "needs a 'roles' mapping")
    raw_vars = raw.get("variables")
    if not isinstance(raw_vars, list):
        _fail(where, "needs a 'variables' list")
    variables = tuple(_parse_variable(v, where) for v in raw_vars)
    names = [v.name for v in variables]
    if len(set(names)) != len(names):
        _fail(where, "variable names must be distinct")
    if sum(v.type == "id" for v in variables) != 1:
        _fail(where, "needs exactly one variable of type 'id'")
    used = set()
    for role, value in roles.items():
        for col in value if isinstance(value, list) else [value]:
            if isinstance(col, str) and col in names:
                used.add(col)
    extras = [v for v in variables if v.type != "id" and v.name not in used]
    if not 1 <= len(extras) <= 3:
        _fail(where, f"needs 1 to 3 extra columns the test does not use, has {len(extras)}")
    for v in extras:
        if v.dist is None:
            _fail(where, f"extra variable '{v.name}' needs a 'dist'")
    dgp = raw.get("dgp") or {}
    if not isinstance(dgp, dict):
        _fail(where, "'dgp' must be a mapping")
    scen = Scenario(id=sid, method=method, domain=raw["domain"].strip(), title=raw["title"].strip(),
                    context=" ".join(raw["context"].split()), question=" ".join(raw["question"].split()),
                    roles=dict(roles), variables=variables, dgp=dict(dgp))
    allowed = {"n"} | {k for k, v in roles.items() if not isinstance(v, (list, dict))}
    for key in ("context", "question"):
        try:
            fields = _template_fields(getattr(scen, key))
        except ValueError as exc:
            _fail(where, f"{key} is not a valid template ({exc}); write {{{{ and }}}} for braces")
        bad = sorted(fields - allowed)
        if bad:
            _fail(where, f"{key} names '{{{bad[0]}}}'; allowed: {', '.join('{' + a + '}' for a in sorted(allowed))}")
    return scen


def parse_file(path: Path) -> list[Scenario]:
    """Read and validate one scenario file."""
    where = str(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        _fail(where, f"not valid YAML ({str(exc).splitlines()[0]})")
    if not isinstance(raw, dict) or set(raw) != {"method", "scenarios"}:
        _fail(where, "must be a mapping with exactly the keys 'method' and 'scenarios'")
    if raw["method"] != path.stem:
        _fail(where, f"method ({raw['method']!r}) must match the file name ({path.stem!r})")
    if not isinstance(raw["scenarios"], list) or not raw["scenarios"]:
        _fail(where, "'scenarios' must be a non-empty list")
    out = [parse_scenario(s, path.stem, where) for s in raw["scenarios"]]
    ids = [s.id for s in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        _fail(where, f"scenario id '{dup[0]}' appears twice")
    return out


@lru_cache(maxsize=None)
def _load(root: str, method: str) -> tuple[Scenario, ...]:
    path = Path(root) / f"{method}.yaml"
    if not path.is_file():
        raise ScenarioError(f"{path}: no scenario file for method '{method}'")
    from .registry import get_family

    family = get_family(method)
    scenarios = parse_file(path)
    for scen in scenarios:
        family.check_scenario(scen)
    return tuple(scenarios)


def load_scenarios(method: str) -> tuple[Scenario, ...]:
    """Every scenario of ``method``, validated against the family's needs."""
    return _load(str(scenario_root()), method)


def get_scenario(method: str, scenario_id: str) -> Scenario:
    for scen in load_scenarios(method):
        if scen.id == scenario_id:
            return scen
    allowed = ", ".join(s.id for s in load_scenarios(method))
    raise ScenarioError(f"method '{method}' has no scenario '{scenario_id}'; allowed: {allowed}")
