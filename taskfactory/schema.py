"""JSON Schema of the files a user writes, for editors.

``taskfactory schema grid`` and ``taskfactory schema scenario`` print the
JSON Schema of a grid file and of a scenario file, made from the pydantic
models that validate them (:func:`taskfactory.grid.grid_model`,
:func:`taskfactory.scenarios.scenario_file_model`), with a description of
every key. An editor that reads JSON Schema (VS Code's YAML extension: a
first line ``# yaml-language-server: $schema=grid.schema.json``) then
completes keys and flags mistakes as they are typed; what depends on the
registered families (method names, scenario ids) only ``taskfactory plan``
checks.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import InputError

KINDS = ("grid", "scenario")
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(kind: str) -> dict:
    """The JSON Schema of a ``kind`` file (``grid`` or ``scenario``)."""
    if kind == "grid":
        from .grid import grid_model as model
    elif kind == "scenario":
        from .scenarios import scenario_file_model as model
    else:
        raise InputError(f"unknown schema '{kind}'; allowed: {', '.join(KINDS)}")
    return {"$schema": DIALECT, **model().model_json_schema()}


def schema_text(kind: str) -> str:
    """:func:`json_schema` as indented JSON text, ending with a newline."""
    return json.dumps(json_schema(kind), indent=2) + "\n"


def write_schema(kind: str, path) -> Path:
    """Write the JSON Schema of a ``kind`` file to ``path``; the file is
    replaced whole or left as it was."""
    path = Path(path)
    text = schema_text(kind)
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write the schema ({exc.strerror or exc})") from None
    return path
