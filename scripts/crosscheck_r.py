#!/usr/bin/env python3
"""Cross-check gold p-values against R, live, on a sample of built tasks.

For each sampled task the CSV is written to a scratch folder and R (one Rscript
process for the whole sample) reads it with ``read.csv(na.strings = "")``, sets
every numeric value outside the plausible range of the task's data dictionary
to NA, keeps complete cases on the test's columns, and runs the family's
canonical R call. The script prints a per-family agreement table and exits 1
when any task disagrees (|z(p_gold) - z(p_R)| >= 0.01, z capped at 8) or R fails.

    python scripts/crosscheck_r.py corpus/ --per-method 10
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from taskfactory.corpus import iter_records
from taskfactory.reference import fill, handling_r
from taskfactory.registry import families, get_family
from taskfactory.catalogue import get_scenario
from taskfactory.result import z_of_p

TOLERANCE = 0.01
COLUMNS = ["task_id", "data_id", "method", "scenario", "perturbation", "data_csv", "gold_p"]


def r_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid R string literal


def sample_tasks(corpus: str, per_method: int, seed: int) -> list[dict]:
    """Up to ``per_method`` tasks of each method x perturbation (one per dataset)."""
    by_cell = defaultdict(list)
    seen = set()
    for rec in iter_records(corpus, columns=COLUMNS):
        if rec["data_id"] in seen or rec["data_csv"] is None:  # a question without a dataset has no test to run
            continue
        seen.add(rec["data_id"])
        by_cell[(rec["method"], rec["perturbation"])].append(rec)
    rnd = random.Random(seed)
    out = []
    for key in sorted(by_cell):
        recs = by_cell[key]
        out.extend(recs if len(recs) <= per_method else rnd.sample(recs, per_method))
    return out


def r_block(task: dict, csv_path: Path) -> str:
    """R code computing the task's p-value on its CSV, with the canonical
    handling and call taken from taskfactory's family and scenario (never from
    the record, so a corpus cannot put code into the R script)."""
    family = get_family(task["method"])
    scen = get_scenario(task["method"], task["scenario"])
    lines = [f"d <- read.csv({r_string(str(csv_path))}, na.strings = \"\")"]
    lines += handling_r(family, scen.roles, scen.ranges())
    lines.append(fill(family.r_code, scen.roles, "r"))
    lines.append(f"p <- {family.r_pvalue}")
    body = "\n    ".join(lines)
    tid = r_string(task["task_id"])
    return (f"tryCatch(suppressWarnings({{\n    {body}\n    cat({tid}, sprintf(\"%.17g\", p), \"\\n\", file = out, "
            f"append = TRUE)\n}}), error = function(e) cat({tid}, \"ERROR\", gsub(\"[\\r\\n]\", \" \", "
            f"conditionMessage(e)), \"\\n\", file = out, append = TRUE))\n")


def run_r(tasks: list[dict], workdir: Path) -> dict[str, str]:
    out_file = workdir / "r_pvalues.txt"
    parts = [f"out <- {r_string(str(out_file))}", "invisible(file.create(out))"]
    for i, task in enumerate(tasks):
        csv_path = workdir / f"{i:05d}.csv"
        csv_path.write_text(task["data_csv"], encoding="utf-8")
        parts.append(r_block(task, csv_path))
    script = workdir / "crosscheck.R"
    script.write_text("\n".join(parts), encoding="utf-8")
    proc = subprocess.run(["Rscript", "--vanilla", str(script)], capture_output=True, text=True,
                          env={"LC_ALL": "C", "LANG": "C", "PATH": "/usr/local/bin:/usr/bin:/bin"})
    if proc.returncode != 0:
        sys.exit(f"error: Rscript failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
    results = {}
    for line in out_file.read_text().splitlines():
        tid, _, rest = line.strip().partition(" ")
        results[tid] = rest.strip()
    return results


def unparsable_templates() -> list[str]:
    """Families whose reference R template (methods/reference/<name>.R) R cannot parse."""
    bad = []
    for family in families():
        proc = subprocess.run(["Rscript", "--vanilla", "-e", "invisible(parse(file('stdin')))"], input=family.r_code,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            bad.append(f"{family.name}: {' '.join(proc.stderr.split())[:200]}")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--per-method", type=int, default=10, help="tasks per method x perturbation (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", dest="json_out", help="write every task's comparison to this JSON file")
    args = ap.parse_args(argv)
    if shutil.which("Rscript") is None:
        print("error: Rscript is not on PATH; install R (apt-get install r-base-core ...)", file=sys.stderr)
        return 2
    bad = unparsable_templates()
    for line in bad:
        print(f"R cannot parse the reference template of {line}")
    if bad:
        return 1
    tasks = sample_tasks(args.corpus, args.per_method, args.seed)
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp:
        r_out = run_r(tasks, Path(tmp))
    rows, table = [], defaultdict(lambda: {"tasks": 0, "worst": 0.0, "failed": 0})
    for t in tasks:
        key = f"{t['method']}/{t['perturbation']}"
        cell = table[key]
        cell["tasks"] += 1
        got = r_out.get(t["task_id"], "ERROR no output")
        entry = {"task_id": t["task_id"], "method": t["method"], "perturbation": t["perturbation"], "gold_p": t["gold_p"]}
        try:
            p_r = float(got)
            dz = abs(z_of_p(t["gold_p"]) - z_of_p(p_r))
            entry.update(r_p=p_r, dz=dz)
            cell["worst"] = max(cell["worst"], dz)
            if not dz < TOLERANCE:
                cell["failed"] += 1
                print(f"DISAGREE {t['task_id']} ({key}): gold p = {t['gold_p']:.10g}, R p = {p_r:.10g}, |dz| = {dz:.4f}")
        except ValueError:
            entry.update(r_error=got)
            cell["failed"] += 1
            cell["worst"] = math.inf
            print(f"R ERROR {t['task_id']} ({key}): {got}")
        rows.append(entry)
    print(f"{'method/perturbation':<44} {'tasks':>6} {'worst |dz|':>12} {'failed':>7}")
    for key in sorted(table):
        c = table[key]
        print(f"{key:<44} {c['tasks']:>6} {c['worst']:>12.2e} {c['failed']:>7}")
    failed = sum(c["failed"] for c in table.values())
    worst = max((c["worst"] for c in table.values()), default=0.0)
    print(f"checked {len(tasks)} tasks over {len(table)} method/perturbation cells; worst |dz| = {worst:.2e}; "
          f"disagreements: {failed}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=1))
    return 1 if failed or not tasks else 0


if __name__ == "__main__":
    sys.exit(main())
