"""Building a corpus: shards in parallel, resumable, byte-identical.

Layout of a finished corpus::

    OUT/README.md                         dataset card
    OUT/manifest.json                     version, grid, counts, shards + sha256
    OUT/data/train-00000-of-00003.parquet
    OUT/data/test-00000-of-00001.parquet  when the grid has a split
    OUT/rejected.jsonl                    tasks no attempt could make

While a build runs, ``OUT/.build/`` holds its state: the plan, each shard as it
is written (renamed into ``data/`` only once complete) and each shard's
rejects. A killed build resumes with ``resume=True`` and ends byte-identical
to an uninterrupted one.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from ._version import __version__
from .card import render_card
from .errors import TaskFactoryError
from .grid import Coord, Grid, load_grid
from .plan import Plan, plan
from .shards import atomic_write_text, read_columns, sha256_file, write_shard
from .task import Dataset, data_key, record, reject_entry, release

STATE = ".build"
BACKENDS = ("loky", "threading", "dask", "ray")


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

    @property
    def tasks_per_second(self) -> float:
        return self.tasks / self.seconds if self.seconds > 0 else float("inf")


def _provenance(g: Grid) -> dict:
    return {"grid_name": g.name, "grid_sha256": g.sha256}


def build_shard(g: Grid, name: str, coords: list[Coord], out: str) -> tuple[str, int, int]:
    """Build one shard: its records go to ``data/NAME``, its rejects beside it
    in the build state. Returns ``(name, rows, rejects)``."""
    out = Path(out)
    state = out / STATE
    records, rejects = [], []
    last = None
    for c in coords:
        key = data_key(g, c)
        if last is None or last[0] != key:
            last = (key, release(g, c))
        ds = last[1]
        if isinstance(ds, Dataset):
            records.append(record(g, c, ds))
        else:
            rejects.append(reject_entry(g, c, ds))
    rej_path = state / f"{name}.rejects.jsonl"
    atomic_write_text(rej_path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rejects))
    tmp = state / name
    write_shard(tmp, records, _provenance(g))
    os.replace(tmp, out / "data" / name)
    return name, len(records), len(rejects)


def _shard_jobs(g: Grid, p: Plan):
    """(split, name, coords) of every shard, in order, without holding them all."""
    for split in g.splits():
        names = p.shard_names(split)
        it = g.tasks(split)
        for name in names:
            yield split, name, list(islice(it, g.shard_rows))


def _prepare_out(out: Path, g: Grid, resume: bool, overwrite: bool) -> bool:
    """Make the output folder ready; True when a finished build is already there."""
    state = out / STATE
    plan_file = state / "plan.json"
    want = {"grid_sha256": g.sha256, "factory_version": __version__}
    if out.exists() and not out.is_dir():
        raise TaskFactoryError(f"output {out} exists and is not a folder")
    if out.exists() and any(out.iterdir()):
        is_corpus = (out / "manifest.json").exists() or state.exists()
        if overwrite:
            if not is_corpus:
                raise TaskFactoryError(f"output folder {out} holds files that are not a taskfactory corpus; "
                                       "refusing to overwrite it")
            for child in ("data", STATE, "manifest.json", "README.md", "rejected.jsonl"):
                path = out / child
                if path.is_dir():
                    shutil.rmtree(path)
                elif path.exists():
                    path.unlink()
        elif resume:
            if plan_file.exists():
                saved = json.loads(plan_file.read_text())
                have = {k: saved.get(k) for k in want}
            elif (out / "manifest.json").exists():
                man = json.loads((out / "manifest.json").read_text())
                have = {"grid_sha256": man.get("grid_sha256"), "factory_version": man.get("factory_version")}
                if have == want:
                    return True
            else:
                raise TaskFactoryError(f"output folder {out} holds no build to resume (no {STATE}/plan.json)")
            if have != want:
                raise TaskFactoryError(f"output folder {out} was built from another grid or version "
                                       f"(grid sha256 {str(have.get('grid_sha256'))[:12]}, version "
                                       f"{have.get('factory_version')}); use --overwrite to replace it")
        else:
            raise TaskFactoryError(f"output folder {out} is not empty; use --resume to continue a build or "
                                   "--overwrite to replace it")
    (out / "data").mkdir(parents=True, exist_ok=True)
    state.mkdir(exist_ok=True)
    for stale in state.glob("*.parquet"):
        stale.unlink()
    for stale in state.glob(".*.partial"):
        stale.unlink()
    atomic_write_text(plan_file, json.dumps({**want, "grid": g.normalized()}, sort_keys=True, indent=1) + "\n")
    return False


def _check_backend(backend: str) -> None:
    """Fail early, before any output exists, on an unknown or missing backend."""
    if backend not in BACKENDS:
        raise TaskFactoryError(f"backend ({backend!r}) must be one of {', '.join(BACKENDS)}")
    needs = {"dask": ("dask.distributed", "dask[distributed]"), "ray": ("ray.util.joblib", "ray[default]")}
    if backend in needs:
        module, package = needs[backend]
        try:
            importlib.import_module(module)
        except ImportError:
            raise TaskFactoryError(f"backend '{backend}' needs {module}: pip install '{package}'") from None


@contextmanager
def _backend(jobs: int, backend: str, address: str | None):
    """joblib's configuration for ``backend``; dask and ray connect to
    ``address`` or start a local cluster of ``jobs`` workers."""
    import joblib

    _check_backend(backend)
    with ExitStack() as stack:
        if backend == "dask":
            from dask.distributed import Client

            client = Client(address) if address else Client(processes=True, n_workers=jobs, threads_per_worker=1)
            stack.callback(client.close)
        elif backend == "ray":
            import ray
            from ray.util.joblib import register_ray

            register_ray()
            if not ray.is_initialized():
                ray.init(**({"address": address} if address else {"num_cpus": jobs}))
                stack.callback(ray.shutdown)
        stack.enter_context(joblib.parallel_config(backend=backend, n_jobs=jobs))
        yield joblib.Parallel(return_as="generator_unordered", pre_dispatch="2*n_jobs")


def build(grid, out, jobs: int = 1, resume: bool = False, overwrite: bool = False, progress: bool = False,
          backend: str = "loky", address: str | None = None) -> BuildSummary:
    """Build the corpus of ``grid`` (a path or a mapping) into folder ``out``.

    ``jobs`` shards are built at once; ``resume`` continues a killed build,
    skipping finished shards; ``overwrite`` replaces an earlier corpus.
    The result is the same, byte for byte, for any ``jobs`` and backend.
    """
    from joblib import delayed

    start = time.perf_counter()
    g = load_grid(grid)
    if jobs < 1:
        raise TaskFactoryError(f"jobs ({jobs}) must be at least 1")
    _check_backend(backend)
    p = plan(g)
    out = Path(out)
    if _prepare_out(out, g, resume, overwrite):
        manifest = json.loads((out / "manifest.json").read_text())
        return BuildSummary(out, manifest["counts"]["tasks"], manifest["counts"]["rejected"],
                            len(manifest["shards"]), len(manifest["shards"]), time.perf_counter() - start, manifest)
    done = {path.name for path in (out / "data").glob("*.parquet")} if resume else set()
    done = {n for n in done if (out / STATE / f"{n}.rejects.jsonl").exists()}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=p.total, unit="task", desc=f"building {g.name}", dynamic_ncols=True)
    skipped = 0
    todo = []
    for split, name, coords in _shard_jobs(g, p):
        if name in done:
            skipped += 1
            if bar:
                bar.update(len(coords))
            continue
        todo.append((name, len(coords)))
    sizes = dict(todo)
    if todo:
        wanted = set(sizes)
        calls = (delayed(build_shard)(g, name, coords, str(out))
                 for _, name, coords in _shard_jobs(g, p) if name in wanted)
        with ExitStack() as stack:
            if jobs > 1 or backend != "loky":
                results = stack.enter_context(_backend(jobs, backend, address))(calls)
            else:
                results = (fn(*a, **k) for fn, a, k in calls)
            for name, _rows, _rej in results:
                if bar:
                    bar.update(sizes[name])
    if bar:
        bar.close()
    manifest = finalize(out, g, p)
    return BuildSummary(out, manifest["counts"]["tasks"], manifest["counts"]["rejected"], len(manifest["shards"]),
                        skipped, time.perf_counter() - start, manifest)


def count_shards(out: Path, names_by_split: dict) -> tuple[dict, list]:
    """Counts over the shards ``data/NAME`` (read column by column) and their
    manifest entries."""
    shards = []
    counts = {"tasks": 0, "datasets": 0, "traps": 0, "by_split": Counter(), "by_method": Counter(),
              "by_effect": Counter(), "by_prompt_style": Counter(), "by_perturbation": Counter(),
              "traps_by_method": Counter(), "naive_by_method": Counter(), "traps_by_perturbation": Counter()}
    last_data = None
    for split, names in names_by_split.items():
        for name in names:
            path = out / "data" / name
            t = read_columns(path, ["data_id", "method", "effect", "prompt_style", "perturbation", "trap",
                                    "naive_method"]).to_pydict()
            rows = len(t["data_id"])
            for i in range(rows):
                if t["data_id"][i] != last_data:
                    counts["datasets"] += 1
                    last_data = t["data_id"][i]
                m = t["method"][i]
                counts["by_method"][m] += 1
                counts["by_effect"][t["effect"][i]] += 1
                counts["by_prompt_style"][t["prompt_style"][i]] += 1
                counts["by_perturbation"][t["perturbation"][i]] += 1
                if t["naive_method"][i] is not None:
                    counts["naive_by_method"][m] += 1
                if t["trap"][i]:
                    counts["traps"] += 1
                    counts["traps_by_method"][m] += 1
                    counts["traps_by_perturbation"][t["perturbation"][i]] += 1
            counts["tasks"] += rows
            counts["by_split"][split] += rows
            shards.append({"split": split, "path": f"data/{name}", "rows": rows, "bytes": path.stat().st_size,
                           "sha256": sha256_file(path)})
    return counts, shards


def write_manifest(out: Path, manifest: dict) -> None:
    """Write the dataset card, then ``manifest.json`` (last: its presence means done)."""
    manifest["counts"] = {k: (dict(sorted(v.items())) if isinstance(v, Counter) else v)
                          for k, v in manifest["counts"].items()}
    atomic_write_text(out / "README.md", render_card(manifest))
    atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=1, sort_keys=False) + "\n")


def finalize(out: Path, g: Grid, p: Plan) -> dict:
    """Merge rejects, count the shards, write manifest and card, drop the state."""
    state = out / STATE
    names = {split: p.shard_names(split) for split in g.splits()}
    rejects, by_method = [], Counter()
    for split in g.splits():
        for name in names[split]:
            rej_path = state / f"{name}.rejects.jsonl"
            if not (out / "data" / name).exists() or not rej_path.exists():
                raise TaskFactoryError(f"shard {name} is missing; run the build again with --resume")
            for line in rej_path.read_text().splitlines():
                rejects.append(line)
                by_method[json.loads(line)["method"]] += 1
    counts, shards = count_shards(out, names)
    counts["rejected"] = len(rejects)
    counts["rejected_by_method"] = by_method
    atomic_write_text(out / "rejected.jsonl", "".join(line + "\n" for line in rejects))
    manifest = {
        "format": "taskfactory-corpus/1",
        "factory_version": __version__,
        "name": g.name,
        "grid_sha256": g.sha256,
        "grid": g.normalized(),
        "counts": counts,
        "shards": shards,
        "rejected": {"path": "rejected.jsonl", "rows": len(rejects), "sha256": sha256_file(out / "rejected.jsonl")},
    }
    write_manifest(out, manifest)
    shutil.rmtree(state)
    return manifest
