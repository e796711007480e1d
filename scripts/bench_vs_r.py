#!/usr/bin/env python3
"""Time taskfactory's canonical analysis against R's canonical call, per family.

Both run on the same datasets, and their p-values are checked to agree.

    python scripts/bench_vs_r.py [--methods welch_t ...] [--n 4800] [--datasets 20] [--reps 5] [--json]
    python scripts/bench_vs_r.py --corpus corpus/ [--limit 20] [--methods ...] [--reps 5] [--json] [--record FILE]

Default mode: for each registered family with a dataset, ``--datasets``
datasets are released at N (``taskfactory.make.task.release``: scenarios cycled,
effect "medium", perturbation "none"; N is raised to the family's ``min_n`` or
lowered to its ``max_n`` where needed, and the row says so) and their CSVs are
written to a scratch folder. ``--corpus DIR`` takes the datasets of a built
corpus instead (one per ``data_id``, every perturbation, a row per family and
N; ``--limit K`` datasets per row, else all of them: about 0.3 s a dataset);
the R code is rebuilt from this taskfactory's family and scenario, never taken
from the record, and a record whose ``reference_r`` differs from the rebuilt
one is flagged.

Both sides are timed in process, start-up excluded, on the same CSV files:

- Python: read the file, ``read_csv_text``, ``prepare``, ``run_test`` (the
  "read+analyse" time), and ``run_test`` alone on the prepared frame ("bare");
- R: one ``Rscript`` process runs, for each dataset, the code
  ``taskfactory.make.reference.reference_r`` emits (``read.csv`` + the canonical
  handling + the family's call, without its printing) and, for "bare", the call
  alone on the already read and handled data frame.

Each figure is the best of ``--reps`` repetitions per dataset, summed over
the datasets and shown in ms per dataset. A repetition runs the code k times
in a row and divides (k doubles until one repetition lasts ``--min-rep-ms``),
because R's ``proc.time()`` counts whole milliseconds; Python is timed the same
way with ``time.perf_counter``, its numerical libraries on one thread as in a
build (``taskfactory.make.task.one_thread``). Both sides make one untimed warm-up call first
(a call of 0.1 s or more is its own warm-up when ``--reps`` > 1); and a slow call
gets fewer repetitions than ``--reps`` when they would take longer than
``--budget`` seconds (the row says so). R/Py > 1 means Python is faster.

With ``--corpus`` a third figure, "build ms", is the whole making of each
dataset's tasks as ``taskfactory build`` does it on one core: ``release``
(draw, CSV, parse, gold, naive, accepted and kept-impossible tests,
reference code), ``record`` for each prompt style (prompt, script) and the
dataset's share of writing its records to a Parquet shard; the rebuilt CSV
must equal the corpus's. "R/build" > 1 means the whole build of a dataset
costs less than R's read+analyse of it.

R's p-values are compared with the gold: |z(p_gold) - z(p_R)| < 0.01 (z capped
at 8, so at large N "worst|dz|" is often 0 by construction: "rel dp", the
largest |p_gold - p_R| / max(p_gold, p_R), still shows the agreement). A
disagreement, an R error (a missing R package is named) or a Python error is
reported in the family's row.

Without ``Rscript`` on PATH (or ``--rscript``) only the Python side is timed.
``--record FILE`` writes what ``--json`` prints, with the command, date and
machine, for scripts/performance_doc.py.
Exit status: 0, 1 on a disagreement or an error in any row, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import taskfactory as tf
from taskfactory.make.analysis import prepare, read_csv_text, run_test
from taskfactory.design.catalogue import get_scenario
from taskfactory.condition import Condition
from taskfactory.store.corpus import iter_records, load_manifest
from taskfactory.effects import EffectLevel
from taskfactory.errors import TaskFactoryError
from taskfactory.design.grid import Coord
from taskfactory.make.reference import fill, reference_r
from taskfactory.registry import family_names, get_family
from taskfactory.result import Z_CAP, z_of_p
from taskfactory.make.columns import roles_of
from taskfactory.store.shards import ROW_GROUP_ROWS, write_shard
from taskfactory.make.task import Dataset, one_thread, record, release
from taskfactory.audit.verify import coord_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crosscheck_r import TOLERANCE, r_string  # noqa: E402  the R-running conventions of the cross-check
from performance_doc import Recorder, add_record_option  # noqa: E402

#: Environment of the Rscript process, as scripts/crosscheck_r.py runs it (C locale: R orders levels as the gold).
R_ENV = {"LC_ALL": "C", "LANG": "C", "PATH": "/usr/local/bin:/usr/bin:/bin"}
#: Most calls one timed repetition makes.
MAX_K = 1 << 16
#: What a scratch path may look like before it enters R code unescaped (reference_r writes it as is).
SAFE_PATH = re.compile(r"^[A-Za-z0-9/_.+-]+$")
MISSING_PACKAGE = re.compile(r"there is no package called\s+\W?([A-Za-z][A-Za-z0-9.]*)")
CORPUS_COLUMNS = ["data_id", "method", "scenario", "n", "n_rows", "data_csv", "data_filename", "roles",
                  "reference_r", "gold_p", "effect", "perturbation", "seed", "prompt_style"]


# --- datasets ------------------------------------------------------------------------

@dataclass
class Item:
    """One dataset of one row: its CSV on disk, what Python needs to analyse it
    and the R code (handling, call, p-value expression) to run on it."""

    key: str
    family: object
    condition: Condition
    ranges: dict
    csv_path: Path
    rows: int
    gold_p: float
    r_prep: str = ""
    r_call: str = ""
    r_pvalue: str = ""
    problem: str | None = None   # why R cannot run this dataset (the code could not be built)
    coords: list = field(default_factory=list)   # with --corpus: the tasks built on this dataset (one per style)


@dataclass
class Group:
    """One row of the table: a family at one N."""

    method: str
    n: int | None
    items: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    tasks: int = 0
    grid: object = None   # with --corpus: the corpus's grid, to time the build of its datasets


def r_parts(family, roles: dict, ranges: dict, csv_path: Path) -> tuple[str, str, str]:
    """The reference R code of a dataset, as :func:`taskfactory.make.reference.reference_r`
    emits it, cut into (read.csv + handling, the family's call, the p-value
    expression); its printing (``print(res)``, ``P_VALUE``) is left out."""
    path = str(csv_path)
    if not SAFE_PATH.match(path):
        raise ValueError(f"scratch path {path!r} cannot be written into R code")
    code = reference_r(family, roles, ranges, path)
    call = fill(family.r_code, roles, "r").strip("\n")
    at = code.rfind(call)
    if at < 0:
        raise ValueError("reference_r no longer ends with the family's R call; cannot split it")
    return code[:at].rstrip("\n"), call, family.r_pvalue


def attach_r(item: Item, roles: dict) -> None:
    try:
        item.r_prep, item.r_call, item.r_pvalue = r_parts(item.family, roles, item.ranges, item.csv_path)
    except ValueError as exc:
        item.problem = str(exc)


def released_groups(methods: list[str], n: int, datasets: int, seed: int, workdir: Path) -> list[Group]:
    """``datasets`` released datasets per family at N (clamped to the family's range)."""
    groups = []
    for method in methods:
        family = get_family(method)
        n_used, notes = n, []
        if n < family.min_n:
            n_used = family.min_n
            notes.append(f"n raised to min_n {family.min_n}")
        if family.max_n is not None and n > family.max_n:
            n_used = family.max_n
            notes.append(f"n lowered to max_n {family.max_n}")
        group = Group(method, n_used, notes=notes)
        groups.append(group)
        try:
            grid = tf.load_grid({"seed": seed, "methods": [method], "n": [n_used], "seeds": 1})
            scenarios = grid.scenarios[method]
            rejected = 0
            k = 0
            while len(group.items) < datasets and k < 3 * datasets + 5:
                c = Coord(method, scenarios[k % len(scenarios)], n_used, EffectLevel("medium"), "none", k, "basic",
                          "train")
                k += 1
                ds = release(grid, c)
                if not isinstance(ds, Dataset):
                    rejected += 1
                    continue
                scen = get_scenario(method, c.scenario)
                path = workdir / f"{method}-{len(group.items):03d}.csv"
                path.write_bytes(ds.csv_text.encode("utf-8"))
                item = Item(f"{method}#{len(group.items)}", family, ds.condition, scen.ranges(), path, ds.n_rows,
                            ds.gold.pvalue)
                attach_r(item, ds.condition.roles)
                group.items.append(item)
            if rejected:
                group.notes.append(f"{rejected} draw(s) rejected")
            if len(group.items) < datasets:
                group.notes.append(f"only {len(group.items)} of {datasets} datasets released")
        except Exception as exc:  # a family being written may still be broken: report it in its row
            group.notes.append(f"python error releasing: {type(exc).__name__}: {one_line(exc)}")
    return groups


def corpus_groups(corpus: str, methods: list[str] | None, limit: int | None, workdir: Path) -> tuple[list[Group], int]:
    """The datasets of a built corpus (one per data_id), grouped by family and N.
    Also returns how many closed-form tasks (no dataset) were skipped."""
    grid = tf.load_grid(load_manifest(corpus)["grid"], source="manifest.json grid")   # refuses a non-corpus
    groups: dict[tuple, Group] = {}
    coords: dict[str, list] = {}
    seen: set = set()
    closed = 0
    wanted = set(methods) if methods else None
    registered = set(family_names())
    for rec in iter_records(corpus, columns=CORPUS_COLUMNS):
        method = rec["method"]
        if wanted is not None and method not in wanted:
            continue
        if rec["data_csv"] is None:
            closed += 1
            continue
        key = (method, rec["n"])
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(method, rec["n"])
            if method not in registered:
                group.notes.append("family not registered in this taskfactory: skipped")
        group.tasks += 1
        if method in registered:
            try:
                coords.setdefault(rec["data_id"], []).append(coord_of(grid, rec))
            except ValueError as exc:
                note = f"a record cannot be rebuilt: {exc}"
                if note not in group.notes:
                    group.notes.append(note)
        if rec["data_id"] in seen or method not in registered or (limit is not None and len(group.items) >= limit):
            continue
        seen.add(rec["data_id"])
        family = get_family(method)
        try:
            scen = get_scenario(method, rec["scenario"])
        except TaskFactoryError:
            note = f"scenario {rec['scenario']!r} unknown to this taskfactory: skipped"
            if note not in group.notes:
                group.notes.append(note)
            continue
        if not isinstance(rec["gold_p"], float) or not 0.0 <= rec["gold_p"] <= 1.0:
            note = "a record has no gold p-value: skipped"
            if note not in group.notes:
                group.notes.append(note)
            continue
        if roles_of(rec["roles"]) != scen.roles:
            note = "a record's roles differ from its scenario's: skipped"
            if note not in group.notes:
                group.notes.append(note)
            continue
        if rec["reference_r"] != reference_r(family, scen.roles, scen.ranges(), rec["data_filename"]):
            note = "a record's reference_r differs from this taskfactory's (the rebuilt code is timed)"
            if note not in group.notes:
                group.notes.append(note)
        path = workdir / f"{len(seen):05d}.csv"
        path.write_bytes(rec["data_csv"].encode("utf-8"))
        cond = Condition(method=method, roles=dict(scen.roles))
        item = Item(rec["data_id"], family, cond, scen.ranges(), path, rec["n_rows"], rec["gold_p"])
        attach_r(item, scen.roles)
        group.items.append(item)
    for group in groups.values():
        group.grid = grid
        for it in group.items:
            it.coords = coords.get(it.key, [])
    order = {name: i for i, name in enumerate(family_names())}
    return sorted(groups.values(), key=lambda g: (order.get(g.method, len(order)), g.method, g.n)), closed


# --- timing ----------------------------------------------------------------------------

def best_time(fn, reps: int, min_s: float, slow_s: float, budget_s: float):
    """(value of the first call, best seconds per call, calls per repetition,
    repetitions made). The first call is a warm-up, unless it took ``slow_s``
    or more and ``reps`` > 1: then it is the first repetition (one call each;
    a cold start, such as a package loading, is undone by the best of the
    others, and small beside a slow call). Otherwise a repetition makes k
    calls; k doubles until a repetition lasts ``min_s`` (that repetition is
    the first). Up to ``reps`` repetitions are made, fewer when the next would
    take the repetitions past ``budget_s`` seconds."""
    start = time.perf_counter()
    value = fn()
    took = time.perf_counter() - start
    k = 1
    if took < slow_s or reps == 1:
        while True:
            start = time.perf_counter()
            for _ in range(k):
                fn()
            took = time.perf_counter() - start
            if took >= min_s or k >= MAX_K:
                break
            k *= 2
    best, spent, made = took / k, took, 1
    while made < reps and spent + took <= budget_s:
        start = time.perf_counter()
        for _ in range(k):
            fn()
        took = time.perf_counter() - start
        best, spent, made = min(best, took / k), spent + took, made + 1
    return value, best, k, made


def slow_time(min_s: float) -> float:
    """A call this slow is its own warm-up (see :func:`best_time`)."""
    return max(10 * min_s, 0.1)


def time_python(item: Item, reps: int, min_s: float, budget_s: float) -> dict:
    family, cond, ranges, path = item.family, item.condition, item.ranges, item.csv_path

    def full():
        frame = read_csv_text(path.read_text(encoding="utf-8"))
        return run_test(family, cond, prepare(family, frame, cond.roles, ranges), prepared=True)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, t_full, k_full, m_full = best_time(full, reps, min_s, slow_time(min_s), budget_s)
            data = prepare(family, read_csv_text(path.read_text(encoding="utf-8")), cond.roles, ranges)
            _, t_bare, k_bare, m_bare = best_time(lambda: run_test(family, cond, data, prepared=True), reps, min_s,
                                                  slow_time(min_s), budget_s)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {one_line(exc)}"}
    return {"p": res.pvalue, "full": t_full, "bare": t_bare, "k": [k_full, k_bare], "rows_analysed": len(data),
            "reps": [m_full, m_bare]}


def time_build(group: Group, reps: int, min_s: float, budget_s: float) -> dict:
    """The whole build of each dataset of a corpus row, as ``build`` makes it:
    ``release`` (draw, CSV, parse, gold, naive, accepted and kept-impossible
    tests, reference code) and ``record`` for each of its tasks (prompt,
    script), timed like the analyses (best of ``reps``), plus the cost of
    writing its records to a Parquet shard (timed once for the row, per record,
    on row groups as full as a build's).
    Returns {"build": seconds} or {"error": ...} by item key."""
    out, records = {}, []
    for it in group.items:
        if not it.coords:
            out[it.key] = {"error": "no coordinates to rebuild it"}
            continue

        def build_one(coords=it.coords):
            ds = release(group.grid, coords[0])
            if not isinstance(ds, Dataset):
                raise RuntimeError(f"rejected on rebuild: {ds.reasons[-1]}")
            return [record(group.grid, c, ds) for c in coords]

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                recs, t, _, _ = best_time(build_one, reps, min_s, slow_time(min_s), budget_s)
        except Exception as exc:
            out[it.key] = {"error": f"{type(exc).__name__}: {one_line(exc)}"}
            continue
        if recs[0]["data_csv"] != it.csv_path.read_text(encoding="utf-8"):
            out[it.key] = {"error": "the rebuilt CSV differs from the corpus's"}
            continue
        out[it.key] = {"build": t}
        records.extend(recs)
    if records:
        # A build writes its records in row groups of ROW_GROUP_ROWS, so the
        # row's records are written repeated to at least that many, and each
        # dataset is charged the cost per record times its records (a shard of
        # a handful of records would charge it the writer's fixed cost instead).
        copies = -(-ROW_GROUP_ROWS // len(records))
        with tempfile.TemporaryDirectory(prefix="bench-shard-") as tmp:
            start = time.perf_counter()
            write_shard(Path(tmp) / "shard.parquet", records * copies, {})
            per_record = (time.perf_counter() - start) / (len(records) * copies)
        for it in group.items:
            if "build" in out.get(it.key, {}):
                out[it.key]["build"] += per_record * len(it.coords)
    return out


R_PRELUDE = """\
.tf_out <- {out}
invisible(file.create(.tf_out))
cat("R_VERSION\\t", R.version.string, "\\n", sep = "", file = .tf_out, append = TRUE)
.tf_time <- function(f, reps, min_s, slow_s, budget_s) {{
  t0 <- proc.time()[["elapsed"]]
  value <- f()
  took <- proc.time()[["elapsed"]] - t0
  k <- 1L
  if (took < slow_s || reps == 1L) {{
    repeat {{
      t0 <- proc.time()[["elapsed"]]
      for (i in seq_len(k)) f()
      took <- proc.time()[["elapsed"]] - t0
      if (took >= min_s || k >= {max_k}L) break
      k <- k * 2L
    }}
  }}
  best <- took / k
  spent <- took
  made <- 1L
  while (made < reps && spent + took <= budget_s) {{
    t0 <- proc.time()[["elapsed"]]
    for (i in seq_len(k)) f()
    took <- proc.time()[["elapsed"]] - t0
    best <- min(best, took / k)
    spent <- spent + took
    made <- made + 1L
  }}
  list(value = value, best = best, k = k, made = made)
}}
.tf_line <- function(...) cat(paste(c(...), collapse = "\\t"), "\\n", sep = "", file = .tf_out, append = TRUE)
"""

#: One dataset's R code; run through parse(text = ...) so that code R cannot parse fails only its own dataset.
R_ITEM = """\
.tf_full <- function() {{
{prep}
{call}
  {pvalue}
}}
.tf_prep <- function() {{
{prep}
  d
}}
.tf_bare <- function(d) {{
{call}
  {pvalue}
}}
.tf_a <- .tf_time(.tf_full, {reps}L, {min_s}, {slow_s}, {budget_s})
.tf_d <- .tf_prep()
.tf_b <- .tf_time(function() .tf_bare(.tf_d), {reps}L, {min_s}, {slow_s}, {budget_s})
.tf_p <- suppressWarnings(as.numeric(.tf_a$value))
if (length(.tf_p) != 1L || is.na(.tf_p))
  stop("the p-value expression ", {pvalue_text}, " gave ", paste(deparse(.tf_a$value), collapse = " "))
.tf_line({key}, "OK", sprintf("%.17g", .tf_p), sprintf("%.9g", .tf_a$best), sprintf("%.9g", .tf_b$best),
         .tf_a$k, .tf_b$k, nrow(.tf_d), .tf_a$made, .tf_b$made)
"""
R_RUN = """\
tryCatch(suppressWarnings(eval(parse(text = {code}, keep.source = FALSE), envir = globalenv())),
         error = function(e) .tf_line({key}, "ERROR", gsub("[\\r\\n\\t]+", " ", conditionMessage(e))))
"""


def indent(code: str, pad: str = "  ") -> str:
    return "\n".join(pad + line for line in code.splitlines())


def run_r(rscript: str, items: list[Item], reps: int, min_s: float, budget_s: float, workdir: Path,
          timeout: float) -> tuple[dict, dict]:
    """Run every item's R code in one Rscript process; returns (results by
    key, facts about the run: R version, seconds, a process-level failure)."""
    out = workdir / "r_results.tsv"
    parts = [R_PRELUDE.format(out=r_string(str(out)), max_k=MAX_K)]
    for it in items:
        if it.problem is None:
            code = R_ITEM.format(prep=indent(it.r_prep), call=indent(it.r_call), pvalue=it.r_pvalue, reps=reps,
                                 min_s=repr(min_s), slow_s=repr(slow_time(min_s)), budget_s=repr(budget_s),
                                 key=r_string(it.key), pvalue_text=r_string(it.r_pvalue))
            parts.append(R_RUN.format(code=r_string(code), key=r_string(it.key)))
    script = workdir / "bench.R"
    script.write_text("\n".join(parts), encoding="utf-8")
    facts: dict = {"failure": None, "version": None}
    start = time.perf_counter()
    try:
        proc = subprocess.run([rscript, "--vanilla", str(script)], capture_output=True, text=True, env=R_ENV,
                              timeout=timeout)
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
            facts["failure"] = f"Rscript exited {proc.returncode}: {one_line(tail[0])}"
    except subprocess.TimeoutExpired:
        facts["failure"] = f"Rscript timed out after {timeout:.0f} s"
    except OSError as exc:
        facts["failure"] = f"Rscript could not run: {exc}"
    facts["seconds"] = time.perf_counter() - start
    results = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
            fields = line.split("\t")
            if fields[0] == "R_VERSION":
                facts["version"] = fields[1] if len(fields) > 1 else None
            elif len(fields) >= 10 and fields[1] == "OK":
                try:
                    results[fields[0]] = {"p": float(fields[2]), "full": float(fields[3]), "bare": float(fields[4]),
                                          "k": [int(fields[5]), int(fields[6])], "rows_analysed": int(fields[7]),
                                          "reps": [int(fields[8]), int(fields[9])]}
                except ValueError:
                    results[fields[0]] = {"error": f"unreadable R output {line[:120]!r}"}
            elif len(fields) >= 2 and fields[1] == "ERROR":
                results[fields[0]] = {"error": r_error(" ".join(fields[2:]))}
    return results, facts


# --- the table -------------------------------------------------------------------------

def one_line(x) -> str:
    return " ".join(str(x).split())[:160]


def r_error(message: str) -> str:
    m = MISSING_PACKAGE.search(message)
    return f"R package {m.group(1)} is not installed" if m else f"R error: {one_line(message)}"


def summarise(group: Group, py: dict, r: dict | None, reps: int, builds: dict | None = None) -> dict:
    """One row of the table from the per-dataset timings of both sides (and,
    with ``builds``, of building each dataset's tasks)."""
    row = {"method": group.method, "n": group.n, "datasets": len(group.items),
           "rows": round(statistics.mean(it.rows for it in group.items)) if group.items else None,
           "py_ms": None, "py_bare_ms": None, "r_ms": None, "r_bare_ms": None, "ratio": None, "ratio_bare": None,
           "worst_dz": None, "worst_rel_dp": None, "z_capped": 0, "disagreements": 0, "py_errors": 0, "r_errors": 0,
           "build_ms": None, "ratio_build": None, "notes": list(group.notes)}
    if group.tasks:
        row["tasks"] = group.tasks
    py_ok = [it for it in group.items if "error" not in py[it.key]]
    row["py_errors"] = len(group.items) - len(py_ok)
    for it in group.items:
        res = py[it.key]
        if "error" in res:
            add_note(row, f"python: {res['error']}")
        elif res["p"] != it.gold_p and abs(z_of_p(res["p"]) - z_of_p(it.gold_p)) >= TOLERANCE:
            add_note(row, "python p differs from the gold")
    fewer_py = [min(py[it.key]["reps"]) for it in py_ok if min(py[it.key]["reps"]) < reps]
    if fewer_py:
        add_note(row, f"Py: best of {min(fewer_py)} (--budget)")
    if py_ok:
        row["py_total_s"] = sum(py[it.key]["full"] for it in py_ok)
        row["py_ms"] = 1000 * row["py_total_s"] / len(py_ok)
        row["py_bare_ms"] = 1000 * sum(py[it.key]["bare"] for it in py_ok) / len(py_ok)
    built = []
    if builds is not None:
        for it in group.items:
            if "error" in builds.get(it.key, {"error": "not built"}):
                row["py_errors"] += 1
                add_note(row, f"build: {builds.get(it.key, {}).get('error', 'not built')}")
            else:
                built.append(it)
        if built:
            row["build_ms"] = 1000 * sum(builds[it.key]["build"] for it in built) / len(built)
    if r is None:
        return row
    r_ok = []
    for it in group.items:
        res = r.get(it.key) if it.problem is None else {"error": it.problem}
        if res is None:
            res = {"error": "R gave no result (the process stopped before this dataset)"}
        if "error" in res:
            row["r_errors"] += 1
            add_note(row, res["error"])
            continue
        r_ok.append(it)
        p_r = 1.0 if 1.0 < res["p"] <= 1.0 + 1e-12 else res["p"]   # R sums probabilities to just above 1
        try:
            dz = abs(z_of_p(it.gold_p) - z_of_p(p_r))
        except ValueError:
            dz = math.inf
        rel = 0.0 if p_r == it.gold_p else abs(p_r - it.gold_p) / max(p_r, it.gold_p)
        res["dz"], res["rel_dp"] = dz, rel
        row["worst_dz"] = dz if row["worst_dz"] is None else max(row["worst_dz"], dz)
        row["worst_rel_dp"] = rel if row["worst_rel_dp"] is None else max(row["worst_rel_dp"], rel)
        row["z_capped"] += z_of_p(it.gold_p) >= Z_CAP and z_of_p(p_r) >= Z_CAP
        if not dz < TOLERANCE:
            row["disagreements"] += 1
            add_note(row, f"DISAGREE {it.key}: gold p = {it.gold_p:.6g}, R p = {p_r:.6g}")
    fewer_r = [min(r[it.key]["reps"]) for it in r_ok if min(r[it.key]["reps"]) < reps]
    if fewer_r:
        add_note(row, f"R: best of {min(fewer_r)} (--budget)")
    if r_ok and row["z_capped"] == len(r_ok):
        add_note(row, "all p past the z cap")
    if r_ok:
        row["r_total_s"] = sum(r[it.key]["full"] for it in r_ok)
        row["r_ms"] = 1000 * row["r_total_s"] / len(r_ok)
        row["r_bare_ms"] = 1000 * sum(r[it.key]["bare"] for it in r_ok) / len(r_ok)
    py_keys = {it.key for it in py_ok}
    both = [it for it in r_ok if it.key in py_keys]
    py_full = sum(py[it.key]["full"] for it in both)
    py_bare = sum(py[it.key]["bare"] for it in both)
    if both and py_full > 0:
        row["ratio"] = sum(r[it.key]["full"] for it in both) / py_full
    if both and py_bare > 0:
        row["ratio_bare"] = sum(r[it.key]["bare"] for it in both) / py_bare
    r_keys = {it.key for it in r_ok}
    both_built = [it for it in built if it.key in r_keys]
    if both_built:
        row["ratio_build"] = (sum(r[it.key]["full"] for it in both_built)
                              / sum(builds[it.key]["build"] for it in both_built))
    return row


def add_note(row: dict, note: str) -> None:
    if note not in row["notes"]:
        row["notes"].append(note)


def fmt(x, spec: str, width: int) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}{spec}}"


def print_table(rows: list[dict], with_r: bool, with_build: bool) -> None:
    head = f"{'family':<26} {'n':>5} {'rows':>6} {'sets':>4} {'Py ms':>8} {'Py bare':>8}"
    head += f" {'build ms':>8}" if with_build else ""
    if with_r:
        head += f" {'R ms':>8} {'R bare':>8} {'R/Py':>6} {'R/Py bare':>9}"
        head += f" {'R/build':>7}" if with_build else ""
        head += f" {'worst|dz|':>9} {'rel dp':>7}"
    print(head + "  note")
    for row in rows:
        line = (f"{row['method']:<26} {fmt(row['n'], 'd', 5)} {fmt(row['rows'], 'd', 6)} {row['datasets']:>4} "
                f"{fmt(row['py_ms'], '.3f', 8)} {fmt(row['py_bare_ms'], '.3f', 8)}")
        line += f" {fmt(row['build_ms'], '.3f', 8)}" if with_build else ""
        if with_r:
            line += (f" {fmt(row['r_ms'], '.3f', 8)} {fmt(row['r_bare_ms'], '.3f', 8)} {fmt(row['ratio'], '.2f', 6)} "
                     f"{fmt(row['ratio_bare'], '.2f', 9)}")
            line += f" {fmt(row['ratio_build'], '.2f', 7)}" if with_build else ""
            line += f" {fmt(row['worst_dz'], '.1e', 9)} {fmt(row['worst_rel_dp'], '.0e', 7)}"
        print(line + ("  " + "; ".join(row["notes"]) if row["notes"] else ""))


def summary(rows: list[dict], with_r: bool, seconds: float, facts: dict | None) -> dict:
    out = {"rows": len(rows), "datasets": sum(r["datasets"] for r in rows),
           "python_errors": sum(r["py_errors"] for r in rows), "seconds": round(seconds, 1)}
    if with_r:
        ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
        bare = [r["ratio_bare"] for r in rows if r["ratio_bare"] is not None]
        dzs = [r["worst_dz"] for r in rows if r["worst_dz"] is not None]
        out.update(python_faster=sum(x > 1 for x in ratios), r_faster=sum(x < 1 for x in ratios), compared=len(ratios),
                   median_ratio=statistics.median(ratios) if ratios else None,
                   median_ratio_bare=statistics.median(bare) if bare else None,
                   python_faster_bare=sum(x > 1 for x in bare),
                   worst_dz=max(dzs) if dzs else None,
                   build_faster=sum(r["ratio_build"] > 1 for r in rows if r["ratio_build"] is not None),
                   build_compared=sum(r["ratio_build"] is not None for r in rows),
                   median_ratio_build=statistics.median(b) if (b := [r["ratio_build"] for r in rows
                                                                     if r["ratio_build"] is not None]) else None, disagreements=sum(r["disagreements"] for r in rows),
                   r_errors=sum(r["r_errors"] for r in rows), r_version=facts.get("version"),
                   r_seconds=round(facts.get("seconds", 0.0), 1), r_failure=facts.get("failure"))
    return out


def summary_line(s: dict, with_r: bool, rscript_missing: bool) -> str:
    text = f"{s['rows']} rows, {s['datasets']} datasets"
    if not with_r:
        why = "Rscript was not found (PATH or --rscript)" if rscript_missing else "R was not run (--no-r)"
        return f"{text}; Python side only: {why}; python errors: {s['python_errors']}; {s['seconds']:.0f} s"
    med = "-" if s["median_ratio"] is None else f"{s['median_ratio']:.2f}"
    med_bare = "-" if s["median_ratio_bare"] is None else f"{s['median_ratio_bare']:.2f}"
    worst = "-" if s["worst_dz"] is None else f"{s['worst_dz']:.1e}"
    text += (f"; read+analyse: Python faster in {s['python_faster']} of {s['compared']} rows, median R/Py {med}; "
             f"bare call: Python faster in {s['python_faster_bare']}, median R/Py {med_bare}; "
             + (f"whole build faster than R's read+analyse in {s['build_faster']} of {s['build_compared']} rows, "
                f"median R/build {s['median_ratio_build']:.2f}; " if s["build_compared"] else "")
             + f"worst |dz| {worst}, "
             f"disagreements: {s['disagreements']}, R errors: {s['r_errors']}, python errors: {s['python_errors']}; "
             f"{s['seconds']:.0f} s ({s['r_seconds']:.0f} s in Rscript)")
    if s["r_failure"]:
        text += f"; {s['r_failure']}"
    return text


# --- main ------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", help="families to time (default: every family with a dataset)")
    ap.add_argument("--n", type=int, default=4800, help="N of the released datasets (default 4800)")
    ap.add_argument("--datasets", type=int, default=20, help="datasets per family (default 20)")
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions per dataset, best kept (default 5)")
    ap.add_argument("--min-rep-ms", type=float, default=10.0,
                    help="shortest repetition: fast calls are repeated k times within one (default 10 ms)")
    ap.add_argument("--budget", type=float, default=2.0,
                    help="seconds the repetitions of one timing may take: slow calls get fewer than --reps (default 2)")
    ap.add_argument("--seed", type=int, default=41, help="grid seed of the released datasets (default 41)")
    ap.add_argument("--corpus", help="time the datasets of this built corpus instead of releasing new ones")
    ap.add_argument("--limit", type=int, help="with --corpus: at most K datasets per family and N")
    ap.add_argument("--rscript", help="the Rscript to run (default: Rscript on PATH)")
    ap.add_argument("--no-r", action="store_true", help="time the Python side only")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds the Rscript process may take (default 1800)")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the CSVs and the R script into DIR (new or empty) and keep them")
    add_record_option(ap)
    args = ap.parse_args(argv)
    run = Recorder(__file__, argv)
    for name in ("n", "datasets", "reps"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be at least 1")
    if not args.min_rep_ms >= 0:
        ap.error("--min-rep-ms must be 0 or more")
    if not args.budget > 0:
        ap.error("--budget must be above 0")
    try:
        with_data = [f.name for f in tf.families() if f.has_data]
    except Exception as exc:  # a family module being written may not load yet
        print(f"error: taskfactory's families cannot be loaded: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 2
    if args.methods:
        unknown = [m for m in args.methods if m not in with_data]
        if unknown:
            print(f"error: {unknown[0]!r} is not a registered family with a dataset; choose from "
                  f"{', '.join(with_data)}", file=sys.stderr)
            return 2
    methods = list(dict.fromkeys(args.methods)) if args.methods else with_data
    rscript = None if args.no_r else (args.rscript or shutil.which("Rscript"))
    if rscript is not None and not (os.path.isfile(rscript) and os.access(rscript, os.X_OK)):
        rscript = None
    min_s = args.min_rep_ms / 1000
    start = time.perf_counter()
    closed = 0
    if args.keep:
        keep = Path(args.keep)
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            print(f"error: --keep {keep}: not a new or empty folder", file=sys.stderr)
            return 2
        keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-vs-r-") as tmp:
        workdir = Path(args.keep).resolve() if args.keep else Path(tmp)
        if args.corpus:
            log(f"reading {args.corpus} ...")
            try:
                groups, closed = corpus_groups(args.corpus, args.methods, args.limit, workdir)
            except TaskFactoryError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            if not groups:
                print(f"error: {args.corpus} holds no dataset of the chosen families", file=sys.stderr)
                return 2
        else:
            log(f"releasing {args.datasets} dataset(s) of {len(methods)} families at N = {args.n} ...")
            groups = released_groups(methods, args.n, args.datasets, args.seed, workdir)
        items = [it for g in groups for it in g.items]
        builds = None
        with one_thread():   # the numerical libraries as a build runs them (R's reference BLAS has one thread)
            log(f"timing Python on {len(items)} datasets ...")
            py = {it.key: time_python(it, args.reps, min_s, args.budget) for it in items}
            if args.corpus:
                log(f"timing the build of {len(items)} datasets ...")
                builds = {}
                for g in groups:
                    builds.update(time_build(g, args.reps, min_s, args.budget))
        r_results, facts = None, None
        if rscript is not None:
            log(f"timing R in one Rscript process on {len(items)} datasets ...")
            r_results, facts = run_r(rscript, items, args.reps, min_s, args.budget, workdir,
                                      args.timeout)
    rows = [summarise(g, py, r_results, args.reps, builds) for g in groups]
    seconds = time.perf_counter() - start
    with_r = r_results is not None
    s = summary(rows, with_r, seconds, facts or {})
    if closed:
        s["closed_form_tasks_skipped"] = closed
    report = finite({"mode": "corpus" if args.corpus else "released",
                     "corpus": args.corpus, "n": None if args.corpus else args.n,
                     "datasets_per_family": None if args.corpus else args.datasets, "limit": args.limit,
                     "reps": args.reps, "min_rep_ms": args.min_rep_ms, "rscript": rscript,
                     "r_run": with_r, "r_skipped": args.no_r, "rows": rows, "summary": s})
    if args.record:
        run.write(args.record, report)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        where = (f"corpus {args.corpus}" if args.corpus
                 else f"{args.datasets} released dataset(s) per family at N = {args.n}")
        print(f"{where}; ms per dataset, best of {args.reps}" + ("; R/Py > 1: Python faster" if with_r else "")
              + (f"; {facts['version']}" if with_r and facts.get("version") else ""))
        print_table(rows, with_r, builds is not None)
        if closed:
            print(f"({closed} closed-form tasks without a dataset skipped)")
        print(summary_line(s, with_r, rscript is None and not args.no_r))
    bad = s["python_errors"] + (s.get("disagreements", 0) + s.get("r_errors", 0) if with_r else 0)
    bad += sum(1 for r in rows if r["datasets"] == 0)
    if with_r and facts.get("failure"):
        bad += 1
    return 1 if bad else 0


def finite(obj):
    """``obj`` with infinite and NaN floats as strings, so that the JSON is strict."""
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
