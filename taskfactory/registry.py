"""The registry of method families.

A family is one module under ``taskfactory/methods/`` holding a subclass of
:class:`~taskfactory.family.Family` and one ``register(...)`` call. Modules are
discovered, not listed: adding a family is adding its module and its
scenarios (in ``scenarios/<question_kind>.yaml``, shared with its siblings). The catalogue order is
:data:`taskfactory.methods.FAMILY_ORDER`; families it does not list follow, by name.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from functools import lru_cache

from .errors import InputError, did_you_mean
from .family import ROLE_HOLDS, Family

_REGISTRY: dict[str, Family] = {}
_LOADED = False
_LOADING = threading.RLock()


def register(family: Family) -> Family:
    """Add ``family`` (an instance of a :class:`Family` subclass); its name must be new."""
    if not isinstance(family, Family):
        raise TypeError(f"register() takes a Family instance, got {type(family).__name__}")
    type(family).check_definition()
    _ = (family.r_code, family.py_code)  # a missing reference file raises ValueError here
    if family.name in _REGISTRY:
        raise ValueError(f"family '{family.name}' is registered twice")
    for other in _REGISTRY.values():
        for role in set(family.roles) & set(other.roles):
            mine, theirs = family.roles[role], other.roles[role]
            if ROLE_HOLDS[mine] != ROLE_HOLDS[theirs]:
                raise ValueError(f"family '{family.name}': role '{role}' is a {mine} role, but a {theirs} role in "
                                 f"'{other.name}'; a role name holds the same (a name, a list of names, a number "
                                 "or stated shares) in every family")
    _REGISTRY[family.name] = family
    return family


def _ensure_loaded() -> None:
    """Import every family module once; threads that ask meanwhile wait for it."""
    global _LOADED
    if _LOADED:
        return
    with _LOADING:
        if _LOADED:
            return
        from . import methods

        for info in sorted(pkgutil.iter_modules(methods.__path__), key=lambda i: i.name):
            if not info.name.startswith("_"):
                importlib.import_module(f"{methods.__name__}.{info.name}")
        _LOADED = True


def families() -> list[Family]:
    """Every registered family, in catalogue order."""
    _ensure_loaded()
    return list(_in_catalogue_order(tuple(_REGISTRY.values())))


@lru_cache(maxsize=8)
def _in_catalogue_order(registered: tuple) -> tuple:
    from .methods import FAMILY_ORDER

    rank = {name: i for i, name in enumerate(FAMILY_ORDER)}
    return tuple(sorted(registered, key=lambda f: (rank.get(f.name, len(rank)), f.name)))


def family_names() -> list[str]:
    return [f.name for f in families()]


def get_family(name: str) -> Family:
    """The family called ``name``; the error lists the known names."""
    _ensure_loaded()
    if not isinstance(name, str):
        raise InputError(f"a method is named by text, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown method '{name}'{did_you_mean(name, family_names())}; allowed: "
                         f"{', '.join(family_names())}") from None
