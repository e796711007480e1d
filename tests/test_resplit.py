"""taskfactory split: a built corpus split anew, whole scenarios or whole datasets to a side, and verified."""

import json
from collections import defaultdict

import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.corpus import iter_records
from taskfactory.errors import InputError
from taskfactory.resplit import resplit

from conftest import PINNED, built_once

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
