"""taskfactory split: a built corpus split anew, whole scenarios or whole datasets to a side, and verified."""

import json
import re
from collections import defaultdict

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
import taskfactory.store.copying as copying
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records, sha256_file
from taskfactory.errors import CorpusError, InputError
from taskfactory.store.resplit import SplitRule, resplit
from taskfactory.store.shards import write_shard

from conftest import PINNED, built_once, fresh_copy

# siblings (welch_t, mann_whitney) share scenarios, and so do two closed-form kinds (two_prop, two_prop_z)
GRID = {"name": "resplit", "seed": 9, "methods": ["welch_t", "mann_whitney", "two_prop", "two_prop_z"],
        "scenarios": {"welch_t": PINNED["welch_t"], "mann_whitney": PINNED["welch_t"]}, "n": [60], "effects": ["null"],
        "perturbations": ["none"]}


corpus = built_once(GRID, "resplit")


def sides(corpus, key: str) -> dict:
    out = defaultdict(set)
    for rec in iter_records(corpus, columns=["scenario", "data_id", "split"]):
        out[rec[key]].add(rec["split"])
    return out


def test_by_scenario_a_scenario_is_on_one_side_whatever_asks_about_it_and_the_copy_verifies(corpus, tmp_path):
    result = CliRunner().invoke(main, ["split", str(corpus), "-o", str(tmp_path / "a"), "--test", "0.4", "--seed", "1"])
    assert result.exit_code == 0, result.output
    by_scenario = sides(tmp_path / "a", "scenario")
    assert all(len(s) == 1 for s in by_scenario.values()) and {"train", "test"} == set().union(*by_scenario.values())
    report = tf.verify(tmp_path / "a")
    assert report.ok and report.records_ok == report.tasks, report.problems
    resplit(corpus, tmp_path / "b", "scenario", 0.4, 1)
    shards = lambda folder: [e["sha256"] for e in json.loads((folder / "manifest.json").read_text())["shards"]]
    assert shards(tmp_path / "a") == shards(tmp_path / "b")   # the same copy, byte for byte


def test_by_data_id_a_datasets_prompts_stay_together(corpus, tmp_path):
    resplit(corpus, tmp_path / "d", "data_id", 0.5, 2)
    by_data = sides(tmp_path / "d", "data_id")
    assert all(len(s) == 1 for s in by_data.values())
    test_share = sum(s == {"test"} for s in by_data.values()) / len(by_data)
    assert 0.3 < test_share < 0.7
    assert tf.verify(tmp_path / "d").ok


def test_verify_names_a_held_out_list_its_rule_does_not_give(corpus, tmp_path):
    resplit(corpus, tmp_path / "t", "scenario", 0.4, 1)
    path = tmp_path / "t" / "manifest.json"
    manifest = json.loads(path.read_text())
    dropped = manifest["resplit"]["held_out"].pop()
    path.write_text(json.dumps(manifest))
    report = tf.verify(tmp_path / "t")
    assert report.problems[0] == ("manifest.json", "resplit holds out other scenarios than its rule gives on this "
                                                   "corpus")
    moved = {t for t, what in report.problems[1:]}
    assert moved and all(what == "split 'test' differs from the re-derived 'train'" for _, what in report.problems[1:])
    assert {r["scenario"] for r in iter_records(tmp_path / "t", columns=["task_id", "scenario"])
            if r["task_id"] in moved} == {dropped[1]}


def test_a_rule_out_of_range_or_a_full_folder_is_refused_before_anything_is_written(corpus, tmp_path):
    with pytest.raises(InputError, match=r"^--test \(1\.5\) must be a share between 0 and 1$"):
        resplit(corpus, tmp_path / "x", "scenario", 1.5, 0)
    with pytest.raises(InputError, match=r"^--by \('row'\) must be one of scenario, data_id$"):
        resplit(corpus, tmp_path / "x", "row", 0.2, 0)
    assert not (tmp_path / "x").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("keep")
    with pytest.raises(InputError, match="the folder is not empty"):
        resplit(corpus, tmp_path / "full", "scenario", 0.2, 0)
    assert (tmp_path / "full" / "mine.txt").read_text() == "keep"


def shard_files(folder) -> dict:
    return {e["path"]: (e["rows"], e["sha256"]) for e in json.loads((folder / "manifest.json").read_text())["shards"]}


def rewrite(copy, shard: str, rows: list) -> None:
    """Write ``rows`` as ``shard`` of ``copy`` and re-sign it in the manifest, as a careful forger would."""
    path = copy / "data" / shard
    write_shard(path.with_name("forged"), rows, {"grid_name": "resplit"})
    path.with_name("forged").replace(path)
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = next(e for e in manifest["shards"] if e["path"] == f"data/{shard}")
    entry["sha256"], entry["bytes"], entry["rows"] = sha256_file(path), path.stat().st_size, len(rows)
    (copy / "manifest.json").write_text(json.dumps(manifest))


def test_verify_reports_a_resplit_copy_whose_test_shard_was_replaced(corpus, tmp_path):
    """The held-out list is not re-derived from a changed shard (its scenarios would give another): verify
    says so among its FAIL lines and exits 1, as on any corpus, rather than stopping at the changed shard."""
    resplit(corpus, tmp_path / "t", "scenario", 0.4, 1)
    test_shard = next((tmp_path / "t" / "data").glob("test-*.parquet"))
    rows = pq.read_table(test_shard).to_pylist()
    write_shard(test_shard.with_name("forged"), rows[:-1], {"grid_name": "resplit"})
    test_shard.with_name("forged").replace(test_shard)
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "t"), "--sample", "3"])
    assert result.exit_code == 1, result.output
    fails = [line for line in result.output.splitlines() if line.startswith("FAIL ")]
    assert fails[0].startswith(f"FAIL data/{test_shard.name}: sha256 ")
    assert ("FAIL manifest.json: resplit: the scenarios it holds out were not checked against its rule, since a "
            "shard fails the checks above") in fails
    assert "error:" not in result.output and "taskfactory verify names what changed" not in result.output


def test_verify_checks_every_tasks_split_against_the_rule_not_only_the_sampled_ones(corpus, tmp_path):
    """A task moved from train to test (both shards re-signed) is named whether or not it is sampled."""
    resplit(corpus, tmp_path / "m", "scenario", 0.4, 1)
    copy = tmp_path / "m"
    train, test = (next((copy / "data").glob(f"{split}-*.parquet")) for split in ("train", "test"))
    train_rows, test_rows = pq.read_table(train).to_pylist(), pq.read_table(test).to_pylist()
    moved = train_rows.pop(5)
    rewrite(copy, train.name, train_rows)
    rewrite(copy, test.name, test_rows + [{**moved, "split": "test"}])
    report = tf.verify(copy, sample=1, seed=0)
    assert (moved["task_id"], "split 'test' is not the 'train' its manifest's resplit rule gives") in report.problems
    assert not any(what.startswith("resplit holds out") for _, what in report.problems)   # the same scenarios


def test_the_shards_are_sized_as_the_build_sizes_them_not_by_the_manifests_row_counts(corpus, tmp_path):
    source = fresh_copy(corpus, tmp_path)
    resplit(source, tmp_path / "a", "scenario", 0.4, 1)
    manifest = json.loads((source / "manifest.json").read_text())
    manifest["shards"][0]["rows"] = 1   # no check reads it: sha256 and size are the shard's
    (source / "manifest.json").write_text(json.dumps(manifest))
    resplit(source, tmp_path / "b", "scenario", 0.4, 1)
    assert shard_files(tmp_path / "a") == shard_files(tmp_path / "b")
    assert sorted(shard_files(tmp_path / "a")) == ["data/test-00000-of-00001.parquet",   # the grid's shard_rows,
                                                   "data/train-00000-of-00001.parquet"]  # 100000, holds each split


def test_a_source_file_changed_since_the_build_is_refused_before_anything_is_written(corpus, tmp_path):
    source = fresh_copy(corpus, tmp_path)
    (source / "rejected.jsonl").write_text("{}\n")
    with pytest.raises(CorpusError, match="rejected.jsonl: missing, or changed since the corpus was built"):
        resplit(source, tmp_path / "x", "scenario", 0.4, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


def test_a_file_put_into_the_folder_while_split_writes_survives_a_failure(corpus, tmp_path, monkeypatch):
    """The copy is written in a folder of its own and moved into place at the end: a failure removes only that."""
    out = tmp_path / "out"
    out.mkdir()
    write = copying._write

    def failing(corpus, work, *args):
        write(corpus, work, *args)
        (out / "notes.txt").write_text("mine")
        raise CorpusError("the disk is full")

    monkeypatch.setattr(copying, "_write", failing)
    with pytest.raises(CorpusError, match="the disk is full"):
        resplit(corpus, out, "scenario", 0.4, 1)
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_folder_that_is_no_longer_empty_when_split_is_done_is_left_as_it_is(corpus, tmp_path, monkeypatch):
    out = tmp_path / "new" / "out"
    write = copying._write

    def meddled(corpus, work, *args):
        write(corpus, work, *args)
        out.mkdir()
        (out / "notes.txt").write_text("mine")

    monkeypatch.setattr(copying, "_write", meddled)
    result = CliRunner().invoke(main, ["split", str(corpus), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output == (f"error: -o {out}: the folder is no longer empty (something was put in it while this "
                             "command ran); nothing was written to it; give a new or empty folder\n")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["out"]


@pytest.mark.parametrize("key, value, message", [
    ("by", "row", "resplit.by ('row') must be one of scenario, data_id"),
    ("test", "0.2", "resplit.test ('0.2') must be a share between 0 and 1"),
    ("test", True, "resplit.test (True) must be a share between 0 and 1"),
    ("seed", 1.7, "resplit.seed (1.7) must be a whole number, 0 or more"),
    ("seed", True, "resplit.seed (True) must be a whole number, 0 or more"),
    ("held_out", [["welch_t", 3]], "resplit.held_out must be a list of [method, scenario] pairs of names"),
])
def test_a_rule_a_manifest_states_is_read_value_for_value(corpus, tmp_path, key, value, message):
    resplit(corpus, tmp_path / "t", "scenario", 0.4, 1)
    path = tmp_path / "t" / "manifest.json"
    manifest = json.loads(path.read_text())
    stated = manifest["resplit"]
    assert SplitRule.of(stated).as_json() == stated
    manifest["resplit"] = {**stated, key: value}
    path.write_text(json.dumps(manifest))
    with pytest.raises(InputError, match=f"^manifest.json: {re.escape(message)}$"):
        SplitRule.of(manifest["resplit"])
    assert tf.verify(tmp_path / "t").problems == [("manifest.json", message)]
