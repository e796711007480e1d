"""Emitted scripts: they rewrite their CSV, and scenario text cannot change what they do."""

import ast
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import yaml

import taskfactory as tf
from taskfactory.errors import ScenarioError
from taskfactory.readers import load_yaml
from taskfactory.scenarios import scenario_root

from conftest import run_scripts



def test_every_script_of_a_small_build_reproduces_its_csv(tmp_path):
    n = max(f.min_n for f in tf.families())
    first_two = {f.name: [s.id for s in tf.load_scenarios(f.name)[:2]] for f in tf.families()}
    grid = {"seed": 5, "methods": "all", "scenarios": first_two, "n": [n], "effects": ["borderline"],
            "prompt_styles": ["basic"], "perturbations": ["none", "missing+extreme"]}
    tf.build(grid, tmp_path / "c")
    everything = [r for p in sorted((tmp_path / "c/data").glob("*.parquet")) for r in pq.read_table(p).to_pylist()]
    records = [r for r in everything if r["script"] is not None]
    # `methods: all` leaves out the families whose range of N stops below n
    sized = [f for f in tf.families() if f.max_n is None or f.max_n >= n]
    assert len(records) == 2 * sum(len(first_two[f.name]) for f in sized if f.has_data)
    # `methods: all` leaves the spoiling perturbation out for the questions without a dataset
    assert len(everything) - len(records) == sum(len(first_two[f.name]) for f in sized if not f.has_data)
    assert sum(r["n_blank_cells"] > 0 and r["n_impossible_values"] > 0 for r in records) == len(records) // 2
    outputs = run_scripts(records, tmp_path)
    for rec, data in zip(records, outputs):
        assert data == rec["data_csv"].encode(), rec["task_id"]


HOSTILE = "x'''\"\"\"\n__import__('os').system('touch PWNED') # \\\n\r}{!r}{n}"


def test_hostile_scenario_text_cannot_inject_code(tmp_path, monkeypatch):
    src = load_yaml(scenario_root() / "two_groups.yaml", ScenarioError)
    scen = src["scenarios"][0]
    scen["title"] = HOSTILE
    scen["context"] = HOSTILE.replace("{", "{{").replace("}", "}}")
    for var in scen["variables"]:
        var["label"] = HOSTILE
        if var.get("unit"):
            var["unit"] = HOSTILE
    root = tmp_path / "scenarios"
    shutil.copytree(scenario_root(), root)
    (root / "two_groups.yaml").write_text(yaml.safe_dump(src))
    monkeypatch.setenv("TASKFACTORY_SCENARIOS", str(root))
    grid = {"seed": 5, "methods": ["welch_t"], "scenarios": {"welch_t": [scen["id"]]}, "n": [40],
            "effects": ["medium"], "prompt_styles": ["basic"]}
    tf.build(grid, tmp_path / "c")
    rec = pq.read_table(next((tmp_path / "c/data").glob("*.parquet"))).to_pylist()[0]
    assert HOSTILE in rec["script"] or repr(HOSTILE)[1:-1] in rec["script"]
    tree = ast.parse(rec["script"])
    top = [type(node).__name__ for node in tree.body]
    assert top.count("Expr") == 1  # the module docstring, nothing else executes at import
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert HOSTILE in strings
    work = tmp_path / "run"
    work.mkdir()
    (data,) = run_scripts([rec], work)
    assert data == rec["data_csv"].encode()
    assert not (work / "PWNED").exists() and not Path("PWNED").exists()
    assert rec["data_dictionary"][1]["label"] == HOSTILE
