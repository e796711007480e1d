"""``taskfactory report``: the page, its figures and summary.json, checked
against numbers recomputed from the shards with pyarrow."""

import base64
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.report import MISSING_MATPLOTLIB, SECTIONS

pytest.importorskip("matplotlib")

GRID = {"name": "r", "seed": 2, "methods": ["welch_t", "mann_whitney", "wilson_ci"], "n": [30, 60],
        "effects": ["null", "borderline", "medium"], "perturbations": ["none", "missing"], "seeds": 3,
        # wilson_ci asks a question without a dataset: no perturbation, and its numbers ignore the effect level
        "exclude": [{"method": "wilson_ci", "perturbation": "missing"},
                    {"method": "wilson_ci", "effect": ["borderline", "medium"]}]}
IMG = re.compile(r'<img src="data:image/png;base64,([^"]+)"')


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "corpus"
    tf.build(GRID, out)
    return out


@pytest.fixture(scope="module")
def written(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("report_out") / "site"
    result = CliRunner().invoke(main, ["report", str(corpus), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def table(corpus):
    shards = sorted((corpus / "data").glob("*.parquet"))
    return pa.concat_tables([pq.read_table(p, columns=["data_id", "method", "effect", "answer_kind", "gold_p",
                                                       "gold_decision", "trap", "perturbation"]) for p in shards])


def test_report_writes_a_self_contained_page_its_pngs_and_summary(written):
    page = (written / "index.html").read_text(encoding="utf-8")
    summary = json.loads((written / "summary.json").read_text())
    pngs = sorted(written.glob("*.png"))
    assert pngs and set(summary) >= {"composition", "calibration", "traps", "perturbations", "floors"}
    embedded = [base64.b64decode(src, validate=True) for src in IMG.findall(page)]
    assert len(embedded) == page.count("<img") == len(pngs)
    assert all(data.startswith(b"\x89PNG\r\n\x1a\n") for data in embedded)
    assert sorted(embedded) == sorted(p.read_bytes() for p in pngs)
    for heading in SECTIONS:
        assert f"<h2>{heading}</h2>" in page
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


def test_a_non_empty_output_folder_is_refused(corpus, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = CliRunner().invoke(main, ["report", str(corpus), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output == f"error: {out}: the output folder is not empty; give a new or empty folder\n"
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and (out / "keep.txt").read_text() == "mine"


def test_an_output_folder_inside_the_corpus_or_under_a_file_is_refused(corpus, tmp_path):
    """The corpus lists its files: a report written inside it would make verify and --overwrite refuse it."""
    before = sorted(p.relative_to(corpus) for p in corpus.rglob("*"))
    inside = CliRunner().invoke(main, ["report", str(corpus), "-o", str(corpus / "site")])
    assert inside.exit_code == 2
    assert inside.output == (f"error: {corpus / 'site'}: the output folder would go inside the corpus {corpus}; "
                             "give a folder outside it\n")
    assert sorted(p.relative_to(corpus) for p in corpus.rglob("*")) == before
    (tmp_path / "file").write_text("x")
    under = CliRunner().invoke(main, ["report", str(corpus), "-o", str(tmp_path / "file" / "site")])
    assert under.exit_code == 2
    assert under.output == f"error: {tmp_path / 'file' / 'site'}: {tmp_path / 'file'} is not a folder; give a new or empty folder\n"


def test_without_matplotlib_the_command_says_how_to_install_it(corpus, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(corpus), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output == f"error: {MISSING_MATPLOTLIB}\n"
    assert MISSING_MATPLOTLIB == "taskfactory report needs matplotlib: pip install 'taskfactory[report]'"
    assert not out.exists()


def test_importing_the_package_and_report_module_loads_no_matplotlib():
    probe = ("import sys, taskfactory, taskfactory.cli, taskfactory.report; "
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
