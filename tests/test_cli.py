"""The command line: help texts with examples, README coverage, methods and scenarios."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.make.columns import FIELDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
COMMANDS = sorted(main.commands)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example_and_a_readme_entry(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and f"taskfactory {command}" in result.output
    assert re.search(rf"^taskfactory {command}\b", README, re.M), f"README shows no 'taskfactory {command}' example"


# The option vocabulary: what each command writes, whether its work runs in parallel and for long.
WRITES_FOLDER = {"build", "export", "import", "report", "split", "trajectories"}
WRITES_FILE = {"agent-eval", "schema"}
PARALLEL = {"agent-eval", "build", "leakage", "plan", "trajectories", "verify"}
LONG_RUNNING = {"agent-eval", "build", "leakage", "trajectories", "verify"}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_spells_its_options_from_one_vocabulary(command):
    """-o/--out DIR or FILE for what a command writes, -j/--jobs where its work
    runs in parallel, --json wherever it reports, --progress/--no-progress where
    it runs for long; no other option takes those names."""
    options = {o.name: o for o in main.commands[command].params if o.param_type_name == "option"}
    out = options.get("out")
    if command in WRITES_FOLDER | WRITES_FILE:
        assert out.opts == ["-o", "--out"] and out.metavar == ("DIR" if command in WRITES_FOLDER else "FILE")
    else:
        assert out is None
    assert ("jobs" in options) == (command in PARALLEL)
    if "jobs" in options:
        assert options["jobs"].opts[:2] == ["-j", "--jobs"] and options["jobs"].default >= 1
    assert ("as_json" in options) == (command != "schema")   # schema prints JSON itself
    if "as_json" in options:
        assert options["as_json"].opts == ["--json"] and options["as_json"].is_flag
    assert ("progress" in options) == (command in LONG_RUNNING)
    if "progress" in options:
        assert (options["progress"].opts, options["progress"].secondary_opts) == (["--progress"], ["--no-progress"])
    taken = {flag for name, o in options.items() if name not in ("out", "jobs", "as_json", "progress") for flag in o.opts}
    assert not taken & {"-o", "--out", "-j", "--jobs", "--json", "--progress"}


def test_readme_documents_every_column():
    for name, *_ in FIELDS:
        assert f"`{name}`" in README, name


def marked_block(text: str, marker: str) -> list[str]:
    """The lines of the fenced block after ``<!-- marker -->`` (as .ci/run reads it)."""
    block = text.split(f"<!-- {marker} -->\n", 1)[1].split("```", 2)[1]
    return [line for line in block.splitlines()[1:] if line.strip()]


def test_ci_runs_the_readme_commands():
    ci = (ROOT / ".ci/run").read_text()
    assert "<!-- test-command -->" in README and "<!-- demo-command -->" in README
    assert "run_block README.md usage-commands" in ci and "run_block README.md real-commands" in ci
    assert "run_block examples/real/README.md rebuild-data" in ci
    assert "python scripts/crosscheck_r.py corpus/ --per-method 40" in ci and \
        "`python scripts/crosscheck_r.py corpus/ --per-method 40`" in README


@pytest.mark.parametrize("marker", ["usage-commands", "real-commands"])
def test_the_readme_blocks_ci_runs_use_only_options_their_commands_have(marker):
    lines = marked_block(README, marker)
    assert len(lines) >= 5
    for line in lines:
        words = line.split()
        if words[0] != "taskfactory":
            continue
        command = main.commands[words[1]]
        known = {flag for param in command.params for flag in (*param.opts, *param.secondary_opts)}
        unknown = [w.split("=")[0] for w in words[2:] if w.startswith("-") and w.split("=")[0] not in known]
        assert not unknown, (line, unknown)


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


def test_methods_prints_a_table_of_the_families():
    result = CliRunner().invoke(main, ["methods"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "family                   canonical R call, accepted alternatives, naive test, effect, n"
    at = lines.index("spearman                 cor.test(x, y, method = \"spearman\")")
    assert lines[at + 1:at + 3] == [
        "                         also accepted: cor.test(x, y, method = \"kendall\")",
        "                         naive: Pearson correlation test, cor.test(x, y); medium: 0.3 (Spearman's rho); "
        "n counts rows, at least 40; 20 scenarios of association"]
    at = lines.index("holm                     sum(p.adjust(p, method = \"holm\") <= 0.05)")
    assert lines[at + 1] == ("                         no dataset: the question states its numbers; answer: count; "
                             "n at least 20; 5 scenarios")
    assert sum(not line.startswith(" ") for line in lines[1:]) == len(tf.families())


def test_scenarios_of_a_method_and_of_an_unknown_one():
    ok = CliRunner().invoke(main, ["scenarios", "welch_t"])
    assert ok.exit_code == 0
    assert ok.output.splitlines()[:4] == [
        "scenario                      domain                 title, question and roles",
        "bp_trial                      medicine               Albuminuria in a trial of a new antihypertensive",
        "                                                     Does the urinary albumin-to-creatinine ratio at 12 weeks "
        "differ between patients on the new angiotensin receptor blocker and patients on standard care?",
        '                                                     roles: {"outcome": "uacr_12wk", "group": "arm", '
        '"cluster": "clinic"}']
    bad = CliRunner().invoke(main, ["scenarios", "welch"])
    assert bad.exit_code == 2
    assert bad.output == (f"error: unknown method 'welch' (did you mean 'welch_t'?); allowed: "
                          f"{', '.join(f.name for f in tf.families())}\n")
    far = CliRunner().invoke(main, ["scenarios", "anova2"])
    assert far.exit_code == 2 and far.output.startswith("error: unknown method 'anova2'; allowed: one_sample_t, ")


def test_plan_prints_counts_and_writes_nothing(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text("seed: 1\nmethods: [welch_t]\nn: [40, 60]\nseeds: 2\n")
    before = set(tmp_path.iterdir())
    result = CliRunner().invoke(main, ["plan", str(grid)])
    assert result.exit_code == 0
    assert "total: 384 tasks (192 datasets)" in result.output  # 16 scenarios x 2 n x 3 effects x 2 seeds x 2 styles
    assert result.output.splitlines()[1:5] == ["dimension     values  tasks per value",
                                               "method             1  welch_t: 384",
                                               "scenarios         16",
                                               "n                  2  40: 192, 60: 192"]
    assert set(tmp_path.iterdir()) == before
    as_json = json.loads(CliRunner().invoke(main, ["plan", str(grid), "--json"]).output)
    assert as_json["total"] == 384 and as_json["by"]["effect"] == {"null": 128, "borderline": 128, "medium": 128}


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
