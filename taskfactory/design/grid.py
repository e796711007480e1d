"""Grid files: the design a corpus is built from.

A grid names methods x scenarios x sample sizes x effect levels x perturbations
x seeds x prompt styles; its product, less the ``exclude`` rules, is the set of
tasks. :func:`load_grid` validates a grid file (or a mapping) and reports
every problem in one :class:`GridError` line, each naming the key and the
allowed values: the shape of the file is declared by :func:`grid_model`
(pydantic), what depends on the registered families is checked here. The file is read strictly (see :mod:`taskfactory.readers`); a grid of
more than ``max_tasks`` tasks is refused before anything is built.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Iterator, NamedTuple

from ..effects import EffectLevel, level_schema, parse_effect
from ..errors import GridError, TaskFactoryError, did_you_mean
from ..readers import load_yaml
from ..registry import family_names, get_family
from ..validation import Problems, path_text, translate, worded
from . import perturb
from .catalogue import load_scenarios
from .prompts import STYLES

EXCLUDE_KEYS = ("method", "scenario", "n", "effect", "perturbation", "seed", "prompt_style")
CELL_KEYS = ("method", "scenario", "n", "effect", "perturbation")
DEFAULT_EFFECTS = ("null", "borderline", "medium")
MAX_N = 1_000_000
MAX_SEEDS = 100_000
MAX_SAMPLE_SIZES = 1000
MAX_EFFECTS = 100
MAX_EXCLUDE_RULES = 1000
MAX_SEED = 2**63             # the grid's seed is below this
MAX_SHARD_ROWS = 1_000_000
DEFAULT_SHARD_ROWS = 100_000
DEFAULT_ALPHA = 0.05
DEFAULT_MAX_TASKS = 100_000_000
DEFAULT_MAX_REJECT_SHARE = 0.02


class CellSeeds(NamedTuple):
    """Which (seed, prompt style) pairs of one cell the ``exclude`` rules keep.

    ``dropped`` holds, for each prompt style of the grid in order, the seeds
    the rules drop: a frozenset, or None when they drop every seed; ``kept``
    the number of seeds kept per style, ``tasks`` their sum and ``datasets``
    the number of seeds kept under at least one style.
    """

    dropped: tuple
    kept: tuple
    tasks: int
    datasets: int

    @classmethod
    def of(cls, seeds: int, dropped: tuple) -> CellSeeds:
        kept = tuple(0 if d is None else seeds - len(d) for d in dropped)
        partial = [d for d in dropped if d is not None]
        datasets = seeds - len(frozenset.intersection(*partial)) if partial else 0
        return cls(dropped, kept, sum(kept), datasets)

    def keeps(self, seed: int, style_index: int) -> bool:
        dropped = self.dropped[style_index]
        return dropped is not None and seed not in dropped


class CellBlock(NamedTuple):
    """The cells of one (method, scenario) that keep a task, as ``(n, effect,
    perturbation, CellSeeds)`` in build order, and their number of tasks."""

    cells: tuple
    tasks: int


class Coord(NamedTuple):
    """The coordinates of one task."""

    method: str
    scenario: str
    n: int
    effect: EffectLevel
    perturbation: str
    seed: int
    prompt_style: str
    split: str


@dataclass(frozen=True)
class Grid:
    """A validated grid. Build one with :func:`load_grid`."""

    name: str
    seed: int
    methods: tuple[str, ...]
    scenarios: dict
    n: tuple[int, ...]
    effects: tuple[EffectLevel, ...]
    prompt_styles: tuple[str, ...]
    perturbations: tuple[str, ...]
    seeds: int
    exclude: tuple[dict, ...] = ()
    split: dict | None = None
    shard_rows: int = DEFAULT_SHARD_ROWS
    alpha: float = DEFAULT_ALPHA
    max_tasks: int = DEFAULT_MAX_TASKS
    max_reject_share: float = DEFAULT_MAX_REJECT_SHARE
    source: str = field(default="<grid>", compare=False)

    def normalized(self) -> dict:
        """The grid as canonical plain data (what its sha256 covers); ``max_tasks``
        and ``max_reject_share`` appear only when they are not the default, so
        that setting one to its default keeps the grid's hash."""
        extra = {"max_tasks": self.max_tasks} if self.max_tasks != DEFAULT_MAX_TASKS else {}
        if self.max_reject_share != DEFAULT_MAX_REJECT_SHARE:
            extra["max_reject_share"] = self.max_reject_share
        return {
            "name": self.name, "seed": self.seed, "alpha": self.alpha, "methods": list(self.methods),
            "scenarios": {m: list(s) for m, s in self.scenarios.items()}, "n": list(self.n),
            "effects": [e.name if e.kind in ("null", "borderline", "medium") else
                        {"name": e.name, **({"target_z": e.target_z} if e.target_z is not None else {"size": e.size})}
                        for e in self.effects],
            "prompt_styles": list(self.prompt_styles), "perturbations": list(self.perturbations),
            "seeds": self.seeds, "exclude": [dict(e) for e in self.exclude], "split": self.split,
            "shard_rows": self.shard_rows, **extra,
        }

    @cached_property
    def sha256(self) -> str:
        """The sha256 of :meth:`normalized` as canonical JSON; computed once
        per Grid (a Grid is frozen, so it cannot change)."""
        text = json.dumps(self.normalized(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def split_of(self, method: str, scenario: str) -> str:
        return "test" if scenario in self._held_out().get(method, ()) else "train"

    def _held_out(self) -> dict:
        cached = self.__dict__.get("_held_out_cache")
        if cached is None:
            cached = held_out_scenarios(self)
            object.__setattr__(self, "_held_out_cache", cached)
        return cached

    def splits(self) -> tuple[str, ...]:
        return ("train", "test") if self.split else ("train",)

    def excluded(self, **coords) -> bool:
        """True when an ``exclude`` rule matches the (possibly partial) coordinates.

        A rule matches when every key it names is given and matches.
        """
        candidates = self._rule_masks()[0]
        for key in EXCLUDE_KEYS:
            if not candidates:
                return False
            if key in coords:
                candidates &= self._accepting(key, coords[key])
            else:
                candidates &= ~self._rule_masks()[1].get(key, 0)
        return bool(candidates)

    def _rule_masks(self) -> tuple:
        """``(every rule, {key: rules naming it}, {(key, value): rules naming
        key with value})`` as bit masks over the indices of ``exclude``."""
        cached = self.__dict__.get("_rule_masks_cache")
        if cached is None:
            naming, matching = {}, {}
            for i, rule in enumerate(self.exclude):
                for key, values in rule.items():
                    naming[key] = naming.get(key, 0) | 1 << i
                    for v in values:
                        matching[(key, v)] = matching.get((key, v), 0) | 1 << i
            cached = ((1 << len(self.exclude)) - 1, naming, matching)
            object.__setattr__(self, "_rule_masks_cache", cached)
        return cached

    def cells(self, split: str | None = None) -> Iterator[tuple]:
        """Every (method, scenario, n, effect, perturbation) cell in build order."""
        held = self._held_out()
        for method in self.methods:
            for scenario in self.scenarios[method]:
                if split is not None and (scenario in held.get(method, ())) != (split == "test"):
                    continue
                for n in self.n:
                    for effect in self.effects:
                        for pert in self.perturbations:
                            yield method, scenario, n, effect, pert

    def cell_seeds(self, method: str, scenario: str, n: int, effect: EffectLevel, perturbation: str) -> CellSeeds:
        """The (seed, prompt style) pairs the ``exclude`` rules keep in one cell.

        A rule applies to the cell when every cell key it names (method,
        scenario, n, effect, perturbation) matches; it then drops the seeds
        it lists (every seed when it names none) under the prompt styles it
        lists (every style when it names none). Counting never walks the seeds.
        """
        applying = (self._accepting("method", method) & self._accepting("scenario", scenario)
                    & self._accepting("n", n) & self._accepting("effect", effect.name)
                    & self._accepting("perturbation", perturbation))
        return self._seeds_of(applying)

    def _seeds_of(self, applying: int) -> CellSeeds:
        """The :class:`CellSeeds` of a cell the rules in mask ``applying`` apply to."""
        cache = self.__dict__.setdefault("_cell_seeds_cache", {})
        found = cache.get(applying)
        if found is None:
            found = cache[applying] = self._drop(applying)
        return found

    def _accepting(self, key: str, value) -> int:
        """The exclude rules that accept ``value`` for cell ``key`` (those
        naming it, and those that do not name ``key`` at all), as a bit mask
        over the indices of ``exclude``."""
        every, naming, matching = self._rule_masks()
        return every & (~naming.get(key, 0) | matching.get((key, value), 0))

    def _drop(self, applying: int) -> CellSeeds:
        indices, rest = [], applying
        while rest:                 # the set bits, lowest first
            low = rest & -rest
            indices.append(low.bit_length() - 1)
            rest ^= low
        dropped = []
        for style in self.prompt_styles:
            seeds = set()
            for i in indices:
                rule = self.exclude[i]
                if style not in rule.get("prompt_style", (style,)):
                    continue
                if "seed" not in rule:
                    seeds = None
                    break
                seeds.update(rule["seed"])
            dropped.append(None if seeds is None else frozenset(seeds))
        return CellSeeds.of(self.seeds, tuple(dropped))

    def blocks(self, split: str | None = None) -> Iterator[tuple]:
        """``(method, scenario, CellBlock)`` of every (method, scenario) that
        keeps at least one task, in build order.

        The block lists the pair's cells that keep a task; pairs that the
        ``exclude`` rules treat alike (as a rule that names no method or
        scenario does) share one block object, built once, so that a caller
        can sum a block once and count it as often as it occurs.
        """
        held = self._held_out()
        accept = self._accepting
        by_n = [(n, accept("n", n)) for n in self.n]
        by_effect = [(e, accept("effect", e.name)) for e in self.effects]
        by_pert = [(p, accept("perturbation", p)) for p in self.perturbations]
        cache = self.__dict__.setdefault("_cell_seeds_cache", {})
        blocks = {}                 # rules applying to the pair -> its block
        for method in self.methods:
            m_rules = accept("method", method)
            for scenario in self.scenarios[method]:
                if split is not None and (scenario in held.get(method, ())) != (split == "test"):
                    continue
                ms_rules = m_rules & accept("scenario", scenario)
                block = blocks.get(ms_rules)
                if block is None:
                    cells, tasks = [], 0
                    for n, n_rules in by_n:
                        msn_rules = ms_rules & n_rules
                        for effect, e_rules in by_effect:
                            msne_rules = msn_rules & e_rules
                            for pert, p_rules in by_pert:
                                applying = msne_rules & p_rules
                                kept = cache.get(applying)
                                if kept is None:
                                    kept = self._seeds_of(applying)
                                if kept.tasks:
                                    cells.append((n, effect, pert, kept))
                                    tasks += kept.tasks
                    block = blocks[ms_rules] = CellBlock(tuple(cells), tasks)
                if block.tasks:
                    yield method, scenario, block

    def counted_cells(self, split: str | None = None) -> Iterator[tuple]:
        """``(method, scenario, n, effect, perturbation, CellSeeds)`` of every cell
        that keeps at least one task, in build order."""
        for method, scenario, block in self.blocks(split):
            for n, effect, pert, kept in block.cells:
                yield method, scenario, n, effect, pert, kept

    def count(self) -> int:
        """The number of tasks, counted per cell without walking the seeds."""
        if not self.exclude:
            cells = sum(len(s) for s in self.scenarios.values()) * len(self.n) * len(self.effects) \
                * len(self.perturbations)
            return cells * self.seeds * len(self.prompt_styles)
        return sum(block.tasks for *_, block in self.blocks())

    def tasks(self, split: str | None = None) -> Iterator[Coord]:
        """Every task, in build order (prompt style innermost, so the variants
        of one dataset are neighbours)."""
        held = self._held_out()
        for method, scenario, n, effect, pert, kept in self.counted_cells(split):
            sp = "test" if scenario in held.get(method, ()) else "train"
            for seed in range(self.seeds):
                for i, style in enumerate(self.prompt_styles):
                    if kept.keeps(seed, i):
                        yield Coord(method, scenario, n, effect, pert, seed, style, sp)


def held_out_scenarios(grid: Grid) -> dict:
    """The scenarios of each method the grid holds out for its test split (see :func:`held_out`)."""
    if not grid.split:
        return {}
    return held_out({m: grid.scenarios[m] for m in grid.methods}, grid.split["test"], grid.split["seed"])


def held_out(scenarios: dict, test: float, seed: int) -> dict:
    """The scenarios held out for the test split, per method, of the methods'
    ``scenarios`` (method: its scenario ids).

    Scenarios are held out per question kind, so that sibling families (which
    share the wording of a scenario) hold out the same ones, and kinds that
    share a scenario (closed-form families asking about one story) are pooled,
    so that a scenario falls on one side of the split whatever asks about it:
    of the ``k`` scenarios of a pool, ``max(1, round(test * k))`` (never all)
    are held out, chosen by a hash of the seed, the pool's kinds and the
    scenario. A method keeps at least one scenario in train: when a pool
    would hold out every scenario of one of its methods, the last of them
    (in the pool's order) stays in train for the whole pool, so that a
    scenario is never held out for one method and kept for another.
    """
    kind_of = {method: get_family(method).question_kind for method in scenarios}
    by_kind: dict[str, set] = {}
    for method, ids in scenarios.items():
        by_kind.setdefault(kind_of[method], set()).update(ids)
    held = {}
    for kinds, ids in _pools(by_kind):
        if len(ids) < 2:
            continue
        k = min(len(ids) - 1, max(1, round(test * len(ids))))
        key = "+".join(kinds)
        ranked = sorted(ids, key=lambda s: hashlib.sha256(f"{seed}|{key}|{s}".encode()).hexdigest())
        pool = ranked[:k]   # one list, shared by the pool's kinds, so that a drop below drops it for all of them
        for method, own in scenarios.items():
            if kind_of[method] in kinds:
                chosen = [s for s in pool if s in set(own)]
                if chosen and len(chosen) == len(set(own)):
                    pool.remove(chosen[-1])
        held.update({kind: pool for kind in kinds})
    out = {}
    for method, ids in scenarios.items():
        chosen = [s for s in held.get(kind_of[method], ()) if s in set(ids)]
        if chosen:
            out[method] = frozenset(chosen)
    return out


def _pools(by_kind: dict[str, set]) -> list[tuple[list[str], set]]:
    """The question kinds joined where they share a scenario: (the kinds,
    sorted; their scenarios) of each pool, in the order of their first kind."""
    pools: list[tuple[list[str], set]] = []
    for kind, ids in by_kind.items():
        joined = [pool for pool in pools if pool[1] & ids]
        kinds, merged = sorted([kind, *(k for pool in joined for k in pool[0])]), set(ids).union(*(p[1] for p in joined))
        pools = [pool for pool in pools if pool not in joined] + [(kinds, merged)]
    return pools


def _as_list(value):
    """A lone value stands for a list of one."""
    return value if isinstance(value, list) else [value]


def _alternatives(*schemas: dict):
    """The JSON Schema of a key that takes any of several forms (a lone value
    or a list; ``all`` or a list), where pydantic validates the one form it
    normalises them to."""
    from pydantic import WithJsonSchema

    return WithJsonSchema({"anyOf": list(schemas)})


def _one_line(name: str) -> str:
    if not name.strip() or len(name) > 200 or not name.isprintable():
        raise ValueError(name)
    return name


def _list_message(what: str, limit: int):
    def message(value) -> str:
        if isinstance(value, list) and len(value) > limit:
            return f"lists {len(value)} {what}, more than the {limit} allowed"
        return f"must be a non-empty list of {what}"
    return message


def _exclude_rule_model():
    """The pydantic model of one exclude rule."""
    from typing import Annotated, Any

    from pydantic import BaseModel, ConfigDict, Field, model_validator

    def value_form(item: dict) -> Any:
        return Annotated[Any, _alternatives(item, {"type": "array", "items": item})]

    class ExcludeRule(BaseModel):
        """One exclude rule: the combinations it drops. Each key takes one value or a list."""

        model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})
        method: value_form({"type": "string"}) = Field(None, description="Methods (families) the rule drops.")
        scenario: value_form({"type": "string"}) = Field(None, description="Scenario ids the rule drops.")
        n: value_form({"type": "integer"}) = Field(None, description="Sample sizes the rule drops.")
        effect: value_form({"type": ["string", "null"]}) = Field(
            None, description="Effect level names the rule drops (null is the null effect).")
        perturbation: value_form({"type": "string"}) = Field(None, description="Perturbations the rule drops.")
        seed: value_form({"type": "integer", "minimum": 0}) = Field(
            None, description="Replicates (0 to seeds - 1) the rule drops; without it, every seed.")
        prompt_style: value_form({"type": "string", "enum": list(STYLES)}) = Field(
            None, description="Prompt styles the rule drops; without it, every style.")

        @model_validator(mode="after")
        def names_a_key(self):
            if not self.model_fields_set:
                raise ValueError("empty rule")
            return self

    return ExcludeRule


def _split_model():
    """The pydantic model of a grid's ``split``."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field, Strict, StrictInt

    class Split(BaseModel):
        """How the test split is held out."""

        model_config = ConfigDict(extra="forbid")
        by: Annotated[Literal["scenario"], worded("unknown value {got}; allowed: scenario")] = Field(
            "scenario", description="What is held out: whole scenarios (the only choice).")
        test: Annotated[float, Strict(), Field(gt=0, lt=1), worded("must be a fraction in (0, 1), got {got}")] = \
            Field(description="The share of each question kind's scenarios held out for the test split.")
        seed: Annotated[StrictInt, Field(ge=0), worded("must be a non-negative integer, got {got}")] = Field(
            0, description="Seed of the choice of held-out scenarios.")

    return Split


@lru_cache(maxsize=1)
def grid_model():
    """The pydantic model of a grid file: its keys, the type and range of
    each, and what each means (``taskfactory schema grid`` prints it as JSON
    Schema). What depends on the registered families (method names, scenario
    ids, effect sizes, exclude values) :func:`load_grid` checks by hand.
    Built on first use, so that pydantic loads only when a grid is read."""
    from typing import Annotated, Any

    from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, StrictInt, StrictStr

    Name = Annotated[StrictStr, worded("must be a name, got {got}")]
    ExcludeRule, Split = _exclude_rule_model(), _split_model()
    # JSON Schema of a list of names, and of one sample size, effect level and prompt style: a key takes one
    # or a list of them.
    names_schema = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    size_schema = {"type": "integer", "minimum": 2, "maximum": MAX_N}
    style_schema = {"enum": list(STYLES)}

    class GridFile(BaseModel):
        """A taskfactory grid: methods x scenarios x sample sizes x effect levels x perturbations x seeds x
        prompt styles, less the exclude rules, is the set of tasks of a corpus."""

        model_config = ConfigDict(extra="forbid", title="taskfactory grid")
        name: Annotated[StrictStr, AfterValidator(_one_line),
                        worded("must be one line of at most 200 printable characters")] = Field(
            None, description="Name of the grid and its corpus; by default the file name without .yaml.")
        seed: Annotated[StrictInt, Field(ge=0, lt=MAX_SEED), worded("must be a non-negative integer, got {got}")] = \
            Field(description="Root of every task's random stream.")
        alpha: Annotated[float, Strict(), Field(gt=0, lt=0.5), worded("must be a number in (0, 0.5), got {got}")] = \
            Field(DEFAULT_ALPHA, description="Significance level the tasks test at.")
        methods: Annotated[list[Name], BeforeValidator(_as_list),
                           worded(lambda _: f"must be all or a list of names; allowed: {', '.join(family_names())}"),
                           _alternatives({"const": "all"}, {"type": "string"}, names_schema)] = Field(
            description="The families (statistical methods) to build, or all (see taskfactory methods).")
        scenarios: Annotated[dict[StrictStr, Annotated[
                                 list[Name], BeforeValidator(_as_list), Field(min_length=1),
                                 worded("needs all or a non-empty list of scenario ids")]],
                             BeforeValidator(lambda v: {} if v == "all" else v),
                             worded("must be all or a mapping {method: [scenario ids]}"),
                             _alternatives({"const": "all"}, {"type": "object", "additionalProperties": {
                                 "anyOf": [{"const": "all"}, {"type": "string"}, names_schema]}})] = Field(
            "all", validate_default=True, description="The scenarios of each method, or all; a method left out uses all of its scenarios "
                               "(see taskfactory scenarios METHOD).")
        n: Annotated[list[Annotated[StrictInt, Field(ge=2, le=MAX_N),
                                    worded(f"must be a sample size from 2 to {MAX_N}, got {{got}}")]],
                     BeforeValidator(_as_list), Field(min_length=1, max_length=MAX_SAMPLE_SIZES),
                     worded(_list_message("sample sizes", MAX_SAMPLE_SIZES)),
                     _alternatives(size_schema, {"type": "array", "minItems": 1, "maxItems": MAX_SAMPLE_SIZES,
                                                 "items": size_schema})] = Field(
            description="Sample sizes; what N counts (rows, clusters, units) depends on the family.")
        effects: Annotated[list[Any], BeforeValidator(_as_list), Field(min_length=1, max_length=MAX_EFFECTS),
                           worded(_list_message("effect levels", MAX_EFFECTS)),
                           _alternatives(level_schema(), {"type": "array", "minItems": 1, "maxItems": MAX_EFFECTS,
                                                          "items": level_schema()})] = Field(
            list(DEFAULT_EFFECTS),
            description="Effect levels: null (no effect), borderline (the expected statistic at the critical value), "
                        "medium (the family's conventional medium effect), or {name, target_z} (calibrated to an "
                        "expected two-sided z) or {name, size} (a fixed effect in the family's unit, one number or "
                        "one per method).")
        prompt_styles: Annotated[list[Name], BeforeValidator(_as_list),
                                 _alternatives(style_schema, {"type": "array", "minItems": 1,
                                                              "items": style_schema})] = Field(
            list(STYLES), description="How the task is put to the agent: basic, or guided (adds what a look at "
                                      "the data shows and the steps of a careful analysis).")
        perturbations: Annotated[list[Any], BeforeValidator(_as_list), Field(min_length=1),
                                 worded(f"must be a non-empty list; allowed: {', '.join(perturb.CHOICES)}"),
                                 _alternatives({"type": "string"}, {"type": "array", "minItems": 1, "items": {
                                     "type": "string", "examples": list(perturb.CHOICES)}})] = Field(
            ["none"], description="The mess injected into the data: none, missing (blank cells, MCAR or MAR), "
                                  "missing_mnar (blank cells, not at random), extreme (impossible values), or "
                                  "parts joined with + (missing+extreme).")
        seeds: Annotated[StrictInt, Field(ge=1, le=MAX_SEEDS),
                         worded(f"must be an integer from 1 to {MAX_SEEDS}, got {{got}}")] = Field(
            1, description="Replicates (datasets) per cell.")
        exclude: Annotated[list[Annotated[ExcludeRule, worded("each rule must be a non-empty mapping, got {got}")]],
                           BeforeValidator(lambda v: [] if v is None else v), Field(max_length=MAX_EXCLUDE_RULES),
                           _alternatives({"type": "null"}, {"type": "array", "maxItems": MAX_EXCLUDE_RULES,
                                                            "items": ExcludeRule.model_json_schema()}),
                           worded(lambda v: f"lists {len(v)} rules, more than the {MAX_EXCLUDE_RULES} allowed"
                                  if isinstance(v, list) else "must be a list of mappings")] = Field(
            [], description="Combinations to drop: a rule matches when every key it names matches.")
        split: Annotated[Split, worded("must be a mapping {by: scenario, test: <fraction>, seed: <int>}")] | None = \
            Field(None, description="Hold out whole scenarios for the test split.")
        shard_rows: Annotated[StrictInt, Field(ge=1, le=MAX_SHARD_ROWS),
                              worded(f"must be an integer from 1 to {MAX_SHARD_ROWS}, got {{got}}")] = Field(
            DEFAULT_SHARD_ROWS, description="The most tasks one shard file of the corpus holds (fewer when their "
                                            "text would make the file large).")
        max_tasks: Annotated[StrictInt, Field(ge=1), worded("must be a positive integer, got {got}")] = Field(
            DEFAULT_MAX_TASKS, description="The largest number of tasks the grid may expand to; a larger grid is "
                                           "refused before anything is built.")
        max_reject_share: Annotated[float, Strict(), Field(ge=0, le=1),
                                    worded("must be a fraction from 0 to 1, got {got}")] = Field(
            DEFAULT_MAX_REJECT_SHARE, description="A family whose tasks are rejected (their gold cannot be trusted) "
                                                  "more often than this fails the build.")

    return GridFile


def _grid_where(loc: tuple) -> str | None:
    return f"key '{path_text(loc)}'" if loc else None


def _read_grid(raw, problems: Problems) -> dict | None:
    """The values of the well-formed keys of grid mapping ``raw`` (defaults
    for those it leaves out), as :func:`grid_model` normalises them; every
    malformed key goes to ``problems``. None when ``raw`` is not a mapping."""
    from pydantic import ValidationError

    model = grid_model()
    try:
        return dict(model.model_validate(raw))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    for error in errors:
        problems.add(*translate(error, model, _grid_where, "the grid must be a YAML mapping of keys to values",
                                sort_top=True))
    if not isinstance(raw, dict):
        return None
    broken = {error["loc"][0] for error in errors if error["loc"]}
    salvaged, values = model.model_construct(), {}
    for key, spec in model.model_fields.items():
        if key not in broken and (key in raw or not spec.is_required()):
            if key in raw or spec.validate_default:
                value = raw[key] if key in raw else spec.get_default(call_default_factory=True)
                model.__pydantic_validator__.validate_assignment(salvaged, key, value)
            values[key] = getattr(salvaged, key)
    return values


def _names(items: list, key: str, allowed, problems: Problems) -> tuple | None:
    """``items`` when each is one of ``allowed``, once; else None, with a problem per unknown value."""
    if not items:
        problems.add("is an empty list", f"key '{key}'")
        return None
    unknown = [f"'{x}'{did_you_mean(x, allowed)}" for x in dict.fromkeys(items) if x not in allowed]
    if unknown:
        problems.add(f"unknown value{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; allowed: "
                     f"{', '.join(allowed)}", f"key '{key}'")
    if len(set(items)) != len(items):
        problems.add("lists a value twice", f"key '{key}'")
        return None
    return None if unknown else tuple(items)


def _effects(raw: list, methods: tuple | None, problems: Problems) -> tuple | None:
    """The effect levels of a grid, checked against the families of ``methods``."""
    effects = []
    for i, entry in enumerate(raw):
        try:
            effects.append(parse_effect(entry, f"effects[{i}]"))
        except GridError as exc:
            problems.add(str(exc))
    if len(effects) < len(raw):
        return None
    names = [e.name for e in effects]
    if len(set(names)) != len(names):
        problems.add("lists an effect name twice", "key 'effects'")
        return None
    fits = True
    for e in effects:
        if isinstance(e.size, dict) and methods is not None:
            for m in methods:
                if m not in e.size:
                    problems.add(f"effect '{e.name}' gives no size for method '{m}'", "key 'effects'")
                    fits = False
        if e.size is not None and methods is not None:
            for m in methods:
                fam = get_family(m)
                value = e.size.get(m) if isinstance(e.size, dict) else e.size
                lo, hi = fam.effect_bounds
                if value is not None and not lo < value < hi:
                    problems.add(f"effect '{e.name}' size {value!r} is outside ({lo:g}, {hi:g}) for method '{m}' "
                                 f"({fam.effect_unit})", "key 'effects'")
                    fits = False
    return tuple(effects) if fits else None


def _perturbations(raw: list, problems: Problems) -> tuple | None:
    perts = []
    for i, name in enumerate(raw):
        try:
            perts.append(perturb.canonical(name, f"perturbations[{i}]"))
        except GridError as exc:
            problems.add(str(exc))
    if len(perts) < len(raw):
        return None
    if len(set(perts)) != len(perts):
        problems.add("lists a value twice", "key 'perturbations'")
        return None
    return tuple(perts)


def _scenarios(given: dict, raw, methods: tuple, problems: Problems) -> dict | None:
    """The scenario ids of each method: those ``given`` (raw ``raw``) names, else all of the method's."""
    scenarios = {m: tuple(s.id for s in load_scenarios(m)) for m in methods}
    fits = True
    for m, ids in given.items():
        if m not in methods:
            problems.add(f"names method '{m}', which the grid does not build; allowed: {', '.join(methods)}",
                         "key 'scenarios'")
            fits = False
            continue
        if raw[m] == "all":
            continue
        allowed = scenarios[m]
        for s in ids:
            if s not in allowed:
                problems.add(f"method '{m}' has no scenario '{s}'{did_you_mean(s, allowed)}; allowed: "
                             f"{', '.join(allowed)}", "key 'scenarios'")
                fits = False
        scenarios[m] = tuple(dict.fromkeys(ids))
    return scenarios if fits else None


def _exclude_rules(rules: list, allowed_values: dict, seeds: int, problems: Problems) -> tuple:
    """The ``exclude`` rules (mappings :func:`grid_model` found well formed)
    as ``{key: values}`` in the order given, each value one the grid has."""
    out = []
    for i, rule in enumerate(rules):
        where = f"key 'exclude[{i}]'"
        clean = {}
        for key, values in rule.items():
            values = _as_list(values)
            values = ["null" if v is None and key == "effect" else v for v in values]
            if key == "perturbation":
                try:
                    values = [perturb.canonical(v, f"exclude[{i}]") for v in values]
                except GridError as exc:
                    problems.add(str(exc))
                    continue
            for v in values:
                if key == "seed":
                    if not (_is_int(v) and 0 <= v < seeds):
                        problems.add(f"seed {v!r} is not in the grid; allowed: integers from 0 to {seeds - 1}", where)
                elif not (_is_int(v) if key == "n" else isinstance(v, str)) or v not in allowed_values[key]:
                    shown = ", ".join(map(str, allowed_values[key]))
                    problems.add(f"{key} '{v}' is not in the grid; allowed: {shown}", where)
            clean[key] = tuple(values)
        out.append(clean)
    return tuple(out)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def load_grid(grid, source: str | None = None) -> Grid:
    """Validate a grid given as a path to a YAML file or as a mapping; every
    problem found is reported in one :class:`GridError` line."""
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        path = Path(grid)
        source = source or str(path)
        raw = load_yaml(path, GridError, "grid file")
        default_name = path.stem
    else:
        raw, default_name = grid, "grid"
        source = source or "<grid>"
    problems = Problems(source, GridError)
    values = _read_grid(raw, problems)
    if values is None:
        problems.raise_any()
    try:
        known = family_names()
    except TaskFactoryError as exc:
        raise GridError(str(exc)) from None

    methods = None
    if "methods" in values:
        methods = tuple(known) if raw["methods"] == "all" else _names(values["methods"], "methods", known, problems)
    scenarios = None
    if methods is not None and "scenarios" in values:
        scenarios = _scenarios(values["scenarios"], raw.get("scenarios"), methods, problems)
    ns = values.get("n")
    if ns is not None and len(set(ns)) != len(ns):
        problems.add("lists a value twice", "key 'n'")
        ns = None
    effects = _effects(values["effects"], methods, problems) if "effects" in values else None
    styles = _names(values["prompt_styles"], "prompt_styles", STYLES, problems) if "prompt_styles" in values else None
    perts = _perturbations(values["perturbations"], problems) if "perturbations" in values else None
    parts = (methods, scenarios, ns, effects, styles, perts, values.get("seeds"), values.get("exclude"))
    if any(part is None for part in parts):
        problems.raise_any()    # the exclude rules name values of the keys above
    seeds = values["seeds"]
    allowed_values = {"method": methods, "n": tuple(ns), "effect": tuple(e.name for e in effects),
                      "perturbation": perts, "prompt_style": styles,
                      "scenario": tuple(sorted({s for m in methods for s in scenarios[m]}))}
    exclude = list(_exclude_rules(raw.get("exclude") or [], allowed_values, seeds, problems))
    problems.raise_any()
    if raw["methods"] == "all":
        # `all` takes each family where it applies: without the perturbations that spoil a dataset a
        # closed-form family lacks, and at the sizes inside its range of N
        spoiling = tuple(p for p in perts if p != "none")
        closed = tuple(m for m in methods if not get_family(m).has_data)
        if closed and spoiling:
            exclude.append({"method": closed, "perturbation": spoiling})
        for m in methods:
            fam = get_family(m)
            outside = tuple(k for k in ns if k < fam.min_n or (fam.max_n is not None and k > fam.max_n))
            if outside:
                exclude.append({"method": (m,), "n": outside})

    split = values["split"]
    if split is not None:
        split = {"by": "scenario", "test": float(split.test), "seed": split.seed}
    name = values.get("name") or default_name
    max_tasks = values["max_tasks"]
    g = Grid(name=name.strip(), seed=values["seed"], methods=methods, scenarios=scenarios, n=tuple(ns),
             effects=effects, prompt_styles=styles, perturbations=perts, seeds=seeds, exclude=tuple(exclude),
             split=split, shard_rows=values["shard_rows"], alpha=float(values["alpha"]), max_tasks=max_tasks,
             max_reject_share=float(values["max_reject_share"]), source=source)

    for method in methods:
        fam = get_family(method)
        for pert in perts:
            if not fam.has_data and pert != "none" and not g.excluded(method=method, perturbation=pert):
                problems.add(f"'{pert}' spoils a dataset, and '{method}' asks a question without one; exclude "
                             f"{{method: {method}, perturbation: {pert}}}", "key 'perturbations'")
        for n in ns:
            if fam.max_n is not None and n > fam.max_n and not g.excluded(method=method, n=n):
                problems.add(f"{n} is above the maximum N of '{method}' ({fam.max_n}); lower it or exclude "
                             f"{{method: {method}, n: {n}}}", "key 'n'")
            if n < fam.min_n and not g.excluded(method=method, n=n):
                problems.add(f"{n} is below the minimum N of '{method}' ({fam.min_n}); raise it or exclude "
                             f"{{method: {method}, n: {n}}}", "key 'n'")
    problems.raise_any()
    total = g.count()
    if not total:
        problems.add("the grid expands to no tasks (every combination is excluded)")
    elif total > max_tasks:
        problems.add(f"the grid expands to {total:,} tasks, more than max_tasks ({max_tasks:,}); raise max_tasks "
                     "to build it")
    problems.raise_any()
    return g
