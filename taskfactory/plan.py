"""Planning: what a grid will build, counted without building it."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from .grid import Grid, load_grid
from .registry import get_family

# Seconds per dataset: a fixed cost (drawing, CSV text, prompts, script) plus a
# per-row cost, scaled by each family's relative ``cost``. Measured with
# scripts/bench_build.py on one core.
SECONDS_PER_DATASET = 0.003
SECONDS_PER_ROW = 8.0e-6
SECONDS_PER_RECORD = 0.0004
STARTUP_SECONDS = 3.0


@dataclass
class Plan:
    """Counts of a grid's tasks, per split, per dimension and per shard."""

    grid: Grid
    total: int = 0
    datasets: int = 0
    by_split: Counter = field(default_factory=Counter)
    by: dict = field(default_factory=dict)
    work_seconds: float = 0.0

    def shard_counts(self, split: str) -> list[int]:
        """Rows in each shard of ``split``."""
        total, rows = self.by_split.get(split, 0), self.grid.shard_rows
        return [min(rows, total - i) for i in range(0, total, rows)]

    def shard_names(self, split: str) -> list[str]:
        k = len(self.shard_counts(split))
        return [f"{split}-{i:05d}-of-{k:05d}.parquet" for i in range(k)]

    def estimate_seconds(self, jobs: int = 1) -> float:
        """Rough wall time of the build on ``jobs`` cores."""
        shards = sum(len(self.shard_counts(s)) for s in self.grid.splits())
        parallel = max(1, min(jobs, shards))
        return STARTUP_SECONDS + self.work_seconds / parallel


def plan(grid) -> Plan:
    """Count a grid's tasks without drawing any data.

    Counting walks the cells (method, scenario, n, effect, perturbation) and
    multiplies by seeds and prompt styles unless an ``exclude`` rule names
    either, so a grid of a million tasks plans in seconds.
    """
    g = load_grid(grid)
    p = Plan(grid=g)
    dims = ("method", "scenario", "n", "effect", "perturbation", "seed", "prompt_style")
    p.by = {d: Counter() for d in dims}
    fine = any(("seed" in r or "prompt_style" in r) for r in g.exclude)
    per_cell = g.seeds * len(g.prompt_styles)
    for method, scenario, n, effect, pert in g.cells():
        if g.excluded(method=method, scenario=scenario, n=n, effect=effect.name, perturbation=pert):
            continue
        split = g.split_of(method, scenario)
        if fine:
            kept = [(s, st) for s in range(g.seeds) for st in g.prompt_styles
                    if not g.excluded(method=method, scenario=scenario, n=n, effect=effect.name,
                                      perturbation=pert, seed=s, prompt_style=st)]
            count = len(kept)
            for s, st in kept:
                p.by["seed"][s] += 1
                p.by["prompt_style"][st] += 1
            datasets = len({s for s, _ in kept})
        else:
            count, datasets = per_cell, g.seeds
            for s in range(g.seeds):
                p.by["seed"][s] += len(g.prompt_styles)
            for st in g.prompt_styles:
                p.by["prompt_style"][st] += g.seeds
        if not count:
            continue
        p.total += count
        p.datasets += datasets
        p.by_split[split] += count
        p.by["method"][method] += count
        p.by["scenario"][f"{method}/{scenario}"] += count
        p.by["n"][n] += count
        p.by["effect"][effect.name] += count
        p.by["perturbation"][pert] += count
        cost = get_family(method).cost
        p.work_seconds += datasets * cost * (SECONDS_PER_DATASET + SECONDS_PER_ROW * n) + count * SECONDS_PER_RECORD
    return p


def format_plan(p: Plan, jobs: int = 1) -> str:
    """The text ``taskfactory plan`` prints."""
    g = p.grid
    lines = [f"grid {g.name} (sha256 {g.sha256[:12]}), seed {g.seed}, alpha {g.alpha:g}"]
    for dim, counter in p.by.items():
        if dim == "scenario":
            lines.append(f"  {'scenarios':<13} {len(counter):>4} values")
            continue
        if dim == "seed":
            lines.append(f"  {'seeds':<13} {len(counter):>4} values")
            continue
        shown = ", ".join(f"{k}: {v}" for k, v in counter.items())
        lines.append(f"  {dim:<13} {len(counter):>4} values  ({shown})")
    for split in g.splits():
        names = p.shard_names(split)
        lines.append(f"{split}: {p.by_split.get(split, 0)} tasks in {len(names)} shard(s) of up to {g.shard_rows} rows")
    est = p.estimate_seconds(jobs)
    lines.append(f"total: {p.total} tasks ({p.datasets} datasets); estimated build time with --jobs {jobs}: "
                 f"{_duration(est)}")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{math.ceil(seconds)} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
