"""JSON Schema of the files a user writes, for editors.

``taskfactory schema grid``, ``taskfactory schema scenario`` and
``taskfactory schema import`` print the JSON Schema of a grid file, of a
scenario file and of a real-data spec, made from the pydantic models that
validate them (:func:`taskfactory.design.grid.grid_model`,
:func:`taskfactory.scenarios.scenario_file_model`,
:func:`taskfactory.store.real.spec_model`), with a description of every
key. An editor that reads JSON Schema (VS Code's YAML extension: a first
line ``# yaml-language-server: $schema=grid.schema.json``) then completes
keys and flags mistakes as they are typed; what depends on the registered
families (method names, scenario ids) only ``taskfactory plan`` checks.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..folders import check_output_file, write_output_file

KINDS = ("grid", "scenario", "import")
DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The largest file :func:`is_schema_file` reads (a schema is about 15 kB).
SCHEMA_MAX_BYTES = 1 << 20


def json_schema(kind: str) -> dict:
    """The JSON Schema of a ``kind`` file (``grid``, ``scenario`` or ``import``, a real-data spec)."""
    if kind == "grid":
        from ..design.grid import grid_model as model
    elif kind == "scenario":
        from ..scenarios import scenario_file_model as model
    elif kind == "import":
        from ..store.real import spec_model as model
    else:
        raise InputError(f"unknown schema '{kind}'; allowed: {', '.join(KINDS)}")
    return {"$schema": DIALECT, **model().model_json_schema()}


def schema_text(kind: str) -> str:
    """:func:`json_schema` as indented JSON text, ending with a newline."""
    return json.dumps(json_schema(kind), indent=2) + "\n"


def is_schema_file(path: Path) -> bool:
    """Whether ``path`` holds a JSON Schema this command writes (of any
    kind, from any version): a JSON object of :data:`DIALECT` titled as one
    of :data:`KINDS`."""
    try:
        if path.stat().st_size > SCHEMA_MAX_BYTES:
            return False
        found = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):   # unreadable, not JSON, nested too deep
        return False
    return (isinstance(found, dict) and found.get("$schema") == DIALECT
            and found.get("title") in {json_schema(kind)["title"] for kind in KINDS})


def write_schema(kind: str, path, overwrite: bool = False) -> Path:
    """Write the JSON Schema of a ``kind`` file to ``path`` (``-o``), a new
    file or a schema written before (any file with ``overwrite``; never a
    symbolic link, see :func:`~taskfactory.folders.check_output_file`); the
    file is replaced whole or left as it was."""
    path = check_output_file(path, "-o", is_schema_file, overwrite)
    write_output_file(path, schema_text(kind), "-o")
    return path
