"""taskfactory verify: a fresh corpus passes; every kind of damage is named."""

import json
import shutil

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.shards import sha256_file, write_shard

GRID = {"name": "v", "seed": 8, "methods": ["welch_t", "spearman"], "n": [40], "effects": ["medium"],
        "perturbations": ["none", "missing+extreme"], "shard_rows": 30}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    out = tmp_path_factory.mktemp("v") / "corpus"
    tf.build(GRID, out)
    return out


@pytest.fixture
def corpus(pristine, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(pristine, copy)
    return copy


def verify(corpus, *args):
    result = CliRunner().invoke(main, ["verify", str(corpus), *args])
    return result.exit_code, result.output


def rewrite(corpus, shard, edit):
    """Edit the first record of ``shard`` and re-sign the manifest, as a careless editor would."""
    path = corpus / "data" / shard
    rows = pq.read_table(path).to_pylist()
    edit(rows[0])
    write_shard(path, rows, {"grid_name": "v"})
    manifest = json.loads((corpus / "manifest.json").read_text())
    for entry in manifest["shards"]:
        if entry["path"] == f"data/{shard}":
            entry["sha256"], entry["bytes"] = sha256_file(path), path.stat().st_size
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    return rows[0]["task_id"]


def test_a_fresh_build_verifies(pristine):
    code, out = verify(pristine, "--jobs", "2")
    assert code == 0, out
    assert out.splitlines()[-3:-1] == [
        "shards: 2 listed, 2 match manifest.json",
        "tasks: 48 checked; data_csv matches data_sha256 in 48, the script reproduces it in 48, the gold is "
        "recomputed in 48",
    ]
    assert out.splitlines()[-1].startswith("OK: every check passed (")


def test_a_sample_checks_that_many_tasks(pristine):
    from taskfactory.verify import verify as run

    assert run(pristine, sample=7, seed=3).tasks == 7


def test_an_edited_csv_cell_is_named(corpus):
    def edit(rec):
        lines = rec["data_csv"].splitlines(keepends=True)
        cells = lines[1].split(",")
        cells[2] = "123.4" if cells[2] != "123.4" else "123.5"
        lines[1] = ",".join(cells)
        rec["data_csv"] = "".join(lines)

    tid = rewrite(corpus, "train-00000-of-00002.parquet", edit)
    code, out = verify(corpus)
    assert code == 1
    assert f"FAIL {tid}: data_csv does not match data_sha256" in out
    assert "shards: 2 listed, 2 match manifest.json" in out


def test_an_edited_gold_is_named(corpus):
    def edit(rec):
        rec["gold_p"] = 0.0123

    tid = rewrite(corpus, "train-00001-of-00002.parquet", edit)
    code, out = verify(corpus)
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert len(fails) == 1 and fails[0].startswith(f"FAIL {tid}: gold_p 0.0123 differs from the recomputed ")


def test_a_truncated_shard_is_reported_not_raised(corpus):
    path = corpus / "data/train-00001-of-00002.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    code, out = verify(corpus)
    assert code == 1
    assert "FAIL data/train-00001-of-00002.parquet: sha256 " in out and "modified or truncated" in out
    assert "FAIL data/train-00001-of-00002.parquet: cannot be read: not a readable Parquet shard" in out
    assert "Traceback" not in out
    assert "shards: 2 listed, 1 match manifest.json" in out


def test_a_shard_missing_from_the_manifest_is_named(corpus):
    manifest = json.loads((corpus / "manifest.json").read_text())
    manifest["shards"] = manifest["shards"][:1]
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    code, out = verify(corpus)
    assert code == 1
    assert "FAIL data/train-00001-of-00002.parquet: is not listed in manifest.json" in out


def test_a_shard_listed_but_gone_is_named(corpus):
    (corpus / "data/train-00000-of-00002.parquet").unlink()
    code, out = verify(corpus)
    assert code == 1 and "FAIL data/train-00000-of-00002.parquet: is listed in manifest.json but missing" in out


def test_a_broken_script_is_named(corpus):
    def edit(rec):
        rec["script"] = rec["script"].replace("def main(path=None):\n", "def main(path=None):\n    raise RuntimeError('tampered')\n")

    tid = rewrite(corpus, "train-00000-of-00002.parquet", edit)
    code, out = verify(corpus)
    assert code == 1 and f"FAIL {tid}: the emitted script failed: RuntimeError: tampered\n" in out


def test_not_a_corpus(tmp_path):
    code, out = verify(tmp_path)
    assert code == 2 and out == f"error: {tmp_path}: not a taskfactory corpus (no manifest.json)\n"
