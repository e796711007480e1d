"""Auditing a corpus: every released task must reproduce.

``verify`` checks each shard against ``manifest.json`` (present, listed,
sha256, row count, readable), then for a sample of tasks (all by default):
that ``data_csv`` matches ``data_sha256``, that the emitted script, run in a
fresh interpreter, writes that CSV byte for byte, and that the canonical
analysis of the CSV gives the stored gold.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import read_csv_text, run_test
from .condition import Condition
from .corpus import load_manifest
from .errors import CorpusError
from .registry import get_family
from .result import z_of_p
from .shards import open_shard, sha256_file

COLUMNS = ["task_id", "method", "data_csv", "data_sha256", "script", "roles", "data_dictionary", "gold_p",
           "gold_statistic", "gold_decision", "alpha", "n_analyzed"]
BATCH = 40
Z_TOLERANCE = 1e-6

RUNNER = """
import runpy, sys
for script, out in zip(sys.argv[1::2], sys.argv[2::2]):
    sys.argv = [script, out]
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException as exc:
        print(f"{script}\\t{type(exc).__name__}: {exc}".replace("\\n", " "), file=sys.stderr)
"""


@dataclass
class VerifyReport:
    """What ``verify`` checked and what it found wrong (``problems``: (where, what))."""

    shards: int = 0
    shards_ok: int = 0
    tasks: int = 0
    csv_ok: int = 0
    scripts_ok: int = 0
    golds_ok: int = 0
    seconds: float = 0.0
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, where: str, what: str) -> None:
        self.problems.append((where, what))


def _check_shards(corpus: Path, manifest: dict, report: VerifyReport) -> list[tuple[Path, int]]:
    """Shard-level checks; returns the readable shards with their row counts."""
    listed = {s["path"]: s for s in manifest.get("shards", [])}
    present = {f"data/{p.name}" for p in (corpus / "data").glob("*.parquet")} if (corpus / "data").is_dir() else set()
    for path in sorted(present - set(listed)):
        report.add(path, "is not listed in manifest.json")
    readable = []
    for path, entry in listed.items():
        report.shards += 1
        file = corpus / path
        if not file.is_file():
            report.add(path, "is listed in manifest.json but missing")
            continue
        good = True
        digest = sha256_file(file)
        if digest != entry["sha256"]:
            report.add(path, f"sha256 {digest[:12]} differs from manifest.json's {entry['sha256'][:12]} "
                             f"({file.stat().st_size} bytes, manifest says {entry['bytes']}): modified or truncated")
            good = False
        try:
            rows = open_shard(file).metadata.num_rows
        except CorpusError as exc:
            report.add(path, f"cannot be read: {str(exc).split(': ', 1)[1]}")
            continue
        if rows != entry["rows"]:
            report.add(path, f"holds {rows} rows, manifest.json says {entry['rows']}")
            good = False
        report.shards_ok += good
        readable.append((file, rows))
    rej = manifest.get("rejected")
    if rej and (corpus / rej["path"]).is_file() and sha256_file(corpus / rej["path"]) != rej["sha256"]:
        report.add(rej["path"], "sha256 differs from manifest.json")
    return readable


def _check_gold(task: dict, report: VerifyReport) -> None:
    try:
        family = get_family(task["method"])
        roles = json.loads(task["roles"])
        ranges = {e["name"]: tuple(e["range"]) for e in json.loads(task["data_dictionary"]) if e.get("range")}
        res = run_test(family, Condition(method=task["method"], roles=roles, alpha=task["alpha"]),
                       read_csv_text(task["data_csv"]), ranges)
    except Exception as exc:  # noqa: BLE001 - report, do not crash, on any bad record
        report.add(task["task_id"], f"the canonical analysis of data_csv fails: {type(exc).__name__}: {exc}")
        return
    problems = []
    if abs(z_of_p(res.pvalue) - z_of_p(task["gold_p"])) > Z_TOLERANCE:
        problems.append(f"gold_p {task['gold_p']:.10g} differs from the recomputed {res.pvalue:.10g}")
    if res.decision(task["alpha"]) != task["gold_decision"]:
        problems.append(f"gold_decision '{task['gold_decision']}' differs from the recomputed "
                        f"'{res.decision(task['alpha'])}'")
    if res.n != task["n_analyzed"]:
        problems.append(f"n_analyzed {task['n_analyzed']} differs from the recomputed {res.n}")
    if abs(res.statistic - task["gold_statistic"]) > 1e-9 * max(1.0, abs(res.statistic)):
        problems.append(f"gold_statistic {task['gold_statistic']:.10g} differs from the recomputed {res.statistic:.10g}")
    for p in problems:
        report.add(task["task_id"], p)
    report.golds_ok += not problems


def _run_batch(batch: list[dict], folder: Path) -> dict[str, str]:
    """Run the scripts of ``batch`` in one fresh interpreter; return the
    sha256 each wrote (or ``error: ...``) by task id."""
    args, outputs = [], {}
    for task in batch:
        script = folder / f"{task['task_id']}.py"
        script.write_text(task["script"], encoding="utf-8")
        out = folder / f"{task['task_id']}.csv"
        args += [str(script), str(out)]
        outputs[task["task_id"]] = (script, out)
    proc = subprocess.run([sys.executable, "-I", "-c", RUNNER, *args], capture_output=True, text=True, cwd=folder)
    errors = {}
    for line in proc.stderr.splitlines():
        path, _, message = line.partition("\t")
        if message:
            errors[Path(path).stem] = message
    result = {}
    for tid, (script, out) in outputs.items():
        if tid in errors:
            result[tid] = f"error: {errors[tid]}"
        elif out.is_file():
            result[tid] = hashlib.sha256(out.read_bytes()).hexdigest()
        else:
            result[tid] = "error: it wrote no file at the path it was given"
    return result


def verify(corpus, sample: int | None = None, jobs: int = 1, seed: int = 0) -> VerifyReport:
    """Audit ``corpus``; ``sample`` tasks (all when None), scripts run ``jobs`` at a time."""
    start = time.perf_counter()
    corpus = Path(corpus)
    manifest = load_manifest(corpus)
    report = VerifyReport()
    readable = _check_shards(corpus, manifest, report)
    total = sum(rows for _, rows in readable)
    if sample is not None and sample < total:
        chosen = set(random.Random(seed).sample(range(total), sample))
    else:
        chosen = None
    offset = 0
    with tempfile.TemporaryDirectory(prefix="taskfactory-verify-") as tmp, ThreadPoolExecutor(max(1, jobs)) as pool:
        for file, rows in readable:
            picked = []
            try:
                pf = open_shard(file)
                for g in range(pf.num_row_groups):
                    for task in pf.read_row_group(g, columns=COLUMNS).to_pylist():
                        if chosen is None or offset in chosen:
                            picked.append(task)
                        offset += 1
            except Exception as exc:  # noqa: BLE001 - a damaged shard is a finding, not a crash
                report.add(f"data/{file.name}", f"cannot be read: {' '.join(str(exc).split())}")
                continue
            batches = [picked[i:i + BATCH] for i in range(0, len(picked), BATCH)]
            futures = []
            for i, batch in enumerate(batches):
                folder = Path(tmp) / f"{file.stem}-{i}"
                folder.mkdir()
                futures.append(pool.submit(_run_batch, batch, folder))
            for task in picked:  # while the scripts run
                report.tasks += 1
                if hashlib.sha256(task["data_csv"].encode("utf-8")).hexdigest() == task["data_sha256"]:
                    report.csv_ok += 1
                else:
                    report.add(task["task_id"], "data_csv does not match data_sha256")
                _check_gold(task, report)
            for batch, future in zip(batches, futures):
                written = future.result()
                for task in batch:
                    got = written[task["task_id"]]
                    if got.startswith("error: "):
                        report.add(task["task_id"], f"the emitted script failed: {got[7:]}")
                    elif got != task["data_sha256"]:
                        report.add(task["task_id"], f"the emitted script writes a different CSV (sha256 {got[:12]}, "
                                                    f"data_sha256 {task['data_sha256'][:12]})")
                    else:
                        report.scripts_ok += 1
    report.seconds = time.perf_counter() - start
    return report


def format_report(report: VerifyReport) -> str:
    lines = [f"FAIL {where}: {what}" for where, what in report.problems]
    lines.append(f"shards: {report.shards} listed, {report.shards_ok} match manifest.json")
    lines.append(f"tasks: {report.tasks} checked; data_csv matches data_sha256 in {report.csv_ok}, the script "
                 f"reproduces it in {report.scripts_ok}, the gold is recomputed in {report.golds_ok}")
    verdict = "OK: every check passed" if report.ok else f"FAILED: {len(report.problems)} problem(s)"
    lines.append(f"{verdict} ({report.seconds:.1f} s)")
    return "\n".join(lines)
