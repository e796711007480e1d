"""`taskfactory schema`: the JSON Schema of grid and scenario files, for editors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.cli import main
from taskfactory.errors import InputError, ScenarioError
from taskfactory.readers import load_yaml
from taskfactory.scenarios import scenario_root
from taskfactory.use.schema import DIALECT, json_schema, schema_text, write_schema

ROOT = Path(__file__).resolve().parents[1]


def printed(kind: str) -> dict:
    result = CliRunner().invoke(main, ["schema", kind])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def validator(schema: dict) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def refusals(schema: dict, data) -> list[tuple[str, str]]:
    """Where and by which keyword ``schema`` refuses ``data`` (inside a
    choice of forms, the refusal of the form that fits best), sorted."""
    def leaves(error) -> list:
        if not error.context:
            return [error]
        forms = {}
        for inner in error.context:
            forms.setdefault(inner.relative_schema_path[0], []).append(inner)
        deepest = max(forms.values(), key=lambda errors: max(len(e.absolute_path) for e in errors))
        return [leaf for inner in deepest for leaf in leaves(inner)]

    return sorted((leaf.json_path, leaf.validator) for error in validator(schema).iter_errors(data)
                  for leaf in leaves(error))


def undescribed(schema: dict) -> list[str]:
    """The properties, anywhere in ``schema``, that lack a description."""
    missing = []
    objects = [("", schema)] + [(f"$defs.{name}", d) for name, d in schema.get("$defs", {}).items()]
    for where, obj in objects:
        for key, prop in obj.get("properties", {}).items():
            if not prop.get("description"):
                missing.append(f"{where}.{key}")
    return missing


def test_grid_schema_accepts_the_shipped_grids_and_refuses_a_bad_one():
    schema = printed("grid")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "taskfactory grid" and schema["required"] == ["seed", "methods", "n"]
    for name in ("demo.yaml", "paper.yaml"):
        assert refusals(schema, load_yaml(ROOT / "grids" / name, InputError)) == [], name
    bad = {"seed": -1, "methods": "all", "n": [30, 1], "effects": ["huge"], "seeds": 0, "colour": "red",
           "exclude": [{}], "split": {"test": 1.5}}
    assert refusals(schema, bad) == [
        ("$", "additionalProperties"), ("$.effects[0]", "enum"), ("$.exclude[0]", "minProperties"),
        ("$.n[1]", "minimum"), ("$.seed", "minimum"), ("$.seeds", "minimum"), ("$.split.test", "exclusiveMaximum")]


def test_grid_schema_takes_the_lone_values_the_loader_takes():
    """A key that takes a list also takes one value (and exclude null), in the
    schema as in the loader; an editor must not flag a grid that builds."""
    schema = printed("grid")
    lone = {"seed": 1, "methods": "welch_t", "scenarios": {"welch_t": "bp_trial"}, "n": 50, "effects": "medium",
            "prompt_styles": "basic", "perturbations": "missing", "exclude": None}
    assert refusals(schema, lone) == [] and tf.plan(lone).total == 1
    assert refusals(schema, {**lone, "n": 1, "prompt_styles": "loud", "effects": "huge"}) == [
        ("$.effects", "enum"), ("$.n", "minimum"), ("$.prompt_styles", "enum")]


def test_scenario_schema_accepts_every_shipped_scenario_file_and_refuses_a_bad_one():
    schema = printed("scenario")
    assert schema["title"] == "taskfactory scenario file" and schema["required"] == ["kind", "scenarios"]
    files = sorted(scenario_root().glob("*.yaml"))
    assert len(files) >= 10
    for path in files:
        assert refusals(schema, load_yaml(path, ScenarioError)) == [], path.name
    bad = load_yaml(scenario_root() / "two_groups.yaml", ScenarioError)
    bad["scenarios"][0]["variables"][0]["type"] = "text"
    bad["scenarios"][0]["variables"][1]["decimals"] = 7
    bad["scenarios"][1]["colour"] = "red"
    assert refusals(schema, bad) == [("$.scenarios[0].variables[0].type", "enum"),
                                     ("$.scenarios[0].variables[1].decimals", "maximum"),
                                     ("$.scenarios[1]", "additionalProperties")]


@pytest.mark.parametrize("kind", ["grid", "scenario"])
def test_every_key_of_the_schema_is_described(kind):
    schema = json_schema(kind)
    assert undescribed(schema) == []
    assert "properties" in schema and schema["$defs"]


def test_schema_out_writes_the_file_and_prints_nothing(tmp_path):
    out = tmp_path / "grid.schema.json"
    result = CliRunner().invoke(main, ["schema", "grid", "-o", str(out)])
    assert result.exit_code == 0 and result.output == ""
    assert json.loads(out.read_text()) == printed("grid")
    assert [p.name for p in tmp_path.iterdir()] == ["grid.schema.json"]


ASK = "give a new file or one this command wrote"
FOREIGN = "the file exists and is not one this command wrote; give a new file, or --overwrite to replace it"


def file_violations(tmp_path: Path) -> dict:
    """Each way ``-o FILE`` breaks the rule for an output file
    (:func:`taskfactory.folders.check_output_file`): {kind: (the file, the
    message after ``-o <file>: ``)}, made under ``tmp_path/given``
    (:func:`as_made` tells whether it is still as made)."""
    given = tmp_path / "given"
    given.mkdir()
    (given / "notes.json").write_text('{"mine": true}\n')
    (given / "keep.json").write_text(schema_text("grid"))   # a schema, behind a link
    (given / "link.json").symlink_to("keep.json")
    (given / "dangling.json").symlink_to("nowhere.json")
    (given / "folder").mkdir()
    return {
        "a symbolic link to a file": (given / "link.json", f"a symbolic link; {ASK}"),
        "a dangling symbolic link": (given / "dangling.json", f"a symbolic link; {ASK}"),
        "a file this command did not write": (given / "notes.json", FOREIGN),
        "a folder": (given / "folder", "a folder, not a file"),
        "not a regular file": (Path("/dev/null"), f"exists and is not a regular file; {ASK}"),
        "in no folder": (given / "none" / "out.json", f"no folder {given / 'none'} to write it in"),
        "where nothing can be written": (Path("/proc/out.json"), "cannot write in /proc (No such file or directory)"),
        "a NUL in its name": (given / "out\0.json", "cannot be used as a file (embedded null byte)"),
    }


def as_made(tmp_path: Path) -> bool:
    """Whether the files :func:`file_violations` made are as it made them, and nothing was added."""
    given = tmp_path / "given"
    return (sorted(p.name for p in given.iterdir()) == ["dangling.json", "folder", "keep.json", "link.json",
                                                         "notes.json"]
            and (given / "notes.json").read_bytes() == b'{"mine": true}\n'
            and (given / "keep.json").read_text() == schema_text("grid")
            and os.readlink(given / "link.json") == "keep.json"
            and os.readlink(given / "dangling.json") == "nowhere.json"
            and not any((given / "folder").iterdir()))


@pytest.mark.parametrize("kind", ["a symbolic link to a file", "a dangling symbolic link",
                                  "a file this command did not write", "a folder", "not a regular file",
                                  "in no folder", "where nothing can be written", "a NUL in its name"])
def test_schema_out_that_breaks_the_rule_is_refused_and_left_as_it_was(kind, tmp_path):
    out, why = file_violations(tmp_path)[kind]
    for overwrite in ([], ["--overwrite"]) if why != FOREIGN else ([],):   # --overwrite lets a foreign file go only
        if "\0" not in str(out):   # no command line holds a NUL
            result = CliRunner().invoke(main, ["schema", "scenario", "-o", str(out), *overwrite])
            assert result.exit_code == 2 and result.output == f"error: -o {out}: {why}\n"
        with pytest.raises(InputError) as err:
            write_schema("scenario", out, overwrite=bool(overwrite))
        assert str(err.value) == f"-o {out}: {why}"
    assert as_made(tmp_path)


def test_schema_out_replaces_a_schema_it_wrote_and_another_file_only_with_overwrite(tmp_path):
    out = tmp_path / "editor.json"
    out.write_text(json.dumps({**json_schema("grid"), "description": "as an older taskfactory wrote it"}))
    result = CliRunner().invoke(main, ["schema", "scenario", "-o", str(out)])
    assert result.exit_code == 0 and out.read_text() == schema_text("scenario")
    out.write_text(json.dumps({"$schema": DIALECT, "title": "my own schema"}))
    mine = out.read_bytes()
    result = CliRunner().invoke(main, ["schema", "grid", "-o", str(out)])
    assert result.exit_code == 2 and result.output == f"error: -o {out}: {FOREIGN}\n" and out.read_bytes() == mine
    result = CliRunner().invoke(main, ["schema", "grid", "-o", str(out), "--overwrite"])
    assert result.exit_code == 0 and out.read_text() == schema_text("grid")
    assert [p.name for p in tmp_path.iterdir()] == ["editor.json"]


def test_schema_out_is_replaced_whole_or_left_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "grid.schema.json"
    out.write_text(schema_text("scenario"))

    def refuse(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    result = CliRunner().invoke(main, ["schema", "grid", "-o", str(out)])
    assert result.exit_code == 2 and result.output == f"error: -o {out}: cannot write it (No space left on device)\n"
    assert out.read_text() == schema_text("scenario") and [p.name for p in tmp_path.iterdir()] == [out.name]


def test_unknown_schema_kind_is_exit_2():
    result = CliRunner().invoke(main, ["schema", "corpus"])
    assert result.exit_code == 2
    assert result.output == ("error: main schema: Invalid value for '{grid|scenario|import}': 'corpus' is not one "
                             "of 'grid', 'scenario', 'import' (see --help)\n")
    with pytest.raises(InputError, match=r"^unknown schema .corpus.; allowed: grid, scenario, import$"):
        json_schema("corpus")


def test_pydantic_loads_only_when_a_file_is_validated():
    code = ("import sys, taskfactory, taskfactory.cli, taskfactory.design.grid, taskfactory.scenarios\n"
            "from click.testing import CliRunner\n"
            "assert CliRunner().invoke(taskfactory.cli.main, ['--help']).exit_code == 0\n"
            "print('pydantic' in sys.modules)\n"
            "taskfactory.load_grid({'seed': 1, 'methods': ['welch_t'], 'n': [40]})\n"
            "print('pydantic' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["False", "True"]


def test_the_models_take_the_keys_the_code_reads():
    from taskfactory.design.grid import EXCLUDE_KEYS, grid_model
    from taskfactory.validation import keys_at

    assert keys_at(grid_model(), ("exclude", 0)) == EXCLUDE_KEYS
    assert keys_at(grid_model(), ("split",)) == ("by", "test", "seed")


@pytest.mark.parametrize("level", [
    None, "null", "borderline", "medium", "large", 3, [], {"name": "big", "target_z": 3}, {"name": "big", "target_z": 8},
    {"name": "big", "target_z": 8.5}, {"name": "big", "target_z": 0}, {"name": "big", "target_z": True},
    {"name": "big", "size": 0.5}, {"name": "big", "size": {"welch_t": 0.5}}, {"name": "big", "size": "0.5"},
    {"name": "big", "size": 0.5, "target_z": 2}, {"name": "big"}, {"name": "medium", "size": 0.5},
    {"name": "b-g", "size": 0.5}, {"name": "___", "size": 0.5}, {"name": "_x1", "size": 0.5}, {"name": "é", "size": 1},
    {"name": "", "size": 0.5}, {"name": 7, "size": 0.5}, {"name": "big", "size": 0.5, "sign": 1}])
def test_the_effect_schema_takes_the_levels_the_loader_takes(level):
    """One rule, two readers: the JSON Schema of an effect level (``taskfactory schema grid``) and
    parse_effect accept the same entries (beyond JSON, parse_effect also refuses a non-finite size)."""
    from taskfactory.effects import level_schema, parse_effect

    try:
        parse_effect(level)
        parsed = True
    except tf.GridError:
        parsed = False
    assert jsonschema.Draft202012Validator(level_schema()).is_valid(level) == parsed
