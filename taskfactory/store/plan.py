"""Planning: what a grid will build, counted without building it.

Planning also probes each scenario of the grid once (per scenario folder,
:mod:`taskfactory.make.clipping`), and estimates the build's time from a timed
sample of the grid's families (:mod:`taskfactory.store.estimate`).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from ..design.catalogue import get_scenario
from ..design.grid import Grid, load_grid
from ..make.clipping import check_clipping
from ..registry import get_family
from .corpus import part_name, shard_name
from .estimate import STARTUP_SECONDS, dataset_rows, timed_costs
from .shards import ROW_GROUP_BYTES, ROW_GROUP_ROWS

# Sizes, estimated from n and the number of columns: a released CSV cell takes
# about CELL_BYTES (digits and comma), the other text of a task (prompt,
# script, reference code) about TASK_TEXT_BYTES. zstd shrinks that text about
# ZSTD_RATIO times at the least (measured per row group: 3.5-4.5 times for
# tasks of one prompt style at N = 4800, whose CSVs dominate; at least 5.4 on
# the paper corpus, 11 overall; at least 10.6 on the demo, 18 overall), so a
# shard, sized for its readers, holds at most SHARD_TEXT_BYTES of estimated
# text (about SHARD_BYTES of Parquet at most) and the grid's shard_rows tasks.
# A shard is built as chunks of at most CHUNK_ROWS tasks, the unit of
# parallel work (a few seconds each at moderate N). A worker holds about
# DATASET_COPIES copies of its largest dataset (values, CSV, records) beside
# the row group it buffers, and plan warns when that exceeds
# WORKER_MEMORY_BYTES. (Measured: a welch_t dataset of 10^6 rows and 5 columns
# is 28 MB of CSV; building it peaks near 500 MB above the interpreter's 190 MB.)
CELL_BYTES = 6
TASK_TEXT_BYTES = 16_000
SHARD_BYTES = 64 << 20
ZSTD_RATIO = 4
SHARD_TEXT_BYTES = ZSTD_RATIO * SHARD_BYTES
CHUNK_ROWS = 256
DATASET_COPIES = 18
WORKER_MEMORY_BYTES = 1 << 30

@dataclass
class Plan:
    """Counts of a grid's tasks, per split, per dimension and per shard."""

    grid: Grid
    total: int = 0
    datasets: int = 0
    by_split: Counter = field(default_factory=Counter)
    by: dict = field(default_factory=dict)
    datasets_by_size: Counter = field(default_factory=Counter)   # (method, n) -> datasets
    task_bytes: Counter = field(default_factory=Counter)   # split -> estimated text of its largest task
    costs: dict | None = field(default=None, init=False, repr=False, compare=False)   # timed_costs, once timed
    layout: dict = field(default_factory=dict, init=False, repr=False, compare=False)   # split -> shard_counts

    def shard_counts(self, split: str) -> list[int]:
        """Rows in each shard of ``split``: its tasks in build order, a shard
        closed before the task that would take it past the grid's
        ``shard_rows`` tasks or ``SHARD_TEXT_BYTES`` of estimated text (a task
        larger than that alone gets a shard of its own); when the text bound
        sets the number of shards, they are evened out to as many holding
        about as much text each. Walks the cells, not the tasks."""
        found = self.layout.get(split)
        if found is None:
            found = self.layout[split] = _fill_shards(self.grid, split)
        return found

    def rows_per_shard(self, split: str) -> int:
        """The most tasks a shard of ``split`` holds."""
        return max(self.shard_counts(split), default=0)

    def shard_count(self, split: str) -> int:
        """The number of shards of ``split``."""
        return len(self.shard_counts(split))

    def worker_bytes(self) -> int:
        """Estimated peak memory of one build worker: its largest dataset
        several times over, and the row group it buffers."""
        largest = max(self.task_bytes.values(), default=0)
        return DATASET_COPIES * largest + min(ROW_GROUP_BYTES, ROW_GROUP_ROWS * largest)

    def memory_warning(self, jobs: int = 1) -> str | None:
        """A warning when a build worker would likely need more than
        ``WORKER_MEMORY_BYTES``, else None."""
        need = self.worker_bytes()
        if need <= WORKER_MEMORY_BYTES:
            return None
        return (f"warning: the largest datasets need about {_gib(need)} of memory per worker "
                f"({_gib(need * jobs)} with --jobs {jobs}); more than the {_gib(WORKER_MEMORY_BYTES)} "
                "budget per worker, so lower n or --jobs if the machine has less")

    def shard_names(self, split: str) -> list[str]:
        k = self.shard_count(split)
        return [shard_name(split, i, k) for i in range(k)]

    def chunk_count(self, split: str) -> int:
        """The number of chunks (units of parallel work) of ``split``."""
        return sum(-(-rows // CHUNK_ROWS) for rows in self.shard_counts(split))

    def chunks(self, split: str) -> Iterator[tuple[str, list[tuple[str, int]]]]:
        """``(shard name, [(part name, rows), ...])`` of every shard of
        ``split``, in order: a shard's tasks split into chunks of
        ``CHUNK_ROWS`` (the last one shorter), none straddling two shards."""
        for name, rows in zip(self.shard_names(split), self.shard_counts(split)):
            sizes = [min(CHUNK_ROWS, rows - i) for i in range(0, rows, CHUNK_ROWS)]
            yield name, [(part_name(name, j), size) for j, size in enumerate(sizes)]

    def work_seconds(self) -> float:
        """CPU seconds of the whole build on one core of this machine, from a
        timed sample of the grid's own families (:func:`taskfactory.store.estimate.timed_costs`, run
        once per plan)."""
        if self.costs is None:
            self.costs = timed_costs(self.grid, tuple(sorted({m for m, _ in self.datasets_by_size})))
        work = 0.0
        for (method, n), datasets in self.datasets_by_size.items():
            fixed, per_row = self.costs[method]
            work += datasets * (fixed + per_row * dataset_rows(method, n))
        return work

    def parallel(self, jobs: int) -> int:
        """Chunks built at once here: ``jobs``, at most one per core and per chunk."""
        chunks = sum(self.chunk_count(s) for s in self.grid.splits())
        return max(1, min(jobs, chunks, os.cpu_count() or 1))

    def estimate_seconds(self, jobs: int = 1) -> float:
        """Wall time of the build with ``jobs`` on this machine."""
        return STARTUP_SECONDS + self.work_seconds() / self.parallel(jobs)


def plan(grid, probe: bool = True) -> Plan:
    """Count a grid's tasks without drawing any data (but the clipping probe,
    unless ``probe`` is False).

    Counting walks the cells (method, scenario, n, effect, perturbation); the
    seeds and prompt styles of a cell are counted, not walked, so planning
    takes as long for 100000 seeds as for one. The cells of the scenarios
    (and methods) the ``exclude`` rules treat alike are walked once (see
    :meth:`~taskfactory.design.grid.Grid.blocks`), and what follows from a cell's
    :class:`~taskfactory.design.grid.CellSeeds` (prompt styles, seeds) once per
    distinct value.
    """
    g = load_grid(grid)
    if probe:
        check_clipping(g)
    p = Plan(grid=g)
    dims = ("method", "scenario", "n", "effect", "perturbation", "seed", "prompt_style")
    p.by = {d: Counter() for d in dims}
    blocks = {}                     # id -> block (held, so that ids stay unique)
    uses = Counter()                # (method, block id) -> scenarios of the method with that block
    largest = {}                    # (method, block id) -> rows of the largest dataset in the block
    for method, scenario, block in g.blocks():
        count, split, key = block.tasks, g.split_of(method, scenario), (method, id(block))
        blocks[id(block)] = block
        uses[key] += 1
        p.total += count
        p.by_split[split] += count
        p.by["method"][method] += count
        p.by["scenario"][f"{method}/{scenario}"] += count
        if key not in largest:
            family = get_family(method)
            largest[key] = max(family.rows(n) for n in {n for n, *_ in block.cells})
        size = largest[key] * (len(get_scenario(method, scenario).columns()) * CELL_BYTES + 1) + TASK_TEXT_BYTES
        p.task_bytes[split] = max(p.task_bytes[split], size)
    by_n, by_effect, by_pert = p.by["n"], p.by["effect"], p.by["perturbation"]
    seeds_cells = Counter()         # CellSeeds -> number of cells
    for (method, block_id), times in uses.items():   # in build order, so each Counter's keys are too
        for n, effect, pert, kept in blocks[block_id].cells:
            count = kept.tasks * times
            by_n[n] += count
            by_effect[effect.name] += count
            by_pert[pert] += count
            p.datasets_by_size[(method, n)] += kept.datasets * times
            seeds_cells[kept] += times
    p.datasets = sum(p.datasets_by_size.values())
    every_seed = 0                  # tasks each seed gets in the cells seen, before the seeds rules drop
    lost = Counter()                # seed -> tasks the seeds rules drop
    for kept, cells in seeds_cells.items():
        for style, kept_seeds in zip(g.prompt_styles, kept.kept):
            p.by["prompt_style"][style] += kept_seeds * cells
        every_seed += cells * sum(d is not None for d in kept.dropped)
        for seeds in kept.dropped:
            for s in seeds or ():
                lost[s] += cells
    p.by["seed"] = Counter({s: every_seed - lost[s] for s in range(g.seeds) if every_seed > lost[s]})
    return p


def _fill_shards(g: Grid, split: str) -> list[int]:
    """The rows of each shard of ``split`` (see :meth:`Plan.shard_counts`)."""
    sizes = {}                      # (method, scenario, n) -> estimated text of one task
    cells = []                      # (tasks, estimated text of each) of every cell, in build order
    for method, scenario, n, _, _, kept in g.counted_cells(split):
        size = sizes.get((method, scenario, n))
        if size is None:
            size = sizes[(method, scenario, n)] = estimate_task_bytes(method, scenario, n)
        cells.append((kept.tasks, size))
    return fill_shards(cells, g.shard_rows)


def fill_shards(cells: list[tuple[int, int]], max_rows: int) -> list[int]:
    """The rows of each shard that ``cells`` (tasks, estimated text of each)
    fill in order: as few shards as ``max_rows`` tasks and
    :data:`SHARD_TEXT_BYTES` of text each allow; when the text bound sets
    their number, as many holding about as much text each."""
    shards = _fill(cells, max_rows)
    k = len(shards)
    if k > -(-sum(t for t, _ in cells) // max_rows):   # the text bound set k: a k-th of the text each
        even = _fill(cells, max_rows, k)
        if len(even) == k:
            return even
    return shards


def _fill(cells: list[tuple[int, int]], max_rows: int, k: int | None = None) -> list[int]:
    """Rows of each shard when ``cells`` (tasks, text of each) fill shards in
    order, each closed before the task that would take it past ``max_rows``
    tasks or :data:`SHARD_TEXT_BYTES` of text (a larger task gets a shard of
    its own). With ``k``, shard i also ends at the task whose middle is
    nearest to i / k of the text, for ``k`` shards of about equal text (more
    may come out where the bounds close one earlier)."""
    total = sum(t * size for t, size in cells)
    shards, rows, text, done = [], 0, 0, 0   # finished shards; rows and text of the open one; text before it
    for left, size in cells:
        while left:
            fit = min(left, max_rows - rows, (SHARD_TEXT_BYTES - text) // size)
            if k is not None:   # no further than the open shard's share of the text
                fit = min(fit, math.floor((total * (len(shards) + 1) / k - done - text) / size + 0.5))
            if fit <= 0 and rows:
                shards.append(rows)
                done, rows, text = done + text, 0, 0
                continue
            fit = max(fit, 1)
            rows, text, left = rows + fit, text + fit * size, left - fit
    if rows:
        shards.append(rows)
    return shards


def estimate_task_bytes(method: str, scenario: str, n: int) -> int:
    """Estimated text of one task of ``method``/``scenario`` at ``n`` rows."""
    columns = len(get_scenario(method, scenario).columns())
    return get_family(method).rows(n) * (columns * CELL_BYTES + 1) + TASK_TEXT_BYTES


def format_plan(p: Plan, jobs: int = 1) -> str:
    """The text ``taskfactory plan`` prints."""
    from ..tables import render_table

    g = p.grid
    lines = [f"grid {g.name} (sha256 {g.sha256[:12]}), seed {g.seed}, alpha {g.alpha:g}"]
    rows = [(f"{dim}s", str(len(counter)), "") if dim in ("scenario", "seed")
            else (dim, str(len(counter)), ", ".join(f"{k}: {v}" for k, v in counter.items()))
            for dim, counter in p.by.items()]
    lines.append(render_table(("dimension", "values", "tasks per value"), rows, align=("left", "right", "left")))
    for split in g.splits():
        names = p.shard_names(split)
        lines.append(f"{split}: {p.by_split.get(split, 0)} tasks in {len(names)} shard(s) of up to "
                     f"{p.rows_per_shard(split)} rows (a shard: at most shard_rows {g.shard_rows} tasks and about "
                     f"{SHARD_BYTES >> 20} MB of Parquet), built as {p.chunk_count(split)} chunk(s) of up to "
                     f"{CHUNK_ROWS} rows")
    est = p.estimate_seconds(jobs)
    lines.append(f"total: {p.total} tasks ({p.datasets} datasets); estimated build time with --jobs {jobs}: "
                 f"{_duration(est)} on {p.parallel(jobs)} core(s) here ({_duration(p.work_seconds())} of work on "
                 "one core, which a cluster's cores share)")
    warning = p.memory_warning(jobs)
    if warning:
        lines.append(warning)
    return "\n".join(lines)


def _gib(nbytes: float) -> str:
    return f"{nbytes / (1 << 30):.1f} GB"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{math.ceil(seconds)} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
