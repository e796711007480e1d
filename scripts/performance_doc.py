#!/usr/bin/env python3
"""Write docs/performance.md from the benchmarks' records in docs/performance/.

    python scripts/performance_doc.py            # write docs/performance.md
    python scripts/performance_doc.py --check    # exit 1 when docs/performance.md is not what the records render

A record is one benchmark run, written by the benchmark script's ``--record
FILE`` (:class:`Recorder`): the figures it measured, the command that ran it,
its date and length, and the machine it ran on (cores, CPU, load, Python, R,
taskfactory's version and commit). The page renders the records alone, so the
same records always give the same page; a record that is missing gets the
command that makes it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "docs" / "performance"
DOC = ROOT / "docs" / "performance.md"
REGENERATE = "python scripts/performance_doc.py"
#: What every record holds (:meth:`Recorder.write`).
RECORD_KEYS = {"command", "date", "seconds", "machine", "taskfactory", "figures"}
#: Significant digits a record keeps of each measured float.
DIGITS = 4

#: A line of the page and the record it comes from (None: the page's own text).
Line = tuple[str, str | None]


# --- writing a record ------------------------------------------------------------------

def add_record_option(parser) -> None:
    """A benchmark's ``--record FILE`` option (see :class:`Recorder`)."""
    parser.add_argument("--record", metavar="FILE",
                        help="write the figures with the command, date and machine to FILE (docs/performance/*.json)")


class Recorder:
    """One benchmark run: its command, date, start and the machine's load
    taken when it begins; :meth:`write` adds its figures, the machine, and
    the load when it ends (other work on the machine slows a benchmark)."""

    def __init__(self, script: str, argv: list[str] | None = None):
        args = sys.argv[1:] if argv is None else list(argv)
        self.command = shlex.join(["python", shown(Path(script)), *args])
        self.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.load = round(os.getloadavg()[0], 2)
        self.started = time.perf_counter()

    def write(self, path: str | Path, figures: dict) -> None:
        """Write this run's record, holding ``figures``, to ``path``."""
        record = {"command": self.command, "date": self.date, "seconds": round(time.perf_counter() - self.started, 1),
                  "machine": {**machine(), "load_average": [self.load, round(os.getloadavg()[0], 2)]},
                  "taskfactory": package(),
                  "figures": rounded(figures)}
        Path(path).write_text(json.dumps(record, indent=1) + "\n")


def rounded(obj):
    """``obj`` with every float kept to :data:`DIGITS` significant digits."""
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rounded(v) for v in obj]
    return float(f"{obj:.{DIGITS}g}") if isinstance(obj, float) else obj


def machine() -> dict:
    """This machine's cores, CPU model, operating system, Python and R."""
    return {"cores": os.cpu_count(), "cpu": cpu_model(), "os": f"{platform.system()} {platform.machine()}",
            "python": platform.python_version(), "r": r_version()}


def cpu_model() -> str | None:
    """The CPU's model name as /proc/cpuinfo gives it (None elsewhere)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return None
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), None)


def r_version() -> str | None:
    """R's version as ``Rscript --version`` prints it (None without Rscript)."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return None
    out = subprocess.run([rscript, "--version"], capture_output=True, text=True)
    text = (out.stdout + out.stderr).strip()
    return text.split("version", 1)[1].strip() if "version" in text else text or None


def package() -> dict:
    """taskfactory's version, the commit of this checkout, and whether its
    package or scripts differ from that commit."""
    from taskfactory import __version__

    git = ["git", "--no-optional-locks", "-C", str(ROOT)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        diff = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", "taskfactory", "scripts"], capture_output=True)
    except OSError:   # no git
        head = diff = None
    if head is None or head.returncode != 0:
        return {"version": __version__, "commit": None, "modified": None}
    return {"version": __version__, "commit": head.stdout.strip(), "modified": diff.returncode != 0}


# --- formatting --------------------------------------------------------------------------

def shown(path: Path) -> str:
    """``path`` relative to the project when it lies inside it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def figure(x) -> str:
    """``x`` to the precision its size merits: whole from 100, one decimal from 10, else two."""
    return num(x, ",.0f" if abs(x) >= 100 else ".1f" if abs(x) >= 10 else ".2f")


def num(x, spec: str = ".2f") -> str:
    """``x`` formatted, "-" for a figure not measured, or as the record holds it
    when it is text (an infinite float, which JSON holds as text)."""
    if x is None or isinstance(x, str):
        return x or "-"
    return format(x, spec)


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table."""
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


def provenance(rec: dict) -> str:
    """One line: the command that made a record, when, for how long, on what."""
    m, tf = rec["machine"], rec["taskfactory"]
    commit = tf["commit"] or "no commit"
    if tf["modified"]:
        commit += ", with changes to taskfactory/ or scripts/"
    return (f"- `{rec['command']}`: {rec['date']}, ran {rec['seconds']:.0f} s; {m['cores']} cores"
            f" ({m['cpu'] or 'CPU unknown'}), load {m['load_average'][0]:.2f} at the start and"
            f" {m['load_average'][1]:.2f} at the end, {m['os']},"
            f" Python {m['python']}, R {m['r'] or 'absent'}, taskfactory {tf['version']} ({commit})")


# --- the sections ------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """A record a section expects: its file's stem, the commands that make it
    (``{record}`` stands for the record's path), and the heading of its block
    where each record has one."""

    stem: str
    make: tuple[str, ...]
    title: str = ""


@dataclass(frozen=True)
class Section:
    """A part of the page: its title, what it measures, the records it
    expects, and how it renders them. With ``head`` the records share one
    table (``body`` gives each record's rows); without, ``body`` gives each
    record's own block. ``after`` gives lines drawn from several records."""

    title: str
    about: str
    runs: tuple[Run, ...]
    body: Callable[[dict], list[str]]
    head: tuple[str, ...] = ()
    after: Callable[[list[tuple[str, dict]]], list[Line]] | None = None


def build_row(rec: dict) -> list[str]:
    """The build table's row of one ``bench_build.py`` record."""
    f = rec["figures"]
    plan = (f"{num(f['plan_estimate_seconds'], '.0f')} ({num(f['plan_seconds'], '.1f')})"
            if "plan_seconds" in f else "-")
    verify = (f"{num(f['verify_seconds'], '.1f')} ({num(f['verify_tasks_per_second'], '.0f')} tasks/s)"
              if "verify_seconds" in f else "-")
    cells = [f"`{f['grid']}`", str(f["jobs"]), f"{f['tasks']:,}", num(f["wall_seconds"], ".1f"),
             num(f["tasks_per_second"], ".0f"), num(f["cpu_seconds"], ".1f"), num(f["peak_rss_mb"], ".0f"),
             f"{num(f['corpus_mb'], '.1f')} ({len(f['shard_mb'])})", num(f["cpu_to_fit_ratio"], ".1f"), plan, verify]
    return ["| " + " | ".join(cells) + " |"]


BUILD_HEAD = ["grid", "--jobs", "tasks", "build s", "tasks/s", "CPU s", "largest process MB", "corpus MB (shards)",
              "CPU / bare fits", "`plan` estimate s (its run s)", "`verify --all` s"]


def speedups(present: list[tuple[str, dict]]) -> list[Line]:
    """Per grid with records at one and two jobs: how much faster two build."""
    by_grid: dict[str, dict[int, tuple[str, dict]]] = {}
    for path, rec in present:
        by_grid.setdefault(rec["figures"]["grid"], {})[rec["figures"]["jobs"]] = (path, rec)
    out = []
    for grid, runs in by_grid.items():
        if 1 in runs and 2 in runs:
            ratio = runs[1][1]["figures"]["wall_seconds"] / runs[2][1]["figures"]["wall_seconds"]
            out.append((f"On `{grid}` two workers build {ratio:.2f} times as fast as one.",
                        f"{runs[1][0]} and {runs[2][0]}"))
    return out + [("", None)] if out else []


def plan_block(rec: dict) -> list[str]:
    """The table of a ``bench_plan.py`` record."""
    f, w = rec["figures"], rec["figures"]["wide"]
    rows = [[f"plan {f['tasks']:,} tasks ({f['methods']} families, {f['seeds']:,} seeds, {f['shards']:,} shards),"
             " clipping probe included", num(f["seconds_with_probe"])],
            ["the same plan again (the probe cached)", num(f["seconds_without_probe"])],
            [f"time the build estimate's sample (estimate: {num(f['estimate_hours_2_cores'], '.1f')} h on 2 cores)",
             num(f["estimate_sample_seconds"])],
            [f"plan {w['tasks']:,} tasks over {w['sample_sizes']:,} sample sizes with {w['exclude_rules']:,}"
             " exclude rules", num(w["seconds"])]]
    return table(["what", "seconds"], rows) + ["", f"Peak memory of the process: {num(w['peak_rss_mb'], '.0f')} MB."]


def startup_block(rec: dict) -> list[str]:
    """The table of a ``bench_startup.py`` record."""
    f = rec["figures"]
    rows = [[f"`{label}`", num(t["best_s"], ".3f"), num(t["median_s"], ".3f")] for label, t in f["commands"].items()]
    heavy = ", ".join(f["heavy_modules"]) or "none of numpy, pandas, scipy and pyarrow"
    return (table(["command", f"best s (of {f['runs']})", "median s"], rows)
            + ["", f"`import taskfactory` loads {heavy}."])


def leakage_block(rec: dict) -> list[str]:
    """The table of a ``bench_leakage.py`` record, and what the paper corpus caught."""
    f = rec["figures"]
    rows = [[name, f"{c['tasks']:,}", f"{c['items']:,}", num(c["seconds"], ".1f"), num(c["peak_rss_mb"], ".0f"),
             num(c["worker_peak_rss_mb"], ".0f"), num(c["python_heap_peak_mb"], ".0f"),
             f"{c['planted_flagged']}/{c['planted']:,}", f"{c['lookalikes_flagged']}/{c['lookalikes']:,}"]
            for name, c in f["corpora"].items()]
    out = table(["corpus", "tasks", "benchmark items", f"s ({f['jobs']} processes)", "main process MB",
                 "largest worker MB", "Python heap MB (one process)", "planted flagged", "look-alikes flagged"], rows)
    if "paper_kinds" in f:
        kinds = ", ".join(f"{kind} {got}/{of}" for kind, (got, of) in f["paper_kinds"].items())
        return out + ["", f"Planted copies in the paper corpus's benchmark, flagged: {kinds}."]
    return out + ["", "The paper corpus was left out of this run (`--no-paper`); without `--no-paper` the script"
                  " builds it and measures it too."]


AGENT_LABELS = {
    "isolated_calls_per_s": "calls per second, {sessions} sandboxed sessions at once",
    "isolated_ms_per_call_one_session": "ms per call, one sandboxed session",
    "bare_ms_per_call": "ms per call, bare in a warm interpreter",
    "over_bare_ms_per_call": "ms the sandbox adds to a call",
    "fresh_python_c_ms_per_call": "ms per call as a fresh `python -c`",
    "reset_from_pool_ms_median": "ms to a workspace's first result, a session ready (median)",
    "reset_from_pool_ms_max": "ms to a workspace's first result, a session ready (max)",
    "reset_in_background_ms_median": "ms the pool takes to reset a used sandbox (median)",
    "cold_start_python_s": "s to start a cold Python sandbox",
    "cold_start_r_s": "s to start a cold R sandbox",
    "idle_sandbox_pss_mib": "MiB of an idle sandbox (proportional set size)",
}


def agent_block(rec: dict) -> list[str]:
    """The table of a ``bench_agent.py`` record."""
    f = rec["figures"]
    rows = [[label.format(**f), figure(f[key])] for key, label in AGENT_LABELS.items() if key in f]
    return table(["what", "figure"], rows)


def summed(group: list[dict], *keys: str) -> tuple[list[float], int]:
    """The sums of ``keys`` (ms per dataset times datasets) over the rows that
    timed every one of them, and those rows' datasets."""
    rows = [r for r in group if all(r[k] is not None for k in keys)]
    return [sum(r[k] * r["datasets"] for r in rows) for k in keys], sum(r["datasets"] for r in rows)


def mean_ms(group: list[dict], key: str) -> float | None:
    """ms per dataset over a family's rows."""
    (total,), sets = summed(group, key)
    return total / sets if sets else None


def ratio(group: list[dict], top: str, bottom: str) -> float | None:
    """The ratio of two timings summed over a family's rows that timed both."""
    (a, b), sets = summed(group, top, bottom)
    return a / b if sets and b else None


def family_rows(rows: list[dict]) -> list[list[str]]:
    """Per family, over its N: ms per dataset and the ratios of summed times."""
    by_family: dict[str, list[dict]] = {}
    for row in rows:
        by_family.setdefault(row["method"], []).append(row)
    out = []
    for family, group in by_family.items():
        ns = sorted({r["n"] for r in group})
        span = f"{ns[0]}-{ns[-1]}" if len(ns) > 1 else str(ns[0])
        out.append([family, span, str(sum(r["datasets"] for r in group)),
                    *(num(mean_ms(group, k)) for k in ("build_ms", "py_ms", "r_ms")),
                    num(ratio(group, "r_ms", "build_ms")), num(ratio(group, "r_ms", "py_ms")),
                    num(ratio(group, "r_bare_ms", "py_bare_ms"))])
    return out


def vs_r_summary(f: dict) -> list[str]:
    """The bullets of a ``bench_vs_r.py`` record's summary."""
    s = f["summary"]
    where = f"of corpus `{f['corpus']}`" if f["mode"] == "corpus" else f"released at N = {f['n']}"
    out = [f"- {s['datasets']:,} datasets {where} in {s['rows']} rows (family and N), best of {f['reps']}"
           " repetitions."]
    if not f["r_run"]:
        return out + ["- R was not run."]
    out += [f"- {s['r_version']}; read and analyse: Python faster in {s['python_faster']} of {s['compared']} rows,"
            f" median R/Py {num(s['median_ratio'])}; bare call: Python faster in {s['python_faster_bare']},"
            f" median R/Py {num(s['median_ratio_bare'])}."]
    if s["build_compared"]:
        out.append(f"- The whole build of a dataset costs less than R's read and analyse of it in {s['build_faster']}"
                   f" of {s['build_compared']} rows; median R/build {num(s['median_ratio_build'])}.")
    return out + [f"- Worst |dz| {num(s['worst_dz'], '.1e')}; disagreements {s['disagreements']}, R errors"
                  f" {s['r_errors']}, Python errors {s['python_errors']}."]


def vs_r_block(rec: dict) -> list[str]:
    """A ``bench_vs_r.py`` record: its summary and its table per family."""
    f = rec["figures"]
    head = ["family", "N", "datasets", "build ms", "Py read+analyse ms", "R read+analyse ms", "R/build",
            "R/Py read+analyse", "R/Py bare"]
    return [*vs_r_summary(f), "", *table(head, family_rows(f["rows"]))]


SECTIONS = (
    Section(
        "Build", "`scripts/bench_build.py GRID --jobs N` builds a grid as a user does (a subprocess) and times it:"
        " wall and CPU seconds, the largest process's peak memory, the corpus's size, and the ratio of the CPU"
        " time to the bare statistical fits (the canonical and naive tests alone on every dataset, parsed in"
        " advance). `--plan` also times `taskfactory plan GRID --jobs N` and records its estimate of the build;"
        " `--verify` times `taskfactory verify --all --jobs N` of the corpus.",
        (Run("build-demo-jobs1", ("python scripts/bench_build.py grids/demo.yaml --jobs 1 --plan --record {record}",)),
         Run("build-demo-jobs2",
             ("python scripts/bench_build.py grids/demo.yaml --jobs 2 --plan --verify --record {record}",)),
         Run("build-paper-jobs1",
             ("python scripts/bench_build.py grids/paper.yaml --jobs 1 --plan --record {record}",)),
         Run("build-paper-jobs2",
             ("python scripts/bench_build.py grids/paper.yaml --jobs 2 --plan --verify --record {record}",))),
        build_row, head=tuple(table(BUILD_HEAD, [])), after=speedups),
    Section(
        "Planning", "`scripts/bench_plan.py --tasks K` plans a grid of about K tasks over every family, cold (the"
        " clipping probe included) and again, times the build estimate's timed sample, and plans the widest grid"
        " the limits allow: a thousand sample sizes with a thousand exclude rules.",
        (Run("plan", ("python scripts/bench_plan.py --tasks 10000000 --record {record}",)),), plan_block),
    Section(
        "Start-up", "`scripts/bench_startup.py` starts the command line as a user does, a new process each time, and"
        " lists the heavy modules `import taskfactory` loads.",
        (Run("startup", ("python scripts/bench_startup.py --record {record}",)),), startup_block),
    Section(
        "Leakage check", "`scripts/bench_leakage.py` checks two corpora of the same cells, one seed and three, against a"
        " 500-item benchmark (480 look-alikes, 20 planted copies), to compare their memory,"
        " and the paper corpus against a 2,000-item benchmark whose items name 50 CSV files (1,920 look-alikes,"
        " 80 planted copies); peak memory of the main process and the largest worker, and the Python heap's peak"
        " in a second run in one process.",
        (Run("leakage", ("python scripts/bench_leakage.py --record {record}",)),), leakage_block),
    Section(
        "The agent's sandbox", "`scripts/bench_agent.py CORPUS` runs a grouped mean and a Welch t-test on a task's"
        " CSV in isolated sessions, beside the same cells bare in a warm interpreter and as a fresh `python -c`,"
        " and times the sandbox's resets and cold starts.",
        (Run("agent", ("taskfactory build grids/demo.yaml -o corpus/",
                       "python scripts/bench_agent.py corpus/ --record {record}")),), agent_block),
    Section(
        "Against R", "`scripts/bench_vs_r.py --corpus DIR --limit K` times, per family and N, on K datasets of a"
        " built corpus and on one core: R's read and analyse of each dataset (`read.csv`, the range cleaning, the"
        " canonical call, in one `Rscript` process), taskfactory's read and analyse and bare call of it, and the"
        " whole build of its tasks (draw, CSV, parse, every test, reference code, prompts, script, its share of a"
        " Parquet shard); R/x above 1 means taskfactory is faster. The table per family sums its rows' times.",
        (Run("vs-r-demo", ("taskfactory build grids/demo.yaml -o corpus/",
                           "python scripts/bench_vs_r.py --corpus corpus/ --limit 2 --record {record}"),
             "The demo corpus (`grids/demo.yaml`)"),
         Run("vs-r-paper", ("taskfactory build grids/paper.yaml -o paper/ --jobs 2",
                            "python scripts/bench_vs_r.py --corpus paper/ --limit 2 --record {record}"),
             "The paper corpus (`grids/paper.yaml`)")),
        vs_r_block),
)


# --- rendering ---------------------------------------------------------------------------

def load(path: Path) -> dict:
    """A record, or ValueError naming its file."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{shown(path)}: not a readable record: {exc}") from None
    keys = set(rec) if isinstance(rec, dict) else set()
    if not RECORD_KEYS <= keys:
        raise ValueError(f"{shown(path)}: not a record (it lacks {', '.join(sorted(RECORD_KEYS - keys))})")
    return rec


def missing(path: Path, run: Run) -> str:
    """The line of a record not yet made: the commands that make it."""
    steps = " then ".join(f"`{cmd.format(record=shown(path))}`" for cmd in run.make)
    return f"- Not measured: `{shown(path)}` is missing. Make it with {steps}, then run `{REGENERATE}`."


def section_lines(section: Section, folder: Path) -> list[Line]:
    """A section's lines, each with the record it comes from."""
    paths = [(folder / f"{run.stem}.json", run) for run in section.runs]
    found = [(shown(path), load(path), run) for path, run in paths if path.exists()]
    present = [(name, rec) for name, rec, _ in found]
    out: list[Line] = [(text, None) for text in ("", f"## {section.title}", "", section.about, "")]
    if section.head and present:
        out += [(text, None) for text in section.head]
        out += [(text, name) for name, rec in present for text in section.body(rec)] + [("", None)]
    for name, rec, run in () if section.head else found:
        heading = [f"### {run.title}", ""] if run.title else []
        out += [(text, name) for text in (*heading, *section.body(rec), "")]
    if section.after:
        out += section.after(present)
    if present:
        out += [("Measured by:", None), ("", None)] + [(provenance(rec), name) for name, rec in present]
    gaps = [missing(path, run) for path, run in paths if not path.exists()]
    return out + ([("", None)] if present and gaps else []) + [(text, None) for text in gaps]


def intro(folder: Path) -> list[str]:
    """The page's opening: what it is and how it is made."""
    return ["# Performance", "",
            f"<!-- Written by {REGENERATE} from {shown(folder)}/*.json; edit those records, not this page. -->", "",
            "Every figure here was measured by one of the scripts in `scripts/` on the machine its record names;"
            f" each script's `--record FILE` writes its figures to `{shown(folder)}/`, and `{REGENERATE}` renders"
            f" this page from them (`--check` exits 1 when the page is not what the records render). Speed varies"
            " from machine to machine and with the machine's load, so compare figures of one machine and one day."
            " How the build, the verification and the corpus are laid out for speed and memory:"
            " [architecture](architecture.md#speed-and-memory)."]


def render(folder: Path) -> list[Line]:
    """The page's lines, each with the record it comes from."""
    lines = [(text, None) for text in intro(folder)]
    for section in SECTIONS:
        lines += section_lines(section, folder)
    return lines


def text_of(lines: list[Line]) -> str:
    """The page's text."""
    return "\n".join(text for text, _ in lines) + "\n"


def check(lines: list[Line], folder: Path, doc: Path) -> int:
    """0 when ``doc`` is what the records render; else 1, with one line
    naming the record (or the page) where they part."""
    if not doc.exists():
        print(f"{shown(doc)} is missing; run {REGENERATE}", file=sys.stderr)
        return 1
    current = doc.read_text()
    if current == text_of(lines):
        return 0
    have = current.split("\n")
    at = next((i for i, (text, _) in enumerate(lines) if i >= len(have) or have[i] != text), len(lines) - 1)
    source = lines[at][1] or f"{shown(folder)}/*.json"
    print(f"{shown(doc)} is not what {source} renders (line {at + 1}); run {REGENERATE}", file=sys.stderr)
    return 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, default=RECORDS, help="folder of the records (default docs/performance)")
    ap.add_argument("--out", type=Path, default=DOC, help="the page (default docs/performance.md)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when the page is not what the records render")
    args = ap.parse_args(argv)
    try:
        lines = render(args.records)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        return check(lines, args.records, args.out)
    args.out.write_text(text_of(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
