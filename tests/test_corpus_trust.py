"""Readers trust nothing: every command that reads a corpus checks each shard
against manifest.json, once, before it uses it, and each value it acts on as
its row group is read. The hostile corpora and their exact messages are in
tests/adversarial/corpora/cases.yaml; this file holds what a case list cannot
say (how often a shard is hashed, what is left unwritten, a shard replaced
mid-read)."""

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory.store.corpus.checks as corpus_checks
from taskfactory.answers import GOLD_FIELDS
from taskfactory.cli import main
from taskfactory.store.corpus import (COLUMN_RULES, P_DECISIONS, VALUE_RULES, check_shards, find_task, iter_records,
                                sha256_file)
from taskfactory.errors import CorpusError
from taskfactory.make.columns import FIELDS
from taskfactory.store.shards import write_shard

from conftest import PINNED, built_once, fresh_copy

#: Three shards: welch_t tasks in train and test, wilson_ci (closed form, an interval) in train.
GRID = {"name": "trust", "seed": 3, "methods": ["welch_t", "wilson_ci"], "scenarios": {"welch_t": PINNED["welch_t"]},
        "n": [100], "effects": ["medium"], "perturbations": ["none"], "shard_rows": 10,
        "split": {"by": "scenario", "test": 0.3, "seed": 1}}
TRAIN, CLOSED, TEST = "train-00000-of-00002.parquet", "train-00001-of-00002.parquet", "test-00000-of-00001.parquet"
SHARDS = (TRAIN, CLOSED, TEST)


pristine = built_once(GRID, "trust")


@pytest.fixture
def corpus(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def forge(corpus: Path, shard: str, row: int, resign: bool = True, **values) -> str:
    """Set fields of one record of ``shard`` and (``resign``) re-sign the
    shard in the manifest, as a careful forger would; returns its task id."""
    path = corpus / "data" / shard
    rows = pq.read_table(path).to_pylist()
    task_id = rows[row]["task_id"]
    rows[row].update(values)
    write_shard(path.with_name("forged"), rows, {"grid_name": "trust"})
    path.with_name("forged").replace(path)   # another file: its stamp differs whatever the clock's tick
    if resign:
        manifest = json.loads((corpus / "manifest.json").read_text())
        entry = next(e for e in manifest["shards"] if e["path"] == f"data/{shard}")
        entry["sha256"], entry["bytes"] = sha256_file(path), path.stat().st_size
        (corpus / "manifest.json").write_text(json.dumps(manifest))
    return task_id


def test_an_honest_corpus_reads_as_pyarrow_reads_it(pristine):
    stored = [r for name in (TRAIN, CLOSED, TEST) for r in pq.read_table(pristine / "data" / name).to_pylist()]
    assert list(iter_records(pristine)) == stored
    columns = ["split", "gold", "task_id", "split"]
    assert list(iter_records(pristine, columns=columns)) == [{k: r[k] for k in columns} for r in stored]
    assert list(iter_records(pristine, columns=["task_id"], method="wilson_ci")) == [
        {"task_id": r["task_id"]} for r in stored if r["method"] == "wilson_ci"]
    assert find_task(pristine, stored[-1]["task_id"]) == stored[-1]
    assert find_task(pristine, method="wilson_ci") == next(r for r in stored if r["method"] == "wilson_ci")


def test_the_rules_cover_every_gold_field_and_name_columns_of_the_schema():
    assert set(VALUE_RULES) == set(GOLD_FIELDS) - {"kind"}
    assert set(COLUMN_RULES) | set(P_DECISIONS.values()) <= {name for name, *_ in FIELDS}


@pytest.fixture
def hashed(monkeypatch):
    """The paths of the files hashed (sha256) while the test runs, counted;
    a check is remembered even for a corpus written a moment ago."""
    counts = Counter()
    digest = hashlib.file_digest

    def counting(fh, name):
        counts[fh.name] += 1
        return digest(fh, name)

    monkeypatch.setattr(hashlib, "file_digest", counting)
    monkeypatch.setattr(corpus_checks, "SETTLED_NS", -1)
    monkeypatch.setattr(corpus_checks, "_CHECKED", {})
    return counts


COMMANDS = {
    "score": lambda c, tmp: ["score", c, "--baseline", "gold", "--by", "split"],
    "export": lambda c, tmp: ["export", c, "--to", "verl", "-o", tmp / "out"],
    "inspect": lambda c, tmp: ["inspect", c, "--method", "wilson_ci"],
    "report": lambda c, tmp: ["report", c, "-o", tmp / "report", "--predictions", tmp / "answers.jsonl"],
    "leakage": lambda c, tmp: ["leakage", c, "--against", tmp / "bench.jsonl", "--drop-out", tmp / "clean"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_hashes_each_shard_once(command, corpus, tmp_path, hashed):
    """Each of these reads the corpus more than once but for inspect (report:
    once per source it scores, then its own columns; leakage and its drop-out:
    five times)."""
    task_id = pq.read_table(corpus / "data" / TRAIN, columns=["task_id"])["task_id"][0].as_py()
    (tmp_path / "answers.jsonl").write_text(json.dumps({"task_id": task_id, "completion": "P_VALUE: 0.5"}) + "\n")
    (tmp_path / "bench.jsonl").write_text(json.dumps({"id": "a", "question": "Is it?"}) + "\n")
    result = run(*COMMANDS[command](corpus, tmp_path))
    assert result.exit_code == 0, result.output
    shards = [str(corpus / "data" / name) for name in SHARDS]
    assert {path: hashed[path] for path in shards} == dict.fromkeys(shards, 1)


def test_a_shard_written_less_than_settled_ns_ago_is_hashed_at_every_check(corpus, hashed, monkeypatch):
    monkeypatch.setattr(corpus_checks, "SETTLED_NS", 10**18)   # every file is recent
    check_shards(corpus)
    check_shards(corpus)
    assert sum(hashed.values()) == 2 * len(SHARDS)   # file times step in clock ticks: a rewrite could keep the stamp


def test_a_shard_changed_after_a_check_is_checked_again(corpus, hashed):
    check_shards(corpus)
    forge(corpus, TEST, 2, resign=False, gold_p=0.999)
    with pytest.raises(CorpusError, match=f"^{corpus}/data/{TEST}: differs from manifest.json"):
        check_shards(corpus)
    forge(corpus, TEST, 2, gold_p=float("nan"))
    with pytest.raises(CorpusError, match=rf"^{corpus}/data/{TEST}: row 2: gold_p is nan, not a p-value"):
        list(iter_records(corpus, columns=["gold_p"]))


def test_a_shard_replaced_while_it_is_read_is_refused(corpus):
    records = iter_records(corpus, columns=["task_id"])
    next(records)
    shard = corpus / "data" / TEST
    shutil.copyfile(shard, corpus / "copy")
    (corpus / "copy").replace(shard)   # the same bytes, another file than the one checked
    with pytest.raises(CorpusError, match=f"^{shard}: changed while this command was reading the corpus$"):
        list(records)


def test_an_export_with_a_split_that_names_a_folder_writes_nothing(corpus, tmp_path):
    forge(corpus, TEST, 4, split="../evil")
    for splits in ("train,test", "train"):   # refused as read, even when the split is not exported
        result = run("export", corpus, "--to", "jsonl", "--data", "file", "--split", splits, "-o", tmp_path / "out")
        assert result.exit_code == 2
        assert result.output == (f"error: {corpus}/data/{TEST}: row 4: split is '../evil', not the split of its "
                                 "shard ('test')\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
    assert not list(tmp_path.rglob("*evil*"))


def test_a_drop_out_from_a_forged_corpus_writes_nothing(corpus, tmp_path):
    """The drop-out writes shards as it reads the corpus: every value a rule
    checks is read before the first is written."""
    forge(corpus, TEST, 7, accepted=[{"method": "Welch", "r_call": "x", "p_value": float("nan"), "decision": "reject"}])
    (tmp_path / "bench.jsonl").write_text(json.dumps({"id": "a", "question": "Is it?"}) + "\n")
    result = run("leakage", corpus, "--against", tmp_path / "bench.jsonl", "--drop-out", tmp_path / "clean")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (f"error: {corpus}/data/{TEST}: row 7: accepted[0].p_value is nan, "
                                              "not a p-value in [0, 1]")
    assert not (tmp_path / "clean").exists()


def test_a_task_id_repeated_in_another_shard_is_named(corpus):
    first = next(iter_records(corpus, columns=["task_id"]))["task_id"]
    forge(corpus, TEST, 3, task_id=first)
    result = run("score", corpus, "--baseline", "naive")
    assert result.exit_code == 2
    assert result.output == (f"error: {corpus}/data/{TEST}: row 3: task_id '{first}' is not unique (also "
                             f"{corpus}/data/{TRAIN} row 0)\n")


def test_inspect_checks_the_task_it_shows(corpus):
    forged = forge(corpus, TRAIN, 5, gold={"kind": "p_value", "p_value": 0.5, "decision": "maybe"})
    assert run("inspect", corpus).exit_code == 0
    result = run("inspect", corpus, forged)
    assert result.exit_code == 2
    assert result.output == (f"error: {corpus}/data/{TRAIN}: row 5: gold.decision is 'maybe', not reject or fail "
                             "to reject\n")


def test_inspect_shows_a_task_whose_optional_cells_are_empty(corpus):
    forged = forge(corpus, TRAIN, 1, n_rows=None, gold_df=[None], data_filename=None)
    result = run("inspect", corpus, forged, "--rows", "3")
    assert result.exit_code == 0, result.output
    assert "--- None (first 3 rows) ---" in result.output and "(df -)" in result.output
