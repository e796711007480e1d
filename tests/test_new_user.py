"""What a new user does with a corpus folder, with the tools they already
have: load it with Hugging Face datasets (which reads the dataset card),
query its nested columns with DuckDB and polars as they are (no JSON to
parse), then check it with ``taskfactory verify`` and ``taskfactory
leakage``. Every value must equal what pyarrow reads, and nothing may warn."""

from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main

from conftest import PINNED

datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
duckdb = pytest.importorskip("duckdb", reason="DuckDB is not installed")
pl = pytest.importorskip("polars", reason="polars is not installed")

GRID = {"name": "newcomer", "seed": 11, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"][:3]},
        "n": [40], "effects": ["null", "medium"], "perturbations": ["none", "missing"], "seeds": 1,
        "split": {"by": "scenario", "test": 0.34, "seed": 3}}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("newcomer") / "corpus"
    tf.build(GRID, out, progress=False)
    return out


@pytest.fixture(scope="module")
def rows(corpus) -> list[dict]:
    """Every task as pyarrow reads the shards, in task id order."""
    table = pa.concat_tables(pq.read_table(p) for p in sorted((corpus / "data").glob("*.parquet")))
    return sorted(table.to_pylist(), key=lambda r: r["task_id"])


def picked(r: dict) -> tuple:
    """What the queries below select, from a pyarrow row."""
    missing = r["perturbation_detail"]["missing"]
    return (r["task_id"], r["gold"]["p_value"], r["data_dictionary"][0]["name"], r["perturbation_detail"]["kind"],
            None if missing is None else missing["rate"], r["roles"]["outcome"], r["roles"]["group"])


def test_datasets_loads_the_folder_by_its_card_without_a_warning(corpus, rows, tmp_path):
    manifest = json.loads((corpus / "manifest.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = datasets.load_dataset(str(corpus), cache_dir=str(tmp_path / "hf-cache"))
    assert dict(loaded.num_rows) == manifest["counts"]["by_split"] == {"train": 16, "test": 8}
    assert sum(loaded.num_rows.values()) == manifest["counts"]["tasks"] == len(rows)
    by_id = {r["task_id"]: r for r in rows}
    for split, part in loaded.items():
        for row in part:
            assert row == by_id[row["task_id"]] and row["split"] == split
    nested = next(r for r in loaded["train"] if r["perturbation"] == "missing")
    assert isinstance(nested["gold"], dict) and isinstance(nested["data_dictionary"], list)
    assert isinstance(nested["perturbation_detail"]["missing"]["columns"], list)


def test_duckdb_queries_the_nested_fields_in_place(corpus, rows):
    query = f"""
        SELECT task_id, gold.p_value, data_dictionary[1].name, perturbation_detail.kind,
               perturbation_detail.missing.rate, roles.outcome, roles."group"
        FROM read_parquet('{corpus}/data/*.parquet')
        WHERE gold.decision = 'reject'
        ORDER BY task_id"""
    con = duckdb.connect()
    want = [picked(r) for r in rows if r["gold"]["decision"] == "reject"]
    assert con.execute(query).fetchall() == want and 0 < len(want) < len(rows)
    spoiled = con.execute(f"""
        SELECT task_id, perturbation_detail.missing.mechanism, len(perturbation_detail.missing.columns)
        FROM read_parquet('{corpus}/data/*.parquet')
        WHERE perturbation_detail.missing.rate > 0
        ORDER BY task_id""").fetchall()
    missing = [r for r in rows if r["perturbation"] == "missing"]
    assert spoiled == [(r["task_id"], r["perturbation_detail"]["missing"]["mechanism"],
                        len(r["perturbation_detail"]["missing"]["columns"])) for r in missing]
    assert len(missing) == 12 and all(count > 0 for *_, count in spoiled)
    drawn = con.execute(f"""
        SELECT task_id, list_filter(dgp_params, lambda p: p.name = 'share')[1].value,
               list_filter(dgp_params, lambda p: p.name = 'sd_scale')[1]."values"
        FROM read_parquet('{corpus}/data/*.parquet')
        ORDER BY task_id""").fetchall()
    assert drawn == [(r["task_id"], *(next(p[k] for p in r["dgp_params"] if p["name"] == name)
                                      for name, k in (("share", "value"), ("sd_scale", "values")))) for r in rows]
    assert all(min(share, 1 - share) >= 0.25 and abs(share - 0.5) > 0.05 and max(scale) == 1.0
               for _, share, scale in drawn)


def test_polars_reads_the_struct_and_list_fields_as_they_are(corpus, rows):
    frame = (pl.scan_parquet(f"{corpus}/data/*.parquet")
             .select("task_id",
                     pl.col("gold").struct.field("p_value"),
                     pl.col("data_dictionary").list.get(0).struct.field("name"),
                     pl.col("perturbation_detail").struct.field("kind"),
                     pl.col("perturbation_detail").struct.field("missing").struct.field("rate"),
                     pl.col("roles").struct.field("outcome"), pl.col("roles").struct.field("group"))
             .sort("task_id")
             .collect())
    assert frame.rows() == [picked(r) for r in rows]
    assert frame.columns == ["task_id", "p_value", "name", "kind", "rate", "outcome", "group"]


def test_verify_and_leakage_pass_on_the_same_folder_without_a_warning(corpus, tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "q1", "question": "Is the median commute time different between the two "
                                                         "cities?"}) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        verified = CliRunner().invoke(main, ["verify", str(corpus), "--sample", "4"])
        checked = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(bench)])
    assert verified.exit_code == 0 and verified.exception is None, verified.output
    assert verified.output.splitlines()[-1].startswith("OK: every check passed (4 tasks in ")
    assert checked.exit_code == 0 and checked.exception is None, checked.output
    assert checked.output.startswith("summary: 0 of 1 benchmark items flagged against 24 corpus tasks ")
