#!/usr/bin/env python3
"""Cross-check gold p-values against R, live, on a sample of built tasks.

For each sampled task the CSV is written to a scratch folder and R (one Rscript
process for the whole sample) reads it with ``read.csv(na.strings = "")``, sets
every numeric value outside the plausible range of the task's scenario (of its
item, in a corpus of real data) to NA, keeps complete cases on the test's columns, and runs the family's
canonical R call and the R call of every accepted alternative the record lists.
For a closed-form task (no dataset) R runs the record's reference solution,
which prints the answer block; its answer must equal the gold (numbers within
1e-8, whole numbers and yes/no exactly).
The script prints a per-family agreement table and exits 1 when any p-value
disagrees (|z(p_record) - z(p_R)| >= 0.01, z capped at 8), a closed-form answer
differs, or R fails.

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

from taskfactory.store.corpus import ORIGIN_REAL, iter_records, load_manifest
from taskfactory.errors import TaskFactoryError
from taskfactory.make.reference import closed_reference, fill, handling_r
from taskfactory.registry import families, get_family
from taskfactory.design.catalogue import get_scenario
from taskfactory.store.real import SpecError, data_design, spec_sha256
from taskfactory.methods._factor import LEVELS
from taskfactory.result import z_of_p
from taskfactory.make.columns import drawn_params
from taskfactory.use.reward import Invalid, parse_answer

TOLERANCE = 0.01
CLOSED_TOLERANCE = 1e-8
COLUMNS = ["task_id", "data_id", "method", "scenario", "perturbation", "data_csv", "gold_p", "accepted", "effect",
           "answer_kind", "gold", "n", "dgp_params"]


def r_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid R string literal


def sample_tasks(corpus: str, per_method: int, seed: int) -> list[dict]:
    """Up to ``per_method`` tasks of each method x perturbation (one per dataset)."""
    by_cell = defaultdict(list)
    seen = set()
    for rec in iter_records(corpus, columns=COLUMNS):
        if rec["data_id"] in seen:
            continue
        seen.add(rec["data_id"])
        by_cell[(rec["method"], rec["perturbation"])].append(rec)
    rnd = random.Random(seed)
    out = []
    for key in sorted(by_cell):
        recs = by_cell[key]
        out.extend(recs if len(recs) <= per_method else rnd.sample(recs, per_method))
    return out


def closed_reference_r(task: dict) -> str:
    """The R reference of a closed-form task, rebuilt from its family's
    template and its drawn numbers (never the record's code); numbers only."""
    params = drawn_params(task["dgp_params"])
    if not all(isinstance(v, float) or isinstance(v, list) and all(isinstance(x, float) for x in v)
               for v in params.values()):
        sys.exit(f"error: task {task['task_id']}: dgp_params hold something other than numbers")
    family = get_family(task["method"])
    return closed_reference(family, {**family.shown_params(params), "n": int(task["n"])}, "r")


def closed_answer_error(task: dict, printed: str) -> float | None:
    """How far the answer R printed for a closed-form task is from its gold
    (0 for an exact match; inf when R printed no answer or a wrong whole number
    or yes/no); None for a task with a dataset."""
    if task["data_csv"] is not None:
        return None
    answer = parse_answer(printed.replace(" | ", "\n"), task["answer_kind"])
    if isinstance(answer, Invalid):
        return math.inf
    gold = task["gold"]
    errors = []
    for field, value in answer.values.items():
        if isinstance(value, float) and not isinstance(gold[field], bool):
            errors.append(abs(value - gold[field]))
        else:
            errors.append(0.0 if value == gold[field] else math.inf)
    return max(errors)


def checks(task: dict, roles: dict) -> list[tuple[str, str, str, str, float]]:
    """What to compare for one task: ``(check id, label, R code, R p-value
    expression, recorded p-value)`` for the gold and each accepted alternative
    the family declares. The code comes from taskfactory's family for the
    task's ``roles`` (never from the record, so a corpus cannot put code into
    the R script); the record must list the family's alternatives, in order
    (a task of real data may leave out one that cannot run on its data)."""
    family = get_family(task["method"])
    listed = [a["method"] for a in task["accepted"] or []]
    declared = {alt.method: alt for alt in family.accepted}
    if listed != [m for m in declared if m in listed] or (task["effect"] != ORIGIN_REAL and listed != list(declared)):
        sys.exit(f"error: task {task['task_id']} lists accepted tests {listed}, "
                 f"its family declares {list(declared)}")
    out = [(task["task_id"], "gold", family.code_for(roles, "r"), family.r_pvalue_for(roles), task["gold_p"])]
    for k, rec in enumerate(task["accepted"] or [], 1):
        alt = declared[rec["method"]]
        out.append((f"{task['task_id']}#{k}", f"accepted {k}", alt.r_code, alt.r_pvalue, rec["p_value"]))
    return out


def real_spec(manifest: dict) -> dict | None:
    """The spec a corpus of real data was imported from, as its manifest keeps
    it (None for a built corpus); a :class:`SpecError` when it does not match
    the sha256 the manifest records of it (``grid_sha256``)."""
    if manifest.get("origin") != ORIGIN_REAL:
        return None
    spec = manifest.get("grid")
    try:
        matches = spec_sha256(spec) == manifest.get("grid_sha256")
    except (TypeError, ValueError) as exc:
        raise SpecError(f"manifest.json: its spec cannot be read ({type(exc).__name__}: {exc})") from None
    if not isinstance(spec, dict) or not matches:
        raise SpecError("manifest.json: its spec does not match its grid_sha256")
    return spec


def design(task: dict, spec: dict | None) -> tuple[dict, dict]:
    """The roles and plausible ranges of a task: its scenario's, or for a
    corpus of real data (``spec``, its manifest's, from :func:`real_spec`)
    its item's, checked as the import checks them (a value role a number, the
    names of columns and levels ones R and Python code can hold): a
    :class:`SpecError` otherwise."""
    if spec is not None:
        return data_design(spec, task["scenario"], task["data_csv"])
    scen = get_scenario(task["method"], task["scenario"])
    return scen.roles, scen.ranges()


def r_block(task: dict, roles: dict, ranges: dict, csv_path: Path, check_id: str, r_code: str, r_pvalue: str) -> str:
    """R code computing one p-value of the task on its CSV, after the
    canonical handling taken from taskfactory's family and the task's design."""
    family = get_family(task["method"])
    lines = [f"d <- read.csv({r_string(str(csv_path))}, na.strings = \"\")"]
    lines += handling_r(family, roles, ranges)
    lines.append(fill(r_code, roles, "r"))
    lines.append(f"p <- {r_pvalue}")
    body = "\n    ".join(lines)
    tid = r_string(check_id)
    return (f"tryCatch(suppressWarnings({{\n    {body}\n    cat({tid}, sprintf(\"%.17g\", p), \"\\n\", file = out, "
            f"append = TRUE)\n}}), error = function(e) cat({tid}, \"ERROR\", gsub(\"[\\r\\n]\", \" \", "
            f"conditionMessage(e)), \"\\n\", file = out, append = TRUE))\n")


def run_r(tasks: list[dict], designs: dict[str, tuple[dict, dict]], workdir: Path) -> dict[str, str]:
    """R's output for each check of ``tasks`` (by check id); ``designs`` holds
    the roles and ranges (:func:`design`) of each task with a dataset."""
    out_file = workdir / "r_pvalues.txt"
    parts = [f"out <- {r_string(str(out_file))}", "invisible(file.create(out))"]
    for i, task in enumerate(tasks):
        if task["data_csv"] is None:
            tid = r_string(task["task_id"])
            parts.append(f"tryCatch({{\n    txt <- capture.output({{\n{closed_reference_r(task)}}})\n    cat({tid}, "
                         f"paste(txt, collapse = \" | \"), \"\\n\", file = out, append = TRUE)\n}}, error = function(e) "
                         f"cat({tid}, \"ERROR\", gsub(\"[\\r\\n]\", \" \", conditionMessage(e)), \"\\n\", file = out, "
                         "append = TRUE))\n")
            continue
        csv_path = workdir / f"{i:05d}.csv"
        csv_path.write_text(task["data_csv"], encoding="utf-8")
        roles, ranges = designs[task["task_id"]]
        for check_id, _, r_code, r_pvalue, _ in checks(task, roles):
            parts.append(r_block(task, roles, ranges, csv_path, check_id, r_code, r_pvalue))
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
    """Families whose reference R template (methods/reference/<name>.R and,
    for a factor exposure, ``<name>.levels.R``), or the R code of an accepted
    alternative, R cannot parse."""
    bad = []
    for family in families():
        codes = [("reference", family.r_code), *((alt.method, alt.r_code) for alt in family.accepted)]
        if family.factor_role:   # the likelihood-ratio test of a factor exposure's levels
            codes.append(("levels", family.code_for({LEVELS: 3.0}, "r")))
        for label, code in codes:
            proc = subprocess.run(["Rscript", "--vanilla", "-e", "invisible(parse(file('stdin')))"], input=code,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                bad.append(f"{family.name} ({label}): {' '.join(proc.stderr.split())[:200]}")
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
    try:
        spec = real_spec(load_manifest(args.corpus))
        tasks = sample_tasks(args.corpus, args.per_method, args.seed)
        designs = {t["task_id"]: design(t, spec) for t in tasks if t["data_csv"] is not None}
        with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp:
            r_out = run_r(tasks, designs, Path(tmp))
    except TaskFactoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows, table = [], defaultdict(lambda: {"tasks": 0, "worst": 0.0, "failed": 0})
    for t in tasks:
        error = closed_answer_error(t, r_out.get(t["task_id"], "ERROR no output"))
        if error is not None:
            cell = table[f"{t['method']} (answer)"]
            cell["tasks"] += 1
            cell["worst"] = max(cell["worst"], error)
            rows.append({"task_id": t["task_id"], "check": "answer", "method": t["method"], "error": error,
                         "r_output": r_out.get(t["task_id"])})
            if not error < CLOSED_TOLERANCE:
                cell["failed"] += 1
                print(f"DISAGREE {t['task_id']}: gold {t['gold']}, R printed {r_out.get(t['task_id'])!r}")
            continue
        for check_id, label, _, _, recorded in checks(t, designs[t["task_id"]][0]):
            key = f"{t['method']}/{t['perturbation']}" + ("" if label == "gold" else f" ({label})")
            cell = table[key]
            cell["tasks"] += 1
            got = r_out.get(check_id, "ERROR no output")
            entry = {"task_id": t["task_id"], "check": label, "method": t["method"], "perturbation": t["perturbation"],
                     "p": recorded}
            try:
                p_r = float(got)
                if 1.0 < p_r <= 1.0 + 1e-12:   # R sums probabilities to just above 1 (fisher.test)
                    p_r = 1.0
                dz = abs(z_of_p(recorded) - z_of_p(p_r))
                entry.update(r_p=p_r, dz=dz)
                cell["worst"] = max(cell["worst"], dz)
                if not dz < TOLERANCE:
                    cell["failed"] += 1
                    print(f"DISAGREE {check_id} ({key}): recorded p = {recorded:.10g}, R p = {p_r:.10g}, "
                          f"|dz| = {dz:.4f}")
            except ValueError:
                entry.update(r_error=got)
                cell["failed"] += 1
                cell["worst"] = math.inf
                print(f"R ERROR {check_id} ({key}): {got}")
            rows.append(entry)
    print(f"{'method/perturbation':<56} {'tasks':>6} {'worst |dz|':>12} {'failed':>7}")
    for key in sorted(table):
        c = table[key]
        print(f"{key:<56} {c['tasks']:>6} {c['worst']:>12.2e} {c['failed']:>7}")
    failed = sum(c["failed"] for c in table.values())
    worst = max((c["worst"] for c in table.values()), default=0.0)
    print(f"checked {len(tasks)} tasks ({len(rows)} p-values and answers) over {len(table)} cells; worst |dz| = {worst:.2e}; "
          f"disagreements: {failed}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=1))
    return 1 if failed or not tasks else 0


if __name__ == "__main__":
    sys.exit(main())
