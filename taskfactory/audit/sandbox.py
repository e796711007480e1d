"""Running emitted scripts with limits, each judged on its own evidence.

:func:`run_scripts` writes scripts to a throwaway folder and runs them in a
fresh interpreter started in isolated mode (``python -I``: no ``PYTHON*``
variables, no user site, no working folder on ``sys.path``) with an empty
environment, the throwaway folder as its working folder, and limits on wall
time per script, address space, CPU time and file size. Several scripts share
one interpreter for speed, but each is judged only by what it wrote: its own
output file and its own status file. A script that ends the interpreter, or
outlives its time, is blamed alone, and the scripts after it run again in a
new interpreter.

The throwaway folder is in memory (``/dev/shm``) where the machine has one
with room to spare (:data:`SCRATCH_FREE`) and no ``TMPDIR`` names another
place: each script's file, its CSV and its status are written and read, and
on a disk that file traffic cost as much as running the scripts (500
scripts of the paper corpus: 3.2 s in ``/tmp``, 1.9 s in ``/dev/shm``).
Elsewhere it is the usual temporary folder.

This runs code; :mod:`taskfactory.audit.verify` hands it only scripts it has just
re-derived itself, byte for byte, from the task's coordinates.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

#: The in-memory folder the scripts run in, when it has this much room
#: (far more than the files of the largest batch :mod:`taskfactory.audit.verify` runs).
SCRATCH = "/dev/shm"
SCRATCH_FREE = 256 << 20

RUNNER = r"""
import os, resource, runpy, signal, sys
folder, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seconds, memory, fsize = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
cpu = int(seconds * (count - first)) + 10
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

class OutOfTime(BaseException):
    pass

def alarm(signum, frame):
    raise OutOfTime()

signal.signal(signal.SIGALRM, alarm)
for i in range(first, count):
    script = os.path.join(folder, "%05d.py" % i)
    sys.argv = [script, os.path.join(folder, "%05d.csv" % i)]
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            runpy.run_path(script, run_name="__main__")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        status = "ok"
    except OutOfTime:
        status = "ran longer than %g s" % seconds
    except MemoryError:
        status = "ran out of memory (limit %d MB)" % (memory >> 20)
    except SystemExit as exc:
        status = "ok" if exc.code in (None, 0) else "exited with status %r" % (exc.code,)
    except BaseException as exc:
        status = ("%s: %s" % (type(exc).__name__, exc)).replace("\n", " ")[:500]
    tmp = os.path.join(folder, "%05d.status.partial" % i)
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(status)
    os.replace(tmp, os.path.join(folder, "%05d.status" % i))
"""


@dataclass(frozen=True)
class Limits:
    """What one script may use: wall seconds, address space and file size."""

    seconds: float = 60.0
    memory_mb: int = 2048
    file_mb: int = 1024

    def __post_init__(self):
        if not (isinstance(self.seconds, (int, float)) and 0.1 <= self.seconds <= 86400):  # NaN fails too
            raise InputError(f"the time limit per script ({self.seconds!r} s) must be from 0.1 to 86400 seconds")
        for name, low in (("memory_mb", 256), ("file_mb", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 1 << 20:
                raise InputError(f"{name} ({value!r}) must be a whole number of MB from {low} to {1 << 20}")


@dataclass(frozen=True)
class Outcome:
    """What one script did: the sha256 of the file it wrote, or why it failed."""

    sha256: str | None
    error: str | None = None


def _ended(returncode: int) -> str:
    if returncode < 0:
        name = signal.Signals(-returncode).name
        why = {"SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)", "SIGKILL": " (killed)"}
        return f"ended the interpreter by signal {name}{why.get(name, '')}"
    return f"ended the interpreter with exit status {returncode}"


def scratch_folder() -> str | None:
    """Where the scripts' throwaway folder goes: :data:`SCRATCH` when it is a
    writable folder with :data:`SCRATCH_FREE` bytes free and ``TMPDIR`` is
    not set, else None (the temporary folder)."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        if os.path.isdir(SCRATCH) and os.access(SCRATCH, os.W_OK | os.X_OK) \
                and shutil.disk_usage(SCRATCH).free >= SCRATCH_FREE:
            return SCRATCH
    except OSError:
        pass
    return None


def run_scripts(scripts: list[str], limits: Limits = Limits()) -> list[Outcome]:
    """Run each script (``python SCRIPT OUT.csv``) under ``limits``; the outcome of each, in order."""
    outcomes: list[Outcome | None] = [None] * len(scripts)
    with tempfile.TemporaryDirectory(prefix="taskfactory-run-", dir=scratch_folder()) as tmp:
        folder = Path(tmp)
        for i, text in enumerate(scripts):
            (folder / f"{i:05d}.py").write_text(text, encoding="utf-8")
        start = 0
        while start < len(scripts):
            args = [sys.executable, "-I", "-c", RUNNER, str(folder), str(start), str(len(scripts)),
                    repr(float(limits.seconds)), str(limits.memory_mb << 20), str(limits.file_mb << 20)]
            wall = limits.seconds * (len(scripts) - start) + 30.0
            try:
                proc = subprocess.run(args, env={}, cwd=folder, capture_output=True, timeout=wall)
                ended = _ended(proc.returncode)
            except subprocess.TimeoutExpired:
                ended = f"ran longer than {limits.seconds:g} s"
            for i in range(start, len(scripts)):
                status = folder / f"{i:05d}.status"
                if not status.is_file():
                    break
                text = status.read_text(encoding="utf-8")
                out = folder / f"{i:05d}.csv"
                if text != "ok":
                    outcomes[i] = Outcome(None, text)
                elif not out.is_file():
                    outcomes[i] = Outcome(None, "it wrote no file at the path it was given")
                else:
                    with open(out, "rb") as fh:
                        outcomes[i] = Outcome(hashlib.file_digest(fh, "sha256").hexdigest())
                start = i + 1
            else:
                break
            outcomes[start] = Outcome(None, ended)
            start += 1
    return outcomes  # type: ignore[return-value]
