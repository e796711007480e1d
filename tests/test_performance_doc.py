"""docs/performance.md is what the benchmarks' records in docs/performance/ render, and says so when it is not."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "performance_doc.py"


@pytest.fixture(scope="module")
def doc():
    """scripts/performance_doc.py as a module (registered while the tests run: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location("performance_doc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["performance_doc"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["performance_doc"]


def startup_record(best: float) -> dict:
    """A record as scripts/bench_startup.py writes it."""
    return {"command": "python scripts/bench_startup.py --record docs/performance/startup.json",
            "date": "2026-01-02 03:04 UTC", "seconds": 9.5,
            "machine": {"cores": 2, "cpu": "a CPU", "os": "Linux x86_64", "python": "3.11.7", "r": "4.2.2",
                        "load_average": [0.5, 0.7]},
            "taskfactory": {"version": "0.6.0", "commit": "abc1234", "modified": False},
            "figures": {"runs": 10, "heavy_modules": [],
                        "commands": {"taskfactory --help": {"best_s": best, "median_s": 0.25}}}}


def test_the_committed_page_is_what_the_committed_records_render(doc, tmp_path):
    assert doc.main(["--out", str(tmp_path / "a.md")]) == 0
    assert doc.main(["--out", str(tmp_path / "b.md")]) == 0
    assert (tmp_path / "a.md").read_text() == (tmp_path / "b.md").read_text() == doc.DOC.read_text()
    checked = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert (checked.returncode, checked.stderr) == (0, "")


def test_a_changed_figure_fails_the_check_in_one_line_naming_its_record(doc, tmp_path):
    records, page = tmp_path / "records", tmp_path / "performance.md"
    records.mkdir()
    (records / "startup.json").write_text(json.dumps(startup_record(0.2)))
    assert doc.main(["--records", str(records), "--out", str(page)]) == 0
    assert "| `taskfactory --help` | 0.200 | 0.250 |" in page.read_text()
    assert doc.main(["--records", str(records), "--out", str(page), "--check"]) == 0
    (records / "startup.json").write_text(json.dumps(startup_record(0.3)))
    checked = subprocess.run([sys.executable, str(SCRIPT), "--records", str(records), "--out", str(page), "--check"],
                             capture_output=True, text=True)
    assert checked.returncode == 1 and checked.stdout == ""
    assert checked.stderr.count("\n") == 1 and f"is not what {records / 'startup.json'} renders" in checked.stderr


def test_a_missing_record_gets_the_command_that_makes_it(doc, tmp_path):
    records, page = tmp_path / "records", tmp_path / "performance.md"
    records.mkdir()
    assert doc.main(["--records", str(records), "--out", str(page)]) == 0
    text = page.read_text()
    startup = records / "startup.json"
    assert (f"- Not measured: `{startup}` is missing. Make it with "
            f"`python scripts/bench_startup.py --record {startup}`, then run `python scripts/performance_doc.py`."
            ) in text.splitlines()
    assert text.count("- Not measured:") == sum(len(section.runs) for section in doc.SECTIONS)
