"""Reading the files a user hands in: bounded, UTF-8, strict YAML and JSON.

Every grid, scenario file, manifest and benchmark goes through here, so that a
file that is too large, binary, not UTF-8 or nested without end is refused with
one line naming it, before anything is parsed.

YAML is read as YAML 1.2's core schema reads it, not as YAML 1.1: ``yes``,
``no``, ``on`` and ``off`` are strings (only ``true`` and ``false`` are
booleans), ``1:30`` is a string (not 90), ``010`` is ten, ``1e-300`` is a
number, dates are strings. A key given twice and an alias (``*name``) are
refused, as is nesting deeper than :data:`MAX_DEPTH`.

libyaml, where PyYAML has it, parses a document ten times as fast as PyYAML's
own parser (the scenario files in 0.03 s rather than 0.4 s). It is used only
where it bounds nesting itself (libyaml 0.2.6 and later refuse 1001 levels;
its composer recurses in C, so an older one would crash on a deep document
before any check of ours), and only on a text without a tab or a ``!``, where
the two parsers differ (libyaml takes a tab where PyYAML refuses one; a bare
``!`` tag reads as '' in one and None in the other). A document it refuses,
or whose nodes nest too deep or repeat (an alias), is read again by PyYAML's
parser, whose checks name the line at fault.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from functools import cache
from pathlib import Path

import yaml

MAX_TEXT_BYTES = 1 << 20     # grids and scenario files
MAX_DEPTH = 32


def _describe(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):.1f} MB" if nbytes >= 1 << 20 else f"{nbytes} bytes"


def read_text(path, error, what: str = "file", limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of ``path``; ``error`` (an exception class) when it is
    missing, larger than ``limit`` bytes, binary or not UTF-8."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise error(f"{path}: not a {what} (a folder or special file)")
        if size > limit:
            raise error(f"{path}: the {what} is {_describe(size)}, more than the {_describe(limit)} allowed")
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    return decode(data, str(path), error, what)


def open_regular(path, error, what: str, wanted: str):
    """``path`` opened for reading in binary when it is a regular file (a FIFO
    would block and a device never end; checked on the open descriptor, so a
    file swapped after a check is caught), else ``error`` naming ``what`` it
    was to hold and the file ``wanted``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or type(exc).__name__})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise error(f"{path}: not a regular file (a folder, FIFO or device); give {wanted}")
    return os.fdopen(fd, "rb")


def decode(data: bytes, where: str, error, what: str = "file") -> str:
    """``data`` as UTF-8 text without NUL characters, else ``error``."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise error(f"{where}: the {what} holds a NUL byte at offset {nul}; it is not a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start})") from None


# --- YAML -------------------------------------------------------------------------

class _StrictLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars, no aliases, no duplicate keys."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise _Refused(f"line {mark.line + 1}: aliases (*name) are not allowed")
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise _Refused(f"line {mark.line + 1}: nested more than {MAX_DEPTH} levels deep")
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise _Refused(f"line {key_node.start_mark.line + 1}: a mapping key must be a plain value") from None
            if key in seen:
                raise _Refused(f"line {key_node.start_mark.line + 1}: key '{key}' is given twice (first on line "
                               f"{seen[key]})")
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


class _Refused(Exception):
    pass


_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^[-+]?[0-9][0-9_]*$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_REPLACED = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
             "tag:yaml.org,2002:timestamp"}

_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789"))


def _construct_bool(loader, node):
    return loader.construct_scalar(node).lower() == "true"


#: Longest whole number a file may hold, in digits (Python refuses to convert
#: more than 4300 digits; no count or seed needs more than 19).
MAX_INT_DIGITS = 30


def _construct_int(loader, node):
    text = loader.construct_scalar(node).replace("_", "")
    if len(text.lstrip("+-")) > MAX_INT_DIGITS:
        raise _Refused(f"line {node.start_mark.line + 1}: a whole number of {len(text.lstrip('+-'))} digits; "
                       f"at most {MAX_INT_DIGITS} are allowed")
    return int(text, 10)


def _construct_float(loader, node):
    text = loader.construct_scalar(node).replace("_", "").lower()
    if text.endswith(("inf", "nan")):
        sign = -1.0 if text.startswith("-") else 1.0
        return sign * math.inf if text.endswith("inf") else math.nan
    return float(text)


def _construct_timestamp(loader, node):
    return loader.construct_scalar(node)


_StrictLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


if getattr(yaml, "__with_libyaml__", False):
    class _FastStrictLoader(yaml.cyaml.CParser, _StrictLoader):
        """libyaml's parser with the strict loader's scalars and mappings."""

        def __init__(self, stream):
            yaml.cyaml.CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
else:  # pragma: no cover - PyYAML built without libyaml
    _FastStrictLoader = None


def _plain_tree(node) -> bool:
    """True when no node below ``node`` is reached twice (an alias) and none
    nests deeper than :data:`MAX_DEPTH`."""
    seen, stack = set(), [(node, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen or depth > MAX_DEPTH:
            return False
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend((part, depth + 1) for pair in node.value for part in pair)
    return True


@cache
def _libyaml_bounds_nesting() -> bool:
    """True when libyaml refuses a document nested 1001 levels deep, in a flow
    and in a block (a libyaml without that bound is not used)."""
    deep = 1001
    for text in ("[" * deep + "]" * deep, "- " * deep + "x"):
        try:
            yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506 - a SafeLoader
        except yaml.YAMLError:
            continue
        return False
    return True


def _fast_load(text: str):
    """The data of ``text`` through libyaml, or None when the strict reader
    must read it (see the module docstring)."""
    if _FastStrictLoader is None or "\t" in text or "!" in text or not _libyaml_bounds_nesting():
        return None
    loader = _FastStrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None or not _plain_tree(node):
            return None
        return (loader.construct_document(node),)
    except (yaml.YAMLError, _Refused, RecursionError):
        return None
    finally:
        loader.dispose()


def parse_yaml(text: str, where: str, error):
    """The data of a YAML document, read strictly (see the module docstring)."""
    fast = _fast_load(text)
    if fast is not None:
        return fast[0]
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _Refused as exc:
        raise error(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: not valid YAML ({' '.join(str(exc).split())})") from None
    except RecursionError:
        raise error(f"{where}: nested more than {MAX_DEPTH} levels deep") from None


def load_yaml(path, error, what: str = "file"):
    """Read and parse a YAML file of at most :data:`MAX_TEXT_BYTES`."""
    return parse_yaml(read_text(path, error, what), str(path), error)


# --- JSON -------------------------------------------------------------------------

def nested_within(obj, limit: int) -> bool:
    """True when ``obj`` nests at most ``limit`` levels of lists and dicts
    (only non-empty containers are kept to visit, so a long flat list costs
    little memory)."""
    if not isinstance(obj, (dict, list)):
        return True
    stack = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        children = [v for v in (value.values() if isinstance(value, dict) else value) if isinstance(v, (dict, list))]
        if children and depth == limit:
            return False
        stack.extend((v, depth + 1) for v in children if v)   # an empty container has nothing below it
    return True


class KeyTwice(ValueError):
    """A JSON object gives one key twice: which value is meant is ambiguous."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list) -> dict:
    """A JSON object's pairs as a dict (``json.loads``' ``object_pairs_hook``),
    refusing a key given twice (:class:`KeyTwice`), as the YAML reader does."""
    out = dict(pairs)
    if len(out) < len(pairs):
        seen = set()
        raise KeyTwice(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return out


class _LongNumber(ValueError):
    pass


def _json_int(text: str) -> int:
    """A JSON whole number, refused beyond :data:`MAX_INT_DIGITS` digits as the YAML reader refuses it."""
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _LongNumber(digits)
    return int(text)


def parse_json(text: str | bytes, where: str, error, max_depth: int = MAX_DEPTH):
    """The data of a JSON text (bytes are read as UTF-8 first); ``error`` when
    it is not UTF-8, not JSON, gives a key twice or nests too deep."""
    if isinstance(text, bytes):
        text = decode(text, where, error, "JSON text")
    try:
        data = json.loads(text, object_pairs_hook=unique_keys, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except KeyTwice as exc:
        key = exc.key if len(exc.key) <= 60 else exc.key[:57] + "..."
        raise error(f"{where}: the key {key!r} is given twice (which value is meant is ambiguous)") from None
    except _LongNumber as exc:
        raise error(f"{where}: a whole number of {exc.args[0]} digits; at most {MAX_INT_DIGITS} are allowed") from None
    except ValueError:  # a number of more digits than Python converts
        raise error(f"{where}: not valid JSON (a number of more than 4300 digits)") from None
    except RecursionError:
        raise error(f"{where}: nested more than {max_depth} levels deep") from None
    if not nested_within(data, max_depth):
        raise error(f"{where}: nested more than {max_depth} levels deep")
    return data
