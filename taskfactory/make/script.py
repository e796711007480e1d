"""The standalone script emitted with every task.

The script carries the source of the family's ``generate`` and of every helper
it calls, the task's condition as a Python literal, and the seed of its random
stream; run with numpy alone it writes the task's CSV byte for byte.
Text from scenario files reaches it only inside ``repr`` literals, so no label
can change what the script does.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
import types
from functools import lru_cache

from .. import kit

ALIASES = {"numpy": "np"}
PRIMITIVE = (int, float, str, bool, type(None))

HEADER = '''#!/usr/bin/env python3
"""Regenerates the dataset of taskfactory task {task_id}.

Needs only numpy. ``python {script_name} [OUT.csv]`` writes the CSV,
byte for byte as released, to OUT.csv (default: the released file name).
"""

import sys
from types import SimpleNamespace

import numpy as np

'''

FOOTER = '''

def main(path=None):
    rng = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=SPAWN_KEY))
    text = released_csv(generate(CONDITION, rng), CONDITION, rng)
    with open(path or CONDITION.data_filename, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:2])
'''


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _is_attribute_only(func, name: str) -> bool:
    """True when ``name`` occurs in ``func`` only as an attribute (``x.name``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    return not any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(tree))


def _dependencies(func) -> tuple[list, dict]:
    """Functions (transitively) and constants that ``func`` needs from its module."""
    functions, constants, stack = {}, {}, [func]
    while stack:
        f = stack.pop()
        key = (f.__module__, f.__name__)
        if key in functions:
            continue
        functions[key] = f
        for code in _code_objects(f.__code__):
            for name in code.co_names:
                if name not in f.__globals__:
                    continue
                obj = f.__globals__[name]
                if isinstance(obj, types.ModuleType):
                    if ALIASES.get(obj.__name__) != name:
                        raise TypeError(f"{f.__module__}.{f.__name__} uses module '{name}'; emitted code may use only np")
                elif isinstance(obj, types.FunctionType):
                    if obj.__module__ not in (kit.__name__, func.__module__):
                        raise TypeError(f"{f.__module__}.{f.__name__} calls {obj.__module__}.{name}; emitted code may call only "
                                        "taskfactory.kit and its own module")
                    stack.append(obj)
                elif isinstance(obj, PRIMITIVE) or (isinstance(obj, tuple) and all(isinstance(x, PRIMITIVE) for x in obj)):
                    _add_constant(constants, name, obj)
                elif not _is_attribute_only(f, name):
                    raise TypeError(f"{f.__module__}.{f.__name__} uses '{name}' ({type(obj).__name__}); emitted code may "
                                    "use only np, functions of kit or its own module, and plain constants")
    ordered = sorted(functions.values(), key=lambda f: (f.__module__ != kit.__name__, f.__module__, f.__code__.co_firstlineno))
    return ordered, constants


def _add_constant(constants: dict, name: str, value) -> None:
    """Add a constant the emitted code uses, written by ``repr``; TypeError
    for a number ``repr`` does not write as Python (inf, nan) and when another
    constant of that name is there already."""
    if any(isinstance(x, float) and not math.isfinite(x) for x in (value if isinstance(value, tuple) else (value,))):
        raise TypeError(f"emitted constant '{name}' is {value!r}; emitted constants are finite numbers")
    if constants.setdefault(name, value) != value:
        raise TypeError(f"two emitted constants are called '{name}'")


def _check_names(funcs: list, constants: dict) -> None:
    """TypeError when two emitted functions, or a function and a constant,
    share a name: the script would keep only the last one defined."""
    names = {}
    for f in funcs:
        if f.__name__ in names and names[f.__name__] is not f:
            raise TypeError(f"two emitted functions are called '{f.__name__}'")
        names[f.__name__] = f
    for name in constants:
        if name in names:
            raise TypeError(f"an emitted function and a constant are both called '{name}'")


@lru_cache(maxsize=None)
def emitted_source(generate) -> str:
    """The source of ``generate`` and ``kit.released_csv`` with all they call."""
    funcs, constants = _dependencies(generate)
    seen = {id(f) for f in funcs}
    more, more_constants = _dependencies(kit.released_csv)
    funcs += [f for f in more if id(f) not in seen]
    for name, value in more_constants.items():
        _add_constant(constants, name, value)
    _check_names(funcs, constants)
    funcs.sort(key=lambda f: (f.__module__ != kit.__name__, f.__module__, f.__code__.co_firstlineno))
    parts = [f"{name} = {value!r}" for name, value in sorted(constants.items())]
    for f in funcs:
        src = inspect.getsource(f).rstrip()
        if f is generate and f.__name__ != "generate":
            src += f"\n\n\ngenerate = {f.__name__}"
        parts.append(src)
    return "\n\n\n".join(parts)


def _entries(items, indent: str) -> list[str]:
    """``key: value`` lines of a literal, one per item; a list whose ``repr``
    is long (the column specifications) gets one line per element."""
    lines = []
    for key, value in items:
        text = repr(value)
        if isinstance(value, list) and len(text) > 80:
            lines.append(f"{indent}{key!r}: [")
            lines.extend(f"{indent}    {item!r}," for item in value)
            lines.append(f"{indent}],")
        else:
            lines.append(f"{indent}{key!r}: {text},")
    return lines


def literal(mapping: dict) -> str:
    """``mapping`` as a Python dict literal, one entry per line. Every key and
    value is written by ``repr``, so text from a scenario stays a literal."""
    return "\n".join(["{", *_entries(mapping.items(), "    "), "}"])


def behaviour(script: str) -> str:
    """The part of an emitted script that decides what it writes: everything
    from ``CONDITION`` on. Above it, the header and the ``TASK`` literal only
    describe the task, so the emitted scripts of a dataset's prompt styles,
    which differ only there, write the same file. A text without that line
    is its own behaviour."""
    at = script.find("\nCONDITION = ")
    return script if at < 0 else script[at:]


def render_behaviour(generate, condition: dict, seed: int, spawn_key: tuple) -> str:
    """The :func:`behaviour` of a script: what the prompt styles of a dataset share."""
    return (
        f"\nCONDITION = SimpleNamespace(**{literal(condition)})\n\n"
        + f"SEED = {int(seed)!r}\n"
        + f"SPAWN_KEY = {tuple(int(k) for k in spawn_key)!r}\n\n\n"
        + emitted_source(generate)
        + "\n"
        + FOOTER
    )


def render(task_id: str, task_meta: dict, behaviour_text: str) -> str:
    """The full text of one task's script: its header and ``TASK`` literal,
    then the dataset's ``behaviour_text`` (:func:`render_behaviour`)."""
    return HEADER.format(task_id=task_id, script_name="generate_data.py") + f"TASK = {literal(task_meta)}\n" + behaviour_text
