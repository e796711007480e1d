#!/usr/bin/env python3
"""Time ``plan`` on a grid of about a million tasks (every family), and on
the largest grid shape the limits allow: a thousand sample sizes with a
thousand exclude rules.

    python scripts/bench_plan.py [--tasks 1000000]

The first plan is timed cold, as ``taskfactory plan`` runs it: its clipping
probe included (the probe is cached per process, so a second plan of the
same families reuses it; that time is shown too). The build-time estimate
(a timed sample of every family) is timed on its own.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time

import taskfactory as tf


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    n = [100, 120, 200, 300, 500, 800, 1200, 2000, 3000, 4800]
    base = {"name": "million", "seed": 1, "methods": "all", "n": n, "effects": ["null", "borderline", "medium"],
            "prompt_styles": ["basic", "guided"], "seeds": 1}
    per_seed = tf.plan(base, probe=False).total
    seeds = math.ceil(args.tasks / per_seed)
    grid = {**base, "seeds": seeds, "exclude": [{"n": 4800, "effect": "null"}],
            "max_tasks": max(args.tasks * 2, 10**8)}
    start = time.perf_counter()
    p = tf.plan(grid)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    tf.plan(grid)
    warm = time.perf_counter() - start
    start = time.perf_counter()
    estimate = p.estimate_seconds(2)
    timing = time.perf_counter() - start
    shards = sum(p.shard_count(s) for s in p.grid.splits())
    print(f"planned {p.total} tasks ({len(p.by['method'])} methods, {seeds} seeds, {shards} shards) in "
          f"{seconds:.2f} s with the clipping probe, {warm:.2f} s without; "
          f"estimated build {estimate / 3600:.1f} h on 2 cores (timed sample {timing:.2f} s); "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    sizes = list(range(100, 1100))
    wide = {"name": "wide", "seed": 1, "methods": "all", "n": sizes, "max_tasks": 10**9,
            "exclude": [{"n": size, "effect": "medium"} for size in sizes]}
    start = time.perf_counter()
    p = tf.plan(wide)
    print(f"planned {p.total} tasks over {len(sizes)} sample sizes with {len(sizes)} exclude rules in "
          f"{time.perf_counter() - start:.2f} s; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
