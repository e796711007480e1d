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

A command that writes a corpus folder (``import``, ``split``, ``leakage
--drop-out``) builds it in a folder of its own with a hidden name and moves it
into place at the end (:func:`staged`): a failure removes only that
folder, and something put into the output folder while the command ran is
neither replaced nor removed (the command fails instead).
"""

from __future__ import annotations

import errno
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
def staged(out, label: str = "-o", last: tuple = ("manifest.json",)):
    """A block that writes what goes into ``out`` (a folder :func:`check_new_folder`
    passed: absent or empty) into the folder it yields, a new one with a
    hidden name that the command alone uses, moved into ``out`` when the
    block succeeds; so that nothing is ever removed or replaced that the
    command did not make, however long the block takes:

    - ``out`` absent: the folders above it that are missing are made, the
      block writes into a folder beside ``out``, renamed to ``out`` at the end;
    - ``out`` an empty folder: the block writes into a folder inside it (on
      the same file system, whatever is mounted there), whose contents are
      moved up at the end, the names in ``last`` after the others (a
      corpus's manifest.json marks it whole), each refused rather than put
      over something of the same name.

    When the block fails, or ``out`` is no longer absent or empty at the end
    (InputError ``"<label> <out>: the folder is no longer empty; ..."``),
    only the hidden folder goes, with what was moved out of it, and the
    folders made above ``out`` that are still empty."""
    out = Path(out)
    where = f"{label} {out}"
    existed = out.is_dir()
    home = out.absolute() if existed else out.absolute().parent
    made = [p for p in (home, *home.parents) if not p.exists()]   # nearest first
    work = (home / f".{out.absolute().name}.{secrets.token_hex(8)}.partial")
    moved: list[Path] = []
    try:
        home.mkdir(parents=True, exist_ok=True)
        work.mkdir()
    except OSError as exc:
        _remove_empty(made)
        raise InputError(f"{where}: cannot create the folder ({exc.strerror or exc})") from None
    try:
        yield work
        if existed:
            _move_up(work, out, where, last, moved)
        else:
            _rename_into_place(work, out, where)
    except BaseException:
        for path in moved:   # what this command made and had moved into out before a name collided
            _remove(path)
        shutil.rmtree(work, ignore_errors=True)
        _remove_empty(made)
        raise


def _no_longer_empty(where: str) -> InputError:
    return InputError(f"{where}: the folder is no longer empty (something was put in it while this command "
                      f"ran); nothing was written to it; {ASK}")


def _rename_into_place(work: Path, out: Path, where: str) -> None:
    """Rename ``work`` to ``out``, which must be absent or an empty folder."""
    try:
        os.rename(work, out)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise _no_longer_empty(where) from None
        if exc.errno == errno.ENOTDIR:
            raise InputError(f"{where}: something that is not a folder was put there while this command ran; "
                             f"nothing was written to it; {ASK}") from None
        raise InputError(f"{where}: cannot move the output into place ({exc.strerror or exc})") from None


def _move_up(work: Path, out: Path, where: str, last: tuple, moved: list) -> None:
    """Move the contents of ``work`` (inside ``out``) into ``out``, which must
    hold nothing else, the names in ``last`` last; appends each to ``moved``."""
    try:
        if any(child.name != work.name for child in out.iterdir()):
            raise _no_longer_empty(where)
        for child in sorted(work.iterdir(), key=lambda child: (child.name in last, child.name)):
            _move_one(child, out / child.name, moved)
        work.rmdir()
    except FileExistsError:
        raise _no_longer_empty(where) from None
    except OSError as exc:
        raise InputError(f"{where}: cannot move the output into place ({exc.strerror or exc})") from None


def _move_one(child: Path, target: Path, moved: list) -> None:
    """Move ``child`` to ``target``, FileExistsError if anything holds that
    name; ``target`` goes into ``moved`` once it is this command's."""
    if child.is_dir() and not child.is_symlink():
        os.mkdir(target)                 # claims the name
        moved.append(target)
        os.rename(child, target)         # onto the empty folder just made
        return
    try:
        os.link(child, target, follow_symlinks=False)   # claims the name
    except FileExistsError:
        raise
    except OSError:                      # a file system without hard links
        if os.path.lexists(target):
            raise FileExistsError(target) from None
        os.rename(child, target)
        moved.append(target)
        return
    moved.append(target)
    child.unlink()


def _remove(path: Path) -> None:
    """Remove ``path`` (a folder with what it holds), as far as it can be."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def _remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (nearest first), stopping at the first that is not empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return
