"""Building a corpus: layout, determinism, resume after SIGKILL, rejects."""

import hashlib
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory import registry
from taskfactory.cli import main
from taskfactory.errors import DataError
from taskfactory.make.columns import FIELDS
from taskfactory.make.task import record

from conftest import PINNED, dataset, small_grid
from toys import faulty, process_env
from toys.faulty import ToyBug, ToyWaits

GRID = {"name": "unit", "seed": 3, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [40, 200],
        "seeds": 2, "shard_rows": 20,
        "split": {"test": 0.3, "seed": 1}}


def tree_bytes(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("c") / "corpus"
    summary = tf.build(GRID, out)
    return out, summary


def test_layout_manifest_and_schema(corpus):
    out, summary = corpus
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["README.md", "data/test-00000-of-00003.parquet", "data/test-00001-of-00003.parquet",
                     "data/test-00002-of-00003.parquet"] + [f"data/train-{i:05d}-of-00005.parquet" for i in range(5)] \
        + ["manifest.json", "rejected.jsonl"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["tasks"] == summary.tasks == 6 * 2 * 3 * 2 * 2
    assert manifest["counts"]["datasets"] == summary.tasks // 2
    assert manifest["counts"]["by_split"] == {"test": 48, "train": 96}
    for shard in manifest["shards"]:
        data = (out / shard["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == shard["sha256"] and len(data) == shard["bytes"]
        pf = pq.ParquetFile(out / shard["path"])
        assert pf.metadata.num_rows == shard["rows"]
        assert pf.schema_arrow.names == [f[0] for f in FIELDS]
        assert pf.metadata.row_group(0).column(0).compression == "ZSTD"
        assert b"created_by" not in json.dumps(pf.schema_arrow.metadata[b"taskfactory"].decode()).encode()
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "path: data/train-*.parquet" in card and "path: data/test-*.parquet" in card


def test_guided_and_basic_share_the_dataset(corpus):
    out, _ = corpus
    rows = pq.read_table(out / "data/train-00000-of-00005.parquet").to_pylist()
    basic, guided = rows[0], rows[1]
    assert basic["data_id"] == guided["data_id"] and basic["task_id"] != guided["task_id"]
    assert basic["data_csv"] == guided["data_csv"] and basic["gold_p"] == guided["gold_p"]
    assert (basic["prompt_style"], guided["prompt_style"]) == ("basic", "guided")
    assert "Hints about these data" in guided["prompt"] and "Hints" not in basic["prompt"]
    assert basic["task_id"].startswith("welch_t-") and len(basic["task_id"]) == len("welch_t-") + 12


def test_rebuild_is_byte_identical_for_any_jobs(corpus, tmp_path):
    out, _ = corpus
    tf.build(GRID, tmp_path / "again", jobs=2)
    assert tree_bytes(tmp_path / "again") == tree_bytes(out)


def test_sigkill_then_resume_is_byte_identical(corpus, tmp_path):
    out, _ = corpus
    grid = tmp_path / "unit.yaml"
    grid.write_text(json.dumps(GRID))
    target = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "taskfactory.cli", "build", str(grid), "-o", str(target),
                             "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not list((target / "data").glob("*.parquet")):
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (target / "manifest.json").exists(), "the build finished before it could be killed"
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(target), "--no-progress"])
    assert result.exit_code == 2 and "is not empty; use --resume" in result.output
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(target), "--resume", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "resumed" in result.output and " 0 resumed" not in result.output
    assert tree_bytes(target) == tree_bytes(out)


def test_resume_refuses_another_grid(corpus, tmp_path):
    out, _ = corpus
    target = tmp_path / "c"
    tf.build(GRID, target)
    with pytest.raises(tf.TaskFactoryError, match="was built from another grid"):
        tf.build({**GRID, "seed": 4}, target, resume=True)
    again = tf.build(GRID, target, resume=True)
    assert again.tasks == 144 and tree_bytes(target) == tree_bytes(out)


def test_overwrite_refuses_a_folder_that_is_not_a_corpus(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.build(GRID, tmp_path, overwrite=True)
    assert str(err.value) == (f"output folder {tmp_path} is not a taskfactory corpus (no manifest.json or "
                              ".build/layout.json); refusing to touch it")
    assert err.value.exit_code == 2 and (tmp_path / "notes.txt").read_text() == "mine"


def test_overwrite_deletes_only_what_the_corpus_lists(corpus, tmp_path):
    out, _ = corpus
    target = tmp_path / "c"
    tf.build({**GRID, "seed": 4}, target)
    before = tree_bytes(target)
    tf.build(GRID, target, overwrite=True)
    assert tree_bytes(target) == tree_bytes(out) and before != tree_bytes(out)


def test_a_second_build_of_a_locked_folder_is_refused(tmp_path):
    from taskfactory.store.corpus import locked

    target = tmp_path / "c"
    target.mkdir()
    with locked(target):
        with pytest.raises(tf.TaskFactoryError) as err:
            tf.build(GRID, target)
    assert str(err.value) == f"output folder {target} is being written by another taskfactory build; wait for it to finish"
    assert list(target.iterdir()) == []


def test_an_output_path_below_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(main, ["build", json_grid(tmp_path), "-o", str(tmp_path / "file" / "c"), "--no-progress"])
    assert result.exit_code == 2 and result.output == f"error: cannot create output folder {tmp_path}/file/c: Not a directory\n"


def with_analyse(family, analyse):
    """``family`` with its canonical test replaced by ``analyse(condition, data)``."""
    return type("Patched", (type(family),), {"analyse": lambda self, condition, data: analyse(condition, data)})()


def json_grid(folder: Path, grid: dict = GRID) -> str:
    path = folder / "g.yaml"
    path.write_text(json.dumps(grid))
    return str(path)


def test_failing_tasks_are_retried_then_rejected(tmp_path, monkeypatch):
    fam = registry.get_family("welch_t")
    calls = []

    def analyse(condition, data):
        calls.append(len(data))
        if len(data) == 40:
            raise DataError("degenerate on purpose")
        return fam.analyse(condition, data)

    monkeypatch.setitem(registry._REGISTRY, "welch_t", with_analyse(fam, analyse))
    grid = {**GRID, "split": None, "shard_rows": 1000, "max_reject_share": 0.5}
    summary = tf.build(grid, tmp_path / "c")
    rejected = [json.loads(line) for line in (tmp_path / "c/rejected.jsonl").read_text().splitlines()]
    assert summary.rejected == len(rejected) == 72 and summary.tasks == 72
    assert {r["n"] for r in rejected} == {40}
    assert rejected[0]["reasons"] == [f"attempt {k}: DataError: degenerate on purpose" for k in range(5)]
    # Each dataset is analysed once for both styles; an attempt whose data the
    # plausible range clipped too much is rejected before the test runs.
    analysed = sum(reason.endswith("degenerate on purpose") for r in rejected for reason in r["reasons"])
    assert calls.count(40) == analysed // 2 and analysed > 0.95 * 72 * 5
    manifest = json.loads((tmp_path / "c/manifest.json").read_text())
    assert manifest["counts"]["rejected_by_method"] == {"welch_t": 72}


def test_cli_build_then_inspect(corpus):
    out, _ = corpus
    result = CliRunner().invoke(main, ["inspect", str(out), "--rows", "3"])
    assert result.exit_code == 0
    assert "AGENT SEES" in result.output and "GRADER SEES" in result.output
    assert "P_VALUE: <a number" in result.output
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("--- ") and "(first 3 of" in line)
    assert lines[start + 5].startswith("=====")  # the CSV header and three rows, then the grader's view
    first = pq.read_table(out / "data/train-00000-of-00005.parquet").to_pylist()[0]
    by_id = CliRunner().invoke(main, ["inspect", str(out), first["task_id"], "--json"])
    assert json.loads(by_id.output)["gold_p"] == first["gold_p"]
    missing = CliRunner().invoke(main, ["inspect", str(out), "welch_t-000000000000"])
    assert missing.exit_code == 2 and missing.output == f"error: {out}: holds no task 'welch_t-000000000000'\n"
    typo = CliRunner().invoke(main, ["inspect", str(out), "--method", "welch"])
    assert typo.exit_code == 2 and typo.output == f"error: {out}: holds no task of method 'welch' (did you mean 'welch_t'?)\n"
    absent = CliRunner().invoke(main, ["inspect", str(out), "--method", "pearson"])
    assert absent.exit_code == 2 and absent.output == f"error: {out}: holds no task of method 'pearson'\n"


def test_dask_backend_gives_the_same_bytes(corpus, tmp_path):
    pytest.importorskip("dask.distributed")
    out, _ = corpus
    tf.build(GRID, tmp_path / "dask", jobs=2, backend="dask")
    assert tree_bytes(tmp_path / "dask") == tree_bytes(out)


def test_ray_backend_gives_the_same_bytes(corpus, tmp_path):
    pytest.importorskip("ray", reason="ray is an optional extra, not installed: pip install 'ray[default]'")
    out, _ = corpus
    result = CliRunner().invoke(main, ["build", json_grid(tmp_path), "-o", str(tmp_path / "ray"), "--jobs", "2",
                                       "--backend", "ray", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert tree_bytes(tmp_path / "ray") == tree_bytes(out)


def test_a_missing_backend_fails_before_writing(tmp_path, monkeypatch):
    for name in ("ray", "ray.util", "ray.util.joblib"):
        monkeypatch.setitem(sys.modules, name, None)  # an import of a None entry raises ImportError
    grid = tmp_path / "g.yaml"
    grid.write_text(json.dumps(GRID))
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(tmp_path / "c"), "--backend", "ray"])
    assert result.exit_code == 2
    assert result.output == "error: backend 'ray' needs ray.util.joblib: pip install 'ray[default]'\n"
    assert not (tmp_path / "c").exists()


def _children(pid: int) -> set[int]:
    """Live processes whose parent is ``pid`` (read from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_workers_stop_when_the_build_is_killed(tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"seed": 1, "methods": ["welch_t"], "n": [20000], "seeds": 100, "shard_rows": 4}))
    out = tmp_path / "c"
    code = "import sys, taskfactory as tf; tf.build(sys.argv[1], sys.argv[2], jobs=2)"
    proc = subprocess.Popen([sys.executable, "-c", code, str(grid), str(out)])
    try:
        deadline = time.monotonic() + 60
        workers = set()
        while time.monotonic() < deadline and not any((out / "data").glob("*.parquet")):
            workers |= _children(proc.pid)
            time.sleep(0.05)
        workers |= _children(proc.pid)
        # the worker processes (loky's resource trackers end on their own once their pipes close)
        workers = {pid for pid in workers if "LokyProcess" in _cmdline(pid)}
        assert len(workers) == 2 and proc.poll() is None, "the build finished before it could be killed"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(map(_alive, workers)):
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)]


#: How long a test waits on a build's processes before it takes them for stuck
#: (a bound on a hang, never reached by a build that works).
STUCK_SECONDS = 120


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="awaits the workers' exit on their pidfds (Linux)")
def test_workers_stop_when_the_build_is_killed_while_they_probe(tmp_path, monkeypatch):
    """Each worker holds in its first draw of the clipping probe until the test
    lets it go (toys.faulty.ToyWaits), so the build is killed with both workers
    in the probe however busy the machine."""
    env = process_env(monkeypatch, tmp_path, ToyWaits())
    env[faulty.SOCKET] = f"taskfactory-test-{os.getpid()}-{tmp_path.name}"
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"seed": 1, "methods": ["toy_waits"], "n": [30]}))   # two scenarios: two probe calls
    code = "import sys, taskfactory as tf; tf.build(sys.argv[1], sys.argv[2], jobs=2)"
    with ExitStack() as cleanup:
        server = cleanup.enter_context(socket.socket(socket.AF_UNIX))
        server.bind("\0" + env[faulty.SOCKET])
        server.listen(2)
        proc = subprocess.Popen([sys.executable, "-c", code, str(grid), str(tmp_path / "c")], env=env)
        cleanup.callback(proc.wait)
        cleanup.callback(proc.kill)
        build = os.pidfd_open(proc.pid)
        cleanup.callback(os.close, build)
        probing = {}   # pid -> pidfd of each worker held in the probe
        for _ in range(2):
            ready = select.select([server, build], [], [], STUCK_SECONDS)[0]
            assert server in ready, "the build ended before its workers probed" if ready else "no worker probed"
            conn = cleanup.enter_context(server.accept()[0])
            with conn.makefile() as lines:
                pid = int(lines.readline())
            probing[pid] = os.pidfd_open(pid)
            cleanup.callback(os.close, probing[pid])
            cleanup.callback(_end, probing[pid])   # should the test fail, the worker is stopped all the same
        assert probing.keys() <= _children(proc.pid) and all("LokyProcess" in _cmdline(pid) for pid in probing)
        proc.kill()
        proc.wait()
        for pid, fd in probing.items():
            assert select.select([fd], [], [], STUCK_SECONDS)[0], f"worker {pid} outlived the build"


def _end(pidfd: int) -> None:
    """Kill the process of ``pidfd``, unless it is gone already."""
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_a_bug_in_a_familys_generate_stops_plan_and_build_with_its_traceback(tmp_path, monkeypatch):
    """The clipping probe takes only a data problem for the scenario's fault,
    in plan (here) and in a build's workers: a bug is a bug."""
    env = process_env(monkeypatch, tmp_path, ToyBug())
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"seed": 1, "methods": ["toy_bug"], "n": [30]}))
    out = tmp_path / "c"
    for args in (["plan", str(grid)], ["build", str(grid), "-o", str(out), "--jobs", "2", "--no-progress"]):
        done = subprocess.run([sys.executable, "-m", "taskfactory.cli", *args], env=env, capture_output=True,
                              text=True)
        lines = done.stderr.splitlines()
        assert done.returncode == 1 and "Traceback (most recent call last):" in lines, done.stderr
        assert lines[-1] == "TypeError: object of type 'int' has no len()", done.stderr
        assert not [line for line in lines if line.startswith("error:")], done.stderr
    assert not out.exists()


def test_a_build_that_releases_nothing_fails(tmp_path, monkeypatch):
    def analyse(condition, data):
        raise DataError("degenerate on purpose")

    fam = registry.get_family("welch_t")
    monkeypatch.setitem(registry._REGISTRY, "welch_t", with_analyse(fam, analyse))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": ["bp_trial"]},
                                "n": [40], "effects": ["medium"]}))
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"error: the build released no tasks: all 2 were rejected (see {tmp_path / 'c' / 'rejected.jsonl'}); "
        "most common reason: DataError: degenerate on purpose")


def test_large_tasks_get_fewer_rows_per_shard(tmp_path, monkeypatch):
    planning = importlib.import_module("taskfactory.store.plan")

    grid = {"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": ["bp_trial"]}, "n": [1000000],
            "shard_rows": 1000, "seeds": 20}
    p = planning.plan(grid)
    per_task = planning.estimate_task_bytes("welch_t", "bp_trial", 1000000)
    assert per_task == 1000000 * (6 * planning.CELL_BYTES + 1) + planning.TASK_TEXT_BYTES   # 6 columns
    assert planning.SHARD_TEXT_BYTES == planning.ZSTD_RATIO * planning.SHARD_BYTES == 256 << 20
    assert p.rows_per_shard("train") == planning.SHARD_TEXT_BYTES // per_task == 7
    # the text bound sets 18 shards for 120 tasks of one size: evened out to 6 or 7 tasks each, not 17 of 7 and 1
    assert p.shard_counts("train") == [7, 6, 7] * 6
    # A shard budget of three tasks of 200 rows splits 12 tasks into 4 shards.
    monkeypatch.setattr(planning, "SHARD_TEXT_BYTES", 3 * planning.estimate_task_bytes("welch_t", "bp_trial", 200))
    small = {**grid, "n": [200], "seeds": 2}
    summary = tf.build(small, tmp_path / "c")
    rows = [entry["rows"] for entry in summary.manifest["shards"]]
    assert rows == [3, 3, 3, 3]


def test_shards_are_filled_to_the_size_bound_in_build_order_and_evened_out(monkeypatch):
    """Tasks fill shards in build order up to the text bound and the grid's
    shard_rows; when the text bound sets the number of shards, they are
    evened out to as many holding about as much text each."""
    planning = importlib.import_module("taskfactory.store.plan")

    grid = {"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": ["bp_trial"]}, "n": [40, 2000],
            "effects": ["medium"], "perturbations": ["none"], "seeds": 3, "shard_rows": 1000}
    small, large = (planning.estimate_task_bytes("welch_t", "bp_trial", n) for n in (30, 2000))
    assert (small, large) == (30 * 37 + 16_000, 2000 * 37 + 16_000)   # 6 columns of 6 bytes and a newline
    # 6 small tasks, then 6 large ones. At most 4 large tasks of text: 6 small and 2 large, then 4 large;
    # half the text is 3.8 large tasks, so [6 small + 1 large, 5 large] would break the bound.
    monkeypatch.setattr(planning, "SHARD_TEXT_BYTES", 4 * large)
    assert planning.plan(grid, probe=False).shard_counts("train") == [8, 4]
    monkeypatch.setattr(planning, "SHARD_TEXT_BYTES", 2 * large)   # 6 small and 1 large exceed it
    assert planning.plan(grid, probe=False).shard_counts("train") == [6, 2, 2, 2]
    # 12 tasks of one size, at most 5 a shard by the text: [5, 5, 2] evens out to [4, 4, 4].
    monkeypatch.setattr(planning, "SHARD_TEXT_BYTES", 5 * small + 1)
    assert planning.plan({**grid, "n": [40], "seeds": 6}, probe=False).shard_counts("train") == [4, 4, 4]
    # shard_rows is kept as it is: shards of 5 tasks, the last one shorter.
    monkeypatch.setattr(planning, "SHARD_TEXT_BYTES", 256 << 20)
    assert planning.plan({**grid, "shard_rows": 5}, probe=False).shard_counts("train") == [5, 5, 2]


def test_a_shard_is_built_as_chunks_that_never_straddle_two_shards(monkeypatch):
    planning = importlib.import_module("taskfactory.store.plan")

    monkeypatch.setattr(planning, "CHUNK_ROWS", 10)
    p = planning.plan({**GRID, "shard_rows": 1000}, probe=False)
    assert (p.shard_counts("train"), p.shard_counts("test")) == ([96], [48])
    (shard, parts), = p.chunks("test")
    assert shard == "test-00000-of-00001.parquet"
    assert parts == [(f"test-00000-of-00001-part-{j:05d}.parquet", 10) for j in range(4)] + \
        [("test-00000-of-00001-part-00004.parquet", 8)]
    assert (p.chunk_count("train"), p.chunk_count("test"), p.parallel(2)) == (10, 5, 2)
    assert "test: 48 tasks in 1 shard(s) of up to 48 rows (a shard: at most shard_rows 1000 tasks and about 64 MB " \
           "of Parquet), built as 5 chunk(s) of up to 10 rows" in planning.format_plan(p).splitlines()


def test_plan_warns_when_a_worker_would_need_more_memory_than_the_budget(monkeypatch):
    planning = importlib.import_module("taskfactory.store.plan")
    monkeypatch.setattr(planning, "timed_costs", lambda g, methods: {m: (0.01, 1e-6) for m in methods})  # not timed here

    p = planning.plan({"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": ["bp_trial"]},
                       "n": [1000000]})
    need = planning.DATASET_COPIES * planning.estimate_task_bytes("welch_t", "bp_trial", 1000000) + planning.ROW_GROUP_BYTES
    assert p.worker_bytes() == need
    assert p.memory_warning(2) is None and "warning" not in planning.format_plan(p, 2)
    monkeypatch.setattr(planning, "WORKER_MEMORY_BYTES", 256 << 20)
    assert planning.format_plan(p, 2).splitlines()[-1] == (
        f"warning: the largest datasets need about {need / 2**30:.1f} GB of memory per worker "
        f"({2 * need / 2**30:.1f} GB with --jobs 2); more than the 0.2 GB budget per worker, so lower n "
        "or --jobs if the machine has less")


def test_the_build_time_estimate_times_each_family_on_the_cells_the_grid_gives_it(monkeypatch):
    """The sample releases each family's datasets only at the N and
    perturbations of its own cells (a question without a dataset takes none),
    and the estimate adds up its cost per dataset over the grid."""
    planning = importlib.import_module("taskfactory.store.plan")
    p = planning.plan({"seed": 1, "methods": ["welch_t", "wilson_ci", "fisher_exact"], "n": [60, 300],
                       "perturbations": ["none", "missing"], "effects": ["null"], "seeds": 3,
                       "exclude": [{"method": "fisher_exact", "n": 300},
                                   {"method": "wilson_ci", "perturbation": "missing"}]})
    estimating = importlib.import_module("taskfactory.store.estimate")
    costs = estimating.timed_costs(p.grid, ("fisher_exact", "welch_t", "wilson_ci"))
    assert sorted(costs) == ["fisher_exact", "welch_t", "wilson_ci"]
    assert all(fixed >= 0 and per_row >= 0 and fixed + 300 * per_row > 0 for fixed, per_row in costs.values())
    assert costs["wilson_ci"][1] == 0.0 and costs["fisher_exact"][1] == 0.0   # one N (no dataset; excluded)
    c, ds = dataset(small_grid("welch_t", n=40), "welch_t", "bp_trial", 40, "null")
    assert 0 < estimating._writing_seconds_per_char([record(small_grid("welch_t", n=40), c, ds)]) < 1e-6
    # The cost of a dataset includes writing its records' text: at a second a
    # character, the tens of thousands of characters of a welch_t dataset's two
    # records outweigh any noise in the timing.
    monkeypatch.setattr(estimating, "_writing_seconds_per_char", lambda records: 1.0)
    slow = estimating.timed_costs(p.grid, ("welch_t",))["welch_t"]
    assert slow[0] + 40 * slow[1] - (costs["welch_t"][0] + 40 * costs["welch_t"][1]) > 10_000
    monkeypatch.setattr(planning, "timed_costs", lambda g, methods: {m: (0.01, 1e-5) for m in methods})
    work = sum(d * (0.01 + 1e-5 * n) for (m, n), d in p.datasets_by_size.items() if m != "wilson_ci") \
        + sum(d * 0.01 for (m, _), d in p.datasets_by_size.items() if m == "wilson_ci")
    assert p.estimate_seconds(1) == pytest.approx(estimating.STARTUP_SECONDS + work)


def test_an_output_folder_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(importlib.import_module("taskfactory.store.build").tempfile, "TemporaryFile", refuse)
    result = CliRunner().invoke(main, ["build", json_grid(tmp_path), "-o", str(tmp_path / "c")])
    assert result.exit_code == 2
    assert result.output == f"error: output folder {tmp_path / 'c'} is not writable: Permission denied\n"
    assert list((tmp_path / "c").iterdir()) == []


def test_a_programming_error_in_a_family_stops_the_build_with_its_traceback(tmp_path, monkeypatch):
    fam = registry.get_family("welch_t")

    def analyse(condition, data):
        return {}["no such key"]

    monkeypatch.setitem(registry._REGISTRY, "welch_t", with_analyse(fam, analyse))
    result = CliRunner().invoke(main, ["build", json_grid(tmp_path), "-o", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert isinstance(result.exception, KeyError) and result.exception.args == ("no such key",)
    assert not (tmp_path / "c" / "manifest.json").exists()


def test_a_family_that_rejects_too_many_tasks_fails_the_build(tmp_path, monkeypatch):
    fam = registry.get_family("welch_t")

    def analyse(condition, data):
        if condition.scenario == "wage_training":  # one scenario of six: a sixth of the tasks
            raise DataError("unlucky scenario")
        return fam.analyse(condition, data)

    monkeypatch.setitem(registry._REGISTRY, "welch_t", with_analyse(fam, analyse))
    grid = {"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [40],
            "effects": ["medium"], "seeds": 10, "prompt_styles": ["basic"]}
    result = CliRunner().invoke(main, ["build", json_grid(tmp_path, grid), "-o", str(tmp_path / "c")])
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert result.exit_code == 1 and manifest["counts"]["rejected_by_method"] == {"welch_t": 10}
    assert result.output.splitlines()[-1] == (
        "error: welch_t: 10 of 60 tasks (16.7 %) were rejected, more than max_reject_share (2 %); most common: "
        f"DataError: unlucky scenario (10); all are in {tmp_path / 'c' / 'rejected.jsonl'}")
    assert len((tmp_path / "c" / "rejected.jsonl").read_text().splitlines()) == 10


def test_workers_read_the_scenarios_of_the_build_that_runs_them(tmp_path, monkeypatch):
    """A worker kept from an earlier build of this process reads the scenario folder of the build at hand."""
    import shutil

    from taskfactory.store.corpus import iter_records
    from taskfactory.scenarios import scenario_root

    root = tmp_path / "scenarios"
    shutil.copytree(scenario_root(), root)
    path = root / "two_groups.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Does the urinary albumin", "Does the URINARY albumin"),
                    encoding="utf-8")
    grid = {**GRID, "n": [40], "scenarios": {"welch_t": ["bp_trial"]}, "perturbations": ["none"]}
    questions = {}
    for name, folder in (("shipped", None), ("edited", root), ("shipped again", None)):
        if folder is None:
            monkeypatch.delenv("TASKFACTORY_SCENARIOS", raising=False)
        else:
            monkeypatch.setenv("TASKFACTORY_SCENARIOS", str(folder))
        tf.build(grid, tmp_path / name, jobs=2)
        questions[name] = {rec["question"][:24] for rec in iter_records(tmp_path / name, columns=["question"])}
    assert questions == {"shipped": {"Does the urinary albumin"}, "edited": {"Does the URINARY albumin"},
                         "shipped again": {"Does the urinary albumin"}}
    monkeypatch.setenv("TASKFACTORY_SCENARIOS", str(root))
    tf.build(grid, tmp_path / "edited again", jobs=2)   # the workers last worked under the edited scenarios
    monkeypatch.delenv("TASKFACTORY_SCENARIOS")
    assert tf.verify(tmp_path / "shipped", jobs=2).ok


def test_the_progress_bar_is_left_out_of_logs(tmp_path):
    """Without a terminal (a log file, a pipe) the build writes no bar and no carriage returns."""
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({**GRID, "n": [40], "perturbations": ["none"]}))
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "\r" not in result.output and "building" not in result.output
    assert result.output.startswith("built ") and result.output.count("\n") == 1
    shown = CliRunner().invoke(main, ["build", str(grid), "-o", str(tmp_path / "d"), "--progress"])
    assert shown.exit_code == 0 and "\r" in shown.output and "building unit" in shown.output


def test_build_json_summary(tmp_path):
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({**GRID, "n": [40], "perturbations": ["none"]}))
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(tmp_path / "c"), "--json"])
    summary = json.loads(result.output)
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert result.exit_code == 0 and summary["tasks"] == manifest["counts"]["tasks"] > 0
    assert {k: summary[k] for k in ("out", "shards", "resumed_shards", "chunks", "resumed_chunks", "rejected",
                                    "traps")} == {
        "out": str(tmp_path / "c"), "shards": len(manifest["shards"]), "resumed_shards": 0, "chunks": 5,
        "resumed_chunks": 0, "rejected": manifest["counts"]["rejected"], "traps": manifest["counts"]["traps"]}


def test_the_dictionary_and_the_perturbation_are_queryable_without_json(corpus):
    """data_dictionary and perturbation_detail are Arrow types a reader filters on as they are."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    out, _ = corpus
    table = ds.dataset(out / "data").to_table(columns=["perturbation", "perturbation_detail", "data_dictionary",
                                                     "data_csv"])
    kinds = pc.struct_field(table["perturbation_detail"], "kind")
    assert kinds.to_pylist() == table["perturbation"].to_pylist()
    blanks = pc.struct_field(pc.struct_field(table["perturbation_detail"], "missing"), "cells").to_pylist()
    assert [b is not None for b in blanks] == ["missing" in p for p in table["perturbation"].to_pylist()]
    names = pc.struct_field(pc.list_flatten(table["data_dictionary"]), "name").to_pylist()
    headers = [name for csv in table["data_csv"].to_pylist() for name in csv.split("\n", 1)[0].split(",")]
    assert names == headers


# --- few shards, many chunks ---------------------------------------------------------

#: The unit grid in one shard per split, built as chunks of 10 tasks (10 of train, 5 of test).
CHUNKY = {**GRID, "shard_rows": 1000}


@pytest.fixture
def chunk_rows_10(monkeypatch):
    monkeypatch.setattr(importlib.import_module("taskfactory.store.plan"), "CHUNK_ROWS", 10)


@pytest.fixture(scope="module")
def chunky(tmp_path_factory):
    """CHUNKY built with one job, as the reference, and as one chunk per shard."""
    planning = importlib.import_module("taskfactory.store.plan")
    folder = tmp_path_factory.mktemp("chunky")
    whole = tf.build(CHUNKY, folder / "whole")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(planning, "CHUNK_ROWS", 10)
        summary = tf.build(CHUNKY, folder / "chunked")
    return folder / "chunked", summary, folder / "whole", whole


def test_a_grid_of_few_shards_is_built_as_many_chunks_with_the_same_rows(chunky):
    out, summary, whole, whole_summary = chunky
    assert (summary.shards, summary.chunks, whole_summary.shards, whole_summary.chunks) == (2, 15, 2, 2)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["test-00000-of-00001.parquet",
                                                                "train-00000-of-00001.parquet"]
    for name, rows in (("train-00000-of-00001.parquet", 96), ("test-00000-of-00001.parquet", 48)):
        chunked = pq.ParquetFile(out / "data" / name)
        # each chunk's part is one row group of the shard; the rows are those of a shard built whole
        assert [chunked.metadata.row_group(i).num_rows for i in range(chunked.num_row_groups)] == \
            [10] * (rows // 10) + [rows % 10]
        assert chunked.read().equals(pq.read_table(whole / "data" / name))
    assert summary.manifest["counts"] == whole_summary.manifest["counts"]
    assert not (out / ".build").exists()


@pytest.mark.parametrize("jobs,backend", [(2, "loky"), (2, "threading"), (2, "dask")])
def test_chunks_give_the_same_bytes_for_any_jobs_and_backend(chunky, chunk_rows_10, tmp_path, jobs, backend):
    if backend == "dask":
        pytest.importorskip("dask.distributed")
    out, *_ = chunky
    tf.build(CHUNKY, tmp_path / "c", jobs=jobs, backend=backend)
    assert tree_bytes(tmp_path / "c") == tree_bytes(out)


def _fail_after(monkeypatch, calls: int) -> list:
    """Make build_chunk fail (as a killed worker would) after ``calls`` chunks; returns the parts built."""
    building = importlib.import_module("taskfactory.store.build")
    real, built = building.build_chunk, []

    def chunk(g, part, *args, **kwargs):
        if len(built) == calls:
            raise KeyboardInterrupt("stopped on purpose")
        built.append(part)
        return real(g, part, *args, **kwargs)

    monkeypatch.setattr(building, "build_chunk", chunk)
    return built


def test_resume_reuses_the_finished_parts_of_an_unfinished_shard(chunky, chunk_rows_10, tmp_path, monkeypatch):
    out, *_ = chunky
    target = tmp_path / "c"
    built = _fail_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        tf.build(CHUNKY, target)
    state = target / ".build"
    parts = [f"train-00000-of-00001-part-{j:05d}.parquet" for j in range(3)]
    assert built == parts and list((target / "data").iterdir()) == []
    assert sorted(p.name for p in state.iterdir()) == sorted(   # the shard as far as it got is dropped
        ["layout.json", *parts, *(f"{p}.rejects.jsonl" for p in parts)])
    plan = json.loads((state / "layout.json").read_text())
    assert plan["shards"] == ["train-00000-of-00001.parquet", "test-00000-of-00001.parquet"]
    assert plan["parts"] == [f"train-00000-of-00001-part-{j:05d}.parquet" for j in range(10)] + \
        [f"test-00000-of-00001-part-{j:05d}.parquet" for j in range(5)]
    monkeypatch.undo()
    monkeypatch.setattr(importlib.import_module("taskfactory.store.plan"), "CHUNK_ROWS", 10)
    built = _fail_after(monkeypatch, 100)
    summary = tf.build(CHUNKY, target, resume=True)
    assert (summary.skipped_shards, summary.skipped_chunks) == (0, 3)
    assert len(built) == 12 and not set(built) & set(parts)
    assert tree_bytes(target) == tree_bytes(out)


def test_resume_after_a_finished_shard_reuses_it(chunky, chunk_rows_10, tmp_path, monkeypatch):
    out, *_ = chunky
    target = tmp_path / "c"
    _fail_after(monkeypatch, 11)   # the train shard (10 chunks) is assembled, the test shard has one part
    with pytest.raises(KeyboardInterrupt):
        tf.build(CHUNKY, target)
    assert [p.name for p in (target / "data").iterdir()] == ["train-00000-of-00001.parquet"]
    assert sorted(p.name for p in (target / ".build").iterdir()) == [
        "layout.json", "test-00000-of-00001-part-00000.parquet", "test-00000-of-00001-part-00000.parquet.rejects.jsonl",
        "train-00000-of-00001.parquet.rejects.jsonl"]
    monkeypatch.undo()
    monkeypatch.setattr(importlib.import_module("taskfactory.store.plan"), "CHUNK_ROWS", 10)
    summary = tf.build(CHUNKY, target, resume=True)
    assert (summary.skipped_shards, summary.skipped_chunks) == (1, 11)
    assert tree_bytes(target) == tree_bytes(out)


def test_two_attempts_at_one_chunk_at_once_leave_the_one_part(chunky, chunk_rows_10, tmp_path, monkeypatch):
    """A scheduler may run a chunk twice at once (a retried or stolen task):
    each attempt writes under its own name, and the part is the one correct file."""
    import threading

    building = importlib.import_module("taskfactory.store.build")
    planning = importlib.import_module("taskfactory.store.plan")
    out, *_ = chunky
    g = tf.load_grid(CHUNKY)
    p = planning.plan(g, probe=False)
    (shard, parts), = p.chunks("test")
    part, rows = parts[1]
    coords = list(g.tasks("test"))[10:20]
    assert rows == len(coords) == 10
    barrier = threading.Barrier(2, timeout=60)
    real_release, waited = building.release, set()

    def release(grid, coord):   # both attempts are half-way through their part before either finishes
        if threading.get_ident() not in waited:
            waited.add(threading.get_ident())
            barrier.wait()
        return real_release(grid, coord)

    monkeypatch.setattr(building, "release", release)
    folder = tmp_path / "c"
    (folder / ".build").mkdir(parents=True)
    results = []
    attempts = [threading.Thread(target=lambda: results.append(building.build_chunk(g, part, coords, str(folder))))
                for _ in range(2)]
    for thread in attempts:
        thread.start()
    for thread in attempts:
        thread.join()
    assert results == [(part, 10, 0), (part, 10, 0)]
    assert sorted(p.name for p in (folder / ".build").iterdir()) == [part, f"{part}.rejects.jsonl"]
    # the part is the chunk's rows, as the shard of the reference build holds them
    assert pq.read_table(folder / ".build" / part).equals(
        pq.ParquetFile(out / "data" / shard).read_row_group(1))
    assert (folder / ".build" / f"{part}.rejects.jsonl").read_text() == ""


def _leave_parts(monkeypatch, target: Path) -> Path:
    """An unfinished build of CHUNKY in ``target``: 3 parts of the train shard; returns its state folder."""
    _fail_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        tf.build(CHUNKY, target)
    monkeypatch.undo()
    monkeypatch.setattr(importlib.import_module("taskfactory.store.plan"), "CHUNK_ROWS", 10)
    return target / ".build"


def test_an_attempts_leftover_is_recognised_and_removed(chunky, chunk_rows_10, tmp_path, monkeypatch):
    out, *_ = chunky
    target = tmp_path / "c"
    state = _leave_parts(monkeypatch, target)
    part = "train-00000-of-00001-part-00003.parquet"   # a killed worker's half-written part, and its rejects
    (state / f"{part}.4242-0badc0de.partial").write_bytes(b"PAR1")
    (state / f"{part}.rejects.jsonl.4242-0badc0de.partial").write_text("")
    tf.build(CHUNKY, target, resume=True)
    assert tree_bytes(target) == tree_bytes(out)
    state = _leave_parts(monkeypatch, tmp_path / "d")
    (state / f"{part}.4242-0badc0de.partial").write_bytes(b"PAR1")
    tf.build(CHUNKY, tmp_path / "d", overwrite=True)
    assert tree_bytes(tmp_path / "d") == tree_bytes(out)


@pytest.mark.parametrize("name", [
    "notes.txt.4242-0badc0de.partial",                                   # not a part's
    "train-00000-of-00001-part-00099.parquet.4242-0badc0de.partial",     # a part the plan does not list
    "train-00000-of-00001-part-00003.parquet.4242-0badc0de.partial.txt",
    "train-00000-of-00001-part-00003.parquet.x-0badc0de.partial",
    "train-00000-of-00001.parquet.4242-0badc0de.partial",                # the shard is the main process's own
])
def test_a_file_that_is_no_attempt_of_a_listed_part_stops_the_build(chunk_rows_10, tmp_path, monkeypatch, name):
    target = tmp_path / "c"
    state = _leave_parts(monkeypatch, target)
    (state / name).write_text("mine")
    for how in ({"overwrite": True}, {"resume": True}):
        with pytest.raises(tf.TaskFactoryError) as err:
            tf.build(CHUNKY, target, **how)
        assert str(err.value) == (f"output folder {target} holds .build/{name}, which the unfinished build does "
                                  "not list; refusing to touch it")
    assert (state / name).read_text() == "mine"


@pytest.mark.parametrize("parts", [
    ["../../notes.parquet"],
    ["train-00000-of-00002-part-00000.parquet"],   # of a shard the plan does not list
    "train-00000-of-00001-part-00000.parquet",
    [3],
])
def test_a_plan_listing_what_is_no_part_of_its_shards_is_refused(chunk_rows_10, tmp_path, monkeypatch, parts):
    target = tmp_path / "c"
    state = _leave_parts(monkeypatch, target)
    plan = json.loads((state / "layout.json").read_text())
    (state / "layout.json").write_text(json.dumps({**plan, "parts": parts}))
    with pytest.raises(tf.TaskFactoryError) as err:
        tf.build(CHUNKY, target, overwrite=True)
    assert str(err.value) == (f"output folder {target} holds a .build folder that is not a taskfactory build's "
                              "('parts' must list part file names of the listed shards); refusing to touch it")
    assert len(list(state.iterdir())) == 7


def test_datasets_are_released_on_one_thread_and_the_process_keeps_its_setting(tmp_path, monkeypatch):
    """Each release runs the numerical libraries on one thread, and two
    threads releasing at once (the threading backend) leave the process's
    own setting as it was."""
    from threadpoolctl import threadpool_info

    def threads():
        return [lib["num_threads"] for lib in threadpool_info()]

    task = importlib.import_module("taskfactory.make.task")
    before, seen, real = threads(), [], task.prepare

    def watched(*args, **kwargs):
        seen.append(threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(task, "prepare", watched)
    tf.build(GRID, tmp_path / "c", jobs=2, backend="threading")
    assert seen and all(s == [1] * len(before) for s in seen)
    assert threads() == before
