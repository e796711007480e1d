#!/usr/bin/env python3
"""Time ``plan`` on a grid of about a million tasks (every family), and on
the largest grid shape the limits allow: a thousand sample sizes with a
thousand exclude rules.

    python scripts/bench_plan.py [--tasks 1000000] [--record FILE]

The first plan is timed cold, as ``taskfactory plan`` runs it: its clipping
probe included (the probe is cached per process, so a second plan of the
same families reuses it; that time is shown too). The build-time estimate
(a timed sample of every family) is timed on its own. ``--record FILE``
writes the figures with the command, date and machine for
scripts/performance_doc.py.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time

import taskfactory as tf
from performance_doc import Recorder, add_record_option


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_plan(grid: dict):
    """The plan of ``grid`` and the seconds it took."""
    start = time.perf_counter()
    p = tf.plan(grid)
    return p, time.perf_counter() - start


def million(tasks: int) -> dict:
    """Plan a grid of about ``tasks`` tasks over every family, cold and again,
    and time the build estimate's sample."""
    n = [100, 120, 200, 300, 500, 800, 1200, 2000, 3000, 4800]
    base = {"name": "million", "seed": 1, "methods": "all", "n": n, "effects": ["null", "borderline", "medium"],
            "prompt_styles": ["basic", "guided"], "seeds": 1}
    seeds = math.ceil(tasks / tf.plan(base, probe=False).total)
    grid = {**base, "seeds": seeds, "exclude": [{"n": 4800, "effect": "null"}], "max_tasks": max(tasks * 2, 10**8)}
    p, seconds = timed_plan(grid)
    _, warm = timed_plan(grid)
    start = time.perf_counter()
    estimate = p.estimate_seconds(2)
    return {"tasks": p.total, "methods": len(p.by["method"]), "seeds": seeds,
            "shards": sum(p.shard_count(s) for s in p.grid.splits()), "seconds_with_probe": seconds,
            "seconds_without_probe": warm, "estimate_hours_2_cores": estimate / 3600,
            "estimate_sample_seconds": time.perf_counter() - start, "peak_rss_mb": peak_mb()}


def wide() -> dict:
    """Plan the widest grid the limits allow: a thousand sample sizes with a thousand exclude rules."""
    sizes = list(range(100, 1100))
    p, seconds = timed_plan({"name": "wide", "seed": 1, "methods": "all", "n": sizes, "max_tasks": 10**9,
                             "exclude": [{"n": size, "effect": "medium"} for size in sizes]})
    return {"tasks": p.total, "sample_sizes": len(sizes), "exclude_rules": len(sizes), "seconds": seconds,
            "peak_rss_mb": peak_mb()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1_000_000)
    add_record_option(ap)
    args = ap.parse_args(argv)
    run = Recorder(__file__, argv)
    f = million(args.tasks)
    print(f"planned {f['tasks']} tasks ({f['methods']} methods, {f['seeds']} seeds, {f['shards']} shards) in "
          f"{f['seconds_with_probe']:.2f} s with the clipping probe, {f['seconds_without_probe']:.2f} s without; "
          f"estimated build {f['estimate_hours_2_cores']:.1f} h on 2 cores (timed sample "
          f"{f['estimate_sample_seconds']:.2f} s); peak RSS {f['peak_rss_mb']:.0f} MB")
    w = f["wide"] = wide()
    print(f"planned {w['tasks']} tasks over {w['sample_sizes']} sample sizes with {w['exclude_rules']} exclude rules"
          f" in {w['seconds']:.2f} s; peak RSS {w['peak_rss_mb']:.0f} MB")
    if args.record:
        run.write(args.record, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
