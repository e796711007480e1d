"""The build-time estimate ``taskfactory plan`` prints: each family of a grid
timed on a sample of its own cells on this machine (:func:`timed_costs`),
the cost of the whole build added up from it (:meth:`taskfactory.store.plan.Plan.work_seconds`).
"""

from __future__ import annotations

import time

from ..design.grid import Coord, Grid
from ..registry import get_family
from .shards import ROW_GROUP_BYTES, ROW_GROUP_ROWS, ShardWriter, text_chars

# What a build spends outside its chunks, in seconds: loading the grid, the
# workers' start (imports) and the clipping probe, the last parts of the last
# shard and the finish (measured on 2 cores: 1.8 s with 2 workers, 1 s in one
# process).
STARTUP_SECONDS = 2.0
#: The timed sample behind the estimate: per family, a dataset released and
#: recorded in every prompt style and perturbation at the smallest N the grid
#: gives the family and at the largest up to SAMPLE_MAX_N (after one untimed
#: warm-up); the cost of other N follows the line through the two, in rows.
SAMPLE_MAX_N = 1000


def dataset_rows(method: str, n: int) -> int:
    """Rows of the largest dataset of ``method`` at ``n`` (0 without a dataset)."""
    family = get_family(method)
    return family.rows(n) if family.has_data else 0


def _writing_seconds_per_char(records: list[dict]) -> float:
    """Seconds the build spends on a character of its records' text in
    Parquet: writing a worker's part (lz4), reading it back and writing the
    shard (zstd), timed on ``records`` repeated to a full row group (of
    ROW_GROUP_ROWS records or ROW_GROUP_BYTES characters, whichever is less)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    chars = sum(text_chars(rec) for rec in records)
    copies = max(1, min(-(-ROW_GROUP_ROWS // len(records)), ROW_GROUP_BYTES // max(chars, 1)))
    start = time.perf_counter()
    part = pa.BufferOutputStream()
    with ShardWriter(part, {}, transient=True) as writer:
        for rec in records * copies:
            writer.append(rec)
    stored = pq.ParquetFile(pa.BufferReader(part.getvalue()))
    with ShardWriter(pa.BufferOutputStream(), {}) as writer:
        for i in range(stored.num_row_groups):
            writer.append_row_group(stored.read_row_group(i))
    return (time.perf_counter() - start) / max(chars * copies, 1)


def timed_costs(g: Grid, methods: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """Seconds one dataset of each of ``methods`` costs to release, record in
    every prompt style of ``g`` and write to Parquet, as ``(fixed, per row)``:
    timed at two N (see :data:`SAMPLE_MAX_N`) on the family's first cell's
    scenario and effect, averaged over the perturbations the grid gives it;
    the writing at the cost per character of text of the records made
    (:func:`_writing_seconds_per_char`)."""
    from ..make.task import Dataset, record, release

    cells = {}   # method -> (its first cell's scenario and effect, its N, its perturbations)
    seen = {}    # (method, block id) -> block: the cells of a block are read once per method
    for method, scenario, block in g.blocks():
        _, sizes, perturbations = cells.setdefault(method, ((scenario, block.cells[0][1]), set(), []))
        if (method, id(block)) in seen:
            continue
        seen[(method, id(block))] = block
        for n, _, perturbation, _ in block.cells:
            sizes.add(n)
            if perturbation not in perturbations:
                perturbations.append(perturbation)
    made, records = {}, []   # method -> [(rows, seconds, characters of text)]; the records made

    def release_and_record(coords: list[Coord]) -> tuple[float, int]:
        start = time.perf_counter()
        ds = release(g, coords[0])
        recs = [record(g, c, ds) for c in coords] if isinstance(ds, Dataset) else []
        seconds = time.perf_counter() - start
        records.extend(recs)
        return seconds, sum(text_chars(rec) for rec in recs)

    for method in methods:
        (scenario, effect), sizes, perturbations = cells[method]
        small = min(sizes)
        large = max([n for n in sizes if n <= SAMPLE_MAX_N], default=small)
        split = g.split_of(method, scenario)

        def coords(n: int, perturbation: str) -> list[Coord]:
            return [Coord(method, scenario, n, effect, perturbation, 0, style, split) for style in g.prompt_styles]

        release_and_record(coords(small, perturbations[0]))   # warm-up: imports, caches
        made[method] = []
        for n in sorted({small, large}):
            timed = [release_and_record(coords(n, pert)) for pert in perturbations]
            made[method].append((dataset_rows(method, n), sum(t for t, _ in timed) / len(timed),
                                 sum(c for _, c in timed) / len(timed)))
    per_char = _writing_seconds_per_char(records) if records else 0.0
    costs = {}
    for method, points in made.items():
        (r0, t0, c0), (r1, t1, c1) = points[0], points[-1]
        t0, t1 = t0 + per_char * c0, t1 + per_char * c1
        per_row = max(0.0, (t1 - t0) / (r1 - r0)) if r1 > r0 else 0.0
        costs[method] = (max(0.0, t0 - per_row * r0), per_row)
    return costs
