"""Contract tests run over every registered family.

Each family must: have 5-7 scenarios from different fields; emit a script that
uses only numpy and pandas and rewrites its CSV; carry a Python reference
solution that prints its gold; give uniform p-values under the null; reject
about half the time at the borderline effect; and keep generated values inside
the plausible ranges.
"""

import ast
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats

import taskfactory as tf
from taskfactory import kit
from taskfactory.make.analysis import read_csv_text
from taskfactory.make.script import emitted_source

from conftest import CONSERVATIVE, DISCRETE, FAMILIES, dataset, fit_n, null_p, run_python, run_scripts, small_grid

NULL_SEEDS = 300
BORDER_SEEDS = 200
#: The families whose test runs on one summary per cluster.
CLUSTER_LEVEL = ("cluster_means_t", "cluster_means_anova", "cluster_proportions_t", "cluster_event_rates_t")


def first_scenario(method):
    return tf.load_scenarios(method)[0].id


@pytest.mark.parametrize("method", FAMILIES)
def test_registration_is_complete(method):
    fam = tf.get_family(method)
    assert fam.canonical and fam.title and fam.category and fam.effect_unit
    assert fam.min_n >= 2 and fam.medium != fam.null_value
    assert "res" in fam.r_code and "p_value" in fam.py_code
    ast.parse(fam.py_code)  # the template is Python as it stands: role fields sit inside strings or sets
    emitted_source(fam.generate)  # raises when generate reaches beyond numpy and kit


def _generate_with_pandas(condition, rng):
    return pd.DataFrame({"y": rng.normal(size=condition.n)})


def test_emitted_code_refuses_a_module_other_than_numpy():
    """The emitted scripts need numpy alone, so a generate that uses pandas is refused."""
    with pytest.raises(TypeError) as err:
        emitted_source(_generate_with_pandas)
    assert str(err.value) == (f"{__name__}._generate_with_pandas uses module 'pd'; "
                              "emitted code may use only np")


def test_a_role_name_holds_the_same_in_every_family():
    """The record's roles have one type per role name, so a family whose role
    shares a name with another family's but holds something else is refused."""
    from taskfactory.make import columns
    from taskfactory import registry
    from taskfactory.methods.chi_square_gof import ChiSquareGof

    class Clash(ChiSquareGof):
        name = "clash"
        roles = {"outcome": "category", "p0": "shares"}
        r_code = py_code = "res <- p_value"

    with pytest.raises(ValueError, match=r"^family 'clash': role 'p0' is a shares role, but a value role in "
                                         r"'binomial_exact'; a role name holds the same \(a name, a list of names, "
                                         r"a number or stated shares\) in every family$"):
        registry.register(Clash())
    assert "clash" not in registry.family_names()
    roles = columns.roles_type()
    assert roles.field("p0").type == pa.float64() and roles.field("covariates").type == pa.list_(pa.string())
    assert roles.field("stated").type.value_type.names == ["level", "share"]


def test_every_scenario_roles_come_back_from_the_stored_struct():
    """A record stores roles in the registry's struct and roles_of gives the
    scenario's roles back (shares as a mapping, in their order)."""
    from taskfactory.make.columns import roles_of, roles_type, stored_roles

    typ, shares = roles_type(), 0
    for method in FAMILIES:
        for scen in tf.load_scenarios(method):
            back = roles_of(pa.array([stored_roles(scen.roles)], type=typ).to_pylist()[0])
            assert back == scen.roles
            for role, value in scen.roles.items():
                if isinstance(value, dict):
                    assert list(back[role].items()) == list(value.items())
                    shares += 1
    assert shares == len(tf.load_scenarios("chi_square_gof"))


@pytest.mark.parametrize("method", FAMILIES)
def test_scenarios_come_from_different_fields(method):
    scens = tf.load_scenarios(method)
    assert 5 <= len(scens) <= 20
    domains = [s.domain for s in scens]
    assert len(set(domains)) == len(domains), domains


@pytest.mark.parametrize("method", FAMILIES)
def test_every_scenario_builds_and_reference_py_prints_the_gold(method, tmp_path):
    fam = tf.get_family(method)
    n = max(fam.min_n, 40)
    grid = small_grid(method, n=n)
    for scen in tf.load_scenarios(method):
        c, ds = dataset(grid, method, scen.id, n, "medium")
        from taskfactory.make.task import record

        rec = record(grid, c, ds)
        (tmp_path / rec["data_filename"]).write_text(rec["data_csv"])
        printed = run_python(rec["reference_py"], tmp_path)
        p_ref = float(printed.strip().splitlines()[-1].split("P_VALUE:")[1])
        assert abs(tf.z_of_p(p_ref) - rec["gold_z"]) < 1e-6, (scen.id, p_ref, rec["gold_p"])
        assert rec["n_rows"] == fam.rows(n, ds.condition.params) and rec["n_analysed"] == ds.gold.n
        extras = [v for v in scen.variables if v.type != "id" and v.name not in json.dumps(scen.roles)]
        assert 1 <= len(extras) <= 3


def test_emitted_scripts_are_standalone_and_reproduce_csv(tmp_path):
    """One script per family, run in one isolated interpreter: each imports
    numpy only and writes its CSV byte for byte."""
    from taskfactory.make.task import record

    records = []
    for method in FAMILIES:
        grid = small_grid(method, n=max(tf.get_family(method).min_n, 30))
        c, ds = dataset(grid, method, first_scenario(method), grid.n[0], "borderline", seed=3)
        rec = record(grid, c, ds)
        tree = ast.parse(rec["script"])
        imported = {a.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                    for a in node.names} | {node.module.split(".")[0] for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom)}
        assert imported == {"numpy", "sys", "types", "SimpleNamespace"}, (method, imported)
        records.append(rec)
    for method, rec, data in zip(FAMILIES, records, run_scripts(records, tmp_path)):
        assert data == rec["data_csv"].encode(), method


def _gold_ps(method, effect, n, seeds, uniform: bool = False):
    """Gold p-values over ``seeds`` datasets (``uniform``: the p-values meant
    to be uniform under the null, see :func:`conftest.null_p`)."""
    grid = small_grid(method, n=n, seed=11)
    scenarios = [s.id for s in tf.load_scenarios(method)]
    ps = []
    for k in range(seeds):
        _, ds = dataset(grid, method, scenarios[k % len(scenarios)], n, effect, seed=k)
        ps.append(null_p(method, ds) if uniform else ds.gold.pvalue)
    return np.array(ps)


@pytest.mark.slow
@pytest.mark.parametrize("method", FAMILIES)
def test_null_p_values_are_uniform(method):
    n = max(tf.get_family(method).min_n, 30)
    ps = _gold_ps(method, "null", n, NULL_SEEDS, uniform=True)
    rate = float(np.mean(ps < 0.05))
    se = np.sqrt(0.05 * 0.95 / NULL_SEEDS)
    if method in DISCRETE:   # an exact test of sparse counts: conservative, its p far from uniform
        assert rate < 0.05 + 3.5 * se, f"type I error {rate:.3f}"
        return
    ks = stats.kstest(ps, "uniform")
    assert ks.pvalue > 0.001, f"KS p = {ks.pvalue:.2e}"
    assert abs(rate - 0.05) < 3.5 * se, f"type I error {rate:.3f}"
    if method in CONSERVATIVE:
        gold = _gold_ps(method, "null", n, NULL_SEEDS)
        assert np.all(gold >= ps) and float(np.mean(gold < 0.05)) < 0.05 + 3.5 * se


@pytest.mark.slow
@pytest.mark.parametrize("method", FAMILIES)
def test_borderline_rejects_about_half_the_time(method):
    ps = _gold_ps(method, "borderline", fit_n(method, 120), BORDER_SEEDS)
    share = float(np.mean(ps < 0.05))
    assert 0.35 <= share <= 0.65, f"reject share {share:.2f}"
    assert 0.02 <= float(np.median(ps)) <= 0.12, f"median p {np.median(ps):.3f}"


@pytest.mark.slow
@pytest.mark.parametrize("method", FAMILIES)
def test_medium_effect_grows_with_n(method):
    # the cluster-level tests' power stays well below 1 (see below): 100 datasets at each N measure it
    counts = (100, 100) if method in CLUSTER_LEVEL else (40, 20)
    small, large = (_gold_ps(method, "medium", fit_n(method, n), k) for n, k in zip((30, 800), counts))
    if method == "fisher_exact":
        # a sparse-table design keeps a few events at every N, so power stays low and flat: above alpha
        assert min(np.mean(small < 0.05), np.mean(large < 0.05)) >= 0.1
        return
    if method in CLUSTER_LEVEL:
        # the clusters' means, shares or rates are the units: 10 to 24 of them whatever N, so power grows
        # with N only as larger clusters steady their summaries, towards a bound the clusters' spread sets
        # (a medium effect is found in 25 to 55 % of 800-row datasets)
        assert np.mean(large < 0.05) > max(np.mean(small < 0.05), 3 * 0.05)
        return
    assert np.mean(large < 0.05) >= 0.9
    if np.mean(small < 0.05) < 1.0:
        assert np.mean(large < 0.05) > np.mean(small < 0.05)
    else:  # a count model at its medium rate ratio rejects every time already at N = 60: the evidence still grows
        assert np.median(-np.log10(np.maximum(large, 1e-300))) > 2 * np.median(-np.log10(np.maximum(small, 1e-300)))


@pytest.mark.slow
@pytest.mark.parametrize("method", FAMILIES)
def test_generated_values_stay_inside_plausible_ranges(method):
    """The generator clips to the plausible ranges; it should almost never need to."""
    fam = tf.get_family(method)
    n = fit_n(method, 1000)
    grid = small_grid(method, n=n)
    for scen in tf.load_scenarios(method):
        for effect in ("null", "medium"):
            _, ds = dataset(grid, method, scen.id, n, effect)
            rng = np.random.default_rng(np.random.SeedSequence(grid.seed, spawn_key=ds.key.data_stream(ds.attempt)))
            table = fam.generate(ds.condition, rng)
            for name, count in kit.clipped_counts(table, ds.condition.columns).items():
                assert count <= max(1, n // 100), f"{scen.id}.{name}: {count} of {n} values clipped to the range"


@pytest.mark.parametrize("method", FAMILIES)
def test_public_analyse_matches_gold(method):
    grid = small_grid(method, n=max(tf.get_family(method).min_n, 30))
    scen = tf.load_scenarios(method)[0]
    _, ds = dataset(grid, method, scen.id, grid.n[0], "medium", seed=5)
    data = read_csv_text(ds.csv_text)
    res = tf.analyse(method, data, scen.roles, ranges=scen.ranges())
    assert res == ds.gold


@pytest.mark.parametrize("rows, clipped, rejected", [(30, 1, False), (30, 2, True), (1000, 10, False),
                                                     (1000, 11, True), (5000, 50, False), (5000, 51, True)])
def test_a_dataset_whose_range_clipped_too_much_is_rejected(rows, clipped, rejected):
    from taskfactory.errors import DataError
    from taskfactory.make.task import _check_clipping

    if not rejected:
        _check_clipping({"y": clipped}, rows)
        return
    with pytest.raises(DataError) as err:
        _check_clipping({"y": clipped}, rows)
    assert str(err.value) == f"{clipped} of {rows} values of 'y' fell outside its plausible range and were clipped"


ROWS = 3


def _generate_with_a_helper_named_like_kits(condition, rng):
    return row_count({"y": rng.normal(size=ROWS)})


def row_count(table):   # the name of a kit helper the emitted script also carries
    return table


def test_emitted_code_refuses_two_functions_of_one_name():
    """A family helper named like a kit helper would silently replace it in the script."""
    with pytest.raises(TypeError) as err:
        emitted_source(_generate_with_a_helper_named_like_kits)
    assert str(err.value) == "two emitted functions are called 'row_count'"


NOT_A_NUMBER = float("nan")


def _generate_using_nan(condition, rng):
    return {"y": rng.normal(size=condition.n) * NOT_A_NUMBER}


def test_an_emitted_constant_must_be_written_as_python():
    """repr writes a NaN as 'nan', which the script could not run."""
    with pytest.raises(TypeError) as err:
        emitted_source(_generate_using_nan)
    assert str(err.value) == "emitted constant 'NOT_A_NUMBER' is nan; emitted constants are finite numbers"


@pytest.mark.parametrize("method", ["panel_fixed_effects", "diff_in_diff", "friedman"])
def test_a_units_properties_are_the_same_in_all_its_rows(method):
    """An extra column marked ``per: unit`` (population, floor area) is drawn
    once per unit; the other extras are readings of the row's period."""
    import io

    from taskfactory.make.task import record

    for scen in tf.load_scenarios(method):
        per_unit = {v.name for v in scen.variables if v.per_unit}
        unit = next(v.name for v in scen.variables if v.type == "unit")
        grid = small_grid(method, n=max(tf.get_family(method).min_n, 40))
        c, ds = dataset(grid, method, scen.id, grid.n[0], "null")
        data = pd.read_csv(io.StringIO(record(grid, c, ds)["data_csv"]))
        distinct = data.groupby(unit).nunique().max()
        extras = [v.name for v in scen.variables if v.dist is not None]
        assert all((distinct[name] == 1) == (name in per_unit) for name in extras), (scen.id, distinct.to_dict())
