"""Auditing a corpus: every released task must reproduce.

``verify`` checks, in order:

1. ``manifest.json`` and every file it lists: present, sha256, rows, readable;
   ``data/`` holds no shard the manifest does not list;
2. every task id of the corpus: of the form ``<method>-<12 hex>``, and unique;
   in a corpus ``taskfactory split`` wrote, every task's split: the one the
   rule its manifest keeps gives;
3. for each sampled task (the command line samples :data:`DEFAULT_SAMPLE`
   tasks unless told ``--all``; checks 1 and 2 always cover every shard),
   the whole record re-derived with this taskfactory from the task's
   coordinates and the corpus's grid (in ``manifest.json``):
   every field must match, from the CSV, the gold and the naive test to the
   trap, the prompt, the reference code and the script;
4. the task's script, run only when it is exactly the script re-derived in 3
   (the one taskfactory emits for that task), in a sandbox
   (:mod:`taskfactory.audit.sandbox`: isolated interpreter, empty environment,
   throwaway folder, time and memory limits): it must write the CSV byte for
   byte. A script that differs is a failure and is never run.
"""

from __future__ import annotations

import hashlib
import math
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from .._version import __version__
from ..design.grid import Coord, Grid, load_grid
from ..errors import CorpusError, InputError, TaskFactoryError, check_count, check_path
from ..make.columns import FIELDS, roles_of
from ..make.script import behaviour
from ..make.task import Dataset, ids, record, release
from ..scenarios import scenario_setting, use_scenario_setting
from ..store import corpus
from ..store.corpus import is_task_id, open_shard, read_columns, read_row_group, sha256_file, shown
from ..store.plan import plan as plan_grid
from ..store.real import checked_design, item_of, item_records, spec_sha256, task_id
from ..store.resplit import SplitRule, derive_rule
from ..store.shards import schema
from .sandbox import Limits, run_scripts

#: Tasks the command line re-derives when given neither ``--sample`` nor ``--all``.
DEFAULT_SAMPLE = 1000
#: Most tasks one worker re-derives at once. Each chunk loads the grid and
#: its scenarios (about 0.1 s) and starts one sandbox interpreter for its
#: scripts (under 0.1 s with numpy, against 3-4 ms a script), so chunks stay
#: this large unless the jobs need smaller ones to share the work evenly ...
CHUNK_TASKS = 1000
#: ... or their CSVs and scripts reach this many characters: a worker holds
#: each task about four times (as read, re-derived, as stored and its
#: dataset), and loky replaces a worker that grows by 300 MB.
CHUNK_TEXT = 16 << 20
LONG_TEXT = {"prompt", "context", "question", "data_csv", "script", "reference_r", "reference_py"}
FLOAT_REL = 1e-9


@dataclass
class VerifyReport:
    """What ``verify`` checked and what it found wrong (``problems``: (where, what))."""

    shards: int = 0
    shards_ok: int = 0
    total: int = 0
    tasks: int = 0
    records_ok: int = 0
    scripts_ok: int = 0
    scripts_run: int = 0
    seconds: float = 0.0
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, where: str, what: str) -> None:
        self.problems.append((where, what))

    def to_json(self) -> dict:
        """The report as plain data (what ``verify --json`` prints)."""
        return {"ok": self.ok, "shards": self.shards, "shards_ok": self.shards_ok, "tasks_total": self.total,
                "tasks_checked": self.tasks, "records_ok": self.records_ok, "scripts_ok": self.scripts_ok,
                "scripts_run": self.scripts_run,
                "seconds": round(self.seconds, 3),
                "tasks_per_second": round(self.tasks / self.seconds, 1) if self.seconds > 0 else 0.0,
                "problems": [{"where": where, "what": what} for where, what in self.problems]}


# --- files -------------------------------------------------------------------------

def _check_files(root: Path, manifest: dict, report: VerifyReport) -> list[tuple[Path, int]]:
    """File-level checks; returns the readable shards with their row counts."""
    listed = {s["path"]: s for s in manifest["shards"]}
    data = root / corpus.DATA
    present = {f"data/{p.name}" for p in data.glob("*.parquet")} if data.is_dir() else set()
    for path in sorted(present - set(listed)):
        report.add(path, "is not listed in manifest.json")
    readable = []
    for path, entry in listed.items():
        report.shards += 1
        file = root / path
        if not file.is_file() or file.is_symlink():
            report.add(path, "is listed in manifest.json but missing")
            continue
        good = True
        digest = sha256_file(file)
        if digest != entry["sha256"]:
            report.add(path, f"sha256 {digest[:12]} differs from manifest.json's {entry['sha256'][:12]} "
                             f"({file.stat().st_size} bytes, manifest says {entry['bytes']}): modified or truncated")
            good = False
        try:
            pf = open_shard(file)
        except CorpusError as exc:
            report.add(path, f"cannot be read: {str(exc).split(': ', 1)[1]}")
            continue
        names = set(pf.schema_arrow.names)
        lacking = [name for name, *_ in FIELDS if name not in names]
        if lacking:
            report.add(path, f"lacks the column '{lacking[0]}'")
            continue
        rows = pf.metadata.num_rows
        if rows != entry["rows"]:
            report.add(path, f"holds {rows} rows, manifest.json says {entry['rows']}")
            good = False
        report.shards_ok += good
        readable.append((file, rows))
    for entry in manifest["files"]:
        file = root / entry["path"]
        if not file.is_file() or file.is_symlink():
            report.add(entry["path"], "is listed in manifest.json but missing")
        elif sha256_file(file) != entry["sha256"]:
            report.add(entry["path"], "sha256 differs from manifest.json")
    return readable


def _check_ids(readable: list[tuple[Path, int]], report: VerifyReport) -> set[tuple[int, int]]:
    """Every task id: well formed and unique. Returns the (shard, row) of the bad ones."""
    seen: dict[str, list[str]] = defaultdict(list)
    bad = set()
    for s, (file, _) in enumerate(readable):
        pf = open_shard(file)
        row = 0
        for g in range(pf.num_row_groups):
            for tid in read_row_group(pf, file, g, ["task_id"]).column("task_id").to_pylist():
                if not is_task_id(tid):
                    report.add(f"data/{file.name} row {row}", f"task_id {shown(tid)} is not a taskfactory task id")
                    bad.add((s, row))
                else:
                    seen[tid].append(f"data/{file.name} row {row}")
                row += 1
    for tid, where in seen.items():
        if len(where) > 1:
            report.add(tid, f"appears {len(where)} times ({', '.join(where[:3])}{', ...' if len(where) > 3 else ''})")
    return bad


def _check_completeness(root: Path, grid: Grid, manifest: dict, readable: list[tuple[Path, int]],
                        report: VerifyReport) -> None:
    """The corpus holds every task its grid makes: the shards the grid's plan
    names, every task either released, rejected or (in a corpus a leakage
    check wrote) dropped, the counts the manifest states, and each row in a
    shard of its own split."""
    p = plan_grid(grid, probe=False)
    want = [f"{corpus.DATA}/{name}" for split in grid.splits() for name in p.shard_names(split)]
    have = [entry["path"] for entry in manifest["shards"]]
    filtered = manifest.get("leakage_filter")
    dropped = filtered.get("dropped_tasks") if isinstance(filtered, dict) else 0
    if not (isinstance(dropped, int) and not isinstance(dropped, bool) and dropped >= 0):
        report.add("manifest.json", f"leakage_filter.dropped_tasks ({dropped!r}) is not a count")
        dropped = 0
    if have != want and not filtered and "resplit" not in manifest:
        missing = [name for name in want if name not in have]
        report.add("manifest.json", f"lists the shards {', '.join(have[:3]) or 'none'}{' ...' if len(have) > 3 else ''}"
                                    f"; the grid makes {len(want)}" + (f" (missing {missing[0]})" if missing else ""))
    rejected = corpus.listed_file(manifest, corpus.REJECTED)
    rejected_rows = rejected.get("rows", 0) if rejected else 0
    rows = sum(n for _, n in readable)
    if rows + rejected_rows + dropped != p.total:
        report.add("manifest.json", f"the grid makes {p.total} tasks; the shards hold {rows}, "
                                    f"{corpus.REJECTED} lists {rejected_rows} rejected"
                                    + (f" and {dropped} were dropped" if filtered else ""))
    _check_counts_and_splits(manifest, readable, report)


def _check_counts_and_splits(manifest: dict, readable: list[tuple[Path, int]], report: VerifyReport) -> None:
    """The manifest's count of tasks is the shards' rows, and each row is in a shard of its own split."""
    rows = sum(n for _, n in readable)
    if manifest["counts"].get("tasks") != rows:
        report.add("manifest.json", f"counts.tasks says {manifest['counts'].get('tasks')!r}; the shards hold {rows}")
    for file, _ in readable:
        split = file.name.split("-", 1)[0]
        for values in read_columns(file, ["split"]).column("split").unique().to_pylist():
            if values != split:
                report.add(f"data/{file.name}", f"holds tasks of the {values!r} split")


def _check_real_completeness(manifest: dict, readable: list[tuple[Path, int]], report: VerifyReport) -> bool:
    """A corpus of real data holds one task per item and prompt style of the
    spec its manifest keeps, and nothing else; False when the spec cannot be
    read or does not match its sha256 (nothing can then be re-derived)."""
    spec = manifest["grid"]
    try:
        items = [item_of(spec, it["id"]) for it in spec["items"]]
        styles = list(spec["prompt_styles"])
        want = {task_id(item, style) for item in items for style in styles}
    except (KeyError, TypeError, AttributeError) as exc:
        report.add("manifest.json", f"its spec cannot be read ({type(exc).__name__}: {exc})")
        return False
    if spec_sha256(spec) != manifest["grid_sha256"]:
        report.add("manifest.json", "its spec does not match its grid_sha256")
        return False
    have = {tid for file, _ in readable for tid in read_columns(file, ["task_id"]).column("task_id").to_pylist()}
    lacking, extra = sorted(want - have), sorted(have - want)
    more = lambda found: f" and {len(found) - 1} more" if len(found) > 1 else ""   # noqa: E731
    if lacking:
        report.add("manifest.json", f"the corpus lacks the task {lacking[0]}{more(lacking)} of its spec")
    if extra:
        report.add(extra[0], f"the corpus holds the task {extra[0]}{more(extra)}, which its spec does not make")
    _check_counts_and_splits(manifest, readable, report)
    return True


# --- re-deriving a record ----------------------------------------------------------

def coord_of(grid: Grid, rec: dict) -> Coord:
    """The coordinates of a stored record; ValueError naming a value the grid lacks."""
    effects = {e.name: e for e in grid.effects}
    checks = (("method", grid.methods), ("prompt_style", grid.prompt_styles),
              ("perturbation", grid.perturbations), ("effect", tuple(effects)), ("n", grid.n),
              ("seed", tuple(range(grid.seeds))))
    for key, allowed in checks:
        if rec.get(key) not in allowed or isinstance(rec.get(key), bool):
            raise ValueError(f"its {key} {shown(rec.get(key))} is not in the corpus's grid")
    if rec.get("scenario") not in grid.scenarios[rec["method"]]:
        raise ValueError(f"its scenario {shown(rec.get('scenario'))} is not in the corpus's grid")
    return Coord(rec["method"], rec["scenario"], rec["n"], effects[rec["effect"]], rec["perturbation"], rec["seed"],
                 rec["prompt_style"], grid.split_of(rec["method"], rec["scenario"]))


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=FLOAT_REL)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _comparable(name: str, stored, derived) -> tuple:
    """The stored and re-derived values of column ``name`` as they compare:
    ``roles`` by the roles a task has (:func:`~taskfactory.make.columns.roles_of`),
    since its struct has a null field for every other role name the building
    process had registered."""
    if name == "roles" and isinstance(stored, dict) and isinstance(derived, dict):
        return roles_of(stored), roles_of(derived)
    return stored, derived


def _difference(name: str, stored, derived) -> str:
    if name in LONG_TEXT and isinstance(stored, str) and isinstance(derived, str):
        at = next((i for i, (x, y) in enumerate(zip(stored, derived)) if x != y), min(len(stored), len(derived)))
        return f"{name} differs from the re-derived one (from character {at})"
    return f"{name} {shown(stored, 40)} differs from the re-derived {shown(derived, 40)}"


def _differences(stored: dict, derived: dict) -> list[str]:
    """How a stored record differs from the re-derived one, field by field."""
    return [_difference(name, stored.get(name), derived[name]) for name, *_ in FIELDS
            if not _same(*_comparable(name, stored.get(name), derived[name]))]


def _check_real_chunk(manifest: dict, tasks: list[dict], rule: SplitRule | None = None) -> tuple[list, int, int, int, int]:
    """Re-derive and compare the records of ``tasks`` of a corpus of real data
    from the spec in its ``manifest`` and the CSV in each record (there are no
    scripts). Returns what :func:`_check_chunk` returns."""
    problems, records_ok, derived = [], 0, []
    spec = manifest["grid"]
    for rec in tasks:
        item = item_of(spec, rec["scenario"])
        if item is None:
            problems.append((rec["task_id"], f"its scenario {shown(rec['scenario'])} is no item of the corpus's spec"))
        elif rec["data_sha256"] != item.csv_sha256 or rec["prompt_style"] not in spec["prompt_styles"]:
            problems.append((rec["task_id"], "its data_csv or prompt_style is not what its spec item was imported "
                                             "with"))
        else:
            try:
                checked_design(spec, item.id)   # the roles and ranges the reference code is built from
                again = item_records(manifest["name"], manifest["grid_sha256"], item, rec["data_csv"],
                                     [rec["prompt_style"]])[0]
                derived.append((rec, {**again, "split": rule.split_of(rec)} if rule else again))
            except TaskFactoryError as exc:
                problems.append((rec["task_id"], f"cannot be re-derived: {exc}"))
    for rec, again in zip([r for r, _ in derived], as_stored([d for _, d in derived], schema())):
        diffs = _differences(rec, again)
        problems += [(rec["task_id"], d) for d in diffs]
        records_ok += not diffs
    return problems, records_ok, 0, 0, len(tasks)


def as_stored(records: list[dict], stored: pa.Schema) -> list[dict]:
    """``records`` as a shard of schema ``stored`` gives them back: their
    nested fields with every key of their Arrow type (absent ones null)."""
    return pa.Table.from_pylist(records, schema=stored).to_pylist()


def _check_chunk(grid_spec: dict, tasks: list[dict], limits: Limits, scenarios: str | None = None,
                 rule: SplitRule | None = None) -> tuple[list, int, int, int, int]:
    """Re-derive and compare the records of ``tasks``, then run the scripts that
    match. Returns (problems, records that match in full, scripts that
    reproduce, scripts run, tasks checked). ``scenarios`` is the caller's scenario setting (see
    :func:`~taskfactory.scenarios.scenario_setting`); ``rule``, the split rule of a re-split corpus,
    gives each task's split in place of the grid's."""
    use_scenario_setting(scenarios)
    grid = load_grid(grid_spec, source="manifest.json grid")
    stored = schema()
    problems, to_run = [], []
    records_ok = 0
    cache: dict[str, Dataset | object] = {}
    outcomes = []   # per task, in order: its re-derived record, or why there is none
    for rec in tasks:
        tid = rec["task_id"]
        try:
            c = coord_of(grid, rec)
        except ValueError as exc:
            outcomes.append(f"cannot be re-derived: {exc}")
            continue
        if rule is not None:
            c = c._replace(split=rule.split_of(rec))
        task_id, data_id, _ = ids(grid, c)
        if task_id != tid:
            outcomes.append(f"task_id differs from the id of its coordinates ({task_id})")
            continue
        if data_id not in cache:
            cache[data_id] = release(grid, c)
        ds = cache[data_id]
        outcomes.append(record(grid, c, ds) if isinstance(ds, Dataset)
                        else f"its coordinates give no dataset: {ds.reasons[-1]}")
    derived_records = iter(as_stored([o for o in outcomes if isinstance(o, dict)], stored))
    for rec, outcome in zip(tasks, outcomes):
        tid = rec["task_id"]
        if isinstance(outcome, str):
            problems.append((tid, outcome))
            continue
        derived = next(derived_records)
        diffs = _differences(rec, derived)
        problems += [(tid, d) for d in diffs]
        records_ok += not diffs
        if rec.get("script") == derived["script"]:
            if derived["script"] is not None:  # a question without a dataset has no script
                to_run.append((tid, derived["script"], derived["data_sha256"]))
        else:
            problems.append((tid, "its script is not the one taskfactory emits for this task; it was not run"))
    scripts_ok = 0
    first = {}   # each behaviour once: the emitted scripts of one dataset's prompt styles write the same file
    for _, script, _ in to_run:
        first.setdefault(behaviour(script), script)
    ran = dict(zip(first, run_scripts(list(first.values()), limits)))
    for (tid, script, want), outcome in ((t, ran[behaviour(t[1])]) for t in to_run):
        if outcome.error:
            problems.append((tid, f"the emitted script failed: {outcome.error}"))
        elif outcome.sha256 != want:
            problems.append((tid, f"the emitted script writes a different CSV (sha256 {outcome.sha256[:12]}, "
                                  f"data_sha256 {want[:12]})"))
        else:
            scripts_ok += 1
    return problems, records_ok, scripts_ok, len(to_run), len(tasks)


def chunk_size(tasks: int, jobs: int) -> int:
    """Tasks per chunk: the fewest chunks of at most CHUNK_TASKS tasks whose number is
    a multiple of ``jobs``, so that every job gets as many, of equal size."""
    if jobs == 1 or tasks <= 0:
        return CHUNK_TASKS
    chunks = jobs * math.ceil(tasks / (jobs * CHUNK_TASKS))
    return math.ceil(tasks / chunks)


def _chunks(readable, chosen, bad_rows, report: VerifyReport, size: int = CHUNK_TASKS):
    """The sampled tasks, ``size`` at a time or fewer once their CSVs and
    scripts reach :data:`CHUNK_TEXT` characters, read row group by row group."""
    columns = [name for name, *_ in FIELDS]
    offset, chunk, text = 0, [], 0
    for s, (file, _) in enumerate(readable):
        pf = open_shard(file)
        row = 0
        for g in range(pf.num_row_groups):
            for rec in read_row_group(pf, file, g, columns).to_pylist():
                if (chosen is None or offset in chosen) and (s, row) not in bad_rows:
                    report.tasks += 1
                    csv = rec["data_csv"]
                    digest = None if csv is None else hashlib.sha256(csv.encode("utf-8")).hexdigest()
                    if digest != rec["data_sha256"]:
                        report.add(rec["task_id"], "data_csv does not match data_sha256")
                    chunk.append(rec)
                    text += len(csv or "") + len(rec["script"] or "")
                    if len(chunk) == size or text >= CHUNK_TEXT:
                        yield chunk
                        chunk, text = [], 0
                offset += 1
                row += 1
    if chunk:
        yield chunk


def _check_resplit(manifest: dict, readable: list[tuple[Path, int]],
                   report: VerifyReport) -> tuple[bool, SplitRule | None]:
    """A re-split corpus: its manifest's ``resplit`` is a rule; it holds out
    what the rule's by, test and seed give on the corpus's tasks (checked
    only when every shard passed :func:`_check_files`, since the tasks of a
    changed shard give another list); and every task of the readable shards
    has the split that rule gives (the first wrong one named). Returns
    (whether the rule could be read, the rule as the manifest states it)."""
    if "resplit" not in manifest:
        return True, None
    try:
        rule = SplitRule.of(manifest["resplit"])
    except InputError as exc:
        report.add("manifest.json", str(exc).removeprefix("manifest.json: "))
        return False, None
    given, named = None, False   # the rule its by, test and seed give on this corpus; shards named unreadable
    if rule.by == "data_id":
        given = derive_rule((), rule.by, rule.test, rule.seed)
    elif report.shards_ok < report.shards:
        report.add("manifest.json", "resplit: the scenarios it holds out were not checked against its rule, "
                                    "since a shard fails the checks above")
    else:
        pairs = {pair for rows in _resplit_rows(readable, ["method", "scenario"], report)
                 for pair in zip(rows["method"], rows["scenario"])}
        named = True
        try:
            given = derive_rule(sorted(pairs), rule.by, rule.test, rule.seed)
        except InputError as exc:
            report.add("manifest.json", f"resplit cannot be checked against its rule: {exc}")
    if given is not None and given != rule:
        report.add("manifest.json", "resplit holds out other scenarios than its rule gives on this corpus")
    check, wrong, first = given if given is not None else rule, 0, None
    for rows in _resplit_rows(readable, ["task_id", "method", "scenario", "data_id", "split"], report, named):
        for task in (dict(zip(rows, values)) for values in zip(*rows.values())):
            if task["split"] != check.split_of(task):
                wrong += 1
                first = first or (task["task_id"], f"split {shown(task['split'])} is not the "
                                                   f"{check.split_of(task)!r} its manifest's resplit rule gives")
    if first:
        report.add(first[0], first[1] + (f" (nor are those of {wrong - 1} more task(s))" if wrong > 1 else ""))
    return True, rule


def _resplit_rows(readable: list[tuple[Path, int]], columns: list[str], report: VerifyReport, quiet: bool = False):
    """``columns`` of each readable shard, as lists by name; a shard whose
    columns cannot be read is named in ``report`` (unless ``quiet``: named
    already) and left out."""
    for file, _ in readable:
        try:
            yield read_columns(file, columns).to_pydict()
        except CorpusError as exc:
            if not quiet:
                report.add(f"data/{file.name}", str(exc).split(": ", 1)[1])


def _check_origin(root: Path, manifest: dict, readable: list[tuple[Path, int]], report: VerifyReport) -> bool:
    """The corpus holds what the grid or the real-data spec it was made from
    makes; False when that cannot be loaded (no task can then be re-derived)."""
    if manifest.get("origin") == corpus.ORIGIN_REAL:
        return _check_real_completeness(manifest, readable, report)
    try:
        grid = load_grid(manifest["grid"], source="manifest.json grid")
    except TaskFactoryError as exc:
        report.add("manifest.json", f"its grid cannot be loaded: {exc}")
        return False
    if grid.sha256 != manifest["grid_sha256"]:
        report.add("manifest.json", "its grid does not match its grid_sha256")
        return False
    _check_completeness(root, grid, manifest, readable, report)
    return True


def _rederive(manifest: dict, readable: list[tuple[Path, int]], bad_rows: set, report: VerifyReport,
              sample: int | None, seed: int, jobs: int, limits: Limits, progress: bool,
              rule: SplitRule | None = None) -> None:
    """Re-derive ``sample`` tasks drawn with ``seed`` (every task when None),
    ``jobs`` chunks at once, adding what differs to ``report``; ``rule``, the
    split rule of a re-split corpus, gives each task's split."""
    from joblib import Parallel, delayed

    total = report.total
    chosen = set(random.Random(seed).sample(range(total), sample)) if sample is not None and sample < total \
        else None
    starts = [0]
    for _, rows in readable:
        starts.append(starts[-1] + rows)
    bad = {starts[s] + row for s, row in bad_rows}
    todo = total - len(bad) if chosen is None else len(chosen - bad)
    size = chunk_size(todo, jobs)
    chunks = _chunks(readable, chosen, bad_rows, report, size)
    calls = (delayed(_check_real_chunk)(manifest, chunk, rule) for chunk in chunks) \
        if manifest.get("origin") == corpus.ORIGIN_REAL else \
        (delayed(_check_chunk)(manifest["grid"], chunk, limits, scenario_setting(), rule) for chunk in chunks)
    # Processes (loky), not threads: re-deriving a record is Python work that holds the GIL, and
    # release() turns warnings into errors with warnings.catch_warnings, which is process-wide, so
    # threads would undo each other's filters. Chunks come back in order: the report lists the
    # problems in the corpus's order.
    runner = Parallel(n_jobs=jobs, backend="loky", return_as="generator", pre_dispatch="2*n_jobs") \
        if jobs > 1 else (lambda cs: (fn(*a, **k) for fn, a, k in cs))
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=todo, unit="task", desc="verifying", file=sys.stderr, dynamic_ncols=True)
    try:
        for problems, records_ok, scripts_ok, scripts_run, done in runner(calls):
            report.problems += problems
            report.records_ok += records_ok
            report.scripts_ok += scripts_ok
            report.scripts_run += scripts_run
            if bar is not None:
                bar.update(done)
    finally:
        if bar is not None:
            bar.close()


def verify(corpus_dir, sample: int | None = None, jobs: int = 1, seed: int = 0,
           limits: Limits = Limits(), progress: bool = False) -> VerifyReport:
    """Audit ``corpus_dir``: re-derive ``sample`` tasks drawn with ``seed``
    (every task when None; the file, id and completeness checks always cover
    every shard), ``jobs`` chunks of tasks at once; scripts run under
    ``limits``. ``progress`` shows a bar on stderr over the tasks re-derived."""
    start = time.perf_counter()
    check_path(corpus_dir, "corpus_dir")
    check_count(jobs, "jobs")
    if sample is not None:
        check_count(sample, "sample")
    if not isinstance(limits, Limits):
        raise InputError(f"limits must be a taskfactory.audit.sandbox.Limits, got {type(limits).__name__}")
    root = Path(corpus_dir)
    manifest = corpus.load_manifest(root)
    report = VerifyReport()
    readable = _check_files(root, manifest, report)
    report.total = sum(rows for _, rows in readable)
    bad_rows = _check_ids(readable, report)
    if manifest["factory_version"] != __version__:
        report.add("manifest.json", f"the corpus was built by taskfactory {manifest['factory_version']}; this is "
                                    f"{__version__}, which re-derives only the tasks it builds itself")
    else:
        readable_rule, rule = _check_resplit(manifest, readable, report)
        if readable_rule and _check_origin(root, manifest, readable, report):
            _rederive(manifest, readable, bad_rows, report, sample, seed, jobs, limits, progress, rule)
    report.seconds = time.perf_counter() - start
    return report


def format_report(report: VerifyReport) -> str:
    lines = [f"FAIL {where}: {what}" for where, what in report.problems]
    lines.append(f"shards: {report.shards} listed, {report.shards_ok} match manifest.json")
    scripts = (f"scripts reproduced the CSV: {report.scripts_ok} of {report.scripts_run} run" if report.scripts_run
               else "no script to run")
    lines.append(f"tasks: {report.tasks} of {report.total} checked; records re-derived in every field: "
                 f"{report.records_ok} of {report.tasks}; {scripts}")
    verdict = "OK: every check passed" if report.ok else f"FAILED: {len(report.problems)} problem(s)"
    rate = report.tasks / report.seconds if report.seconds > 0 else 0.0
    lines.append(f"{verdict} ({report.tasks} tasks in {report.seconds:.1f} s, {rate:.1f} tasks/s)")
    return "\n".join(lines)
