"""Building a corpus: chunks in parallel, shards for readers, resumable, byte-identical.

The folder layout is :mod:`taskfactory.store.corpus`'s; the plan sizes the shards
for their readers and splits each into chunks, the unit of parallel work (see
:mod:`taskfactory.store.plan`). A build takes an exclusive lock on its output
folder and records its layout (shards and parts) in ``OUT/.build/layout.json``; its workers write
each chunk there as a part, and the main process assembles each shard from
its parts, in order, as they come in, and renames it into ``data/`` once whole.
A killed build resumes with ``resume=True``, reusing finished shards and
parts, and ends byte-identical to an uninterrupted one; its worker processes
stop when the main process dies.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import socket
import tempfile
import time
from collections import Counter, deque
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import pyarrow as pa

from .._version import __version__
from ..design.grid import Coord, Grid, load_grid
from ..errors import InputError, TaskFactoryError, check_count, check_path
from ..make.clipping import check_clipping
from ..make.task import Dataset, data_key, record, reject_entry, release
from ..make.workers import enter_worker
from ..scenarios import scenario_setting
from . import corpus
from .corpus import DATA, MANIFEST, REJECTED, STATE, atomic_write_text
from .plan import Plan, plan
from .shards import ShardWriter

BACKENDS = ("loky", "threading", "dask", "ray")
#: How long a build tries to reach the dask scheduler at ``address`` before it gives up.
CONNECT_SECONDS = 10


@dataclass
class BuildSummary:
    """What a build produced and how long it took."""

    out: Path
    tasks: int
    rejected: int
    shards: int
    skipped_shards: int
    seconds: float
    manifest: dict
    chunks: int
    skipped_chunks: int

    @property
    def tasks_per_second(self) -> float:
        return self.tasks / self.seconds if self.seconds > 0 else float("inf")

    def __repr__(self) -> str:
        return (f"BuildSummary(out={str(self.out)!r}, tasks={self.tasks}, rejected={self.rejected}, "
                f"shards={self.shards}, skipped_shards={self.skipped_shards}, chunks={self.chunks}, "
                f"skipped_chunks={self.skipped_chunks}, seconds={self.seconds:.1f})")


def _provenance(g: Grid) -> dict:
    return {"grid_name": g.name, "grid_sha256": g.sha256}


def build_chunk(g: Grid, part: str, coords: list[Coord], out: str, parent_pid: int | None = None,
                scenarios: str | None = None) -> tuple[str, int, int]:
    """Build one chunk of a shard: its records go to the part ``PART`` in the
    build state, its rejects beside it (``scenarios``, ``parent_pid``: see
    :func:`enter_worker`). Each file is
    written under a name of this attempt's own and renamed when complete, so
    that two attempts at one chunk (a scheduler's retried or stolen task)
    leave the one part. Returns ``(part, rows, rejects)``."""
    enter_worker(scenarios, parent_pid)
    state = Path(out) / STATE
    if not state.is_dir():
        raise TaskFactoryError(f"the build's folder {state} is not visible to the worker on "
                               f"{socket.gethostname()}: a cluster's workers must share the output folder")
    rejects = []
    last = None
    tmp = corpus.attempt_path(state / part)
    try:
        with ShardWriter(tmp, _provenance(g), transient=True) as writer:
            for c in coords:
                key = data_key(g, c)
                if last is None or last[0] != key:
                    last = (key, release(g, c))
                ds = last[1]
                if isinstance(ds, Dataset):
                    writer.append(record(g, c, ds))
                else:
                    rejects.append(reject_entry(g, c, ds))
        _write_attempt(state / corpus.part_rejects(part),
                       "".join(json.dumps(r, sort_keys=True) + "\n" for r in rejects))
        os.replace(tmp, state / part)
    finally:
        tmp.unlink(missing_ok=True)
    return part, writer.rows, len(rejects)


def _write_attempt(path: Path, text: str) -> None:
    """Write ``path`` under this attempt's own temporary name, then rename it into place."""
    tmp = corpus.attempt_path(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class ShardAssembly:
    """Writes the shard ``data/SHARD`` from its ``parts`` (in the build
    state) in order, one row group in memory at a time, while the build
    runs: :meth:`add` a finished part and every part from the next one on
    that is finished goes into the shard, so the build's end waits only for
    its last parts. The shard's rejects are the parts' rejects, in order.
    The shard is renamed into ``data/`` once whole (its rejects first), then
    the parts are deleted; a build that fails first drops the shard as far
    as it got (:meth:`abort`), and ``--resume`` starts it again from its parts."""

    def __init__(self, out: Path, g: Grid, shard: str, parts: list[str]):
        self.out, self.g, self.shard, self.parts = out, g, shard, parts
        self.finished: set[str] = set()
        self.written = 0          # parts in the shard so far
        self.writer: ShardWriter | None = None

    @property
    def whole(self) -> bool:
        return self.written == len(self.parts)

    def add(self, *parts: str) -> None:
        """Note ``parts`` finished; write what can be written, and close the shard once whole."""
        state = self.out / STATE
        self.finished.update(parts)
        while not self.whole and self.parts[self.written] in self.finished:
            if self.writer is None:
                self.writer = ShardWriter(state / self.shard, _provenance(self.g))
            part = self.parts[self.written]
            pf = corpus.open_shard(state / part)
            for i in range(pf.num_row_groups):
                self.writer.append_row_group(corpus.read_row_group(pf, state / part, i, None))
            self.written += 1
            pa.default_memory_pool().release_unused()   # else Arrow's allocator keeps the row groups it read
        if self.whole and self.writer is not None:
            self.writer.close()
            self.writer = None
            rejects = "".join((state / corpus.part_rejects(part)).read_text(encoding="utf-8") for part in self.parts)
            atomic_write_text(state / corpus.part_rejects(self.shard), rejects)
            os.replace(state / self.shard, self.out / DATA / self.shard)
            for part in self.parts:
                (state / part).unlink()
                (state / corpus.part_rejects(part)).unlink()

    def abort(self) -> None:
        """Drop the shard as far as it got (its parts stay)."""
        if self.writer is not None:
            writer, self.writer = self.writer, None
            try:
                writer.close()
            finally:
                (self.out / STATE / self.shard).unlink(missing_ok=True)


def _chunk_jobs(g: Grid, p: Plan, skip: set[str]):
    """``(part, coords)`` of every chunk, in order, but those in ``skip``,
    without holding them all."""
    for split in g.splits():
        it = g.tasks(split)
        for _, parts in p.chunks(split):
            for part, rows in parts:
                if part in skip:
                    deque(islice(it, rows), maxlen=0)
                else:
                    yield part, list(islice(it, rows))


def _layout(g: Grid, p: Plan) -> tuple[list[str], list[str]]:
    """The names of every shard and every part of the build, in order."""
    shards, parts = [], []
    for split in g.splits():
        for shard, chunks in p.chunks(split):
            shards.append(shard)
            parts.extend(part for part, _ in chunks)
    return shards, parts


def _chunk_count(g: Grid, p: Plan) -> int:
    return sum(p.chunk_count(split) for split in g.splits())


def _open_out(out: Path) -> None:
    """Create the output folder; bad paths and unwritable folders are input errors."""
    if out.exists() and not out.is_dir():
        raise InputError(f"output {out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {out}: {exc.strerror or exc}") from None
    try:  # try it: permission bits say nothing to root or on a read-only file system
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise InputError(f"output folder {out} is not writable: {exc.strerror or exc}") from None


def _prepare_out(out: Path, g: Grid, p: Plan, resume: bool, overwrite: bool) -> bool:
    """Make the (locked) output folder ready; True when a finished build of
    this grid is already there."""
    want = {"grid_sha256": g.sha256, "factory_version": __version__}
    if any(out.iterdir()):
        if overwrite:
            corpus.clear(out)
        elif resume:
            if (out / MANIFEST).exists() and not (out / STATE).exists():
                manifest = corpus.load_manifest(out)
                have = {k: manifest[k] for k in want}
                if have == want:
                    return True
            elif (out / STATE).exists():
                have = {k: corpus.read_build_layout(out)[k] for k in want}
            else:
                raise InputError(f"output folder {out} holds no build to resume (no {STATE}/layout.json)")
            if have != want:
                raise InputError(f"output folder {out} was built from another grid or version "
                                 f"(grid sha256 {have['grid_sha256'][:12]}, version {have['factory_version']}); "
                                 "use --overwrite to replace it")
            corpus.audit(out)
        else:
            raise InputError(f"output folder {out} is not empty; use --resume to continue a build or "
                             "--overwrite to replace it")
    shards, parts = _layout(g, p)
    (out / DATA).mkdir(exist_ok=True)
    (out / STATE).mkdir(exist_ok=True)
    for path in (out / STATE).iterdir():  # a shard half-assembled, a part half-written, when the build was killed
        if path.name in shards or corpus.attempt_of(path.name):
            path.unlink()
    corpus.write_build_layout(out, g.sha256, g.normalized(), shards, parts)
    return False


def _check_backend(backend: str, address: str | None = None) -> None:
    """Fail early, before any output exists, on an unknown or missing backend,
    an ``address`` for a backend without one, or a dask scheduler that cannot
    be reached."""
    if backend not in BACKENDS:
        raise InputError(f"backend ({backend!r}) must be one of {', '.join(BACKENDS)}")
    if address and backend not in ("dask", "ray"):
        raise InputError(f"an address ({address!r}) needs the dask or ray backend, not {backend!r}")
    needs = {"dask": ("dask.distributed", "dask[distributed]"), "ray": ("ray.util.joblib", "ray[default]")}
    if backend in needs:
        module, package = needs[backend]
        try:
            importlib.import_module(module)
        except ImportError:
            raise InputError(f"backend '{backend}' needs {module}: pip install '{package}'") from None
    if backend == "dask" and address:
        _dask_client(address).close()


def _dask_client(address: str):
    """A client of the dask scheduler at ``address``; an unreachable or
    malformed address is an input error (one line, exit code 2)."""
    from dask.distributed import Client

    try:
        return Client(address, timeout=CONNECT_SECONDS)
    except (OSError, ValueError) as exc:  # TimeoutError is an OSError
        reason = next(iter(str(exc).strip().splitlines()), "") or type(exc).__name__
        raise InputError(f"cannot connect to the dask scheduler at {address}: {reason}") from None


@contextmanager
def _backend(jobs: int, backend: str, address: str | None):
    """joblib's configuration for ``backend``; dask and ray connect to
    ``address`` or start a local cluster of ``jobs`` workers."""
    import joblib

    _check_backend(backend)
    with ExitStack() as stack:
        if backend == "dask":
            from dask.distributed import Client

            client = _dask_client(address) if address else Client(processes=True, n_workers=jobs,
                                                                  threads_per_worker=1)
            stack.callback(client.close)
        elif backend == "ray":
            import ray
            from ray.util.joblib import register_ray

            register_ray()
            if not ray.is_initialized():
                try:
                    ray.init(**({"address": address} if address else {"num_cpus": jobs}))
                except (ConnectionError, ValueError) as exc:
                    if not address:
                        raise
                    reason = next(iter(str(exc).strip().splitlines()), "") or type(exc).__name__
                    raise InputError(f"cannot connect to the ray cluster at {address}: {reason}") from None
                stack.callback(ray.shutdown)
        stack.enter_context(joblib.parallel_config(backend=backend, n_jobs=jobs))
        yield joblib.Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")


def build(grid, out, jobs: int = 1, resume: bool = False, overwrite: bool = False, progress: bool = False,
          backend: str = "loky", address: str | None = None) -> BuildSummary:
    """Build the corpus of ``grid`` (a path or a mapping) into folder ``out``.

    ``jobs`` shards are built at once; ``resume`` continues a killed build,
    skipping finished shards; ``overwrite`` replaces an earlier corpus (only
    the files it lists; anything else in the folder stops the build). The
    result is the same, byte for byte, for any ``jobs`` and backend. Raises
    :class:`TaskFactoryError` when no task could be made.
    """
    start = time.perf_counter()
    check_path(out, "out")
    check_count(jobs, "jobs")
    g = load_grid(grid)
    _check_backend(backend, address)
    out = Path(out)
    with ExitStack() as stack:
        parallel = stack.enter_context(_backend(jobs, backend, address)) if jobs > 1 or backend != "loky" else None
        # Workers the build starts itself stop when it dies. A cluster's at an
        # address are not its own: they may run on other machines, where this
        # pid names another process or none (and a worker would exit at once).
        parent = os.getpid() if not address else None
        p = plan(g, probe=False)
        check_clipping(g, parallel, parent)   # in the workers, which then start on their shards warm
        _open_out(out)
        stack.enter_context(corpus.locked(out))
        if _prepare_out(out, g, p, resume, overwrite):
            manifest, chunks = corpus.load_manifest(out), _chunk_count(g, p)
            return BuildSummary(out, manifest["counts"]["tasks"], manifest["counts"]["rejected"],
                                len(manifest["shards"]), len(manifest["shards"]), time.perf_counter() - start,
                                manifest, chunks, chunks)
        skipped, skipped_chunks = _run_chunks(out, g, p, parallel, parent, progress, resume)
        manifest = finalize(out, g, p)
    summary = BuildSummary(out, manifest["counts"]["tasks"], manifest["counts"]["rejected"],
                           len(manifest["shards"]), skipped, time.perf_counter() - start, manifest,
                           _chunk_count(g, p), skipped_chunks)
    _check_rejects(out, g, manifest["counts"])
    return summary


def _check_rejects(out: Path, g: Grid, counts: dict) -> None:
    """Raise :class:`TaskFactoryError` (exit 1) when the build released no task,
    or when a family's rejected share exceeds the grid's ``max_reject_share``:
    a gold that fails that often says the family or its scenarios are wrong."""
    if counts["tasks"] == 0:
        reasons = counts["rejected_reasons"]
        top = f"; most common reason: {next(iter(reasons))}" if reasons else ""
        raise TaskFactoryError(f"the build released no tasks: all {counts['rejected']} were rejected (see "
                               f"{out / REJECTED}){top}")
    for method, rejected in sorted(counts["rejected_by_method"].items()):
        total = rejected + counts["by_method"].get(method, 0)
        if rejected > g.max_reject_share * total:
            top = "; ".join(f"{reason} ({k})" for reason, k in counts["rejected_reasons_by_method"][method].items())
            raise TaskFactoryError(
                f"{method}: {rejected} of {total} tasks ({100 * rejected / total:.1f} %) were rejected, more than "
                f"max_reject_share ({100 * g.max_reject_share:g} %); most common: {top}; all are in {out / REJECTED}")


def _run_chunks(out: Path, g: Grid, p: Plan, parallel, parent: int | None, progress: bool,
                resume: bool) -> tuple[int, int]:
    """Build every chunk not finished yet, through ``parallel`` (a joblib
    Parallel, whose workers stop when the process ``parent`` dies; None: one
    at a time here), and assemble each shard as its parts complete
    (:class:`ShardAssembly`); returns how many shards and chunks were
    finished already (``resume``)."""
    from joblib import delayed

    state = out / STATE
    ready = (lambda name: (state / corpus.part_rejects(name)).exists()) if resume else (lambda name: False)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=p.total, unit="task", desc=f"building {g.name}", dynamic_ncols=True)
    assemblies = []   # of the shards not finished yet
    assembly_of = {}  # part still to build -> its shard's assembly
    rows_of = {}      # part still to build -> its rows
    skip = set()      # parts not to build: finished, or of a finished shard
    skipped_shards = 0
    try:
        for split in g.splits():
            for shard, chunks in p.chunks(split):
                parts = [part for part, _ in chunks]
                if ready(shard) and (out / DATA / shard).exists():
                    skipped_shards += 1
                    skip.update(parts)
                    continue
                done = [part for part in parts if ready(part) and (state / part).exists()]
                skip.update(done)
                assemblies.append(ShardAssembly(out, g, shard, parts))
                assemblies[-1].add(*done)
                for part, rows in chunks:
                    if part not in done:
                        assembly_of[part], rows_of[part] = assemblies[-1], rows
        if bar:
            bar.update(p.total - sum(rows_of.values()))
        if assembly_of:
            calls = (delayed(build_chunk)(g, part, coords, str(out), parent, scenario_setting())
                     for part, coords in _chunk_jobs(g, p, skip))
            results = parallel(calls) if parallel is not None else (fn(*a, **k) for fn, a, k in calls)
            for part, _rows, _rej in results:
                assembly_of[part].add(part)
                if bar:
                    bar.update(rows_of[part])
    except BaseException:
        for assembly in assemblies:
            try:
                assembly.abort()
            except OSError:
                pass   # the build's own error is the one to report; --resume starts the shard again
        raise
    finally:
        if bar:
            bar.close()
    return skipped_shards, len(skip)


def _reason(line: str) -> str:
    """A reject's reason without its attempt number."""
    return line.split(": ", 1)[1] if line.startswith("attempt ") else line


def finalize(out: Path, g: Grid, p: Plan) -> dict:
    """Merge rejects, count the shards, write manifest and card, drop the state."""
    state = out / STATE
    names = {split: p.shard_names(split) for split in g.splits()}
    rejects, by_method, reasons, method_reasons = [], Counter(), Counter(), {}
    for split in g.splits():
        for name in names[split]:
            rej_path = state / corpus.part_rejects(name)
            if not (out / DATA / name).exists() or not rej_path.exists():
                raise TaskFactoryError(f"shard {name} is missing; run the build again with --resume")
            for line in rej_path.read_text(encoding="utf-8").splitlines():
                rejects.append(line)
                entry = json.loads(line)
                by_method[entry["method"]] += 1
                reasons[_reason(entry["reasons"][-1])] += 1
                method_reasons.setdefault(entry["method"], Counter())[_reason(entry["reasons"][-1])] += 1
    corpus.write_build_layout(out, g.sha256, g.normalized(), *_layout(g, p), finalizing=True)
    counts, shards = corpus.count_shards(out, names)
    counts["rejected"] = len(rejects)
    counts["rejected_by_method"] = by_method
    counts["rejected_reasons"] = dict(reasons.most_common(10))
    counts["rejected_reasons_by_method"] = {m: dict(c.most_common(3)) for m, c in sorted(method_reasons.items())}
    atomic_write_text(out / REJECTED, "".join(line + "\n" for line in rejects))
    manifest = {
        "format": corpus.FORMAT,
        "factory_version": __version__,
        "name": g.name,
        "grid_sha256": g.sha256,
        "grid": g.normalized(),
        "counts": counts,
        "shards": shards,
        "files": [corpus.file_entry(out, REJECTED, rows=len(rejects))],
    }
    corpus.write_manifest(out, manifest)
    shutil.rmtree(state)
    return manifest
