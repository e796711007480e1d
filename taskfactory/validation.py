"""Reporting every problem of a grid or scenario file in one line.

The shape of a file (its keys, their types and ranges) is declared as pydantic
models (see :func:`taskfactory.design.grid.grid_model` and
:func:`taskfactory.scenarios.scenario_file_model`); what depends on the
registered families is checked by hand. Both add to one :class:`Problems`,
which raises them together: one problem keeps the one-line message
``<file>: <where>: <what>``, several read ``<file>: 3 problems: <where>:
<what>; ...``. :func:`translate` turns pydantic's errors into the same
wording, and :func:`worded` gives a type the message its key is known by.

pydantic itself is imported only when a model is first built, so that
``import taskfactory`` and ``taskfactory --help`` stay fast.
"""

from __future__ import annotations

from typing import Callable

from .errors import InputError, did_you_mean


class Problems:
    """The problems found in one file (``source``), each a ``(where, what)``
    pair; :meth:`raise_any` raises them as one ``error`` line. ``joiner``
    separates the file from the place of a lone problem (``": "`` or ``", "``)."""

    def __init__(self, source: str, error: type[InputError] = InputError, joiner: str = ": "):
        self.source, self.error, self.joiner = source, error, joiner
        self.found: list[tuple[str | None, str]] = []

    def add(self, what: str, where: str | None = None) -> None:
        if (where, what) not in self.found:
            self.found.append((where, what))

    def __len__(self) -> int:
        return len(self.found)

    def message(self) -> str:
        if len(self.found) == 1:
            where, what = self.found[0]
            return f"{self.source}{self.joiner}{where}: {what}" if where else f"{self.source}: {what}"
        listed = "; ".join(f"{where}: {what}" if where else what for where, what in self.found)
        return f"{self.source}: {len(self.found)} problems: {listed}"

    def raise_any(self) -> None:
        """Raise the problems found so far, if any, as one line."""
        if self.found:
            raise self.error(self.message())


def path_text(loc: tuple) -> str:
    """A location in a file as it reads: ``("exclude", 0, "seed")`` is ``exclude[0].seed``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def worded(message: str | Callable[[object], str], inside: bool = False):
    """A pydantic validator that reports a value its type refuses with
    ``message`` (``{got}`` is the value's repr; a callable gets the value)
    instead of pydantic's own words. Refusals inside the value (an item of a
    list, a key of a mapping) keep their own message and place, unless
    ``inside``: then ``message`` covers them too."""
    from pydantic import ValidationError, WrapValidator
    from pydantic_core import PydanticCustomError

    def validate(value, handler):
        try:
            return handler(value)
        except ValidationError as exc:
            if inside or any(not e["loc"] for e in exc.errors()):
                text = message(value) if callable(message) else message.replace("{got}", repr(value))
                raise PydanticCustomError("worded", text) from None
            raise

    return WrapValidator(validate)


def keys_at(model, loc: tuple) -> tuple:
    """The keys of the mapping at ``loc`` in a file ``model`` validates, in
    the order the model declares them."""
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        inner = None if field is None else _model_in(field.annotation)
        model = inner or model   # a key of a mapping of models, or a field holding no model: the same model
    return tuple(model.model_fields)


def _model_in(annotation):
    """The pydantic model a field's type holds (itself, or inside a list or an optional)."""
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for inner in get_args(annotation):
        found = _model_in(inner)
        if found is not None:
            return found
    return None


def translate(error: dict, model, where: Callable[[tuple], str | None], root: str,
              sort_top: bool = False) -> tuple[str, str | None]:
    """One pydantic error of a file ``model`` validates, as ``(what, where)``
    in the project's words.

    ``where(loc)`` says where ``loc`` is in the file (None: the whole file)
    and ``root`` what the whole file must be; ``sort_top`` lists the keys a
    file takes in alphabetical order.
    """
    loc, kind = tuple(error["loc"]), error["type"]
    if kind == "worded":
        return error["msg"], where(loc)
    if loc and loc[-1] == "[key]":
        return f"has the key {error['input']!r}; keys must be names", where(loc[:-2])
    if kind == "missing":
        return f"missing required key '{loc[-1]}'", where(loc[:-1])
    if kind in ("extra_forbidden", "invalid_key"):
        allowed = keys_at(model, loc[:-1])
        allowed = tuple(sorted(allowed)) if sort_top and len(loc) == 1 else allowed
        return (f"unknown key '{loc[-1]}'{did_you_mean(loc[-1], allowed)}; allowed: {', '.join(allowed)}",
                where(loc[:-1]))
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return (root if not loc else f"must be a mapping, got {error['input']!r}"), where(loc)
    if kind == "list_type":
        return f"must be a list, got {error['input']!r}", where(loc)
    return f"{error['msg'].lower()}, got {error['input']!r}".replace("input should be", "must be"), where(loc)
