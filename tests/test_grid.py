"""Grid validation: every malformed grid gets one exact line, exit code 2, and no output."""


import hashlib
import json

import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.design.grid import held_out

from conftest import PINNED

GOOD = """\
seed: 1
methods: [welch_t]
n: [40]
"""


def allowed_methods():
    return ", ".join(["all"] + [f.name for f in tf.families()])


CASES = [
    ("not a mapping", "- 1\n- 2\n", "the grid must be a YAML mapping of keys to values"),
    ("bad yaml", "seed: [1\n", None),
    ("unknown key", GOOD + "metods: [welch_t]\n",
     "unknown key 'metods' (did you mean 'methods'?); allowed: alpha, effects, exclude, max_reject_share, max_tasks, methods, n, name, perturbations, "
     "prompt_styles, scenarios, seed, seeds, shard_rows, split"),
    ("missing seed", "methods: [welch_t]\nn: [30]\n", "missing required key 'seed'"),
    ("unknown method", "seed: 1\nmethods: [welch_tt]\nn: [30]\n", None),
    ("unknown scenario", GOOD + "scenarios: {welch_t: [bp_trial, mars_colony]}\n",
     "key 'scenarios': method 'welch_t' has no scenario 'mars_colony'; allowed: bp_trial, wage_training, "
     "logging_sediment, checkout_session_time, stream_invertebrates, fish_mercury, coating_wear, seedling_inoculant, "
     "kitchen_pm25, insomnia_sleep_latency, study_reminders, teat_dip_herds, exercise_referral_practices, "
     "transplant_substrate_benches, code_review_teams, noise_programme_sites"),
    ("scenario of unbuilt method", GOOD + "scenarios: {pearson_x: [a]}\n",
     "key 'scenarios': names method 'pearson_x', which the grid does not build; allowed: welch_t"),
    ("n below minimum", "seed: 1\nmethods: [welch_t]\nn: [10, 40]\n",
     "key 'n': 10 is below the minimum N of 'welch_t' (40); raise it or exclude {method: welch_t, n: 10}"),
    ("n not integer", "seed: 1\nmethods: [welch_t]\nn: [30.5]\n",
     "key 'n[0]': must be a sample size from 2 to 1000000, got 30.5"),
    ("empty n", "seed: 1\nmethods: [welch_t]\nn: []\n", "key 'n': must be a non-empty list of sample sizes"),
    ("unknown effect", GOOD + "effects: [null, huge]\n",
     "key 'effects[1]': unknown effect 'huge'; allowed: null, borderline, medium, or a mapping {name: ..., "
     "target_z: ...} or {name: ..., size: ...}"),
    ("effect needs one definition", GOOD + "effects: [{name: strong}]\n",
     "key 'effects[0]': effect 'strong' needs exactly one of target_z or size"),
    ("unknown style", GOOD + "prompt_styles: [basic, chatty]\n",
     "key 'prompt_styles': unknown value 'chatty'; allowed: basic, guided"),
    ("unknown perturbation", GOOD + "perturbations: [none, shuffled]\n",
     "key 'perturbations[1]': unknown value 'shuffled'; allowed: none, missing, missing_mnar, extreme, "
     "missing+extreme, missing_mnar+extreme"),
    ("bad seeds", GOOD + "seeds: 0\n", "key 'seeds': must be an integer from 1 to 100000, got 0"),
    ("bad alpha", GOOD + "alpha: 5\n", "key 'alpha': must be a number in (0, 0.5), got 5"),
    ("bad exclude key", GOOD + "exclude: [{method: welch_t, colour: red}]\n",
     "key 'exclude[0]': unknown key 'colour'; allowed: method, scenario, n, effect, perturbation, seed, prompt_style"),
    ("exclude value not in grid", GOOD + "exclude: [{n: 30}]\n", "key 'exclude[0]': n '30' is not in the grid; allowed: 40"),
    ("empty product", GOOD + "exclude: [{method: welch_t}]\n",
     "the grid expands to no tasks (every combination is excluded)"),
    ("bad split", GOOD + "split: {by: method, test: 0.2}\n", "key 'split.by': unknown value 'method'; allowed: scenario"),
    ("bad shard_rows", GOOD + "shard_rows: -5\n", "key 'shard_rows': must be an integer from 1 to 1000000, got -5"),
]


@pytest.mark.parametrize("label, text, message", CASES, ids=[c[0] for c in CASES])
def test_malformed_grid_is_one_line_exit_2_and_writes_nothing(tmp_path, label, text, message):
    grid = tmp_path / "bad.yaml"
    grid.write_text(text)
    out = tmp_path / "corpus"
    if label == "unknown method":
        message = f"key 'methods': unknown value 'welch_tt' (did you mean 'welch_t'?); allowed: {allowed_methods()[5:]}"
    for args in (["build", str(grid), "-o", str(out), "--no-progress"], ["plan", str(grid)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (label, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1
        if message is None:
            assert lines[0].startswith(f"error: {grid}: not valid YAML (")
        else:
            assert lines[0] == f"error: {grid}: {message}"
        assert not out.exists()


def test_missing_grid_file(tmp_path):
    result = CliRunner().invoke(main, ["plan", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert result.output == f"error: {tmp_path / 'nope.yaml'}: no such grid file\n"


def test_exclude_removes_low_n_for_one_method():
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [10, 40], "exclude": [{"method": "welch_t", "n": 10}]})
    assert {c.n for c in g.tasks()} == {40}


def test_null_in_yaml_is_the_null_effect(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text(GOOD + "effects: [null, {name: strong, target_z: 4}]\n")
    g = tf.load_grid(grid)
    assert [e.name for e in g.effects] == ["null", "strong"]
    assert g.effects[1].key == "strong:z=4.0"


def test_split_holds_out_whole_scenarios():
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [40],
                      "split": {"test": 0.3, "seed": 7}})
    train = {c.scenario for c in g.tasks("train")}
    test = {c.scenario for c in g.tasks("test")}
    assert len(test) == 2 and len(train) == 4 and not train & test
    again = tf.load_grid({"seed": 99, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [60],
                          "split": {"test": 0.3, "seed": 7}})
    assert {c.scenario for c in again.tasks("test")} == test


def test_a_scenario_falls_on_one_side_of_the_split_whatever_asks_about_it():
    """two_prop and two_prop_z (each its own kind) ask about the same stories, as
    one_sample and paired do about one well: the kinds that share a scenario hold
    out together, so its text is never in both splits."""
    g = tf.load_grid({"seed": 1, "methods": ["two_prop", "two_prop_z", "one_sample_t", "paired_t"], "n": [60],
                      "effects": ["null"], "split": {"test": 0.4, "seed": 7}})
    sides: dict = {}
    for c in g.tasks():
        sides.setdefault(c.scenario, set()).add(c.split)
    assert all(len(s) == 1 for s in sides.values()), sides
    shared = {"vaccine_uptake_two_practices", "germination_two_lots", "subject_line_test", "defects_two_shifts",
              "helmet_use_two_cities"}
    assert {s for s, side in sides.items() if side == {"test"}} & shared


def test_a_scenario_a_method_must_keep_in_train_stays_in_train_for_every_method():
    """welch_t has only 'a', so it keeps 'a' in train; mann_whitney (same kind)
    then keeps it too, rather than holding it out: 'a' is on one side."""
    assert held_out({"welch_t": ["a"], "mann_whitney": ["a", "b", "c"]}, 0.4, 3) == {}
    for test, seed in [(0.4, 3), (0.9, 3), (0.5, 1), (0.7, 8)]:
        held = held_out({"welch_t": ["a", "b"], "mann_whitney": ["a", "b", "c", "d"]}, test, seed)
        assert held and all(ids < {"a", "b", "c", "d"} for ids in held.values())
        assert len(held.get("welch_t", ())) < 2   # welch_t keeps one of its two in train
        assert held.get("welch_t", frozenset()) == held["mann_whitney"] & {"a", "b"}, (test, seed, held)


def test_plan_counts_match_enumeration():
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"]}, "n": [40, 60, 90], "seeds": 3,
                      "exclude": [{"n": 90, "effect": "medium"}, {"seed": 2, "prompt_style": "guided"}]})
    p = tf.plan(g)
    coords = list(g.tasks())
    assert p.total == len(coords) == 6 * (3 * 3 - 1) * (3 * 2 - 1)
    assert p.by["prompt_style"]["guided"] == sum(c.prompt_style == "guided" for c in coords)
    assert p.datasets == len({(c.scenario, c.n, c.effect.name, c.seed) for c in coords})


def test_siblings_hold_out_the_same_scenarios():
    """Siblings share a scenario's wording, so a scenario held out for one is held out for all."""
    g = tf.load_grid({"seed": 1, "methods": ["one_way_anova", "welch_anova", "kruskal_wallis"], "n": [40],
                      "split": {"test": 0.25, "seed": 3}})
    held = {m: {c.scenario for c in g.tasks("test") if c.method == m} for m in g.methods}
    assert len({frozenset(s) for s in held.values()}) == 1 and held["welch_anova"]
    train = {c.scenario for c in g.tasks("train")}
    assert not train & held["welch_anova"]


def test_plan_of_a_huge_grid_counts_without_walking_the_tasks():
    """About 10^8 tasks (100000 seeds): the plan counts tasks, datasets,
    shards and seeds per cell, never per task (a walk would take minutes and
    gigabytes)."""
    grid = tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40, 50, 60, 70, 80, 90, 100, 110],
                         "perturbations": ["none", "missing"], "seeds": 100_000, "max_tasks": 10**9, "shard_rows": 1000,
                         "exclude": [{"n": 110, "effect": "medium"}, {"seed": [0, 1], "prompt_style": "guided"}]})
    p = tf.plan(grid, probe=False)
    cells = len(grid.scenarios["welch_t"]) * (8 * 3 - 1) * 2
    assert p.total == grid.count() == cells * (2 * 100_000 - 2) > 10**8
    assert p.datasets == cells * 100_000
    assert p.by["prompt_style"] == {"basic": cells * 100_000, "guided": cells * (100_000 - 2)}
    assert p.rows_per_shard("train") == 1000 and p.shard_count("train") == -(-p.total // 1000)
    assert len(p.by["seed"]) == 100_000 and p.by["seed"][0] == cells and p.by["seed"][99_999] == 2 * cells


def test_grid_sha256_is_computed_once_and_unchanged():
    g = tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40]})
    want = hashlib.sha256(json.dumps(g.normalized(), sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert g.sha256 == want and g.__dict__["sha256"] == want and g.sha256 is g.sha256


def test_the_cluster_grid_is_the_paper_grid_with_336_seeds():
    """grids/paper-10m.yaml, which the README plans for a cluster, counts what the README says."""
    from pathlib import Path

    from taskfactory.store.plan import plan

    grids = Path(__file__).resolve().parent.parent / "grids"
    big, paper = plan(str(grids / "paper-10m.yaml"), probe=False), plan(str(grids / "paper.yaml"), probe=False)
    assert (big.total, big.datasets) == (15_140_832, 7_570_416) == (336 * paper.total, 336 * paper.datasets)


#: A grid that sets every key explicitly (shard_rows included), so that no default enters its hash.
EVERY_KEY = {
    "name": "every-key", "seed": 7, "alpha": 0.01, "methods": ["welch_t", "mann_whitney", "wilson_ci"],
    "scenarios": {"welch_t": ["bp_trial", "wage_training", "logging_sediment"], "mann_whitney": ["fish_mercury", "bp_trial"],
                  "wilson_ci": ["flu_vaccine_uptake", "seed_germination"]},
    "n": [40, 80], "effects": ["null", "medium", {"name": "strong", "target_z": 3},
                               {"name": "fixed", "size": {"welch_t": 0.5, "mann_whitney": 0.6, "wilson_ci": 0.2}}],
    "prompt_styles": ["guided", "basic"], "perturbations": ["none", "extreme+missing"], "seeds": 3,
    "exclude": [{"method": "wilson_ci", "perturbation": "missing+extreme"}, {"seed": [0, 2], "prompt_style": "guided"},
                {"effect": None, "n": 80}],
    "split": {"by": "scenario", "test": 0.25, "seed": 11}, "shard_rows": 250, "max_tasks": 5000,
    "max_reject_share": 0.05,
}


@pytest.mark.parametrize("grid, sha256", [
    ("paper.yaml", "8756ec658a10933fc502e30d0dff57727e71c2b5658782231ee1e0920b35adc7"),
    ("paper-10m.yaml", "43a08aa4c7fb3c1239a27240117ce00407d21cefdf552a804c7f6677fa3365da"),
    (None, "e4c630fcc7720b2b33af0023f1209fdcf6a87b6d80988fc41c0f1a6d8f43a373"),
])
def test_grid_sha256_is_pinned(grid, sha256):
    """A corpus's identity is its grid's sha256: reading a grid must never change it."""
    from pathlib import Path

    source = EVERY_KEY if grid is None else Path(__file__).resolve().parent.parent / "grids" / grid
    assert tf.load_grid(source).sha256 == sha256


def test_every_problem_of_a_grid_is_reported_in_one_line(tmp_path):
    """Malformed keys (pydantic) and names the registry does not know (by hand) together, in file order
    of their kind: the shape first, then the names."""
    grid = tmp_path / "grid.yaml"
    grid.write_text("seed: -3\nmethods: [welch_tt, pearsn]\nn: [30, 1]\nexclude: [{}]\nsplit: {test: 0, sed: 1}\n"
                    "effects: [null, {name: big, size: 0.5, target_z: 2}]\n")
    want = (f"error: {grid}: 7 problems: key 'seed': must be a non-negative integer, got -3; "
            "key 'n[1]': must be a sample size from 2 to 1000000, got 1; "
            "key 'exclude[0]': each rule must be a non-empty mapping, got {}; "
            "key 'split.test': must be a fraction in (0, 1), got 0; "
            "key 'split': unknown key 'sed' (did you mean 'seed'?); allowed: by, test, seed; "
            f"key 'methods': unknown values 'welch_tt' (did you mean 'welch_t'?), 'pearsn' (did you mean 'pearson'?); "
            f"allowed: {allowed_methods()[5:]}; "
            "key 'effects[1]': effect 'big' needs exactly one of target_z or size")
    result = CliRunner().invoke(main, ["plan", str(grid)])
    assert result.exit_code == 2
    assert result.output.splitlines() == [want]


def test_a_lone_problem_keeps_its_one_line_form():
    with pytest.raises(tf.GridError) as caught:
        tf.load_grid({"seed": 1, "methods": ["welch_t"], "n": [40], "seeds": 0}, source="grid.yaml")
    assert str(caught.value) == "grid.yaml: key 'seeds': must be an integer from 1 to 100000, got 0"


def test_every_problem_of_a_scenario_is_reported_in_one_line():
    from taskfactory.errors import ScenarioError
    from taskfactory.scenarios import parse_scenario

    raw = {"id": "probe", "domain": "medicine", "title": "", "context": "{n} patients", "question": "Differ?",
           "roles": {"outcome": "sbp", "group": "arm"}, "dgp": {"welch_t": {"mean": 1, "sd": 1}},
           "variables": [{"name": "patient", "label": "Patient", "type": "id"},
                         {"name": "arm", "label": "Arm", "type": "category", "levels": ["a", "b"], "colour": "red"},
                         {"name": "sbp", "label": "SBP", "type": "numeric", "range": [1, 2], "decimals": True},
                         {"name": "age", "label": "Age", "type": "integer", "range": [18, 99]}]}
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(raw, "two_groups", "two_groups.yaml")
    assert str(caught.value) == (
        "two_groups.yaml: 3 problems: scenario 'probe': needs a non-empty 'title'; "
        "scenario 'probe', variable 'arm': unknown key 'colour'; allowed: name, label, type, unit, range, decimals, "
        "levels, dist, prefix, relates, per; scenario 'probe', variable 'sbp': decimals (True) must be an integer from 0 to 6")
    fixed = {**raw, "title": "Blood pressure", "variables": [
        raw["variables"][0], {"name": "arm", "label": "Arm", "type": "category", "levels": ["a", "NA"]},
        {"name": "sbp", "label": "SBP", "type": "numeric", "range": [1, 2], "prefix": "S"}, raw["variables"][3]]}
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(fixed, "two_groups", "two_groups.yaml")
    assert str(caught.value) == (
        "two_groups.yaml: 2 problems: scenario 'probe', variable 'arm': level 'NA' is read by R as a logical, NA or a "
        "special number; choose another name; scenario 'probe', variable 'sbp': a numeric variable takes no prefix")


def _fast_yaml() -> bool:
    from taskfactory import readers

    return readers._FastStrictLoader is not None and readers._libyaml_bounds_nesting()


@pytest.mark.skipif(not _fast_yaml(), reason="PyYAML is built without libyaml, or with one that does not bound nesting")
def test_libyaml_reads_every_shipped_file_as_the_strict_reader_does(monkeypatch):
    """The fast path (libyaml's parser, the strict reader's scalars) gives the
    same data, types included, as the strict reader alone."""
    from pathlib import Path

    import yaml

    from taskfactory import readers

    root = Path(__file__).parent.parent
    files = sorted([*root.glob("scenarios/*.yaml"), *root.glob("grids/*.yaml")])
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        fast = readers._fast_load(text)
        assert fast is not None, path.name
        assert repr(fast[0]) == repr(yaml.load(text, Loader=readers._StrictLoader)), path.name
    # Left to the strict reader: what it refuses (an alias, a key twice, deep
    # nesting, two documents, bad YAML), and what libyaml reads otherwise (a
    # tab, which PyYAML refuses; a bare ! tag, '' in one and None in the other).
    for strict in ("a: &x 1\nb: *x\n", "a: 1\na: 2\n", "[" * 40 + "]" * 40, "a: 1\n---\nb: 2\n", "a: [\n",
                   "a:\t1\n", "[1,\t2]", "a: !\n"):
        assert readers._fast_load(strict) is None, strict
    monkeypatch.setattr(readers, "_libyaml_bounds_nesting", lambda: False)   # a libyaml whose composer would recurse
    assert readers._fast_load("a: 1\n") is None                              # without end: never used
