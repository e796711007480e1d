"""The family contract carries designs and answers beyond one p-value on one
flat table: toy families go through plan, build, shards, verify, inspect and
the dataset card."""

import json

import pyarrow.parquet as pq
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from toys import install
from toys.models import ToyClusterMeans, ToyOls


def build_toys(tmp_path, monkeypatch):
    install(monkeypatch, tmp_path, ToyOls(), ToyClusterMeans())
    grid = {"name": "toys", "seed": 4, "methods": ["toy_ols", "toy_cluster_means"], "n": [24],
            "effects": ["null", "medium"], "perturbations": ["none", "missing"], "seeds": 2}
    assert tf.plan(grid).total == 2 * 2 * 2 * 2 * 2
    out = tmp_path / "corpus"
    summary = tf.build(grid, out)
    rows = [r for path in sorted((out / "data").glob("*.parquet")) for r in pq.read_table(path).to_pylist()]
    return out, summary, rows


def test_toys_go_through_build_verify_inspect_and_card(tmp_path, monkeypatch):
    out, summary, rows = build_toys(tmp_path, monkeypatch)
    assert summary.tasks == 32 and summary.rejected == 0
    assert tf.verify(out).ok
    card = (out / "README.md").read_text()
    assert "toy_ols" in card and "toy_cluster_means" in card
    shown = CliRunner().invoke(main, ["inspect", str(out), "--method", "toy_cluster_means"])
    assert shown.exit_code == 0 and "cluster identifier" in shown.output
    assert "toy" not in [f.name for f in tf.families()][:12]


def test_a_model_term_is_the_gold_and_its_table_is_kept(tmp_path, monkeypatch):
    _, _, rows = build_toys(tmp_path, monkeypatch)
    rec = next(r for r in rows if r["method"] == "toy_ols")
    terms = json.loads(rec["gold_terms"])
    assert [t["term"] for t in terms] == ["(Intercept)", "dose_std", "organic_std"]
    target = next(t for t in terms if t["target"])
    assert target["term"] == "dose_std" and target["p_value"] == rec["gold_p"] == rec["gold"]["p_value"]
    assert rec["gold"]["kind"] == rec["answer_kind"] == "p_value"
    assert target["df"] == rec["n_analyzed"] - 3 and rec["gold_df"] == [target["df"]]


def test_a_clustered_design_counts_clusters_and_numbers_them(tmp_path, monkeypatch):
    _, _, rows = build_toys(tmp_path, monkeypatch)
    for rec in (r for r in rows if r["method"] == "toy_cluster_means"):
        size = json.loads(rec["dgp_params"])["cluster_size"]
        assert rec["n"] == 24 and rec["n_rows"] == 24 * size
        header, *lines = rec["data_csv"].splitlines()
        school = header.split(",").index("school")
        labels = {line.split(",")[school] for line in lines} - {""}
        assert labels <= {f"S{k:02d}" for k in range(1, 25)} and len(labels) >= 20
        if rec["perturbation"] == "none":
            assert rec["n_analyzed"] == 24 * size and len(labels) == 24
