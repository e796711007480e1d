"""taskfactory import: real datasets, questions and methods in, tasks with R-exact golds out."""

import importlib.util
import json
import math
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records, sha256_file
from taskfactory.errors import InputError
from taskfactory.audit.leakage import check_leakage
from taskfactory.store import real
from taskfactory.store.real import INFERRED, SpecError, import_spec, spec_sha256
from taskfactory.result import z_of_p
from taskfactory.use.schema import json_schema
from taskfactory.make.columns import roles_of
from taskfactory.store.shards import write_shard

from test_api import OVARIAN

GROUPS = Path(__file__).resolve().parent / "adversarial" / "specs" / "data" / "groups.csv"
CLINIC = {"id": "clinic_sbp", "data": "data/groups.csv", "method": "welch_t", "roles": {"outcome": "sbp", "group": "arm"},
          "context": "A clinic compared two treatments in 30 patients.",
          "question": "Does systolic blood pressure differ between the arms?", "ranges": {"sbp": [70, 150]},
          "data_dictionary": {"sbp": {"label": "Systolic blood pressure", "unit": "mmHg", "type": "numeric"},
                              "arm": {"label": "Treatment arm", "type": "category", "levels": ["control", "treated"]}},
          "source": {"citation": "Made for this test.", "licence": "CC0-1.0"}}
OVARIAN_ITEM = {"id": "ovarian_rx", "data": "data/ovarian.csv", "method": "log_rank", "domain": "oncology",
                "roles": {"time": "futime", "event": "fustat", "group": "rx"}, "split": "train",
                "context": "A trial of two chemotherapy regimens in ovarian cancer followed 26 women.",
                "question": "Does survival differ between the two regimens?"}


def write_spec(folder: Path, items: list[dict], suffix: str = ".yaml") -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(GROUPS, folder / "data" / "groups.csv")
    OVARIAN.to_csv(folder / "data" / "ovarian.csv", index=False)
    path = folder / f"spec{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(item) + "\n" for item in items))
    else:
        path.write_text(yaml.safe_dump({"name": "tiny", "items": items}, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    spec = write_spec(root, [CLINIC, OVARIAN_ITEM])
    result = CliRunner().invoke(main, ["import", str(spec), "-o", str(root / "corpus")])
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote {root / 'corpus'}: 4 tasks from 2 datasets (test 2, train 2)\n"
    return root / "corpus"


def crosscheck():
    """scripts/crosscheck_r.py as a module (its functions run in-process; no R needed)."""
    path = Path(__file__).resolve().parent.parent / "scripts" / "crosscheck_r.py"
    spec = importlib.util.spec_from_file_location("crosscheck_r", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rewritten(corpus: Path, copy: Path, change, rehash: bool = True) -> dict:
    """A copy of ``corpus`` whose manifest's spec ``change`` edits in place,
    its grid_sha256 made to match again when ``rehash``; the new manifest."""
    shutil.copytree(corpus, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    change(manifest["grid"])
    if rehash:
        manifest["grid_sha256"] = spec_sha256(manifest["grid"])
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def test_every_item_is_a_task_per_prompt_style_with_rs_gold(imported):
    """R 4.2.2, the file as released, values outside [70, 150] set to NA, complete cases:
    > t.test(sbp ~ arm, data = d)$p.value
    [1] 0.59513750265940613
    and survival's ovarian data (see test_api):
    > survdiff(Surv(futime, fustat) ~ rx, data = d)$pvalue
    [1] 0.30259111698909524
    """
    tasks = {(t["scenario"], t["prompt_style"]): t for t in iter_records(imported)}
    assert sorted(tasks) == [("clinic_sbp", "basic"), ("clinic_sbp", "guided"), ("ovarian_rx", "basic"),
                             ("ovarian_rx", "guided")]
    clinic, ovarian = tasks["clinic_sbp", "basic"], tasks["ovarian_rx", "guided"]
    assert clinic["gold_p"] == pytest.approx(0.59513750265940613, rel=1e-12)
    assert ovarian["gold_p"] == pytest.approx(0.30259111698909524, rel=1e-12)
    assert (clinic["n"], clinic["n_rows"], clinic["n_analysed"], clinic["n_impossible_values"]) == (30, 30, 27, 3)
    assert clinic["kept_impossible_p"] is not None and clinic["naive_method"] == "Two Sample t-test"
    assert [a["method"] for a in ovarian["accepted"]][0].startswith("Cox")
    for task in tasks.values():
        assert (task["effect"], task["script"], task["dgp_params"], task["grid_name"]) == ("real", None, [], "tiny")
        assert math.isnan(task["effect_value"]) and task["data_csv"] == task["data_csv"].replace("\r", "")
    assert clinic["split"] == "test" and ovarian["split"] == "train" and ovarian["domain"] == "oncology"
    assert clinic["data_csv"] == GROUPS.read_text()
    dictionary = {e["name"]: e for e in clinic["data_dictionary"]}
    assert dictionary["sbp"]["range"] == [70.0, 150.0] and dictionary["sbp"]["unit"] == "mmHg"
    assert dictionary["patient"]["label"] == INFERRED and dictionary["patient"]["type"] == "id"
    assert "Hints about these data:" in tasks["clinic_sbp", "guided"]["prompt"]
    assert clinic["prompt"].startswith(CLINIC["context"] + "\n\nResearch question: " + CLINIC["question"])


def test_a_real_corpus_verifies_and_scores_as_a_built_one_and_crosscheck_takes_its_design_from_the_spec(imported):
    report = tf.verify(imported)
    assert report.ok and (report.tasks, report.records_ok, report.scripts_run) == (4, 4, 0), report.problems
    scored = CliRunner().invoke(main, ["score", str(imported), "--baseline", "gold", "--json"])
    assert json.loads(scored.output)["overall"]["mean_reward"] == 1.0
    manifest = json.loads((imported / "manifest.json").read_text())
    assert manifest["origin"] == "real" and [it["id"] for it in manifest["grid"]["items"]] == ["clinic_sbp", "ovarian_rx"]
    assert manifest["grid"]["items"][0]["file_sha256"] == sha256_file(GROUPS)
    card = (imported / "README.md").read_text()
    assert "- `clinic_sbp` (welch_t): Made for this test. Licence: CC0-1.0." in card
    assert "- `ovarian_rx` (log_rank): no source given." in card
    check = crosscheck()
    spec = check.real_spec(manifest)
    tasks = list(iter_records(imported, columns=check.COLUMNS))
    designs = {t["scenario"]: check.design(t, spec) for t in tasks}
    assert designs == {"clinic_sbp": ({"outcome": "sbp", "group": "arm", "cluster": None}, {"sbp": (70.0, 150.0)}),
                       "ovarian_rx": ({"time": "futime", "event": "fustat", "group": "rx", "covariates": [], "cluster": None},
                                      {})}
    clinic = next(t for t in tasks if t["scenario"] == "clinic_sbp")
    gold_code = check.checks(clinic, designs["clinic_sbp"][0])[0][2]
    block = check.r_block(clinic, *designs["clinic_sbp"], Path("x.csv"), "c", gold_code, "p")
    assert "d$sbp[!is.na(d$sbp) & (d$sbp < 70 | d$sbp > 150)] <- NA" in block
    assert 'd <- d[complete.cases(d[, c("sbp", "arm")]), ]' in block and "t.test(sbp ~ arm" in block


def test_line_endings_and_a_byte_order_mark_are_left_out_of_the_released_csv(tmp_path):
    """groups.csv written with CRLF line endings and a byte-order mark gives the
    LF file's data_csv, sha256 and gold (0.59513750265940613, as above)."""
    spec = write_spec(tmp_path, [CLINIC])
    lf = GROUPS.read_text()
    assert "\r" not in lf
    (tmp_path / "data" / "groups.csv").write_bytes(b"\xef\xbb\xbf" + lf.replace("\n", "\r\n").encode())
    import_spec(spec, tmp_path / "corpus")
    task = next(iter_records(tmp_path / "corpus"))
    assert task["data_csv"] == lf and task["gold_p"] == pytest.approx(0.59513750265940613, rel=1e-12)
    manifest = json.loads((tmp_path / "corpus" / "manifest.json").read_text())
    item = manifest["grid"]["items"][0]
    assert item["csv_sha256"] == task["data_sha256"] != item["file_sha256"]
    assert item["file_sha256"] == sha256_file(tmp_path / "data" / "groups.csv")
    assert tf.verify(tmp_path / "corpus").ok


INJECTED = '0); system("touch /tmp/PWNED"); (0'


def test_crosscheck_refuses_a_manifest_whose_value_role_is_code_or_whose_spec_is_not_its_hash(imported, tmp_path,
                                                                                              capsys):
    """A value role (a number: welch_t has none, so one_sample_t's mu0) edited into
    R code is refused before any R is written, whether or not the manifest's
    grid_sha256 was made to match; so is a spec that does not match its hash."""
    check = crosscheck()
    clinic = next(t for t in iter_records(imported, columns=check.COLUMNS) if t["scenario"] == "clinic_sbp")

    def inject(spec):
        spec["items"][0].update(method="one_sample_t", roles={"outcome": "sbp", "mu0": INJECTED})

    manifest = rewritten(imported, tmp_path / "rehashed", inject)
    with pytest.raises(SpecError, match=r"item 'clinic_sbp': role 'mu0' must be a finite number, got '0\); system"):
        check.design({**clinic, "method": "one_sample_t"}, check.real_spec(manifest))
    stale = rewritten(imported, tmp_path / "stale", inject, rehash=False)
    with pytest.raises(SpecError, match="^manifest.json: its spec does not match its grid_sha256$"):
        check.real_spec(stale)
    for change, refusal in [
            (lambda s: s["items"][0]["roles"].update(outcome='sbp); system("id"); ('), "the column name 'sbp"),
            (lambda s: s["items"][0]["roles"].pop("group"), "roles lack 'group'"),
            (lambda s: s["items"][0]["ranges"].update(sbp=["0); system(1)", 150]), "its ranges must map"),
            (lambda s: s["items"][0].update(method="ols_coefficient",
                                            roles={"outcome": "class", "exposure": "arm", "covariates": []}),
             "a word Python reserves")]:
        copy = tmp_path / str(len(list(tmp_path.iterdir())))
        with pytest.raises(SpecError, match=refusal):
            check.design(clinic, check.real_spec(rewritten(imported, copy, change)))
    check.unparsable_templates = lambda: []   # R is not run: the corpus is refused before
    check.shutil = type("NoShutil", (), {"which": staticmethod(lambda name: "/usr/bin/Rscript")})
    assert check.main([str(tmp_path / "stale")]) == 2
    assert capsys.readouterr().err == "error: manifest.json: its spec does not match its grid_sha256\n"


def test_crosscheck_refuses_a_real_task_whose_csv_lacks_the_columns_of_its_spec(imported):
    check = crosscheck()
    spec = check.real_spec(json.loads((imported / "manifest.json").read_text()))
    task = next(t for t in iter_records(imported, columns=check.COLUMNS) if t["scenario"] == "clinic_sbp")
    with pytest.raises(SpecError, match=r"^item 'clinic_sbp': its released CSV is not a CSV of the columns its spec "
                                        r"names \(Column '\w+' in include_columns does not exist in CSV file\)$"):
        check.design({**task, "data_csv": "a,b\n1,2\n"}, spec)


def test_verify_refuses_a_corpus_whose_spec_holds_code_in_a_value_role_or_a_column_name(imported, tmp_path,
                                                                                       monkeypatch):
    """verify re-derives a real record only from a spec the import would have
    taken: a value role edited into code (the hash made to match) is named; so is
    a corpus written, past the import's checks, from a spec naming a column that
    is R code."""
    def inject(spec):
        spec["items"][0].update(method="one_sample_t", roles={"outcome": "sbp", "mu0": INJECTED})

    rewritten(imported, tmp_path / "rehashed", inject)
    report = tf.verify(tmp_path / "rehashed")
    assert not report.ok
    assert any("cannot be re-derived" in why and "role 'mu0' must be a finite number" in why
               for _, why in report.problems), report.problems

    name = 'sbp); system("id"); ('
    spec = write_spec(tmp_path / "injected", [{**CLINIC, "roles": {"outcome": name, "group": "arm"}, "ranges": {},
                                               "data_dictionary": {}}])
    lines = (tmp_path / "injected" / "data" / "groups.csv").read_text().splitlines(keepends=True)
    (tmp_path / "injected" / "data" / "groups.csv").write_text(
        'patient,arm,"' + name.replace('"', '""') + '"\n' + "".join(lines[1:]))
    with pytest.raises(SpecError, match="the column name 'sbp"):
        import_spec(spec, tmp_path / "refused")
    with monkeypatch.context() as patched:
        patched.setattr(real, "_check_names", lambda *args: None)
        import_spec(spec, tmp_path / "written")
    report = tf.verify(tmp_path / "written")
    assert not report.ok and len(report.problems) == 2, report.problems
    assert all("cannot be re-derived" in why and "the column name 'sbp" in why for _, why in report.problems)


def test_loading_a_spec_analyses_each_item_once(tmp_path, monkeypatch):
    spec = write_spec(tmp_path, [CLINIC, OVARIAN_ITEM])
    calls = []
    analyse = real.analyse_item
    monkeypatch.setattr(real, "analyse_item", lambda item, text: calls.append(item.id) or analyse(item, text))
    import_spec(spec, tmp_path / "corpus")
    assert calls == ["clinic_sbp", "ovarian_rx"]


def test_verify_names_a_record_that_differs_from_its_spec(imported, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(imported, copy)
    shard = sorted((copy / "data").glob("test-*.parquet"))[0]
    rows = pq.read_table(shard).to_pylist()
    rows[0]["question"] = "Is the new drug better?"
    write_shard(shard, rows, {})
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = next(e for e in manifest["shards"] if e["path"] == f"data/{shard.name}")
    entry["sha256"], entry["bytes"] = sha256_file(shard), shard.stat().st_size
    (copy / "manifest.json").write_text(json.dumps(manifest))
    report = tf.verify(copy)
    assert report.problems == [(rows[0]["task_id"], "question differs from the re-derived one (from character 0)")]


def test_verify_names_a_task_of_the_spec_the_corpus_lacks(imported, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(imported, copy)
    shard = sorted((copy / "data").glob("train-*.parquet"))[0]
    rows = pq.read_table(shard).to_pylist()
    write_shard(shard, rows[1:], {})
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = next(e for e in manifest["shards"] if e["path"] == f"data/{shard.name}")
    entry["sha256"], entry["bytes"], entry["rows"] = sha256_file(shard), shard.stat().st_size, len(rows) - 1
    manifest["counts"]["tasks"] -= 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert tf.verify(copy).problems == [("manifest.json", f"the corpus lacks the task {rows[0]['task_id']} of its spec")]


def test_a_jsonl_spec_gives_the_yaml_specs_tasks(imported, tmp_path):
    spec = write_spec(tmp_path, [CLINIC, OVARIAN_ITEM], ".jsonl")
    manifest = import_spec(spec, tmp_path / "corpus")
    assert manifest["name"] == "spec"   # a JSONL spec is named by its file
    ids = sorted(t["task_id"] for t in iter_records(tmp_path / "corpus", columns=["task_id"]))
    assert ids == sorted(t["task_id"] for t in iter_records(imported, columns=["task_id"]))


def test_the_output_must_be_a_new_or_empty_folder(tmp_path):
    spec = write_spec(tmp_path, [CLINIC])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="the folder is not empty"):
        import_spec(spec, tmp_path / "full")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="a symbolic link"):
        import_spec(spec, tmp_path / "link")
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine" and not (tmp_path / "elsewhere").exists()


def test_the_spec_schema_describes_every_key_and_accepts_a_spec(tmp_path):
    schema = json_schema("import")
    assert schema["title"] == "taskfactory real-data spec"
    items = schema["$defs"]["Item"]["properties"]
    assert {"id", "data", "method", "roles", "context", "question", "ranges", "data_dictionary", "source"} <= set(items)
    assert all(v.get("description") for v in items.values())
    jsonschema.validate(yaml.safe_load(write_spec(tmp_path, [CLINIC, OVARIAN_ITEM]).read_text()), schema)
    printed = CliRunner().invoke(main, ["schema", "import"])
    assert json.loads(printed.output) == schema


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "real" / "spec.yaml"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    out = tmp_path_factory.mktemp("examples") / "real"
    import_spec(EXAMPLES, out)
    return out


def test_the_shipped_real_set_covers_every_family_with_data_and_verifies(shipped):
    manifest = json.loads((shipped / "manifest.json").read_text())
    items = manifest["grid"]["items"]
    assert sorted({it["method"] for it in items}) == sorted(f.name for f in tf.families() if f.has_data)
    assert all(it["source"]["citation"] and it["source"]["licence"] for it in items)
    report = tf.verify(shipped)
    assert report.ok and report.records_ok == report.tasks == 2 * len(items), report.problems


def test_the_python_reference_of_every_shipped_real_task_prints_its_gold(shipped, monkeypatch, capsys):
    """The reference agent plays the R code where R is installed; the Python code is checked here, run on the
    item's CSV (|dz| < 0.01, the cross-check's bound)."""
    monkeypatch.chdir(EXAMPLES.parent / "data")
    off = {}
    for task in iter_records(shipped, columns=["task_id", "prompt_style", "reference_py", "gold_p"]):
        if task["prompt_style"] != "basic" or task["gold_p"] is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(task["reference_py"], task["task_id"], "exec"), {})
        printed = float(capsys.readouterr().out.split("P_VALUE: ")[1])
        if abs(z_of_p(printed) - z_of_p(task["gold_p"])) >= 0.01:
            off[task["task_id"]] = (printed, task["gold_p"])
    assert off == {}


def test_a_real_log_rank_of_three_groups_has_survdiffs_gold_and_leaves_out_the_tests_of_two(shipped):
    """> survdiff(Surv(time, death) ~ rx, data = d)$pvalue   # examples/real/data/colon_patients.csv
    [1] 0.0029043479975861138   (Chisq = 11.7 on 2 df)
    Welch's t on the times (the naive test) and the Cox row of one group (the accepted test) compare two
    groups: left out of the record, and the cross-check compares the gold alone."""
    task = next(t for t in iter_records(shipped, method="log_rank") if t["scenario"] == "colon_survival_by_arm")
    assert task["gold_p"] == pytest.approx(0.0029043479975861138, rel=1e-12) and task["gold_df"] == [2.0]
    assert task["naive_method"] is None and task["accepted"] == []
    assert "multivariate_logrank_test" in task["reference_py"] and "survdiff(Surv(time, death) ~ rx" in task["reference_r"]
    check = crosscheck()
    assert [label for _, label, *_ in check.checks(task, task["roles"])] == ["gold"]
    with pytest.raises(SystemExit, match=r"lists accepted tests \[\], its family declares \['Cox"):
        check.checks({**task, "effect": "medium"}, task["roles"])


FACTOR_ITEMS = [
    # (id, file, method, roles, R's p-value, levels)
    ("race", "birthwt.csv", "logistic_regression",
     {"outcome": "low", "positive": "low", "exposure": "race", "covariates": ["age", "smoke"]},
     0.014890272914794288, 3),   # anova(glm(low == "low" ~ age + smoke, binomial), glm(... ~ race + age + smoke), test = "LRT")[2, 5]
    ("smoke", "birthwt.csv", "logistic_regression",
     {"outcome": "low", "positive": "low", "exposure": "smoke", "covariates": ["age", "race"]},
     0.0030873482924774951, 2),  # summary(glm(low == "low" ~ smoke + age + race, family = binomial))$coefficients[2, 4]
    ("arms", "colon_patients.csv", "cox_ph",
     {"time": "time", "event": "death", "group": "rx", "covariates": ["age", "nodes"]},
     0.0020665602594323752, 3),  # anova(coxph(Surv(time, death) ~ age + nodes), coxph(... ~ rx + age + nodes))[2, 4]
    ("arms_alone", "colon_patients.csv", "cox_ph", {"time": "time", "event": "death", "group": "rx"},
     0.0023022272585185512, 3),  # anova(coxph(Surv(time, death) ~ 1), coxph(Surv(time, death) ~ rx + 1))[2, 4]
    ("sprays", "insectsprays.csv", "poisson_regression", {"outcome": "count", "exposure": "spray"},
     4.979374886491254e-65, 6),  # anova(glm(count ~ 1, poisson), glm(count ~ spray + 1, poisson), test = "LRT")[2, 5]
    ("sprays_cde", "sprays_cde.csv", "negative_binomial", {"outcome": "count", "exposure": "spray"},
     0.0039296759797605718, 3),  # anova(glm.nb(count ~ 1), glm.nb(count ~ spray + 1))[2, "Pr(Chi)"], sprays C, D, E
]


@pytest.fixture(scope="module")
def factors(tmp_path_factory):
    """A spec of models whose exposure is text: two levels (the Wald z of its dummy) or more (the LR test)."""
    root = tmp_path_factory.mktemp("factors")
    (root / "data").mkdir()
    for name in ("birthwt.csv", "colon_patients.csv", "insectsprays.csv"):
        shutil.copyfile(EXAMPLES.parent / "data" / name, root / "data" / name)
    sprays = (root / "data" / "insectsprays.csv").read_text().splitlines()
    (root / "data" / "sprays_cde.csv").write_text("\n".join(
        [sprays[0], *(line for line in sprays[1:] if line.split(",")[1] in "CDE")]) + "\n")
    items = [{"id": id_, "data": f"data/{name}", "method": method, "roles": roles, "context": "Data from R.",
              "question": "Does the outcome differ by the exposure?"} for id_, name, method, roles, *_ in FACTOR_ITEMS]
    (root / "spec.yaml").write_text(yaml.safe_dump({"items": items}))
    import_spec(root / "spec.yaml", root / "corpus")
    return root


@pytest.mark.parametrize("item", FACTOR_ITEMS, ids=[item[0] for item in FACTOR_ITEMS])
def test_an_exposure_of_text_is_tested_as_r_tests_a_factor_and_both_references_print_the_gold(factors, item,
                                                                                             monkeypatch, capsys):
    id_, _, method, _, r_p, levels = item
    task = next(t for t in iter_records(factors / "corpus") if t["scenario"] == id_ and t["prompt_style"] == "basic")
    assert task["gold_p"] == pytest.approx(r_p, rel=1e-9) and task["roles"]["levels"] == levels
    several = levels > 2
    assert ("likelihood-ratio test of the exposure's" in task["gold_method"]) == several
    assert ("res <- anova(fit0, fit1" in task["reference_r"]) == several
    family = tf.get_family(method)
    assert f"# R call: {family.canonical_for(roles_of(task['roles']))}" in task["reference_r"]
    assert task["gold_df"] == ([levels - 1.0] if several else [])   # a Wald z has no df
    monkeypatch.chdir(factors / "data")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(task["reference_py"], id_, "exec"), {})
    assert float(capsys.readouterr().out.split("P_VALUE: ")[1]) == pytest.approx(r_p, rel=1e-6)
    check = crosscheck()
    spec = check.real_spec(json.loads((factors / "corpus" / "manifest.json").read_text()))
    roles, ranges = check.design(task, spec)
    assert {role: value for role, value in roles.items() if value is not None} == roles_of(task["roles"])
    assert check.checks(task, roles)[0][3] == family.r_pvalue_for(roles)


def test_real_items_are_not_leakage_and_a_planted_copy_is(shipped, tmp_path):
    """The shipped real tasks, read as a benchmark, share nothing with a built
    corpus; a task of that corpus planted among them is caught."""
    corpus = tmp_path / "built"
    tf.build({"name": "leak", "seed": 8, "methods": ["welch_t", "log_rank"], "n": [200], "effects": ["medium"],
              "perturbations": ["none"], "prompt_styles": ["basic"]}, corpus)
    planted = next(iter_records(corpus, columns=["task_id", "question", "context", "data_csv"]))
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps({"id": t["task_id"], "question": t["question"], "context": t["context"],
                                         "data_csv": t["data_csv"]}) + "\n"
                             for t in [*iter_records(shipped), {**planted, "task_id": "planted"}]))
    report = check_leakage(corpus, [bench])
    assert [it.id for it in report.flagged] == ["planted"]
    assert report.flagged[0].flags == ["text-ngram", "text-containment", "text-minhash", "data-rows"]


def test_a_real_cox_model_of_a_numeric_exposure_is_imported_without_a_naive_test(tmp_path):
    """> summary(coxph(Surv(futime, fustat) ~ age, data = d))$coefficients[1, 5]   # survival's ovarian
    [1] 0.0011569536100349946
    The naive test of cox_ph, the log-rank test of the groups, has no groups to compare here."""
    spec = write_spec(tmp_path, [{**OVARIAN_ITEM, "id": "ovarian_age", "method": "cox_ph",
                                  "roles": {"time": "futime", "event": "fustat", "group": "age"},
                                  "question": "Does the hazard of death rise with age?"}])
    import_spec(spec, tmp_path / "corpus")
    tasks = {t["prompt_style"]: t for t in iter_records(tmp_path / "corpus")}
    assert tasks["basic"]["gold_p"] == pytest.approx(0.0011569536100349946, rel=1e-12)
    assert tasks["basic"]["naive_method"] is None and not tasks["basic"]["trap"]
    assert "'age' is a number from 38.89 to 74.5 (median 56.85); 12 events and 14 censored rows among 26." \
        in tasks["guided"]["prompt"]
    assert tf.verify(tmp_path / "corpus").ok
    printed = subprocess.run([sys.executable, "-c", tasks["basic"]["reference_py"]], cwd=tmp_path / "data",
                             capture_output=True, text=True, check=True).stdout
    assert float(printed.split("P_VALUE: ")[1]) == pytest.approx(0.0011569536100349946, rel=1e-5)   # age per year


def test_a_real_count_model_without_an_exposure_time_is_imported_with_no_offset(tmp_path):
    """The Poisson model of test_api's counts, in R: glm(cnt ~ x, family = poisson), p = 0.62578611729691835;
    its reference code has no offset, and its naive test (the model without the offset) has none to leave out."""
    from test_api import COUNTS

    (tmp_path / "data").mkdir()
    COUNTS.to_csv(tmp_path / "data" / "counts.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"items": [{"id": "counts", "data": "data/counts.csv", "method": "poisson_regression",
                                               "roles": {"outcome": "cnt", "exposure": "x"},
                                               "context": "Counts of sixty plots.", "question": "Do the counts rise "
                                                                                             "with x?"}]}))
    import_spec(spec, tmp_path / "corpus")
    task = next(t for t in iter_records(tmp_path / "corpus") if t["prompt_style"] == "guided")
    assert task["gold_p"] == pytest.approx(0.62578611729691835, rel=1e-12) and task["naive_method"] is None
    assert "offset" not in task["reference_r"] + task["gold_method"]
    assert "# R call: summary(glm(outcome ~ exposure + covariates, family = poisson))" in task["reference_r"]
    assert "glm(cnt ~ x + 1, family = poisson, data = d)" in task["reference_r"]
    assert task["roles"]["exposure_time"] is None and "per row." in task["prompt"]
    assert tf.verify(tmp_path / "corpus").ok


def test_a_real_two_stage_least_squares_with_two_instruments_is_imported_and_its_code_names_both(tmp_path):
    """R: summary(AER::ivreg(y ~ x + w | z1 + z2 + w, data = d))$coefficients[2, 4] = 0.0033140318089903038
    (test_api's IV data)."""
    from test_api import IV

    (tmp_path / "data").mkdir()
    IV.to_csv(tmp_path / "data" / "iv.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"items": [{"id": "iv", "data": "data/iv.csv", "method": "iv_2sls",
                                               "roles": {"outcome": "y", "exposure": "x", "instrument": "z1",
                                                         "instruments": ["z2"], "covariates": ["w"]},
                                               "context": "Sixty units.", "question": "Does x raise y?"}]}))
    import_spec(spec, tmp_path / "corpus")
    task = next(iter_records(tmp_path / "corpus"))
    assert task["gold_p"] == pytest.approx(0.0033140318089903038, rel=1e-12)
    assert "AER::ivreg(y ~ x + w | z1 + z2 + w, data = d)" in task["reference_r"]
    assert '"[x ~ z1 + z2]"' in task["reference_py"] and task["roles"]["instruments"] == ["z2"]
    assert tf.verify(tmp_path / "corpus").ok


def test_a_real_tobit_with_a_floor_other_than_0_is_censored_there_in_the_gold_and_both_codes(tmp_path):
    """R: summary(AER::tobit(units ~ hours + age + sex, left = 5, data = d))$coefficients[2, 4]
    = 0.22015526600976468 (the data of tests/methods/test_tobit_family.py; equal to
    survreg's convergence, a relative change of 1e-9 in the log-likelihood); the
    Python reference prints the gold."""
    from conftest import run_python
    from methods.test_tobit_family import D

    (tmp_path / "data").mkdir()
    D.to_csv(tmp_path / "data" / "units.csv", index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"items": [{"id": "units", "data": "data/units.csv", "method": "tobit",
                                               "roles": {"outcome": "units", "exposure": "hours",
                                                         "covariates": ["age", "sex"], "left": 5},
                                               "context": "Thirty-six workers; values below 5 are not measured.",
                                               "question": "Do longer hours go with more units?"}]}))
    import_spec(spec, tmp_path / "corpus")
    task = next(iter_records(tmp_path / "corpus"))
    assert task["gold_p"] == pytest.approx(0.22015526600976468, rel=1e-6) and task["roles"]["left"] == 5
    assert "AER::tobit(units ~ hours + age + sex, left = 5, data = d)" in task["reference_r"]
    assert task["gold_method"] == "Tobit regression (AER::tobit, left = 5), Wald z test of the coefficient"
    (tmp_path / task["data_filename"]).write_text(task["data_csv"])
    printed = run_python(task["reference_py"], tmp_path)
    assert float(printed.strip().splitlines()[-1].split("P_VALUE:")[1]) == pytest.approx(task["gold_p"], rel=1e-9)
    assert tf.verify(tmp_path / "corpus").ok
