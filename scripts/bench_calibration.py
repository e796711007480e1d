#!/usr/bin/env python3
"""How often each family's gold rejects at the borderline effect (its expected
statistic at the two-sided 5 % critical value): the share should be about a
half at every N. Also the type I error at the null effect.

    python scripts/bench_calibration.py [--seeds 500] [--n 30 120 480] [--methods welch_t ...]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import taskfactory as tf
from taskfactory.effects import EffectLevel
from taskfactory.design.grid import Coord
from taskfactory.make.task import Dataset, release

#: Borderline reject shares outside this band are reported as off.
BAND = (0.40, 0.60)


def reject_share(method: str, effect: str, n: int, seeds: int, alpha: float = 0.05) -> float:
    """Share of ``seeds`` datasets (cycling through the scenarios) whose gold rejects."""
    grid = tf.load_grid({"seed": 41, "methods": [method], "n": [n], "seeds": 1})
    scenarios = grid.scenarios[method]
    rejects = 0
    for k in range(seeds):
        c = Coord(method, scenarios[k % len(scenarios)], n, EffectLevel(effect), "none", k, "basic", "train")
        ds = release(grid, c)
        if not isinstance(ds, Dataset):
            raise SystemExit(f"error: {method} n={n} seed {k} was rejected: {ds.reasons[-1]}")
        rejects += ds.gold.pvalue < alpha
    return rejects / seeds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=500)
    ap.add_argument("--n", type=int, nargs="+", default=[30, 120, 480])
    ap.add_argument("--methods", nargs="+", default=None)
    args = ap.parse_args(argv)
    methods = args.methods or [f.name for f in tf.families() if f.has_data]
    print(f"{'method':<26} {'n':>5} {'null rejects':>13} {'borderline rejects':>19}")
    off = 0
    start = time.perf_counter()
    for method in methods:
        for n in args.n:
            family = tf.get_family(method)
            if n < family.min_n or (family.max_n is not None and n > family.max_n):
                continue
            null = reject_share(method, "null", n, args.seeds)
            border = reject_share(method, "borderline", n, args.seeds)
            flag = "" if BAND[0] <= border <= BAND[1] else "  <- outside 40-60 %"
            off += bool(flag)
            print(f"{method:<26} {n:>5} {null:>13.3f} {border:>19.3f}{flag}")
    se = np.sqrt(0.25 / args.seeds)
    print(f"{off} cell(s) outside {BAND[0]:.0%}-{BAND[1]:.0%} ({args.seeds} seeds each, SE of a share about "
          f"{se:.3f}); {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
