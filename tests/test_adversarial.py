"""Hostile inputs, kept as data under ``tests/adversarial/``.

Each folder holds the hostile files of one kind and a ``cases.yaml`` listing
them with the exit code and the exact one-line error each must give:

- ``grids/``: grid files, run through ``plan`` and ``build`` (which must then
  have written nothing);
- ``scenarios/``: scenario files standing in for one method's file
  (``method:``) in a copy of the scenario folder, run through ``plan``;
- ``benchmarks/``: benchmark files for ``leakage`` against a small corpus;
- ``corpora/``: edits (``mutate:``) applied to a copy of a small corpus, then
  a command (``command:``) run on it;
- ``analyse/``: calls of :func:`taskfactory.analyse` with hostile arguments;
- ``predictions/``: predictions files for ``score`` (``special: fifo`` makes a
  FIFO, ``path:`` names a file outside the folder such as ``/dev/zero``);
- ``specs/``: real-data specs for ``import`` (which must then have written
  nothing), beside a copy of the data files in ``specs/data/``.

In ``error`` and ``fails``, ``{file}`` is the hostile file's path as the
command saw it, ``{dir}`` its folder, ``{corpus}`` the corpus folder and
``{task_id}`` the id of the record a mutation edited (before the edit),
``{grid}`` the small corpus's grid file. Every file a corpus case lists under
``untouched`` must still exist afterwards. A file
too large to keep in the repository is made by ``make: {repeat: TEXT, times:
K}`` (with an optional ``head`` and ``tail``; or ``{hex: ...}`` for raw bytes).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.errors import InputError, ScenarioError
from taskfactory.readers import load_yaml
from taskfactory.scenarios import scenario_root
from taskfactory.store.corpus import iter_records, sha256_file
from taskfactory.store.shards import write_shard

from conftest import PINNED

HERE = Path(__file__).resolve().parent / "adversarial"


def cases(kind: str) -> list[dict]:
    path = HERE / kind / "cases.yaml"
    if not path.is_file():
        return []
    listed = load_yaml(path, ScenarioError, "case list") or []
    return [dict(c, _kind=kind) for c in listed]


def case_id(case: dict) -> str:
    return str(case.get("name") or case.get("file"))


def materialise(case: dict, folder: Path) -> Path:
    """The hostile file of ``case``, copied (or made) into ``folder``."""
    target = folder / case["file"]
    make = case.get("make")
    if make is None:
        shutil.copyfile(HERE / case["_kind"] / case["file"], target)
    elif "hex" in make:
        target.write_bytes(bytes.fromhex(make["hex"]))
    else:
        target.write_text(make.get("head", "") + make["repeat"] * make["times"] + make.get("tail", ""), encoding="utf-8")
    return target


def invoke(args: list[str], env: dict | None = None):
    result = CliRunner().invoke(main, args, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"{args}: raised {type(result.exception).__name__}: {result.exception}"
    return result


def expect_error(result, case: dict, **values) -> None:
    assert result.exit_code == case["exit"], (case_id(case), result.output)
    want = "error: " + case["error"].format(**values)
    lines = result.output.strip().splitlines()
    assert lines == [want], (case_id(case), result.output)
    assert "Traceback" not in result.output


# --- grids -------------------------------------------------------------------------

@pytest.mark.parametrize("case", cases("grids"), ids=case_id)
def test_hostile_grid(case, tmp_path):
    path = materialise(case, tmp_path)
    out = tmp_path / "corpus"
    for args in (["plan", str(path)], ["build", str(path), "-o", str(out), "--no-progress"]):
        expect_error(invoke(args), case, file=path, dir=tmp_path)
        assert not out.exists()


# --- scenarios ---------------------------------------------------------------------

@pytest.mark.parametrize("case", cases("scenarios"), ids=case_id)
def test_hostile_scenario_file(case, tmp_path):
    root = tmp_path / "scenarios"
    shutil.copytree(scenario_root(), root)
    staged = materialise(case, tmp_path)
    path = root / f"{tf.get_family(case['method']).question_kind}.yaml"
    shutil.copyfile(staged, path)
    grid = tmp_path / "grid.yaml"
    n = max(tf.get_family(case["method"]).min_n, 30)
    grid.write_text(f"seed: 1\nmethods: [{case['method']}]\nn: [{n}]\n")
    result = invoke(["plan", str(grid)], env={"TASKFACTORY_SCENARIOS": str(root)})
    expect_error(result, case, file=path, dir=root)
    if " clips " in case["error"]:   # the probe: a build runs it in its workers, to the same verdict, before any output
        out = tmp_path / "corpus"
        result = invoke(["build", str(grid), "-o", str(out), "--jobs", "2", "--no-progress"],
                        env={"TASKFACTORY_SCENARIOS": str(root)})
        expect_error(result, case, file=path, dir=root)
        assert not out.exists()


# --- benchmarks --------------------------------------------------------------------

SMALL = {"name": "hostile", "seed": 5, "methods": ["welch_t", "chi_square_independence"],
         "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [100],
         "effects": ["medium"], "perturbations": ["none", "missing"], "shard_rows": 20}


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "corpus"
    tf.build(SMALL, out)
    return out


@pytest.mark.parametrize("case", cases("benchmarks"), ids=case_id)
def test_hostile_benchmark(case, small_corpus, tmp_path):
    path = materialise(case, tmp_path)
    for extra in case.get("files", []):
        shutil.copyfile(HERE / "benchmarks" / extra, tmp_path / extra)
    args = ["leakage", str(small_corpus), "--against", str(path), *case.get("args", [])]
    expect_error(invoke(args), case, file=path, dir=tmp_path, corpus=small_corpus)


# --- predictions -------------------------------------------------------------------

@pytest.mark.parametrize("case", cases("predictions"), ids=case_id)
def test_hostile_predictions(case, small_corpus, tmp_path, monkeypatch):
    task_id = next(iter_records(small_corpus, columns=["task_id"]))["task_id"]
    path = Path(case["path"]) if "path" in case else tmp_path / case["file"]
    if case.get("special") == "fifo":
        os.mkfifo(path)
    elif (HERE / "predictions" / case["file"]).is_file() or "make" in case:
        materialise(case, tmp_path)
        if "hex" not in case.get("make", {}):
            path.write_text(path.read_text(encoding="utf-8").replace("{task_id}", task_id), encoding="utf-8")
    if "max_line_bytes" in case:
        monkeypatch.setattr("taskfactory.use.score.MAX_LINE_BYTES", case["max_line_bytes"])
    result = invoke(["score", str(small_corpus), str(path), "--json"])
    if "error" in case:
        expect_error(result, case, file=path)
        return
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["overall"]["answers"] == case["answers"]
    assert report["overall"]["invalid_share"] == case["invalid"] / case["answers"]
    assert {k: v["lines"] for k, v in report["problems"].items()} == case["problems"]
    assert report["notes"] == case.get("notes", [])


# --- corpora -----------------------------------------------------------------------

def _resign(corpus: Path, shard: Path) -> None:
    """Re-sign a shard in the manifest, as a careful forger would."""
    manifest = json.loads((corpus / "manifest.json").read_text())
    for entry in manifest["shards"]:
        if entry["path"] == f"data/{shard.name}":
            entry["sha256"], entry["bytes"] = sha256_file(shard), shard.stat().st_size
            entry["rows"] = pq.ParquetFile(shard).metadata.num_rows
    (corpus / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _shard(corpus: Path, index: int) -> Path:
    return sorted((corpus / "data").glob("*.parquet"))[index]


def _set_path(obj, dotted: str, value) -> None:
    keys = dotted.split(".")
    for key in keys[:-1]:
        obj = obj[int(key)] if isinstance(obj, list) else obj[key]
    last = keys[-1]
    if isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


def mutate(corpus: Path, steps: list[dict]) -> dict:
    """Apply the edits of a corpus case; returns placeholder values."""
    values = {}
    for step in steps:
        (op, arg), = step.items()
        if op == "write":
            (corpus / arg["path"]).write_text(arg["text"], encoding="utf-8")
        elif op == "write_hex":
            (corpus / arg["path"]).write_bytes(bytes.fromhex(arg["hex"]))
        elif op == "symlink":
            (corpus / arg["path"]).symlink_to(arg["target"])
        elif op == "mkdir":
            (corpus / arg).mkdir(parents=True)
        elif op == "delete":
            target = corpus / arg
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        elif op == "manifest":
            manifest = json.loads((corpus / "manifest.json").read_text())
            for key, value in arg.items():
                _set_path(manifest, key, value)
            (corpus / "manifest.json").write_text(json.dumps(manifest, indent=1))
        elif op == "drop_shard":  # the shard and its manifest entry, as a careful forger would
            shard = _shard(corpus, arg)
            manifest = json.loads((corpus / "manifest.json").read_text())
            manifest["shards"] = [e for e in manifest["shards"] if e["path"] != f"data/{shard.name}"]
            (corpus / "manifest.json").write_text(json.dumps(manifest, indent=1))
            shard.unlink()
        elif op == "delete_row":
            shard = _shard(corpus, 0)
            rows = pq.read_table(shard).to_pylist()
            values.setdefault("task_id", rows[arg]["task_id"])
            write_shard(shard, rows[:arg] + rows[arg + 1:], {"grid_name": "hostile"})
            _resign(corpus, shard)
        elif op in ("null_cell", "as_text"):  # rewrite one column of shard 0, keeping the rest, and re-sign
            shard = _shard(corpus, 0)
            table = pq.read_table(shard)
            index = table.schema.get_field_index(arg["column"])
            column = table.column(index)
            if op == "null_cell":
                cells = column.to_pylist()
                cells[0] = None
                new = pa.array(cells, type=column.type)
            else:
                new = pa.array([str(v) for v in column.to_pylist()], type=pa.string())
            table = table.set_column(index, pa.field(arg["column"], new.type, nullable=True), new)
            pq.write_table(table, shard)
            _resign(corpus, shard)
        elif op in ("record", "duplicate_row", "drop_column"):
            shard = _shard(corpus, arg.get("shard", 0))
            table = pq.read_table(shard)
            rows = table.to_pylist()
            row = arg.get("row", 0)
            values.setdefault("task_id", rows[row]["task_id"])
            if op == "record":
                for key, value in arg["set"].items():
                    _set_path(rows[row], key, value)
                write_shard(shard, rows, {"grid_name": "hostile"})
            elif op == "duplicate_row":
                rows.append(dict(rows[row]))
                write_shard(shard, rows, {"grid_name": "hostile"})
            else:
                pq.write_table(table.drop_columns([arg["column"]]), shard)
            if arg.get("resign", True):   # resign: false leaves the manifest as the build wrote it
                _resign(corpus, shard)
        else:
            raise AssertionError(f"unknown mutation '{op}'")
    return values


@pytest.mark.parametrize("case", cases("corpora"), ids=case_id)
def test_hostile_corpus(case, small_corpus, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(small_corpus, corpus)
    grid = tmp_path / "grid.yaml"
    grid.write_text(json.dumps(SMALL))
    values = mutate(corpus, case.get("mutate", []))
    placeholders = dict(corpus=corpus, dir=tmp_path, grid=grid, **values)
    result = invoke([a.format(**placeholders) for a in case["command"]])
    if "error" in case:
        expect_error(result, case, **placeholders)
    else:
        assert result.exit_code == case["exit"], (case_id(case), result.output)
        lines = result.output.splitlines()
        for want in case["fails"]:
            assert want.format(**placeholders) in lines, (case_id(case), result.output)
        assert "Traceback" not in result.output
    for leftover in case.get("untouched", []):
        assert (tmp_path / leftover).exists(), leftover


# --- analyse -----------------------------------------------------------------------

def _frame(case: dict):
    """The case's data as a frame: ``dtypes`` casts columns (``object``, or
    ``complex`` from texts such as ``"1+2j"``), ``scale`` multiplies columns,
    ``tuple_cells`` makes every list cell a tuple."""
    data = case["data"]
    if case.get("as") == "dict":
        return data
    if case.get("tuple_cells"):
        data = {col: [tuple(v) if isinstance(v, list) else v for v in values] for col, values in data.items()}
    frame = pd.DataFrame(data)
    for col, dtype in case.get("dtypes", {}).items():
        frame[col] = frame[col].astype(dtype)
    for col, factor in case.get("scale", {}).items():
        frame[col] = frame[col] * factor
    if case.get("as") == "duplicate_columns":
        return frame.rename(columns={frame.columns[1]: frame.columns[0]})
    return frame


@pytest.mark.parametrize("case", cases("analyse"), ids=case_id)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # numpy's overflow warnings on the extreme scales
def test_hostile_analyse_call(case):
    kwargs = {k: case[k] for k in ("alpha", "ranges") if k in case}
    with pytest.raises(InputError) as err:
        tf.analyse(case["method"], _frame(case), case["roles"], **kwargs)
    assert str(err.value) == case["error"]
    assert type(err.value).__name__ == case.get("type", "DataError")


# --- real-data specs ---------------------------------------------------------------

@pytest.mark.parametrize("case", cases("specs"), ids=case_id)
def test_hostile_spec(case, tmp_path):
    shutil.copytree(HERE / "specs" / "data", tmp_path / "data")
    if "link" in case:
        (tmp_path / "data" / case["link"]["name"]).symlink_to(case["link"]["to"])
    if "copy" in case:   # a well-formed data file under a hostile name
        shutil.copyfile(tmp_path / "data" / "groups.csv", tmp_path / "data" / case["copy"])
    path = materialise(case, tmp_path)
    out = tmp_path / "corpus"
    expect_error(invoke(["import", str(path), "-o", str(out)]), case, file=path, dir=tmp_path)
    assert not out.exists()
