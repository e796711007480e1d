"""``taskfactory report``: the page, its figures and summary.json, checked
against numbers recomputed from the shards with pyarrow."""

import base64
import json
import re
import shutil
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.answers import capped_z
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records
from taskfactory.use.report import AGENT_BREAKDOWNS, MISSING_MATPLOTLIB, SECTIONS, source_labels
from taskfactory.use.score import score
from conftest import built_once, folder_violations

pytest.importorskip("matplotlib")

GRID = {"name": "r", "seed": 2, "methods": ["welch_t", "mann_whitney", "wilson_ci"], "n": [40, 60],
        "effects": ["null", "borderline", "medium"], "perturbations": ["none", "missing"], "seeds": 3,
        # wilson_ci asks a question without a dataset: no perturbation, and its numbers ignore the effect level
        "exclude": [{"method": "wilson_ci", "perturbation": "missing"},
                    {"method": "wilson_ci", "effect": ["borderline", "medium"]}]}
IMG = re.compile(r'<img src="data:image/png;base64,([^"]+)"')
ADVERSARIAL = Path(__file__).resolve().parent / "adversarial" / "predictions"


corpus = built_once(GRID, "report")


@pytest.fixture(scope="module")
def table(corpus):
    shards = sorted((corpus / "data").glob("*.parquet"))
    return pa.concat_tables([pq.read_table(p, columns=["task_id", "data_id", "method", "effect", "answer_kind",
                                                       "gold", "gold_p", "gold_z", "gold_decision", "trap", "perturbation", "n",
                                                       "alpha"])
                             for p in shards])


def gold_fields(row: dict) -> dict:
    return {k: v for k, v in row["gold"].items() if k != "kind" and v is not None}


@pytest.fixture(scope="module")
def predictions(table, tmp_path_factory):
    """Three predictions files: ``one/answers.jsonl`` answers every other
    task (in task id order) with its gold and the others with p = 0.5 (fail to
    reject); ``two/answers.jsonl`` answers each p-value task twice, with its
    gold and with p = 0.5; ``junk_lines.jsonl`` is the hostile file the score
    command's tests read."""
    root = tmp_path_factory.mktemp("predictions")
    rows = sorted(table.to_pylist(), key=lambda r: r["task_id"])
    one, two = root / "one" / "answers.jsonl", root / "two" / "answers.jsonl"
    for path in (one, two):
        path.parent.mkdir()
    half = "fail to reject"
    one.write_text("".join(
        json.dumps({"task_id": r["task_id"], **(gold_fields(r) if i % 2 == 0 or r["answer_kind"] != "p_value"
                                                else {"p_value": 0.5, "decision": half})}) + "\n"
        for i, r in enumerate(rows)))
    two.write_text("".join(
        json.dumps({"task_id": r["task_id"], "run": run, **answer}) + "\n"
        for r in rows if r["answer_kind"] == "p_value"
        for run, answer in enumerate([gold_fields(r), {"p_value": 0.5, "decision": half}])))
    junk = root / "junk_lines.jsonl"
    junk.write_text((ADVERSARIAL / "junk_lines.jsonl").read_text().replace("{task_id}", rows[0]["task_id"]))
    return [one, two, junk]


@pytest.fixture(scope="module")
def written(corpus, predictions, tmp_path_factory):
    out = tmp_path_factory.mktemp("report_out") / "site"
    args = ["report", str(corpus), "-o", str(out)] + [a for p in predictions for a in ("--predictions", str(p))]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def summary(written):
    return json.loads((written / "summary.json").read_text())


def test_report_writes_a_self_contained_page_its_pngs_and_summary(written):
    page = (written / "index.html").read_text(encoding="utf-8")
    summary = json.loads((written / "summary.json").read_text())
    pngs = sorted(written.glob("*.png"))
    assert pngs and set(summary) >= {"corpus", "composition", "calibration", "traps", "perturbations", "floors",
                                     "agents", "lengths", "example", "flags"}
    embedded = [base64.b64decode(src, validate=True) for src in IMG.findall(page)]
    assert len(embedded) == page.count("<img") == len(pngs)
    assert all(data.startswith(b"\x89PNG\r\n\x1a\n") for data in embedded)
    assert sorted(embedded) == sorted(p.read_bytes() for p in pngs)
    for i, heading in enumerate(SECTIONS, 1):
        assert f'<h2 id="s{i}">{heading}</h2>' in page and f'<a href="#s{i}">{heading.split(". ", 1)[1]}</a>' in page
    without_images = IMG.sub("", page)
    assert "<script" not in without_images.lower() and "http" not in without_images.lower()


def test_every_number_in_the_page_tables_is_in_summary_json(written):
    page = IMG.sub("", (written / "index.html").read_text(encoding="utf-8"))
    summary = json.loads((written / "summary.json").read_text())
    known = set()

    def walk(v):
        if isinstance(v, dict):
            known.update(str(k) for k in v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, float):
            known.add(f"{v:.4g}")
        elif isinstance(v, int):
            known.add(str(v))

    walk(summary)
    cells = re.findall(r"<td>([^<]*)</td>", page)
    numbers = [c for c in cells if re.fullmatch(r"-?[0-9.e+-]+", c)]
    assert numbers and [c for c in numbers if c not in known] == []


def test_summary_numbers_match_the_shards(written, table):
    summary = json.loads((written / "summary.json").read_text())
    rows = table.to_pylist()
    assert summary["composition"]["tasks"] == len(rows)
    assert summary["composition"]["by_method"] == dict(sorted(Counter(r["method"] for r in rows).items()))

    # welch_t's null reject rate: one gold p-value per dataset
    null = {r["data_id"]: r["gold_decision"] for r in rows
            if r["method"] == "welch_t" and r["effect"] == "null" and r["answer_kind"] == "p_value"}
    cal = summary["calibration"]["families"]["welch_t"]["null"]
    assert cal["datasets"] == len(null) and cal["rejects"] == sum(d == "reject" for d in null.values())
    assert cal["reject_rate"] == pytest.approx(cal["rejects"] / len(null), rel=1e-3)
    assert cal["ci_low"] <= cal["reject_rate"] <= cal["ci_high"]
    assert "wilson_ci" not in summary["calibration"]["families"]   # a closed-form answer, no p-value
    assert summary["calibration"]["families"]["welch_t"]["null_p_expected"] == "uniform"
    # the share of datasets whose gold z is at the reward's cap, per effect level
    first = {r["data_id"]: r for r in rows if r["answer_kind"] == "p_value" and r["gold_p"] is not None}
    medium = [r["gold_z"] >= 5 for r in first.values() if r["effect"] == "medium"]
    capped = summary["calibration"]["at_reward_cap"]
    assert summary["calibration"]["power_effect"] == "medium" and capped["cap"] == 5.0
    assert capped["share_by_effect"]["medium"] == pytest.approx(sum(medium) / len(medium), rel=1e-3)
    assert capped["share_by_effect"]["null"] == 0.0

    traps = summary["traps"]
    assert traps["share"] == pytest.approx(sum(r["trap"] for r in rows) / len(rows), rel=1e-3)
    welch = [r for r in rows if r["method"] == "welch_t"]
    for pert in ("none", "missing"):
        sub = [r["trap"] for r in welch if r["perturbation"] == pert]
        assert traps["share_by_method_and_perturbation"]["welch_t"][pert] == pytest.approx(sum(sub) / len(sub),
                                                                                           rel=1e-3)

    pv = [r for r in rows if r["answer_kind"] == "p_value" and r["gold_p"] is not None]
    assert summary["floors"]["tasks"] == len(pv)
    assert summary["floors"]["always_fail_to_reject_raw"] == pytest.approx(
        sum(r["gold_decision"] == "fail to reject" for r in pv) / len(pv), rel=1e-3)

    # the constant-p baseline, recomputed: fit on the even half of the datasets, scored on the odd half
    constant = summary["floors"]["constant_p"]
    raw = strict = scored = 0
    for method, n in sorted({(r["method"], r["n"]) for r in pv}):
        fit = [r["gold_p"] for r in pv if (r["method"], r["n"]) == (method, n) and int(r["data_id"][-1], 16) % 2 == 0]
        held = [r for r in pv if (r["method"], r["n"]) == (method, n) and int(r["data_id"][-1], 16) % 2 == 1]
        if not fit:
            continue
        p = statistics.median(fit)
        for r in held:
            match = ("reject" if p < r["alpha"] else "fail to reject") == r["gold_decision"]
            raw += match
            strict += match and abs(capped_z(p) - capped_z(r["gold_p"])) < 0.5
        scored += len(held)
    assert constant["scored_tasks"] == scored
    assert constant["raw"] == pytest.approx(raw / scored, rel=1e-3)
    assert constant["strict"] == pytest.approx(strict / scored, rel=1e-3) and constant["strict"] < constant["raw"]


# --- 6. Agents ------------------------------------------------------------------------

def test_each_source_is_labelled_by_its_file_name_and_scored_as_the_score_command_does(summary, corpus,
                                                                                          predictions):
    sources = summary["agents"]["sources"]
    assert list(sources) == ["answers (1)", "answers (2)", "junk_lines", "gold", "naive"]
    assert [src["path"] for src in sources.values()] == [str(p) for p in predictions] + [None, None]
    assert [src["source"] for src in sources.values()] == ["predictions"] * 3 + ["baseline"] * 2
    for label, path, baseline in (("naive", None, "naive"), ("junk_lines", predictions[2], None)):
        expected = json.loads(json.dumps(score(corpus, path, tuple(AGENT_BREAKDOWNS), baseline).as_dict()))
        assert {key: sources[label][key] for key in expected} == expected
    assert sources["junk_lines"]["problems"]["unknown task_id"] == {"count": 1, "lines": [5]}


def test_the_gold_answers_pass_every_task(summary, table):
    gold = summary["agents"]["sources"]["gold"]
    assert gold["overall"]["tasks"] == gold["corpus_tasks"] == len(table) and gold["k"] == 1
    assert gold["overall"]["raw_pass@1"] == gold["overall"]["strict_pass@1"] == 1.0
    assert {cell["raw_pass@1"] for cells in gold["by"].values() for cell in cells.values()} == {1.0}
    assert set(gold["by"]) == set(AGENT_BREAKDOWNS) and set(gold["by"]["trap"]) == {"true", "false"}


def test_predictions_of_known_answers_get_their_exact_raw_pass_at_1_and_2(summary, table):
    rows = sorted(table.to_pylist(), key=lambda r: r["task_id"])
    right = [i % 2 == 0 or r["answer_kind"] != "p_value" or r["gold_decision"] == "fail to reject"
             for i, r in enumerate(rows)]
    one = summary["agents"]["sources"]["answers (1)"]
    assert one["k"] == 1 and one["overall"]["tasks"] == one["overall"]["answers"] == len(rows)
    assert one["overall"]["raw_pass@1"] == sum(right) / len(rows)
    for method in {r["method"] for r in rows}:
        of_method = [ok for ok, r in zip(right, rows) if r["method"] == method]
        assert one["by"]["method"][method]["raw_pass@1"] == sum(of_method) / len(of_method)
    pv = [r for r in rows if r["answer_kind"] == "p_value"]
    two = summary["agents"]["sources"]["answers (2)"]
    assert two["k"] == 2 and two["overall"]["answers"] == 2 * len(pv) and two["overall"]["tasks"] == len(pv)
    assert two["overall"]["raw_pass@1"] == sum((1 + (r["gold_decision"] == "fail to reject")) / 2 for r in pv) / len(pv)
    assert two["overall"]["raw_pass@2"] == 1.0 and two["by"]["trap"]["true"]["raw_pass@2"] == 1.0


def test_the_reliability_bins_place_each_answer_by_its_gold_z(summary, table):
    pv = [r for r in table.to_pylist() if r["answer_kind"] == "p_value"]
    gold = summary["agents"]["sources"]["gold"]["reliability"]
    assert gold["z_cap"] == 5.0 and gold["bin_edges"] == [0.5 * i for i in range(11)]
    assert gold["answers"] == sum(b["answers"] for b in gold["bins"]) == len(pv)
    assert all(b["mean_reported_z"] == b["mean_gold_z"] for b in gold["bins"])
    two = summary["agents"]["sources"]["answers (2)"]["reliability"]   # gold, and p = 0.5 (z = 0.6745), per task
    assert [b["answers"] for b in two["bins"]] == [2 * b["answers"] for b in gold["bins"]]
    for mixed, exact in zip(two["bins"], gold["bins"]):
        assert mixed["mean_reported_z"] == pytest.approx((exact["mean_gold_z"] + 0.6745) / 2, abs=1e-3)


def _html_table(page: str, caption: str) -> tuple[list[str], list[list[str]]]:
    found = re.search(rf"<caption>{re.escape(caption)}</caption><thead><tr>(.*?)</tr></thead><tbody>(.*?)</tbody>",
                      page)
    return (re.findall(r"<th>([^<]*)</th>", found.group(1)),
            [re.findall(r"<td>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", found.group(2))])


def test_the_agents_tables_show_the_numbers_of_summary_json(written, summary):
    page = IMG.sub("", (written / "index.html").read_text(encoding="utf-8"))
    sources = summary["agents"]["sources"]

    def shown(v):
        return "–" if v is None else f"{v:.4g}"

    headers, rows = _html_table(page, "overall")
    assert headers[:2] == ["source", "file"] and [r[0] for r in rows] == list(sources)
    for row in rows:
        src = sources[row[0]]
        assert row[headers.index("k")] == str(src["k"])
        assert row[headers.index("Raw@1")] == shown(src["overall"]["raw_pass@1"])
        assert row[headers.index("Strict@k")] == shown(src["overall"].get(f"strict_pass@{src['k']}")
                                                       if src["k"] > 1 else None)
    for column, title in AGENT_BREAKDOWNS.items():
        headers, rows = _html_table(page, f"by {title}")
        assert headers == [title] + [f"{label} {m}@1" for label in sources for m in ("Raw", "Strict")] + [
            f"{label} {m}@2" for label in ("answers (2)", "junk_lines") for m in ("Raw", "Strict")]
        keys = {"trap": "true", "no trap": "false"} if column == "trap" else {}
        groups = [keys.get(row[0], row[0]) for row in rows]
        assert set(groups) == {g for src in sources.values() for g in src["by"][column]}
        for group, row in zip(groups, rows):
            for header, cell in zip(headers[1:], row[1:]):
                label, metric = header.rsplit(" ", 1)
                name, k = metric.lower().split("@")
                assert cell == shown(sources[label]["by"][column].get(group, {}).get(f"{name}_pass@{k}")), header


def test_power_is_shown_at_medium_or_else_at_the_first_other_level_beyond_the_borderline():
    import pandas as pd

    from taskfactory.use.report import power_effect

    def effects(*names):
        return pd.DataFrame({"effect": list(names)})

    assert power_effect(effects("null", "borderline", "strong", "medium")) == "medium"
    assert power_effect(effects("null", "borderline", "strong", "clear")) == "clear"
    assert power_effect(effects("null", "borderline")) is None


def test_sources_that_share_a_file_name_are_numbered():
    assert source_labels(["a/x.jsonl", "b/y.jsonl"]) == ["x", "y"]
    assert source_labels(["a/x.jsonl", "c.jsonl", "b/x.jsonl"]) == ["x (1)", "c", "x (3)"]
    assert source_labels(["runs/gold.jsonl", "naive.json"]) == ["gold (1)", "naive (2)"]
    assert source_labels(["x.jsonl", "x.json", "x (2).jsonl"]) == ["x (1)", "x (2)", "x (2) (3)"]


UNREADABLE = {"missing.jsonl": (None, "cannot read the predictions (No such file or directory)"),
              "not_jsonl.txt": ((ADVERSARIAL / "not_jsonl.txt").read_bytes(),
                                'not JSONL: no line is a JSON object (expected {"task_id": ..., "completion": ...} '
                                "per line)"),
              "binary.jsonl": (bytes.fromhex("7b227461736b5f6964223a20fffe00"), "not UTF-8 text (byte 12)")}


@pytest.mark.parametrize("name", UNREADABLE)
def test_an_unreadable_predictions_file_fails_as_in_score_and_nothing_is_written(name, corpus, predictions, tmp_path):
    content, why = UNREADABLE[name]
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    scored = CliRunner().invoke(main, ["score", str(corpus), str(path)])
    out = tmp_path / "site"
    reported = CliRunner().invoke(main, ["report", str(corpus), "-o", str(out), "--predictions", str(predictions[0]),
                                         "--predictions", str(path)])
    assert scored.exit_code == reported.exit_code == 2
    assert reported.output == scored.output == f"error: {path}: {why}\n"
    assert not out.exists()


def _violations(corpus, predictions, tmp_path) -> dict:
    """Each way an output folder breaks the rule: (the -o value, the message after ``-o <value>: ``)."""
    return {**folder_violations(tmp_path, "site", {"inside the corpus": corpus, "on a predictions file": predictions[0]}),
            "a name too long": (tmp_path / ("x" * 300), "cannot be used as a folder (File name too long)")}


VIOLATIONS = ["not empty", "a file", "a symbolic link", "under a file", "inside the corpus", "on a predictions file",
              "where nothing can be written", "a name too long"]


@pytest.mark.parametrize("kind", VIOLATIONS)
def test_an_output_folder_that_is_not_new_or_empty_is_refused_before_any_work(kind, corpus, predictions, tmp_path):
    """The corpus lists its files: a report written inside it would make verify and --overwrite refuse it."""
    out, why = _violations(corpus, predictions, tmp_path)[kind]
    before = sorted(p for p in [*tmp_path.rglob("*"), *corpus.rglob("*")])
    result = CliRunner().invoke(main, ["report", str(corpus), "-o", str(out), "--predictions", str(predictions[0])])
    assert result.exit_code == 2
    assert result.output == f"error: -o {out}: {why}\n"
    assert sorted(p for p in [*tmp_path.rglob("*"), *corpus.rglob("*")]) == before
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def test_without_matplotlib_the_command_says_how_to_install_it(corpus, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(corpus), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output == f"error: {MISSING_MATPLOTLIB}\n"
    assert MISSING_MATPLOTLIB == "taskfactory report needs matplotlib: pip install 'taskfactory[report]'"
    assert not out.exists()


def test_importing_the_package_and_report_module_loads_no_matplotlib():
    probe = ("import sys, taskfactory, taskfactory.cli, taskfactory.use.report; "
             "print([m for m in ('matplotlib', 'numpy', 'pandas', 'scipy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out == "[]\n"


def test_the_page_renders_in_headless_chromium(written):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (needed to render index.html headless)")
    url = Path(written / "index.html").resolve().as_uri()
    run = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
                          "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [line for line in run.stderr.splitlines() if ":CONSOLE(" in line] == []   # the page logged nothing
    for heading in SECTIONS:
        assert heading in run.stdout
    assert run.stdout.count("<img") == len(list(written.glob("*.png")))


def test_the_report_says_what_the_corpus_is_its_prompt_lengths_and_a_task_as_the_agent_sees_it(corpus, summary):
    records = list(iter_records(corpus, columns=["task_id", "method", "n", "prompt", "data_csv", "split"]))
    about = summary["corpus"]
    assert (about["grid_name"], about["origin"], about["tasks"]) == ("r", "grid", len(records))
    assert about["factory_version"] == about["report_version"] == tf.__version__
    lengths = summary["lengths"]
    assert lengths["prompt_chars"]["max"] == max(len(r["prompt"]) for r in records)
    welch = [r for r in records if r["method"] == "welch_t" and r["n"] == 60]
    cell = lengths["by_method_and_n"]["welch_t"]["60"]
    assert cell["tasks"] == len(welch) and cell["csv_chars"]["max"] == max(len(r["data_csv"]) for r in welch)
    assert cell["inline_tokens_max"] == -(-max(len(r["prompt"]) + len(r["data_csv"]) for r in welch) // 3)
    assert lengths["by_method_and_n"]["wilson_ci"]["40"]["csv_chars"]["max"] == 0
    example = summary["example"]
    shown = next(r for r in records if r["task_id"] == example["task_id"])
    assert shown["data_csv"] is not None and example["prompt"] == shown["prompt"]
    assert example["csv_head"] == "".join(shown["data_csv"].splitlines(keepends=True)[:9])


def test_flags_name_the_figures_off_their_expectation():
    from taskfactory.use.report import _flags

    def family(expected, ks, rejects, borderline):
        return {"null_p_expected": expected, "null_ks_p": ks,
                "null": {"datasets": 100, "reject_rate": rejects / 100, **dict(zip(("ci_low", "ci_high"), {
                    5: (0.016, 0.113), 15: (0.087, 0.236)}[rejects]))},
                "borderline_by_n": {"60": {"datasets": 40, "reject_rate": borderline,
                                           "ci_low": borderline - 0.15, "ci_high": borderline + 0.15}}}

    summary = {"calibration": {"alpha": 0.05, "at_reward_cap": {"share": 0.08}, "families": {
        "good": family("uniform", 0.4, 5, 0.5), "skewed": family("uniform", 1e-5, 15, 0.5),
        "conservative": family("conservative", 1e-9, 5, 0.5), "weak": family("uniform", 0.4, 5, 0.2)}}}
    assert [(f["section"], f["what"]) for f in _flags(summary)] == [
        (SECTIONS[1], "skewed: null p-values are not uniform (KS p = 1e-05 over 100 datasets)"),
        (SECTIONS[1], "skewed: null reject rate 0.15, 95 % interval 0.087 to 0.236 excludes alpha = 0.05"),
        (SECTIONS[1], "weak: borderline reject rate 0.2 at N = 60, far from a half"),
        (SECTIONS[1], "8.0% of datasets have their gold z at the reward's cap (more than 5%): tests score alike "
                      "there")]
