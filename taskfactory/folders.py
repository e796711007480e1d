"""The rules for what a command writes: a folder new or empty, a file new or its own.

``report -o``, ``export -o`` and ``leakage --drop-out`` (and the library
functions behind them) write only into a folder that is absent or empty, is
not a file or a symbolic link, does not lie inside (or on) a file or folder
the command reads, and sits where something can be written.

``schema -o`` and ``leakage --report`` (and theirs) write a file that is not a
symbolic link, not a folder, not inside (or on) what the command reads, in a
folder where something can be written, and that is absent or holds what the
command itself writes (unless told to overwrite); the file is written under a
temporary name beside it, then renamed over it, so that it is never half written.

Each violation is refused with one message naming the option and the path,
before any work.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError

#: What every refusal of a folder asks for.
ASK = "give a new or empty folder"
#: What a refusal of a file asks for.
ASK_FILE = "give a new file or one this command wrote"


def check_new_folder(path, label: str, inputs=()) -> Path:
    """``path`` as a :class:`~pathlib.Path` when it may be written as a new or
    empty folder, else :class:`InputError` ``"<label> <path>: <why>"``.
    ``inputs`` are the files and folders the command reads."""
    out = Path(path)
    where = f"{label} {path}"
    try:
        if out.is_symlink():
            raise InputError(f"{where}: a symbolic link; {ASK}")
        given = _input_under(out, inputs)
        if given is not None:
            raise InputError(f"{where}: it would go inside {given}, which the command reads; give a folder outside it")
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


def _input_under(out: Path, inputs):
    """The first of ``inputs`` (files and folders) that ``out`` is or lies inside, or None."""
    resolved = out.resolve()
    for given in inputs:
        source = Path(given).resolve()
        if resolved == source or source in resolved.parents:
            return given
    return None


def check_writable(folder: Path, where: str) -> None:
    """InputError ``"<where>: cannot write in <folder> (<reason>)"`` unless a
    file can be created in ``folder``: tried, since permission bits say
    nothing to root or on a read-only file system."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(f"{where}: cannot write in {folder} ({exc.strerror or exc})") from None


def check_output_file(path, label: str, is_own_output, overwrite: bool = False, inputs=()) -> Path:
    """``path`` as a :class:`~pathlib.Path` when the command may write it,
    else :class:`InputError` ``"<label> <path>: <why>"``. An existing file is
    replaced only when ``is_own_output(path)`` (the command wrote it) or
    ``overwrite``; ``inputs`` are the files and folders the command reads."""
    out = Path(path)
    where = f"{label} {path}"
    try:
        if out.is_symlink():
            raise InputError(f"{where}: a symbolic link; {ASK_FILE}")
        given = _input_under(out, inputs)
        if given is not None:
            raise InputError(f"{where}: it would overwrite or go inside {given}, which the command reads; "
                             "give a file outside it")
        if out.is_dir():
            raise InputError(f"{where}: a folder, not a file")
        if out.exists() and not out.is_file():
            raise InputError(f"{where}: exists and is not a regular file; {ASK_FILE}")
        if out.exists() and not overwrite and not is_own_output(out):
            raise InputError(f"{where}: the file exists and is not one this command wrote; give a new file, "
                             "or --overwrite to replace it")
        folder = out.parent
        if not folder.is_dir():
            raise InputError(f"{where}: no folder {folder} to write it in")
    except (OSError, RuntimeError, ValueError) as exc:   # a name too long, a link loop, an unreadable folder, a NUL
        raise InputError(f"{where}: cannot be used as a file ({getattr(exc, 'strerror', None) or exc})") from None
    check_writable(folder, where)
    return out


def write_output_file(path: Path, text: str, label: str) -> None:
    """Write ``text`` to ``path`` (checked by :func:`check_output_file`) under
    a new temporary name in its folder, then rename it over ``path``: the
    file is replaced whole or left as it was. InputError ``"<label> <path>:
    cannot write it (<reason>)"`` when that fails."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.partial")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)   # a name of its own, the umask's mode
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise InputError(f"{label} {path}: cannot write it ({exc.strerror or exc})") from None


@contextmanager
def filling(out: Path):
    """A block that fills ``out``, a folder :func:`check_new_folder` passed (absent
    or empty), made here if absent: when the block fails, what it wrote goes
    (the folder too, if made here), so no half-written output is left."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        yield out
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for child in out.iterdir():
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() and not child.is_symlink() else child.unlink()
        raise
