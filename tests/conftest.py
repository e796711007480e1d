import contextlib
import io
import os
import subprocess
import sys
import shutil
from pathlib import Path

import pytest

import taskfactory as tf
from taskfactory.effects import EffectLevel
from taskfactory.design.grid import Coord
from taskfactory.make.task import Dataset, record, release

ROOT = Path(__file__).resolve().parents[1]
#: The families that analyse a dataset (the closed-form ones: tests/methods/test_closed_form.py).
FAMILIES = [f.name for f in tf.families() if f.has_data]
#: Six scenarios per family for the fixtures that test building, verifying
#: and reading corpora: their task and shard counts stay fixed when a
#: question kind's file gains scenarios.
PINNED = {
    "welch_t": ["bp_trial", "wage_training", "logging_sediment", "checkout_session_time", "stream_invertebrates",
                "fish_mercury"],
    "spearman": ["fibre_ldl", "vitd_pth", "farmland_nitrate", "creatinine_sdma", "search_spend_revenue",
                 "lake_carbon_mercury"],
}


def built_once(grid: dict, folder: str):
    """A module-scoped fixture: ``grid`` built once, into ``<tmp>/<folder>/corpus``."""
    @pytest.fixture(scope="module")
    def fixture(tmp_path_factory):
        out = tmp_path_factory.mktemp(folder) / "corpus"
        tf.build(grid, out)
        return out
    return fixture


def fit_n(method: str, n: int) -> int:
    """``n`` moved inside the family's range of N (its minimum and maximum)."""
    family = tf.get_family(method)
    n = max(n, family.min_n)
    return n if family.max_n is None else min(n, family.max_n)


def small_grid(method, n=40, seeds=1, seed=7, **extra):
    return tf.load_grid({"seed": seed, "methods": [method], "n": [n], "seeds": seeds, **extra})


def dataset(grid, method, scenario, n, effect="null", seed=0, style="basic", perturbation="none"):
    """Release one dataset (asserting it was not rejected): ``(coord, Dataset)``."""
    level = effect if isinstance(effect, EffectLevel) else EffectLevel(effect)
    c = Coord(method, scenario, n, level, perturbation, seed, style, "train")
    ds = release(grid, c)
    assert isinstance(ds, Dataset), ds.reasons
    return c, ds


#: Families whose gold is conservative by R's default (a continuity
#: correction): the R call of the uncorrected accepted alternative, whose
#: p-values are the uniform ones under the null.
CONSERVATIVE = {"two_proportion_z": "prop.test(successes, totals, correct = FALSE)"}
#: Exact tests of sparse counts (``null_p = "discrete"``): their null p-values are
#: discrete and conservative, and no accepted test is uniform either; the null
#: check is the type I error alone.
DISCRETE = {f.name for f in tf.families() if f.null_p == "discrete"}
#: Families whose gold is a multiplicity-adjusted p-value (``null_p = "adjusted"``,
#: p.adjust over a panel of tests): at least the target's raw p-value, so
#: conservative by construction; the p-value uniform under the null is the raw
#: one, their naive test's (tests/methods/test_<name>.py checks that the gold
#: rejects less).
ADJUSTED = {f.name for f in tf.families() if f.null_p == "adjusted"}
assert set(CONSERVATIVE) == {f.name for f in tf.families() if f.null_p == "conservative"}


def null_p(method: str, ds: Dataset) -> float:
    """The p-value of ``ds`` meant to be uniform under the null: the gold's,
    or, for a conservative gold, its uncorrected accepted alternative's (for
    a multiplicity-adjusted gold, the unadjusted naive test's)."""
    if method in ADJUSTED:
        return ds.naive.pvalue
    if method not in CONSERVATIVE:
        return ds.gold.pvalue
    calls = [alt.call for alt in tf.get_family(method).accepted]
    return ds.accepted[calls.index(CONSERVATIVE[method])].pvalue


def run_python(code: str, cwd: Path) -> str:
    """Execute ``code`` in-process with ``cwd`` as working directory; return stdout."""
    out = io.StringIO()
    old = os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<reference>", "exec"), {"__name__": "__reference__"})
    finally:
        os.chdir(old)
    return out.getvalue()


@pytest.fixture
def record_of():
    def make(grid, c, ds):
        return record(grid, c, ds)
    return make


RUNNER = """
import runpy, sys
for script, out in zip(sys.argv[1::2], sys.argv[2::2]):
    sys.argv = [script, out]
    runpy.run_path(script, run_name="__main__")
"""


def run_scripts(records, folder: Path) -> list[bytes]:
    """Run every record's emitted script (one isolated interpreter, a fresh
    namespace each); return the CSV bytes each wrote."""
    args = []
    for i, rec in enumerate(records):
        script = folder / f"s{i}.py"
        script.write_text(rec["script"])
        args += [str(script), str(folder / f"s{i}.csv")]
    subprocess.run([sys.executable, "-I", "-c", RUNNER, *args], check=True, cwd=folder)
    return [(folder / f"s{i}.csv").read_bytes() for i in range(len(records))]



def folder_violations(tmp_path: Path, leaf: str, inputs: dict) -> dict:
    """Each way an output folder breaks the new-or-empty rule
    (:mod:`taskfactory.folders`): {kind: (the folder, the message after
    ``<option> <folder>: ``)}. ``leaf`` names a folder to be made under a file
    or an input; ``inputs`` maps a kind ("inside the corpus") to a folder the
    command reads, inside which the output would go (``leaf`` under it when it
    is a folder, the input itself when it is a file)."""
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    ask = "give a new or empty folder"
    out = {
        "not empty": (tmp_path / "full", f"the folder is not empty; {ask}"),
        "a file": (tmp_path / "file", f"exists and is not a folder; {ask}"),
        "a symbolic link": (tmp_path / "link", f"a symbolic link; {ask}"),
        "under a file": (tmp_path / "file" / leaf, f"{tmp_path / 'file'} is not a folder; {ask}"),
        "where nothing can be written": (Path("/proc") / leaf, "cannot write in /proc (No such file or directory)"),
        "a NUL in its name": (tmp_path / f"{leaf}\0", "cannot be used as a folder (embedded null byte)"),
    }
    for kind, given in inputs.items():
        target = given / leaf if given.is_dir() else given
        out[kind] = (target, f"it would go inside {given}, which the command reads; give a folder outside it")
    return out


def fresh_copy(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the built corpus ``pristine`` that a test may change."""
    copy = tmp_path / "corpus"
    shutil.copytree(pristine, copy)
    return copy
