"""Building on a dask cluster given by its scheduler's address: the same bytes
as a one-job build, also when a worker is killed mid-build, and a one-line
error, with nothing written, when the scheduler cannot be reached."""

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main

from test_build import GRID, tree_bytes

pytest.importorskip("dask.distributed", reason="the cluster tests need dask[distributed]")

#: Eight shards of one 50 000-row dataset each (its two prompt styles), one
#: chunk each: about half a second of work per shard, so a build on two
#: workers is still well under way when its first shard is done.
KILL_GRID = {"name": "kill", "seed": 5, "methods": ["welch_t"], "scenarios": {"welch_t": ["bp_trial"]},
             "n": [50000], "effects": ["medium"], "seeds": 8, "shard_rows": 2, "split": None}


@pytest.fixture(scope="module")
def cluster():
    """A local cluster of two worker processes (each with its nanny) and a
    client of it for the test to look at the workers."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as local, \
            Client(local) as client:
        yield local, client


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "corpus"
    tf.build(GRID, out, jobs=1)
    return out


def _shard_tasks(client) -> tuple[int, int]:
    """How many of the scheduler's tasks that build chunks finished, and how
    many were on a worker that died (``suspicious``), since it started."""
    def counts(dask_scheduler):
        prefixes = [p for name, p in dask_scheduler.task_prefixes.items() if "build_chunk" in name]
        return sum(p.state_counts["memory"] for p in prefixes), sum(p.suspicious for p in prefixes)

    return tuple(client.run_on_scheduler(counts))


def test_cli_build_on_a_cluster_at_an_address_gives_the_same_bytes(cluster, reference, tmp_path):
    local, client = cluster
    client.wait_for_workers(2, timeout=60)
    finished, _ = _shard_tasks(client)
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps(GRID))
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(tmp_path / "c"), "--backend", "dask",
                                       "--address", local.scheduler_address, "--no-progress"])
    assert result.exit_code == 0, result.output
    assert tree_bytes(tmp_path / "c") == tree_bytes(reference)
    # the shards ran on this cluster, not on a local one the build started
    assert _shard_tasks(client)[0] > finished


def test_a_grid_of_few_shards_and_many_chunks_on_a_cluster_gives_the_same_bytes(cluster, tmp_path, monkeypatch):
    """One shard per split, built as 15 chunks of 10 tasks spread over the cluster's workers."""
    from test_build import CHUNKY

    local, client = cluster
    client.wait_for_workers(2, timeout=60)
    monkeypatch.setattr(importlib.import_module("taskfactory.store.plan"), "CHUNK_ROWS", 10)
    reference = tf.build(CHUNKY, tmp_path / "reference", jobs=1)
    finished, _ = _shard_tasks(client)
    summary = tf.build(CHUNKY, tmp_path / "c", backend="dask", address=local.scheduler_address)
    assert (summary.shards, summary.chunks) == (reference.shards, reference.chunks) == (2, 15)
    assert tree_bytes(tmp_path / "c") == tree_bytes(tmp_path / "reference")
    assert _shard_tasks(client)[0] > finished   # the chunks ran on this cluster


@pytest.mark.slow
def test_a_worker_killed_mid_build_is_retried_and_the_bytes_are_the_same(cluster, tmp_path):
    """The build runs in a subprocess; once its first shard is in data/ (the
    workers have started and the other shards are still to come), the test
    SIGKILLs the worker process that the scheduler says is running shards.
    Its nanny starts a new one and the scheduler runs the lost shards again."""
    local, client = cluster
    client.wait_for_workers(2, timeout=60)
    grid = tmp_path / "kill.json"
    grid.write_text(json.dumps(KILL_GRID))
    reference = tmp_path / "reference"
    tf.build(KILL_GRID, reference, jobs=1)
    shards = len(list((reference / "data").glob("*.parquet")))
    assert shards == 8

    pids = client.run(os.getpid)
    _, suspicious = _shard_tasks(client)
    out = tmp_path / "c"
    log = tmp_path / "build.log"
    with open(log, "w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "taskfactory.cli", "build", str(grid), "-o", str(out),
                                 "--backend", "dask", "--address", local.scheduler_address, "--no-progress"],
                                stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not any((out / "data").glob("*.parquet")):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "no shard after 120 s"
            time.sleep(0.01)
        busy = {worker: keys for worker, keys in client.processing().items() if keys}
        done = len(list((out / "data").glob("*.parquet")))
        assert busy and done < shards and proc.poll() is None, "the build finished before a worker could be killed"
        victim = max(busy, key=lambda worker: len(busy[worker]))
        os.kill(pids[victim], signal.SIGKILL)
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, log.read_text()
    assert tree_bytes(out) == tree_bytes(reference)
    # the kill happened, and hit shards: the nanny started a new worker process
    # and the scheduler ran again the shards the dead one held
    client.wait_for_workers(2, timeout=60)
    assert pids[victim] not in set(client.run(os.getpid).values())
    assert _shard_tasks(client)[1] > suspicious


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps(GRID))
    out = tmp_path / "c"
    # the real command line, in its own process (so dask's own logging shows), waiting 1 s instead of 10
    code = ("import importlib, sys; importlib.import_module('taskfactory.store.build').CONNECT_SECONDS = 1; "
            "from taskfactory.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code, "build", str(grid), "-o", str(out), "--backend", "dask",
                           "--address", address, "--no-progress"], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"error: cannot connect to the dask scheduler at {address}: "
                           f"Timed out trying to connect to {address} after 1 s\n")
    assert not out.exists()


def test_a_malformed_address_or_one_without_a_cluster_backend_is_refused(tmp_path):
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps(GRID))
    out = tmp_path / "c"
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(out), "--backend", "dask", "--address",
                                       "nonsense"])
    assert result.exit_code == 2
    assert result.output == ("error: cannot connect to the dask scheduler at nonsense: missing port number in "
                             "address 'nonsense'\n")
    result = CliRunner().invoke(main, ["build", str(grid), "-o", str(out), "--address", "tcp://127.0.0.1:8786"])
    assert result.exit_code == 2
    assert result.output == "error: an address ('tcp://127.0.0.1:8786') needs the dask or ray backend, not 'loky'\n"
    assert not out.exists()
