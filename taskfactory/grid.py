"""Grid files: the design a corpus is built from.

A grid names methods x scenarios x sample sizes x effect levels x perturbations
x seeds x prompt styles; its product, less the ``exclude`` rules, is the set of
tasks. :func:`load_grid` validates a grid file (or a mapping) and reports the
first problem as one :class:`GridError` line naming the key and the allowed
values. The file is read strictly (see :mod:`taskfactory.readers`); a grid of
more than ``max_tasks`` tasks is refused before anything is built.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterator, NamedTuple

from . import perturb
from .effects import EffectLevel, parse_effect
from .errors import GridError, TaskFactoryError, did_you_mean
from .prompts import STYLES
from .readers import load_yaml
from .registry import family_names, get_family
from .catalogue import load_scenarios

KEYS = ("name", "seed", "alpha", "methods", "scenarios", "n", "effects", "prompt_styles", "perturbations",
        "seeds", "exclude", "split", "shard_rows", "max_tasks", "max_reject_share")
REQUIRED = ("seed", "methods", "n")
EXCLUDE_KEYS = ("method", "scenario", "n", "effect", "perturbation", "seed", "prompt_style")
CELL_KEYS = ("method", "scenario", "n", "effect", "perturbation")
DEFAULT_EFFECTS = ("null", "borderline", "medium")
MAX_N = 1_000_000
MAX_SEEDS = 100_000
MAX_SAMPLE_SIZES = 1000
MAX_EFFECTS = 100
MAX_EXCLUDE_RULES = 1000
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
    shard_rows: int = 1000
    alpha: float = 0.05
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
    """The scenarios of each method held out for the test split.

    Scenarios are held out per question kind, so that sibling families (which
    share the wording of a scenario) hold out the same ones: of the ``k``
    scenarios the grid uses in a kind, ``max(1, round(test * k))`` (never all)
    are held out, chosen by a hash of the split seed, kind and scenario. A
    method keeps at least one scenario in train.
    """
    if not grid.split:
        return {}
    by_kind: dict[str, set] = {}
    for method in grid.methods:
        by_kind.setdefault(get_family(method).question_kind, set()).update(grid.scenarios[method])
    held = {}
    for kind, ids in by_kind.items():
        if len(ids) < 2:
            continue
        k = min(len(ids) - 1, max(1, round(grid.split["test"] * len(ids))))
        ranked = sorted(ids, key=lambda s: hashlib.sha256(f"{grid.split['seed']}|{kind}|{s}".encode()).hexdigest())
        held[kind] = ranked[:k]
    out = {}
    for method in grid.methods:
        ids = list(grid.scenarios[method])
        chosen = [s for s in held.get(get_family(method).question_kind, ()) if s in ids]
        if len(chosen) == len(ids):
            chosen = chosen[:-1]
        if chosen:
            out[method] = frozenset(chosen)
    return out


def _err(source: str, key: str | None, message: str):
    where = f"{source}: key '{key}'" if key else source
    raise GridError(f"{where}: {message}")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _names_list(raw, key: str, allowed, source: str, all_ok: bool = True) -> tuple:
    if all_ok and raw == "all":
        return tuple(allowed)
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        _err(source, key, f"must be {'all or ' if all_ok else ''}a list of names; allowed: {', '.join(allowed)}")
    if not items:
        _err(source, key, "is an empty list")
    for x in items:
        if x not in allowed:
            _err(source, key, f"unknown value '{x}'{did_you_mean(x, allowed)}; allowed: {', '.join(allowed)}")
    if len(set(items)) != len(items):
        _err(source, key, "lists a value twice")
    return tuple(items)


def load_grid(grid, source: str | None = None) -> Grid:
    """Validate a grid given as a path to a YAML file or as a mapping."""
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
    if not isinstance(raw, dict):
        _err(source, None, "the grid must be a YAML mapping of keys to values")
    unknown = sorted(set(map(str, raw)) - set(KEYS))
    if unknown:
        _err(source, None, f"unknown key '{unknown[0]}'{did_you_mean(unknown[0], KEYS)}; allowed: "
                           f"{', '.join(sorted(KEYS))}")
    for key in REQUIRED:
        if key not in raw:
            _err(source, None, f"missing required key '{key}'")

    name = raw.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or len(name) > 200 or not name.isprintable():
        _err(source, "name", "must be one line of at most 200 printable characters")
    seed = raw["seed"]
    if not _is_int(seed) or not 0 <= seed < 2**63:
        _err(source, "seed", f"must be a non-negative integer, got {seed!r}")
    alpha = raw.get("alpha", 0.05)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        _err(source, "alpha", f"must be a number in (0, 0.5), got {alpha!r}")

    try:
        known = family_names()
    except TaskFactoryError as exc:
        raise GridError(str(exc)) from None
    methods = _names_list(raw["methods"], "methods", known, source)

    scen_raw = raw.get("scenarios", "all")
    scenarios = {m: tuple(s.id for s in load_scenarios(m)) for m in methods}
    if scen_raw != "all":
        if not isinstance(scen_raw, dict):
            _err(source, "scenarios", "must be all or a mapping {method: [scenario ids]}")
        for m, ids in scen_raw.items():
            if m not in methods:
                _err(source, "scenarios", f"names method '{m}', which the grid does not build; allowed: {', '.join(methods)}")
            allowed = scenarios[m]
            if ids == "all":
                continue
            items = [ids] if isinstance(ids, str) else ids
            if not isinstance(items, list) or not items:
                _err(source, "scenarios", f"method '{m}' needs all or a non-empty list of scenario ids")
            for s in items:
                if s not in allowed:
                    _err(source, "scenarios", f"method '{m}' has no scenario '{s}'{did_you_mean(s, allowed)}; "
                                              f"allowed: {', '.join(allowed)}")
            scenarios[m] = tuple(dict.fromkeys(items))

    ns = raw["n"]
    ns = [ns] if _is_int(ns) else ns
    if not isinstance(ns, list) or not ns:
        _err(source, "n", "must be a non-empty list of sample sizes")
    if len(ns) > MAX_SAMPLE_SIZES:
        _err(source, "n", f"lists {len(ns)} sample sizes, more than the {MAX_SAMPLE_SIZES} allowed")
    for n in ns:
        if not _is_int(n) or not 2 <= n <= MAX_N:
            _err(source, "n", f"each sample size must be an integer from 2 to {MAX_N}, got {n!r}")
    if len(set(ns)) != len(ns):
        _err(source, "n", "lists a value twice")

    eff_raw = raw.get("effects", list(DEFAULT_EFFECTS))
    eff_raw = [eff_raw] if not isinstance(eff_raw, list) else eff_raw
    if not eff_raw:
        _err(source, "effects", "is an empty list")
    if len(eff_raw) > MAX_EFFECTS:
        _err(source, "effects", f"lists {len(eff_raw)} effect levels, more than the {MAX_EFFECTS} allowed")
    try:
        effects = tuple(parse_effect(e, "effects") for e in eff_raw)
    except GridError as exc:
        raise GridError(f"{source}: {exc}") from None
    names = [e.name for e in effects]
    if len(set(names)) != len(names):
        _err(source, "effects", "lists an effect name twice")
    for e in effects:
        if isinstance(e.size, dict):
            for m in methods:
                if m not in e.size:
                    _err(source, "effects", f"effect '{e.name}' gives no size for method '{m}'")
        if e.size is not None:
            for m in methods:
                fam = get_family(m)
                value = e.size[m] if isinstance(e.size, dict) else e.size
                lo, hi = fam.effect_bounds
                if not lo < value < hi:
                    _err(source, "effects", f"effect '{e.name}' size {value!r} is outside ({lo:g}, {hi:g}) for method '{m}' ({fam.effect_unit})")

    styles = _names_list(raw.get("prompt_styles", list(STYLES)), "prompt_styles", STYLES, source, all_ok=False)
    perts_raw = raw.get("perturbations", ["none"])
    perts_raw = [perts_raw] if isinstance(perts_raw, str) else perts_raw
    if not isinstance(perts_raw, list) or not perts_raw:
        _err(source, "perturbations", f"must be a non-empty list; allowed: {', '.join(perturb.CHOICES)}")
    try:
        perts = tuple(perturb.canonical(x) for x in perts_raw)
    except GridError as exc:
        raise GridError(f"{source}: {exc}") from None
    if len(set(perts)) != len(perts):
        _err(source, "perturbations", "lists a value twice")

    seeds = raw.get("seeds", 1)
    if not _is_int(seeds) or not 1 <= seeds <= MAX_SEEDS:
        _err(source, "seeds", f"must be an integer from 1 to {MAX_SEEDS}, got {seeds!r}")
    shard_rows = raw.get("shard_rows", 1000)
    if not _is_int(shard_rows) or not 1 <= shard_rows <= 1_000_000:
        _err(source, "shard_rows", f"must be an integer from 1 to 1000000, got {shard_rows!r}")

    max_tasks = raw.get("max_tasks", DEFAULT_MAX_TASKS)
    if not _is_int(max_tasks) or max_tasks < 1:
        _err(source, "max_tasks", f"must be a positive integer, got {max_tasks!r}")
    max_reject = raw.get("max_reject_share", DEFAULT_MAX_REJECT_SHARE)
    if isinstance(max_reject, bool) or not isinstance(max_reject, (int, float)) or not 0 <= max_reject <= 1:
        _err(source, "max_reject_share", f"must be a fraction from 0 to 1, got {max_reject!r}")

    allowed_values = {"method": methods, "n": tuple(ns), "effect": tuple(names), "perturbation": perts,
                      "prompt_style": styles,
                      "scenario": tuple(sorted({s for m in methods for s in scenarios[m]}))}
    exclude = []
    ex_raw = raw.get("exclude", []) or []
    if not isinstance(ex_raw, list):
        _err(source, "exclude", "must be a list of mappings")
    if len(ex_raw) > MAX_EXCLUDE_RULES:
        _err(source, "exclude", f"lists {len(ex_raw)} rules, more than the {MAX_EXCLUDE_RULES} allowed")
    for rule in ex_raw:
        if not isinstance(rule, dict) or not rule:
            _err(source, "exclude", f"each rule must be a non-empty mapping, got {rule!r}")
        clean = {}
        for key, values in rule.items():
            if key not in EXCLUDE_KEYS:
                _err(source, "exclude", f"unknown key '{key}'{did_you_mean(key, EXCLUDE_KEYS)}; allowed: "
                                        f"{', '.join(EXCLUDE_KEYS)}")
            values = values if isinstance(values, list) else [values]
            values = ["null" if v is None and key == "effect" else v for v in values]
            if key == "perturbation":
                try:
                    values = [perturb.canonical(v, "exclude") for v in values]
                except GridError as exc:
                    raise GridError(f"{source}: {exc}") from None
            for v in values:
                if key == "seed":
                    if not (_is_int(v) and 0 <= v < seeds):
                        _err(source, "exclude", f"seed {v!r} is not in the grid; allowed: integers from 0 to "
                             f"{seeds - 1}")
                elif not (_is_int(v) if key == "n" else isinstance(v, str)) or v not in allowed_values[key]:
                    shown = ", ".join(map(str, allowed_values[key]))
                    _err(source, "exclude", f"{key} '{v}' is not in the grid; allowed: {shown}")
            clean[key] = tuple(values)
        exclude.append(clean)
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

    split = raw.get("split")
    if split is not None:
        if not isinstance(split, dict) or set(split) - {"by", "test", "seed"} or "test" not in split:
            _err(source, "split", "must be a mapping {by: scenario, test: <fraction>, seed: <int>}")
        if split.get("by", "scenario") != "scenario":
            _err(source, "split", f"unknown value for by '{split.get('by')}'; allowed: scenario")
        test = split["test"]
        if isinstance(test, bool) or not isinstance(test, (int, float)) or not 0 < test < 1:
            _err(source, "split", f"test must be a fraction in (0, 1), got {test!r}")
        sseed = split.get("seed", 0)
        if not _is_int(sseed) or sseed < 0:
            _err(source, "split", f"seed must be a non-negative integer, got {sseed!r}")
        split = {"by": "scenario", "test": float(test), "seed": sseed}

    g = Grid(name=name.strip(), seed=seed, methods=methods, scenarios=scenarios, n=tuple(ns), effects=effects,
             prompt_styles=styles, perturbations=perts, seeds=seeds, exclude=tuple(exclude), split=split,
             shard_rows=shard_rows, alpha=float(alpha), max_tasks=max_tasks, max_reject_share=float(max_reject), source=source)

    for method in methods:
        fam = get_family(method)
        for pert in perts:
            if not fam.has_data and pert != "none" and not g.excluded(method=method, perturbation=pert):
                _err(source, "perturbations", f"'{pert}' spoils a dataset, and '{method}' asks a question without "
                     f"one; exclude {{method: {method}, perturbation: {pert}}}")
        for n in ns:
            if fam.max_n is not None and n > fam.max_n and not g.excluded(method=method, n=n):
                _err(source, "n", f"{n} is above the maximum N of '{method}' ({fam.max_n}); lower it or exclude "
                     f"{{method: {method}, n: {n}}}")
            if n < fam.min_n and not g.excluded(method=method, n=n):
                _err(source, "n", f"{n} is below the minimum N of '{method}' ({fam.min_n}); raise it or exclude "
                     f"{{method: {method}, n: {n}}}")
    total = g.count()
    if not total:
        _err(source, None, "the grid expands to no tasks (every combination is excluded)")
    if total > max_tasks:
        _err(source, None, f"the grid expands to {total:,} tasks, more than max_tasks ({max_tasks:,}); "
             "raise max_tasks to build it")
    return g

