#!/usr/bin/env python3
"""Measure the agent's sandbox: calls per second, reset time, idle memory,
beside the same cells in a bare warm interpreter and in a fresh ``python -c``.

Cells: a grouped mean and a Welch t-test on a task's CSV (the first task of
``--method`` in CORPUS, or a synthetic 200-row CSV without one).

- calls/s: ``--sessions`` workspaces at once, each on its own thread, for
  ``--seconds`` (isolated, with bubblewrap);
- the same cells run bare in this interpreter (the floor) and each as a
  fresh ``python -c`` (what many RL code tools do);
- reset: a workspace's first call when the pool has a session ready, the
  pool's own reset of a used sandbox (in the background), and a cold sandbox
  started and its first session ready (Python and R);
- memory: the proportional set size of an idle sandbox's processes.

    python scripts/bench_agent.py [CORPUS] [--sessions 4] [--seconds 10] [--json] [--record FILE]

``--record FILE`` writes the figures with the command, date and machine for
scripts/performance_doc.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from performance_doc import Recorder, add_record_option
from taskfactory.use.agent import Limits, Sandbox, isolation_problem
from taskfactory.use.agent import sandbox as sandbox_module

#: Each cell: statements, then the expression whose value the agent sees.
CELLS = {
    "grouped mean": ("d = pd.read_csv('{file}')", "d.groupby('{group}')['{y}'].mean()"),
    "t-test": ("d = pd.read_csv('{file}')\ng = sorted(d['{group}'].dropna().unique())",
               "stats.ttest_ind(d.loc[d['{group}'] == g[0], '{y}'].dropna(), d.loc[d['{group}'] == g[1], '{y}']"
               ".dropna(), equal_var=False).pvalue"),
}
PRELUDE = "import pandas as pd\nfrom scipy import stats\n"


def task_file(corpus: str | None, method: str) -> tuple[str, bytes, str, str]:
    """(file name, CSV bytes, group column, outcome column)."""
    if corpus:
        from taskfactory.store.corpus import iter_records

        for rec in iter_records(corpus, columns=["data_filename", "data_csv", "roles"], method=method):
            roles = rec["roles"]
            return rec["data_filename"], rec["data_csv"].encode(), roles["group"], roles["outcome"]
        raise SystemExit(f"error: {corpus} has no task of method {method}")
    rng = np.random.default_rng(1)
    rows = [f"{'ab'[i % 2]},{rng.normal(10 + i % 2, 2):.3f}" for i in range(200)]
    return "data.csv", ("group,y\n" + "\n".join(rows) + "\n").encode(), "group", "y"


def rate(box: Sandbox, files: dict, cells: list[tuple[str, str]], sessions: int, seconds: float) -> float:
    """Calls per second over ``sessions`` workspaces at once."""
    spaces = [box.workspace(files) for _ in range(sessions)]
    for space in spaces:
        space.run("python", PRELUDE)
    counts = [0] * sessions
    failures: list[str] = []
    stop = time.monotonic() + seconds

    def work(i: int) -> None:
        while time.monotonic() < stop and not failures:
            result = spaces[i].run("python", "\n".join(cells[counts[i] % len(cells)]))
            if result.status != "ok":
                failures.append(result.output)
            counts[i] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(sessions)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    for space in spaces:
        space.close()
    if failures:
        raise SystemExit(f"error: a call failed: {failures[0][:300]}")
    return sum(counts) / elapsed


def bare(files: dict, cells: list[tuple[str, str]], rounds: int) -> float:
    """Seconds per cell run in this interpreter (warm, in the file's folder)."""
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            Path(folder, name).write_bytes(data)
        here = os.getcwd()
        os.chdir(folder)
        try:
            namespace: dict = {}
            exec(PRELUDE, namespace)
            compiled = [compile(f"{setup}\n_ = repr({value})", "<cell>", "exec") for setup, value in cells]
            started = time.perf_counter()
            for i in range(rounds):
                exec(compiled[i % len(compiled)], namespace)
            return (time.perf_counter() - started) / rounds
        finally:
            os.chdir(here)


def fresh_process(files: dict, cells: list[tuple[str, str]], rounds: int) -> float:
    """Seconds per cell run as a new ``python -c``."""
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            Path(folder, name).write_bytes(data)
        started = time.perf_counter()
        for i in range(rounds):
            setup, value = cells[i % len(cells)]
            code = f"{PRELUDE}{setup}\nprint(repr({value}))"
            subprocess.run([sys.executable, "-c", code], cwd=folder, check=True, capture_output=True)
        return (time.perf_counter() - started) / rounds


def resets(box: Sandbox, files: dict, rounds: int) -> list[float]:
    """Seconds from opening a workspace to its first call's result, a session ready in the pool."""
    out = []
    for _ in range(rounds):
        deadline = time.monotonic() + 30
        while not box._pools["python"].ready and time.monotonic() < deadline:   # the pool refilled
            time.sleep(0.01)
        started = time.perf_counter()
        with box.workspace(files) as space:
            space.run("python", "1")
            out.append(time.perf_counter() - started)
    return out


def background_resets(box: Sandbox, rounds: int) -> list[float]:
    """Seconds the pool spends making a used sandbox fresh: every process stopped, the folders
    emptied, a new session started."""
    slot = box._pools["python"].take()
    try:
        out = []
        for _ in range(rounds):
            started = time.perf_counter()
            slot.reset()
            out.append(time.perf_counter() - started)
        return out
    finally:
        slot.kill()


def cold_start(language: str) -> float:
    started = time.perf_counter()
    slot = sandbox_module._Slot(language, Limits(), False, sandbox_module.PRELOAD[language])
    try:
        slot.start()
        return time.perf_counter() - started
    finally:
        slot.kill()


def idle_memory(box: Sandbox) -> float:
    """MiB of proportional set size of one idle sandbox (bwrap, keeper, session)."""
    slot = box._pools["python"].take()
    try:
        pids = [slot.process.pid]
        total = 0
        seen = set()
        while pids:
            pid = pids.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                for task in Path(f"/proc/{pid}/task").iterdir():
                    pids += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
        return total / 1024
    finally:
        slot.kill()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--method", default="welch_t")
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--json", action="store_true")
    add_record_option(ap)
    args = ap.parse_args(argv)
    run = Recorder(__file__, argv)
    if problem := isolation_problem():
        print(f"error: {problem}", file=sys.stderr)
        return 2
    name, data, group, y = task_file(args.corpus, args.method)
    files = {name: data}
    cells = [tuple(part.format(file=name, group=group, y=y) for part in cell) for cell in CELLS.values()]
    figures = {"cores": os.cpu_count(), "sessions": args.sessions}
    endless = Limits(episode_calls=10 ** 9, episode_seconds=1e9)   # no episode limit stops the count
    with Sandbox(limits=endless, languages=("python",), pool=args.sessions) as box:
        rate(box, files, cells, args.sessions, 1.0)            # warm-up
        figures["isolated_calls_per_s"] = rate(box, files, cells, args.sessions, args.seconds)
        one = rate(box, files, cells, 1, args.seconds / 2)
        figures["isolated_ms_per_call_one_session"] = 1000 / one
        reset = resets(box, files, 20)
        figures["reset_from_pool_ms_median"] = 1000 * statistics.median(reset)
        figures["reset_from_pool_ms_max"] = 1000 * max(reset)
        figures["reset_in_background_ms_median"] = 1000 * statistics.median(background_resets(box, 20))
        figures["idle_sandbox_pss_mib"] = idle_memory(box)
    figures["bare_ms_per_call"] = 1000 * bare(files, cells, 400)
    figures["fresh_python_c_ms_per_call"] = 1000 * fresh_process(files, cells, 10)
    figures["cold_start_python_s"] = cold_start("python")
    if "r" in Sandbox.available():
        figures["cold_start_r_s"] = cold_start("r")
    figures["over_bare_ms_per_call"] = figures["isolated_ms_per_call_one_session"] - figures["bare_ms_per_call"]
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for key, value in figures.items():
            print(f"{key:36s} {value:10.2f}" if isinstance(value, float) else f"{key:36s} {value:10d}")
    if args.record:
        run.write(args.record, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
