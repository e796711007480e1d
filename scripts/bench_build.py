#!/usr/bin/env python3
"""Benchmark a build: wall time, tasks per second, peak memory, and the ratio of
the build's CPU time to the bare cost of the statistical fits.

    python scripts/bench_build.py grids/demo.yaml --jobs 2 [--plan] [--verify] [--record FILE]

The build runs in a subprocess (as a user runs it). The bare cost is the time
of the canonical and naive tests alone on every dataset of the corpus, parsed
in advance; the ratio says how much the factory adds around the statistics.
``--plan`` also times ``taskfactory plan GRID --jobs N`` and keeps its
estimate of the build's seconds; ``--verify`` times ``taskfactory verify
--all --jobs N`` of the corpus built. ``--record FILE`` writes the figures
with the command, date and machine for scripts/performance_doc.py.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from performance_doc import Recorder, add_record_option
from taskfactory.make.analysis import prepare, read_csv_text
from taskfactory.condition import Condition
from taskfactory.store.corpus import iter_records
from taskfactory.registry import get_family
from taskfactory.make.columns import roles_of


def bare_fit_seconds(corpus: Path) -> tuple[float, dict]:
    """Seconds spent in analyse + naive over every dataset, by method."""
    per_method = defaultdict(float)
    seen = set()
    for rec in iter_records(corpus, columns=["data_id", "method", "roles", "data_csv", "data_dictionary"]):
        if rec["data_id"] in seen or rec["data_csv"] is None:  # seen, or a question without a dataset
            continue
        seen.add(rec["data_id"])
        fam = get_family(rec["method"])
        roles = roles_of(rec["roles"])
        ranges = {e["name"]: tuple(e["range"]) for e in rec["data_dictionary"] if e.get("range")}
        cond = Condition(method=rec["method"], roles=roles)
        data = prepare(fam, read_csv_text(rec["data_csv"]), roles, ranges)
        start = time.perf_counter()
        fam.analyse(cond, data)
        if fam.naive_method:
            fam.naive(cond, data)
        per_method[rec["method"]] += time.perf_counter() - start
    return sum(per_method.values()), dict(per_method)


def timed_command(args: list[str]) -> tuple[float, str]:
    """Seconds ``taskfactory ARGS`` takes in a subprocess, and what it printed."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "taskfactory.cli", *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - start, out.stdout


def plan_figures(grid: str, jobs: int) -> dict:
    """The seconds ``plan GRID --jobs N`` takes and the build seconds it estimates."""
    seconds, out = timed_command(["plan", grid, "--jobs", str(jobs), "--json"])
    return {"plan_seconds": round(seconds, 2), "plan_estimate_seconds": json.loads(out)["estimated_seconds"]}


def verify_figures(corpus: Path, jobs: int, tasks: int) -> dict:
    """The seconds ``verify --all --jobs N`` of ``corpus`` takes, and its tasks per second."""
    seconds, _ = timed_command(["verify", str(corpus), "--all", "--jobs", str(jobs), "--no-progress"])
    return {"verify_seconds": round(seconds, 2), "verify_tasks_per_second": round(tasks / seconds, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("grid")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="corpus folder (default: a temporary one)")
    ap.add_argument("--json", dest="json_out", help="write the figures to this JSON file")
    ap.add_argument("--plan", action="store_true",
                    help="also time `taskfactory plan GRID --jobs N` and keep its estimate")
    ap.add_argument("--verify", action="store_true", help="also time `taskfactory verify --all --jobs N` of the corpus")
    add_record_option(ap)
    args = ap.parse_args(argv)
    run = Recorder(__file__, argv)
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        out = Path(args.out or Path(tmp) / "corpus")
        cmd = [sys.executable, "-m", "taskfactory.cli", "build", args.grid, "-o", str(out), "--jobs", str(args.jobs),
               "--no-progress", "--overwrite"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        manifest = json.loads((out / "manifest.json").read_text())
        tasks, datasets = manifest["counts"]["tasks"], manifest["counts"]["datasets"]
        fits, per_method = bare_fit_seconds(out)
        size = sum(s["bytes"] for s in manifest["shards"])
        planned = plan_figures(args.grid, args.jobs) if args.plan else {}   # after the build: its peak is the build's
        verified = verify_figures(out, args.jobs, tasks) if args.verify else {}
    figures = {
        "grid": args.grid, "jobs": args.jobs, "tasks": tasks, "datasets": datasets,
        "rejected": manifest["counts"]["rejected"], "wall_seconds": round(wall, 2),
        "tasks_per_second": round(tasks / wall, 1), "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1), "bare_fit_seconds": round(fits, 3),
        "cpu_to_fit_ratio": round(cpu / fits, 1) if fits else None, "corpus_mb": round(size / 2**20, 2),
        "fit_seconds_by_method": {k: round(v, 3) for k, v in sorted(per_method.items())},
        "shard_mb": [round(s["bytes"] / 2**20, 2) for s in manifest["shards"]], **planned, **verified,
    }
    for key, value in figures.items():
        if key != "fit_seconds_by_method":
            print(f"{key:<20} {value}")
    print("bare fit seconds by method: " + ", ".join(f"{k} {v}" for k, v in figures["fit_seconds_by_method"].items()))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=1) + "\n")
    if args.record:
        run.write(args.record, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
