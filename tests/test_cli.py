"""The command line: help texts with examples, README coverage, methods and scenarios."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.shards import FIELDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
COMMANDS = sorted(main.commands)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example_and_a_readme_entry(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and f"taskfactory {command}" in result.output
    assert re.search(rf"^taskfactory {command}\b", README, re.M), f"README shows no 'taskfactory {command}' example"


def test_readme_documents_every_column():
    for name, *_ in FIELDS:
        assert f"`{name}`" in README, name


def test_ci_runs_the_readme_commands():
    ci = (ROOT / ".ci/run").read_text()
    assert "<!-- test-command -->" in README and "<!-- demo-command -->" in README
    assert "crosscheck_r.py" in ci


def test_methods_json_lists_every_family():
    result = CliRunner().invoke(main, ["methods", "--json"])
    assert result.exit_code == 0
    listed = json.loads(result.output)
    assert [m["name"] for m in listed] == [f.name for f in tf.families()]
    by_name = {m["name"]: m for m in listed}
    assert by_name["spearman"]["accepted"] == ['cor.test(x, y, method = "kendall")']
    assert by_name["welch_t"]["accepted"] == [] and by_name["welch_t"]["question_kind"] == "two_groups"
    welch = next(m for m in listed if m["name"] == "welch_t")
    assert welch["canonical"] == "t.test(outcome ~ group)"
    assert welch["naive"] == "Student two-sample t-test (var.equal = TRUE)"
    assert welch["scenarios"][0] == "bp_trial"


def test_scenarios_of_a_method_and_of_an_unknown_one():
    ok = CliRunner().invoke(main, ["scenarios", "welch_t"])
    assert ok.exit_code == 0 and ok.output.startswith("bp_trial")
    bad = CliRunner().invoke(main, ["scenarios", "welch"])
    assert bad.exit_code == 2
    assert bad.output == (f"error: unknown method 'welch' (did you mean 'welch_t'?); allowed: "
                          f"{', '.join(f.name for f in tf.families())}\n")
    far = CliRunner().invoke(main, ["scenarios", "anova2"])
    assert far.exit_code == 2 and far.output.startswith("error: unknown method 'anova2'; allowed: one_sample_t, ")


def test_plan_prints_counts_and_writes_nothing(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text("seed: 1\nmethods: [welch_t]\nn: [30, 60]\nseeds: 2\n")
    before = set(tmp_path.iterdir())
    result = CliRunner().invoke(main, ["plan", str(grid)])
    assert result.exit_code == 0
    assert "total: 264 tasks (132 datasets)" in result.output  # 11 scenarios x 2 n x 3 effects x 2 seeds x 2 styles
    assert "n                2 values  (30: 132, 60: 132)" in result.output
    assert set(tmp_path.iterdir()) == before
    as_json = json.loads(CliRunner().invoke(main, ["plan", str(grid), "--json"]).output)
    assert as_json["total"] == 264 and as_json["by"]["effect"] == {"null": 88, "borderline": 88, "medium": 88}


def test_the_readme_grid_example_is_valid(tmp_path):
    block = README.split("## Grid file\n\n```yaml\n", 1)[1].split("```", 1)[0]
    grid = tmp_path / "example.yaml"
    grid.write_text(block)
    p = tf.plan(grid)
    assert p.total > 0 and set(p.by["effect"]) == {"null", "borderline", "medium", "strong", "large"}
    assert set(p.by_split) == {"train", "test"}


def test_a_bad_option_is_one_line_with_exit_2():
    result = CliRunner().invoke(main, ["plan", "grids/demo.yaml", "--jobs", "0"])
    assert result.exit_code == 2
    assert result.output == ("error: main plan: Invalid value for '-j' / '--jobs': 0 is not in the range x>=1 "
                             "(see --help)\n")
    missing = CliRunner().invoke(main, ["leakage", "corpus"])
    assert missing.exit_code == 2 and missing.output == "error: main leakage: Missing option '--against' (see --help)\n"
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0
    assert CliRunner().invoke(main, ["plan", "--help"]).output.startswith("Usage: main plan")
