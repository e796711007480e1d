#!/usr/bin/env python3
"""A built corpus's calibration and traps, per family: the KS p of its null
gold p-values against the uniform and their reject rate, the reject rate at
the borderline effect (about a half), and the trap share (the naive test
decides otherwise than the gold) at the borderline effect per perturbation
and over every clean task.

    python scripts/bench_traps.py CORPUS [--methods welch_t ...] [--json]

Each dataset counts once (its basic-style task); closed-form tasks are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

import numpy as np
from scipy import stats

from taskfactory.store.corpus import iter_records
from taskfactory.errors import TaskFactoryError

COLUMNS = ["method", "effect", "perturbation", "prompt_style", "answer_kind", "gold_p", "naive_method", "trap_kinds"]
PERTURBATIONS = ("none", "missing", "extreme", "missing+extreme")


def _share(flags: list[bool]) -> float | None:
    return float(np.mean(flags)) if flags else None


def _trap_share(recs: list[dict]) -> float | None:
    """Share of ``recs`` whose naive test decides otherwise than the gold."""
    return _share(["naive_method" in (r["trap_kinds"] or []) for r in recs])


def table(records: list[dict]) -> dict:
    """Per family: tasks, null KS p and reject rate, borderline reject rate, trap shares."""
    by_family = defaultdict(list)
    for rec in records:
        if rec["prompt_style"] == "basic" and rec["answer_kind"] == "p_value":
            by_family[rec["method"]].append(rec)
    out = {}
    for family, recs in by_family.items():
        null = [r["gold_p"] for r in recs if r["effect"] == "null"]
        border = [r for r in recs if r["effect"] == "borderline"]
        row = {"datasets": len(recs), "null": len(null),
               "null_ks_p": float(stats.kstest(null, "uniform").pvalue) if len(null) >= 5 else None,
               "null_reject": _share([p < 0.05 for p in null]),
               "borderline": len(border), "borderline_reject": _share([r["gold_p"] < 0.05 for r in border])}
        if recs[0]["naive_method"]:
            row["trap_borderline"] = {p: _trap_share([r for r in border if r["perturbation"] == p])
                                      for p in PERTURBATIONS}
            row["trap_clean"] = _trap_share([r for r in recs if r["perturbation"] == "none"])
        out[family] = row
    return out


def _fmt(x, spec=".3f") -> str:
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args(argv)
    try:
        records = [r for r in iter_records(args.corpus, columns=COLUMNS)
                   if args.methods is None or r["method"] in args.methods]
    except TaskFactoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = table(records)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'family':<26}{'null KS p':>10}{'null rej':>9}{'bord. rej':>10}   trap share at the borderline effect "
          f"(none / missing / extreme / missing+extreme; every clean task)")
    for family, row in rows.items():
        traps = ""
        if "trap_clean" in row:
            traps = " / ".join(_fmt(row["trap_borderline"][p], ".2f") for p in PERTURBATIONS)
            traps += f"; {_fmt(row['trap_clean'], '.2f')}"
        print(f"{family:<26}{_fmt(row['null_ks_p']):>10}{_fmt(row['null_reject']):>9}"
              f"{_fmt(row['borderline_reject']):>10}   {traps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
