"""The one rule for a folder a command writes into: new or empty.

``report -o``, ``export -o`` and ``leakage --drop-out`` (and the library
functions behind them) write only into a folder that is absent or empty, is
not a file or a symbolic link, does not lie inside (or on) a file or folder
the command reads, and sits where something can be written. Each violation
is refused with one message naming the option and the path, before any work.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .errors import InputError

#: What every refusal asks for.
ASK = "give a new or empty folder"


def check_new_folder(path, label: str, inputs=()) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it may be written as a new or
    empty folder, else :class:`InputError` ``"<label> <path>: <why>"``.
    ``inputs`` are the files and folders the command reads."""
    out = Path(path)
    where = f"{label} {path}"
    try:
        if out.is_symlink():
            raise InputError(f"{where}: a symbolic link; {ASK}")
        resolved = out.resolve()
        for given in inputs:
            source = Path(given).resolve()
            if resolved == source or source in resolved.parents:
                raise InputError(f"{where}: it would go inside {given}, which the command reads; "
                                 "give a folder outside it")
        if out.exists() and not out.is_dir():
            raise InputError(f"{where}: exists and is not a folder; {ASK}")
        if out.is_dir() and any(out.iterdir()):
            raise InputError(f"{where}: the folder is not empty; {ASK}")
        existing = next(p for p in (out.absolute(), *out.absolute().parents) if p.exists())
    except (OSError, RuntimeError, ValueError) as exc:   # a name too long, a link loop, an unreadable folder, a NUL
        raise InputError(f"{where}: cannot be used as a folder ({getattr(exc, 'strerror', None) or exc})") from None
    if not existing.is_dir():
        raise InputError(f"{where}: {existing} is not a folder; {ASK}")
    check_writable(existing, where)
    return out


def check_writable(folder: Path, where: str) -> None:
    """InputError ``"<where>: cannot write in <folder> (<reason>)"`` unless a
    file can be created in ``folder``: tried, since permission bits say
    nothing to root or on a read-only file system."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(f"{where}: cannot write in {folder} ({exc.strerror or exc})") from None
