"""taskfactory verify: a fresh corpus passes; every kind of damage is named."""

import importlib
import json
import math
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from taskfactory.cli import main
from taskfactory.store.corpus import sha256_file
from taskfactory.store.shards import write_shard

from conftest import PINNED, built_once, fresh_copy

#: The module (``taskfactory.audit.verify`` is also the name of the function the package exports).
VERIFY = importlib.import_module("taskfactory.audit.verify")

GRID = {"name": "v", "seed": 8, "methods": ["welch_t", "spearman"], "scenarios": PINNED, "n": [40],
        "effects": ["medium"], "perturbations": ["none", "missing+extreme"], "shard_rows": 30}


pristine = built_once(GRID, "v")


@pytest.fixture
def corpus(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def verify(corpus, *args):
    result = CliRunner().invoke(main, ["verify", str(corpus), *args])
    return result.exit_code, result.output


def rewrite(corpus, shard, edit, rows=None):
    """Edit the first record of ``shard`` and re-sign the manifest, as a careful forger would."""
    path = corpus / "data" / shard
    rows = rows or pq.read_table(path).to_pylist()
    edit(rows[0])
    write_shard(path, rows, {"grid_name": "v"})
    manifest = json.loads((corpus / "manifest.json").read_text())
    for entry in manifest["shards"]:
        if entry["path"] == f"data/{shard}":
            entry["sha256"], entry["bytes"], entry["rows"] = sha256_file(path), path.stat().st_size, len(rows)
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    return rows[0]["task_id"]


#: The last report line, but for its timing figures.
VERDICT = r"{} \({} tasks in \d+\.\d s, \d+\.\d tasks/s\)"


def test_a_fresh_build_verifies(pristine):
    code, out = verify(pristine, "--jobs", "2")
    assert code == 0, out
    assert out.splitlines()[-3:-1] == [
        "shards: 2 listed, 2 match manifest.json",
        "tasks: 48 of 48 checked; records re-derived in every field: 48 of 48; scripts reproduced the CSV: 48 of 48 run",
    ]
    assert re.fullmatch(VERDICT.format("OK: every check passed", 48), out.splitlines()[-1]), out


def test_a_sample_checks_that_many_tasks(pristine):
    from taskfactory.audit.verify import verify as run

    assert run(pristine, sample=7, seed=3).tasks == 7


def test_the_command_line_samples_default_sample_tasks(pristine, monkeypatch):
    monkeypatch.setattr(VERIFY, "DEFAULT_SAMPLE", 3)
    code, out = verify(pristine)
    assert code == 0, out
    assert out.splitlines() == [
        "shards: 2 listed, 2 match manifest.json",
        "tasks: 3 of 48 checked; records re-derived in every field: 3 of 3; scripts reproduced the CSV: 3 of 3 run",
        out.splitlines()[-1],
    ]
    assert re.fullmatch(VERDICT.format("OK: every check passed", 3), out.splitlines()[-1]), out


def test_all_checks_every_task(pristine, monkeypatch):
    monkeypatch.setattr(VERIFY, "DEFAULT_SAMPLE", 3)
    code, out = verify(pristine, "--all", "--jobs", "2")
    assert code == 0, out
    assert "tasks: 48 of 48 checked; records re-derived in every field: 48 of 48; scripts reproduced the CSV: 48 of 48 run" in out
    assert re.fullmatch(VERDICT.format("OK: every check passed", 48), out.splitlines()[-1]), out


def test_the_default_sample_is_documented():
    from taskfactory.audit.verify import DEFAULT_SAMPLE

    out = CliRunner().invoke(main, ["verify", "--help"]).output
    assert f"(default: {DEFAULT_SAMPLE})" in " ".join(out.split())


def test_all_with_sample_is_a_usage_error(pristine):
    code, out = verify(pristine, "--all", "--sample", "5")
    assert code == 2
    assert out == "error: main verify: --all and --sample cannot be used together (see --help)\n"


def test_a_failed_verdict_gives_the_tasks_and_their_rate(corpus):
    tid = rewrite(corpus, "train-00001-of-00002.parquet", lambda rec: rec.update(gold_p=0.0123))
    code, out = verify(corpus, "--all")
    assert code == 1 and f"FAIL {tid}: gold_p 0.0123 differs" in out
    assert re.fullmatch(VERDICT.format(re.escape("FAILED: 1 problem(s)"), 48), out.splitlines()[-1]), out


def test_the_rate_is_checked_tasks_per_second():
    from taskfactory.audit.verify import VerifyReport, format_report

    report = VerifyReport(shards=4, shards_ok=4, total=500, tasks=400, records_ok=400, scripts_ok=400, scripts_run=400,
                          seconds=12.3)
    assert format_report(report).splitlines() == [
        "shards: 4 listed, 4 match manifest.json",
        "tasks: 400 of 500 checked; records re-derived in every field: 400 of 400; scripts reproduced the CSV: 400 of 400 run",
        "OK: every check passed (400 tasks in 12.3 s, 32.5 tasks/s)",
    ]
    assert format_report(VerifyReport()).splitlines()[-1] == "OK: every check passed (0 tasks in 0.0 s, 0.0 tasks/s)"


def test_the_command_line_shows_progress_only_on_a_terminal(pristine, monkeypatch):
    seen = {}
    real = VERIFY.verify

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(VERIFY, "verify", spy)
    code, out = verify(pristine, "--sample", "2")
    assert code == 0 and seen["progress"] is False and "\r" not in out


def test_progress_draws_a_bar_on_stderr(pristine, capsys):
    from taskfactory.audit.verify import verify as run

    assert run(pristine, sample=4, progress=True).ok
    err = capsys.readouterr().err
    assert "verifying" in err and "4/4" in err
    assert run(pristine, sample=4).ok
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("tasks, jobs, size", [(48, 1, 1000), (10516, 2, 877), (1000, 2, 500), (2500, 2, 625),
                                               (400, 2, 200), (250, 2, 125), (48, 2, 24), (3, 4, 1), (0, 2, 1000)])
def test_chunks_share_the_work_evenly(tasks, jobs, size):
    from taskfactory.audit.verify import CHUNK_TASKS, chunk_size

    assert chunk_size(tasks, jobs) == size <= CHUNK_TASKS
    if tasks:
        assert math.ceil(tasks / size) % jobs == 0 or tasks < jobs


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
    assert len(fails) == 1 and fails[0].startswith(f"FAIL {tid}: gold_p 0.0123 differs from the re-derived ")


def test_a_gold_forged_in_a_shard_the_manifest_does_not_vouch_for_is_named_with_the_shard(corpus):
    path = corpus / "data" / "train-00000-of-00002.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[0]["gold"]["p_value"] = 0.999
    write_shard(path, rows, {"grid_name": "v"})   # the manifest keeps the build's sha256 and size
    code, out = verify(corpus, "--all")
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert re.fullmatch(r"FAIL data/train-00000-of-00002\.parquet: sha256 [0-9a-f]{12} differs from manifest\.json's "
                        r"[0-9a-f]{12} \(\d+ bytes, manifest says \d+\): modified or truncated", fails[0]), out
    assert len(fails) == 2 and fails[1].startswith(f"FAIL {rows[0]['task_id']}: gold {{'kind': 'p_value', 'p_value': "
                                                   "0.999,"), out
    assert "shards: 2 listed, 1 match manifest.json" in out


@pytest.mark.parametrize("edit, named", [
    (lambda r: r["gold"].update(p_value=float("nan")), "gold {'kind': 'p_value', 'p_value': nan, '... differs"),
    (lambda r: r.update(split="../evil"), "split '../evil' differs from the re-derived 'train'"),
    (lambda r: r.update(method="evil"), "cannot be re-derived: its method 'evil' is not in the corpus's grid"),
], ids=["nan p", "split", "method"])
def test_a_forged_but_consistent_record_is_named_not_raised(corpus, edit, named):
    """What the readers refuse (tests/test_corpus_trust.py), verify names as a
    difference from the re-derived record."""
    tid = rewrite(corpus, "train-00000-of-00002.parquet", edit)
    code, out = verify(corpus, "--all")
    assert code == 1 and "Traceback" not in out
    assert any(line.startswith(f"FAIL {tid}: {named}") for line in out.splitlines()), out


EDITS = [
    ("trap", lambda r: not r["trap"]),
    ("naive_p", lambda r: 0.5),
    ("gold_z", lambda r: r["gold_z"] + 0.5),
    ("gold_df", lambda r: [1.0]),
    ("gold_method", lambda r: "Two Sample t-test"),
    ("alpha", lambda r: 0.01),
    ("n_analysed", lambda r: r["n_analysed"] - 1),
    ("kept_impossible_decision", lambda r: "reject"),
    ("data_dictionary", lambda r: [{**r["data_dictionary"][0], "label": "X"}, *r["data_dictionary"][1:]]),
]
TEXTS = ["prompt", "reference_py", "reference_r", "question", "context"]


def test_every_derived_field_is_rederived(corpus):
    """Each row gets one edit; each edit is named, and nothing else is."""
    path = corpus / "data" / "train-00000-of-00002.parquet"
    rows = pq.read_table(path).to_pylist()
    for row, (name, value) in zip(rows, EDITS):
        row[name] = value(row)
    for row, name in zip(rows[len(EDITS):], TEXTS):
        row[name] = row[name][:10] + "X" + row[name][11:]
    rewrite(corpus, "train-00000-of-00002.parquet", lambda rec: None, rows=rows)
    code, out = verify(corpus)
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL ")]
    for row, (name, _) in zip(rows, EDITS):
        mine = [line for line in fails if line.startswith(f"FAIL {row['task_id']}: ")]
        assert mine and all(line.startswith(f"FAIL {row['task_id']}: {name} ") for line in mine), (name, mine)
    for row, name in zip(rows[len(EDITS):], TEXTS):
        assert [line for line in fails if line.startswith(f"FAIL {row['task_id']}: ")] == [
            f"FAIL {row['task_id']}: {name} differs from the re-derived one (from character 10)"]
    assert len(fails) == len(EDITS) + len(TEXTS)


def test_a_duplicated_task_id_is_named(corpus):
    path = corpus / "data" / "train-00000-of-00002.parquet"
    rows = pq.read_table(path).to_pylist()
    rows.append(dict(rows[3]))
    rewrite(corpus, "train-00000-of-00002.parquet", lambda rec: None, rows=rows)
    code, out = verify(corpus, "--sample", "1")
    assert code == 1
    tid = rows[3]["task_id"]
    assert (f"FAIL {tid}: appears 2 times (data/train-00000-of-00002.parquet row 3, "
            f"data/train-00000-of-00002.parquet row {len(rows) - 1})") in out.splitlines()


def test_a_replaced_script_is_never_run(corpus, tmp_path):
    marker = tmp_path / "PWNED"

    def edit(rec):
        rec["script"] = f"open({str(marker)!r}, 'w').write('x')\n" + rec["script"]

    tid = rewrite(corpus, "train-00000-of-00002.parquet", edit)
    code, out = verify(corpus)
    assert code == 1 and not marker.exists()
    assert f"FAIL {tid}: its script is not the one taskfactory emits for this task; it was not run" in out.splitlines()


@pytest.mark.parametrize("bad", ["../../../../tmp/x", "/tmp/x", "welch_t-ABC", "welch_t-0123456789ab\n"])
def test_a_hostile_task_id_is_named_and_never_used_as_a_path(corpus, tmp_path, bad):
    rewrite(corpus, "train-00000-of-00002.parquet", lambda rec: rec.update(task_id=bad))
    code, out = verify(corpus, "--sample", "1")
    assert code == 1
    assert f"FAIL data/train-00000-of-00002.parquet row 0: task_id {bad!r} is not a taskfactory task id" in out
    assert not Path("/tmp/x.py").exists() and not Path("/tmp/x.csv").exists()


def test_a_truncated_shard_is_reported_not_raised(corpus):
    path = corpus / "data/train-00001-of-00002.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    code, out = verify(corpus, "--sample", "1")
    assert code == 1
    assert "FAIL data/train-00001-of-00002.parquet: sha256 " in out and "modified or truncated" in out
    assert "FAIL data/train-00001-of-00002.parquet: cannot be read: not a readable Parquet shard" in out
    assert "Traceback" not in out
    assert "shards: 2 listed, 1 match manifest.json" in out


def test_a_shard_missing_from_the_manifest_is_named(corpus):
    manifest = json.loads((corpus / "manifest.json").read_text())
    manifest["shards"] = manifest["shards"][:1]
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    code, out = verify(corpus, "--sample", "1")
    assert code == 1
    assert "FAIL data/train-00001-of-00002.parquet: is not listed in manifest.json" in out


def test_a_shard_listed_but_gone_is_named(corpus):
    (corpus / "data/train-00000-of-00002.parquet").unlink()
    code, out = verify(corpus, "--sample", "1")
    assert code == 1 and "FAIL data/train-00000-of-00002.parquet: is listed in manifest.json but missing" in out


def test_a_broken_script_is_named(corpus):
    def edit(rec):
        rec["script"] = rec["script"].replace("def main(path=None):\n", "def main(path=None):\n    raise RuntimeError('tampered')\n")

    tid = rewrite(corpus, "train-00000-of-00002.parquet", edit)
    code, out = verify(corpus)
    assert code == 1 and f"FAIL {tid}: script differs from the re-derived one (from character " in out
    assert f"FAIL {tid}: its script is not the one taskfactory emits for this task; it was not run\n" in out


def test_not_a_corpus(tmp_path):
    code, out = verify(tmp_path)
    assert code == 2 and out == f"error: {tmp_path}: not a taskfactory corpus (no manifest.json)\n"


def test_the_prompt_styles_of_a_dataset_run_one_script(pristine, monkeypatch):
    """Their scripts differ only in the task they describe, so one run shows both reproduce."""
    ran, real = [], VERIFY.run_scripts
    monkeypatch.setattr(VERIFY, "run_scripts", lambda scripts, limits: ran.extend(scripts) or real(scripts, limits))
    report = VERIFY.verify(pristine)
    records = [rec for path in sorted((pristine / "data").glob("*.parquet"))
               for rec in pq.read_table(path, columns=["data_id", "script"]).to_pylist()]
    with_script = [rec for rec in records if rec["script"] is not None]
    assert report.ok and report.scripts_ok == len(with_script) == 2 * len(ran)
    assert sorted({rec["data_id"] for rec in with_script}) == sorted(
        {rec["data_id"] for rec in with_script if rec["script"] in ran})


@pytest.mark.parametrize("limit", ["one task", "every task"])
def test_chunks_end_once_their_csvs_and_scripts_are_long(pristine, monkeypatch, limit):
    """A chunk ends at CHUNK_TASKS tasks or once its CSVs and scripts reach CHUNK_TEXT
    characters, whichever comes first: a worker's memory stays bounded."""
    records = [rec for path in sorted((pristine / "data").glob("*.parquet"))
               for rec in pq.read_table(path, columns=["data_csv", "script"]).to_pylist()]
    text = sum(len(rec["data_csv"] or "") + len(rec["script"] or "") for rec in records)
    sizes, real = [], VERIFY._check_chunk
    monkeypatch.setattr(VERIFY, "CHUNK_TEXT", 1 if limit == "one task" else text)
    monkeypatch.setattr(VERIFY, "_check_chunk", lambda grid, tasks, *rest: sizes.append(len(tasks)) or
                        real(grid, tasks, *rest))
    assert VERIFY.verify(pristine).ok
    assert sizes == ([1] * len(records) if limit == "one task" else [len(records)]) and len(records) < VERIFY.CHUNK_TASKS


def test_json_report(pristine):
    code, out = verify(pristine, "--sample", "4", "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and report["problems"] == []
    assert (report["shards"], report["shards_ok"], report["tasks_total"], report["tasks_checked"]) == (
        report["shards"], report["shards"], 48, 4)
    assert report["records_ok"] == 4 and report["tasks_per_second"] > 0


def test_chunks_are_checked_in_worker_processes_even_where_threads_are_configured(pristine, tmp_path, monkeypatch):
    """Re-deriving holds the GIL and release() sets process-wide warning filters, so two chunks never
    share a process: a caller's joblib configuration for threads does not apply."""
    import os

    import joblib

    log, real = tmp_path / "pids", VERIFY._check_chunk

    def logged(*args, **kwargs):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(VERIFY, "_check_chunk", logged)
    with joblib.parallel_config(backend="threading"):
        report = VERIFY.verify(pristine, jobs=2)
    pids = log.read_text().split()
    assert report.ok and report.tasks == report.records_ok == 48
    assert len(pids) == 2 and str(os.getpid()) not in pids
