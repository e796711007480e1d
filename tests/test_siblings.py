"""The data, not the wording, decide the test: sibling families share their
scenarios and their prompts read the same; only the data differ."""

import importlib.util
import re
from collections import defaultdict

import pytest

import taskfactory as tf
from taskfactory.design.catalogue import get_scenario, load_scenarios, siblings
from taskfactory.methods.ols_cluster import WITHIN_CLUSTERS
from taskfactory.design.prompts import CONVENTIONS
from taskfactory.make.task import record

from conftest import FAMILIES, ROOT, dataset, small_grid

KINDS = sorted({f.question_kind for f in tf.families() if len(siblings(f.question_kind)) > 1})
#: Words that name a test or a family of tests: no hint may use them.
TEST_WORDS = re.compile(r"t-test|\bt test|welch|student|wilcoxon|mann|whitney|kruskal|wallis|anova|analysis of "
                        r"variance|spearman|pearson|kendall|chi-squared?|fisher|\bz-test|\brank|parametric|"
                        r"signed|paired t|\bF test", re.IGNORECASE)


def _bench():
    spec = importlib.util.spec_from_file_location("bench_siblings", ROOT / "scripts" / "bench_siblings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_sibling_kind_is_listed_and_shares_every_scenario_its_design_can_take():
    """Every sibling takes every scenario of its kind, except that the within
    estimator takes only the clustered scenarios whose exposure varies within
    clusters (a slope within clusters needs one), and takes all of those, the
    quadratic adjustment takes the regression scenarios with a covariate
    whose curve the field knows (a worker's age, a pump's bathtub curve), five
    of the eight, the correlations of first differences take the
    association scenarios whose rows are a series (a period role), eight of
    the twenty, and the tests on cluster means take the two- and k-group
    scenarios whose rows carry their cluster (a cluster role), twelve of sixteen,
    as the test on cluster proportions takes eight of the fourteen
    two-proportion scenarios and the test on cluster event rates all ten
    time-to-event ones."""
    assert KINDS == ["association", "biomarker_panel", "clustered_regression", "counts", "k_groups", "paired",
                     "regression", "time_to_event", "two_groups", "two_proportions"]
    for kind in KINDS:
        ids = {name: [s.id for s in load_scenarios(name)] for name in siblings(kind)}
        every = ids[siblings(kind)[0]]
        within = [s.id for s in load_scenarios(siblings(kind)[0]) if s.dgp.get("exposure_varies") == WITHIN_CLUSTERS]
        curved = [i for i in every if i in ids.get("ols_quadratic", ())]
        series = [s.id for s in load_scenarios(siblings(kind)[0]) if "period" in s.roles]
        clustered = [s.id for s in load_scenarios(siblings(kind)[0]) if "cluster" in s.roles]
        expected = {name: {"cluster_fixed_effects": within, "ols_quadratic": curved, "pearson_differences": series,
                           "spearman_differences": series, "cluster_means_t": clustered,
                           "cluster_means_anova": clustered, "cluster_proportions_t": clustered,
                           "cluster_event_rates_t": clustered}.get(name, every) for name in ids}
        assert ids == expected, kind
        if kind == "clustered_regression":
            assert len(within) == 5
        if kind == "regression":
            assert curved == ["work_hours_alcohol", "email_spend", "pump_downtime", "sick_leave_commute",
                              "glazing_cooling"] and len(every) == 8
        if kind == "association":
            assert len(series) == 8 and len(every) == 20
        if kind in ("two_groups", "k_groups"):
            assert len(clustered) == 12 and len(every) == 16, kind
        if kind == "two_proportions":
            assert len(clustered) == 8 and len(every) == 14
        if kind == "time_to_event":
            assert len(clustered) == len(every) == 10


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("perturbation", ["none", "missing"])
def test_basic_prompts_of_siblings_and_effects_are_identical(kind, perturbation):
    """For one scenario, N and perturbation, every sibling at every effect level
    shows the agent the same prompt, word for word but for its question words
    (``Family.question_words``) and the row count of a clustered design; the
    data differ."""
    names = siblings(kind)
    scenario = load_scenarios(names[-1])[0].id  # one every sibling takes
    n = max(max(tf.get_family(name).min_n for name in names), 60)
    prompts, csvs = set(), set()
    for name in names:
        grid = small_grid(name, n=n, perturbations=[perturbation])
        for effect in ("null", "medium"):
            c, ds = dataset(grid, name, scenario, n, effect, perturbation=perturbation)
            rec = record(grid, c, ds)
            prompt = re.sub(r"\((\d+) rows\)", "(rows)", rec["prompt"])  # clusters' sizes are drawn with the data
            for word, text in tf.get_family(name).question_words.items():  # what the researcher wants, stated
                assert text in prompt
                prompt = prompt.replace(text, "{" + word + "}")
            prompts.add(prompt)
            csvs.add(rec["data_csv"])
    assert len(prompts) == 1
    assert len(csvs) == 2 * len(names)


@pytest.mark.parametrize("method", FAMILIES)
def test_every_prompt_states_the_conventions_and_hints_name_no_test(method):
    n = max(tf.get_family(method).min_n, 60)
    grid = small_grid(method, n=n, perturbations=["missing"])
    scenario = load_scenarios(method)[0].id
    for style in ("basic", "guided"):
        c, ds = dataset(grid, method, scenario, n, "medium", style=style, perturbation="missing")
        prompt = record(grid, c, ds)["prompt"]
        assert CONVENTIONS.format(alpha="0.05") in prompt
    hints = prompt.split("Hints about these data:\n")[1].split("\n\n")[0]
    assert hints.startswith("- ") and not TEST_WORDS.search(hints), hints


#: The parameters that fix a design's group or cluster sizes.
SIZE_PARAMS = ("share", "shares", "sizes")


@pytest.mark.parametrize("kind", KINDS)
def test_siblings_share_their_range_of_n_and_draw_sizes_alike(kind):
    """Neither the N a task has nor its group or cluster sizes (and their order)
    tell siblings apart: they share their minimum and maximum N, and from one
    seed every sibling draws the same sizes."""
    import numpy as np

    names = siblings(kind)
    assert len({(tf.get_family(name).min_n, tf.get_family(name).max_n) for name in names}) == 1, kind
    scenario = load_scenarios(names[-1])[0]   # one every sibling takes
    n = max(tf.get_family(names[0]).min_n, 200)
    for seed in range(10):
        drawn = set()
        for name in names:
            params = tf.get_family(name).draw_params(get_scenario(name, scenario.id), n, np.random.default_rng(seed))
            drawn.add(repr({key: params[key] for key in SIZE_PARAMS if key in params}))
        assert len(drawn) == 1, (kind, scenario.id, seed, drawn)


def test_hints_read_the_sample_not_the_generator():
    """The group sizes a hint gives are those of the released data's complete cases."""
    grid = small_grid("welch_t", n=80)
    scenario = load_scenarios("welch_t")[0]
    c, ds = dataset(grid, "welch_t", scenario.id, 80, "medium", style="guided")
    rec = record(grid, c, ds)
    header, *rows = rec["data_csv"].splitlines()
    column = header.split(",").index(scenario.roles["group"])
    counts = defaultdict(int)
    for row in rows:
        counts[row.split(",")[column]] += 1
    expected = ", ".join(f"{level} {counts[level]}" for level in sorted(counts))
    assert f"Rows per group: {expected}." in rec["prompt"]


@pytest.mark.slow
def test_wording_does_not_tell_siblings_apart_and_the_data_do(tmp_path):
    """A TF-IDF + logistic-regression classifier on the basic prompt, scenarios
    held out, does no better than the majority rate plus 5 points in any
    question kind, nor does gradient boosting on the file's sizes, shares and
    order (:func:`bench_siblings._artefacts`), beyond their sampling error
    (:func:`bench_siblings.above_chance`); rules reading only the data pick
    the canonical or an accepted test in 90 % of each family's tasks at each N
    (40, the smallest most kinds take, 60 and 200), within twice the
    binomial standard error of that share over the cell's tasks."""
    bench = _bench()
    tf.build(bench.grid(seeds=2), tmp_path / "c", jobs=2)   # N = 40, 60 and 200
    records = bench.load(tmp_path / "c")
    for kind, row in [*bench.text_classifier(records).items(), *bench.artefact_classifier(records).items()]:
        assert not bench.above_chance(row), (kind, row)
    for cell, row in bench.data_rules(records).items():
        assert row["right"] >= 0.9 - 2.0 * (0.9 * 0.1 / row["tasks"]) ** 0.5, (cell, row)
