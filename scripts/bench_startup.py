#!/usr/bin/env python3
"""Time the command line's start: ``taskfactory --help`` and ``taskfactory
--version`` as a user runs them (a new process each time), best and median of
``--runs``, and the modules ``import taskfactory`` loads.

    python scripts/bench_startup.py [--runs 10] [--record FILE]

``--record FILE`` writes the figures with the command, date and machine for
scripts/performance_doc.py.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from performance_doc import Recorder, add_record_option

EXE = Path(sys.executable).with_name("taskfactory")


def timed(args: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        out.append(time.perf_counter() - start)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    add_record_option(ap)
    args = ap.parse_args(argv)
    run = Recorder(__file__, argv)
    if not EXE.exists():
        print(f"error: {EXE} not found; install taskfactory in this environment", file=sys.stderr)
        return 2
    figures = {"runs": args.runs, "commands": {}}
    for label, cmd in (("taskfactory --help", [str(EXE), "--help"]), ("taskfactory --version", [str(EXE), "--version"]),
                       ("python -c 'import taskfactory'", [sys.executable, "-c", "import taskfactory"])):
        t = timed(cmd, args.runs)
        figures["commands"][label] = {"best_s": min(t), "median_s": statistics.median(t)}
        print(f"{label:34s} best {min(t):.3f} s, median {statistics.median(t):.3f} s ({args.runs} runs)")
    probe = ("import sys, taskfactory; heavy = sorted(m for m in ('numpy', 'pandas', 'scipy', 'pyarrow') "
             "if m in sys.modules); print(', '.join(heavy) or 'none')")
    heavy = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.strip()
    print(f"heavy modules loaded by 'import taskfactory': {heavy}")
    figures["heavy_modules"] = [] if heavy == "none" else heavy.split(", ")
    if args.record:
        run.write(args.record, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
