"""Code sessions for an agent: Python and R, each in a bubblewrap sandbox of its own.

A :class:`Sandbox` keeps a warm pool of sandboxes per language, each holding
a fresh session; a :class:`Workspace` is one episode's view of it: the task's
files, and one session per language, taken from the pool on its first call
and kept until the workspace closes, so variables and loaded data persist
between calls. A closed workspace's sandboxes are reset in the background
(every process stopped, the folders emptied, a fresh session started) and
handed out again. In each sandbox a keeper (:mod:`.servers`) imports the
session's libraries once; a Python session is forked from it, an R session
starts afresh.

Each sandbox (Debian's ``bubblewrap``) has its own network namespace (no
network, not even the host's loopback), process, IPC and host-name
namespaces; the system's ``/usr`` and the Python installation read-only,
nothing else of the host (not the corpus, not the project, not the home
folder); a private working folder ``/workspace`` and ``/tmp`` in memory with a
size cap; and an unprivileged user of its own for its sessions (a user id per
sandbox where bubblewrap starts as root, so that the process limit counts
that sandbox alone). A system-call filter (:mod:`.seccomp`) refuses what
would outlive a session's processes or reach past them: keyrings, POSIX
message queues, namespaces, mounts, tracing. Per call: wall time (writing
the request included), and per process address space, file size, process
count and CPU time; per episode: calls and seconds. A call past
a limit is stopped, the agent is told in one line, and the session restarts
on the next call, saying that its variables are gone. The output returned is
cut to :attr:`Limits.output_chars`, head and tail kept.

Without bubblewrap a sandbox refuses to start (:class:`IsolationError`)
unless the caller asks for ``local=True``, which runs sessions unisolated in
a temporary folder and warns so on every start.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import itertools
import os
import select
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ...errors import TaskFactoryError
from . import seccomp
from .servers import KEEPER, R_SERVER

LANGUAGES = ("python", "r")
#: What a session imports before it is handed out. Python's are imported once per sandbox and every
#: session is forked from that interpreter; R starts afresh for each session, so it loads its packages
#: when the code asks (survival alone costs 0.8 s of start-up).
PRELOAD = {"python": ("numpy", "pandas", "scipy.stats", "statsmodels.api"), "r": ()}
WORKDIR = "/workspace"
#: What the interpreters read of /etc (R's configuration, the BLAS alternatives, the loader's cache).
SYSTEM_FILES = ("/etc/R", "/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime")
#: Session user ids where the sandbox starts as root: one per session, none a host account's.
UID_BASE, UID_COUNT = 61000, 2000
#: Where sandboxes claim their user ids (a lock file per id, root's own folder).
UID_LOCKS = "/run/taskfactory-sandbox-uids" if os.path.isdir("/run") else os.path.join(tempfile.gettempdir(),
                                                                                          "taskfactory-sandbox-uids")
_UID_START = itertools.count((os.getpid() * 7919) % UID_COUNT)
START_SECONDS = 120.0
#: The longest reply word of the protocol, with room to spare.
MESSAGE_MAX = 256
LOCAL_WARNING = "taskfactory: the sandbox runs model code UNISOLATED (local mode): no bubblewrap isolation"


class IsolationError(TaskFactoryError):
    """The sandbox cannot isolate model code here (no usable bubblewrap)."""

    exit_code = 2


@dataclass(frozen=True)
class Limits:
    """What one call and one episode may use."""

    call_seconds: float = 30.0
    memory_mb: int = 4096          # address space of each process
    disk_mb: int = 64              # the working folder, /tmp, and any one file
    processes: int = 64
    output_chars: int = 8000
    episode_calls: int = 40
    episode_seconds: float = 900.0


@dataclass(frozen=True)
class CallResult:
    """What one call returned: the text the agent sees and how the call ended
    (``ok``, ``error`` for an exception in the code, ``timeout``, ``ended``
    when the session died, ``refused`` past an episode limit)."""

    output: str
    status: str
    seconds: float
    restarted: bool = False


@functools.cache
def isolation_problem() -> str | None:
    """None where bubblewrap can start a sandbox here; otherwise why not, in one line."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian's package: bubblewrap)"
    args = [bwrap, *_namespace_args(), "--ro-bind", "/usr", "/usr", *_usr_links(), "/usr/bin/true"]
    try:
        done = subprocess.run(args, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start: {exc}"
    if done.returncode:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot make a sandbox here: {why[-1] if why else f'status {done.returncode}'}"
    return None


def _namespace_args() -> list[str]:
    args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if os.getuid() == 0:   # privileged mode: the keeper stays root, its sessions become the sandbox's user
        caps = ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_KILL")
        return args + ["--cap-drop", "ALL"] + [a for cap in caps for a in ("--cap-add", cap)]
    return args + ["--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534"]


def _usr_links() -> list[str]:
    args = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _python() -> tuple[str, str, list[str]]:
    """(the interpreter, the libraries' folder, the folders to bind read-only)."""
    executable = os.path.realpath(sys.executable)
    site = sysconfig.get_paths()["purelib"]
    binds = [p for p in dict.fromkeys([sys.base_prefix, os.path.dirname(executable), site])
             if not p.startswith("/usr/")]
    return executable, site, binds


def _hidden(site: str) -> list[str]:
    """bubblewrap's arguments that hide taskfactory's own files among the
    bound libraries (the package, its scenario files, its metadata): a
    session needs none of them, and they are the factory's, not the task's."""
    args = []
    for entry in sorted(os.listdir(site)):
        if entry == "taskfactory" or entry.startswith("taskfactory-") or ("editable" in entry and "taskfactory" in entry):
            path = os.path.join(site, entry)
            args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    return args


def _ancestors(paths: list[str]) -> list[str]:
    """Folders above ``paths``, made as empty readable folders in the sandbox."""
    seen = []
    for path in paths:
        for parent in reversed(Path(path).parents):
            folder = str(parent)
            if folder not in ("/", "/usr") and not folder.startswith("/usr/") and folder not in seen:
                seen.append(folder)
    return seen


class _Capture:
    """A call's output: the first two thirds of ``limit`` bytes and the last third."""

    def __init__(self, limit: int):
        self.head_max, self.tail_max = limit * 2 // 3, limit - limit * 2 // 3
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[:max(0, len(self.tail) - self.tail_max)]

    def text(self) -> str:
        kept = len(self.head) + len(self.tail)
        if kept == self.total:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        cut = f"\n[... {self.total - kept:,} of {self.total:,} bytes of output cut ...]\n"
        return bytes(self.head).decode("utf-8", "replace") + cut + bytes(self.tail).decode("utf-8", "replace")


class _Gone(Exception):
    """The sandbox itself ended or stopped answering."""


class _Slot:
    """One sandbox with its keeper, holding at most one session at a time."""

    def __init__(self, language: str, limits: Limits, local: bool, preload: tuple[str, ...]):
        self.language, self.limits, self.local = language, limits, local
        self.folder = tempfile.mkdtemp(prefix="taskfactory-session-") if local else None
        self.uid, self._uid_claim = _claim_uid() if os.getuid() == 0 and not local else (os.getuid(), None)
        req_r, self.requests = os.pipe()
        self.replies, rep_w = os.pipe()
        self.output, out_w = os.pipe()
        orders_r, self.orders = os.pipe()
        self.answers, answers_w = os.pipe()
        ends = (req_r, rep_w, orders_r, answers_w)
        os.set_blocking(self.requests, False)   # a session that stops reading cannot stall the host (_send)
        self._buffers = {self.replies: bytearray(), self.answers: bytearray()}
        env = self._env(preload)
        filtered = None if local else _filter_fd()
        passed = ends if filtered is None else (*ends, filtered)
        try:
            self.process = subprocess.Popen(self._argv(ends, env, filtered), stdin=subprocess.DEVNULL,
                                            stdout=out_w, stderr=out_w, pass_fds=passed, env=env,
                                            cwd=self.folder or "/", start_new_session=True)
        finally:
            for fd in (*passed, out_w):
                os.close(fd)
        self.alive = True

    def _argv(self, ends: tuple[int, ...], env: dict, filtered: int | None) -> list[str]:
        python, site, binds = _python()
        nproc = self.limits.processes + (0 if os.getuid() == 0 and not self.local else _processes_of(os.getuid()))
        cpu = int(self.limits.episode_seconds) + 10
        disk = self.limits.disk_mb << 20
        rscript = [shutil.which("Rscript") or "/usr/bin/Rscript", "--no-save", "--no-restore", "-e", R_SERVER]
        keeper = [python, "-I", "-S", "-c", KEEPER, str(self.uid), str(self.limits.memory_mb << 20), str(disk),
                  str(nproc), str(cpu), *map(str, ends), self.folder or WORKDIR, self.language, site, *rscript]
        if self.local:
            return keeper
        args = [shutil.which("bwrap"), *_namespace_args(), "--clearenv"]
        if filtered is not None:
            args += ["--seccomp", str(filtered)]
        for name, value in env.items():
            args += ["--setenv", name, value]
        args += ["--ro-bind", "/usr", "/usr",
                *_usr_links(), "--proc", "/proc", "--dev", "/dev",
                "--perms", "1777", "--size", str(16 << 20), "--tmpfs", "/dev/shm",
                "--perms", "1777", "--size", str(disk), "--tmpfs", "/tmp"]
        binds += [path for path in SYSTEM_FILES if os.path.exists(path)]
        for folder in _ancestors(binds):
            args += ["--perms", "0755", "--dir", folder]
        for path in binds:
            args += ["--ro-bind", path, path]
        args += _hidden(site)
        args += ["--perms", "1777", "--size", str(disk), "--tmpfs", WORKDIR, "--chdir", WORKDIR]
        return args + keeper

    def _env(self, preload: tuple[str, ...]) -> dict:
        home = self.folder or WORKDIR
        env = {"HOME": home, "TMPDIR": "/tmp" if not self.local else home, "LANG": "C.UTF-8",
               "PATH": "/usr/bin:/bin", "TF_PRELOAD": " ".join(preload), "MPLBACKEND": "Agg",
               "JOBLIB_MULTIPROCESSING": "0", "R_LIBS_USER": home, "TF_CONTAINED": "0" if self.local else "1"}
        env.update({v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
        return env

    def _expect(self, fd: int, want: str, seconds: float, what: str) -> None:
        """Wait for the word ``want`` on ``fd``; otherwise end the sandbox and
        raise ``what`` with what came instead and its last line of output. A
        session's ``ended <status>`` on the keeper's pipe is passed over."""
        capture = _Capture(4000)
        deadline = time.monotonic() + seconds
        try:
            word = self._await(fd, capture, deadline)
            while fd == self.answers and word is not None and word.startswith("ended ") and word != want:
                word = self._await(fd, capture, deadline)
        except (OSError, _Gone) as exc:
            word = str(exc)
        if word != want:
            said = capture.text().strip().splitlines()
            self.kill()
            raise IsolationError(f"{what} ({word or 'no answer'}" + (f": {said[-1]}" if said else "") + ")")

    def _order(self, order: bytes, want: str) -> None:
        """Give the keeper ``order`` and wait for its answer ``want``."""
        try:
            os.write(self.orders, order)
        except OSError as exc:
            self.kill()
            raise IsolationError(f"the {self.language} sandbox failed ({exc})") from None
        self._expect(self.answers, want, 30, f"the {self.language} sandbox failed")

    def start(self) -> None:
        """Wait for the keeper (its libraries imported), then for its first session."""
        self._expect(self.answers, "up", START_SECONDS, f"the {self.language} sandbox did not start")
        self.spawn()

    def spawn(self) -> None:
        self._order(b"s", "spawned")
        self._expect(self.replies, "ready", START_SECONDS, f"the {self.language} session did not start")

    def reset(self) -> None:
        """Stop the session and everything it started, empty its folders, start a fresh session."""
        self._order(b"k", "clean")
        self._drain(self.replies, None)
        self._drain(self.output, None)
        self._buffers[self.replies].clear()
        self.spawn()

    def _send(self, op: bytes, body: bytes, seconds: float) -> None:
        """Write a request within ``seconds``; a session that stops reading
        its requests (and fills the pipe) is :class:`_Gone`."""
        deadline = time.monotonic() + seconds
        view = memoryview(struct.pack(">I", len(body) + 1) + op + body)
        while view:
            if not select.select([], [self.requests], [], max(0.0, deadline - time.monotonic()))[1]:
                raise _Gone("the session stopped reading its requests")
            try:
                view = view[os.write(self.requests, view[:1 << 16]):]
            except BlockingIOError:
                continue

    def save(self, name: str, data: bytes) -> None:
        try:
            self._send(b"f", name.encode() + b"\n" + data, 30)
            word = self._await(self.replies, _Capture(4000), time.monotonic() + 30)
        except (OSError, _Gone):
            word = None
        if word != "saved":
            self.kill()
            raise IsolationError(f"the {self.language} session could not receive {name}")

    def run(self, code: str, capture: _Capture) -> str:
        """The session's reply word, ``ended <status>``, ``timeout`` or ``gone``."""
        try:
            deadline = time.monotonic() + self.limits.call_seconds
            self._send(b"c", code.encode("utf-8", "surrogatepass"), self.limits.call_seconds)
            word = self._await(self.replies, capture, deadline)
        except (OSError, _Gone):
            self.kill()
            return "gone"
        return "timeout" if word is None else word

    def _message(self, fd: int) -> str | None:
        buffer = self._buffers[fd]
        if len(buffer) < 4:
            return None
        length = struct.unpack(">I", buffer[:4])[0]
        if length > MESSAGE_MAX:
            raise _Gone("a message longer than the protocol allows")
        if len(buffer) < 4 + length:
            return None
        word = buffer[4:4 + length].decode("utf-8", "replace")
        del buffer[:4 + length]
        return word

    def _await(self, fd: int, capture: _Capture, deadline: float) -> str | None:
        """The next message on ``fd`` (or the keeper's ``ended <status>`` while
        a session's reply is awaited); None at the deadline."""
        watched = (fd, self.answers) if fd == self.replies else (fd,)
        with selectors.DefaultSelector() as sel:
            for pipe in (*watched, self.output):
                sel.register(pipe, selectors.EVENT_READ)
            while True:
                for pipe in watched:
                    word = self._message(pipe)
                    if word is not None and (pipe == fd or word.startswith("ended ")):
                        self._drain(self.output, capture)
                        return word
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if key.fd == self.output:
                        if data:
                            capture.add(data)
                        else:
                            sel.unregister(self.output)
                    elif data:
                        self._buffers[key.fd] += data
                    else:
                        raise _Gone(f"the sandbox ended (status {self.process.poll()})")

    def _drain(self, fd: int, capture: _Capture | None) -> None:
        """What ``fd`` holds now, into ``capture`` (or dropped)."""
        os.set_blocking(fd, False)
        try:
            while data := os.read(fd, 1 << 16):
                if capture is not None:
                    capture.add(data)
        except BlockingIOError:
            pass
        finally:
            os.set_blocking(fd, True)

    def kill(self) -> None:
        if not self.alive:
            return
        self.alive = False
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        for fd in (self.requests, self.replies, self.output, self.orders, self.answers):
            os.close(fd)
        if self._uid_claim is not None:
            os.close(self._uid_claim)   # the user id is free for another sandbox
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def _filter_fd() -> int | None:
    """The read end of a pipe holding the sandbox's system-call filter
    (:mod:`.seccomp`), for bubblewrap's ``--seccomp``; None where there is none."""
    program = seccomp.program()
    if program is None:
        return None
    read, write = os.pipe()
    os.write(write, program)   # a few hundred bytes: the pipe holds them
    os.close(write)
    return read


def _claim_uid() -> tuple[int, int]:
    """A session user id no other sandbox on this host holds, and the open
    lock file that holds it (released when closed, or when this process ends)."""
    os.makedirs(UID_LOCKS, mode=0o700, exist_ok=True)
    start = next(_UID_START)
    for step in range(UID_COUNT):
        uid = UID_BASE + (start + step) % UID_COUNT
        fd = os.open(os.path.join(UID_LOCKS, str(uid)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return uid, fd
    raise IsolationError(f"all {UID_COUNT} sandbox user ids ({UID_BASE}-{UID_BASE + UID_COUNT - 1}) are in use")


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        try:
            count += entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid
        except OSError:
            pass
    return count


class _Pool:
    """Sandboxes of one language with a fresh session each, ready to hand out.
    Threads that live as long as the pool start them and reset the ones given
    back (a sandbox dies with the thread that started it)."""

    def __init__(self, make, size: int):
        self.make, self.size = make, size
        self.ready: deque[_Slot] = deque()
        self.returned: deque[_Slot] = deque()
        self.starting = self.waiting = 0
        self.closed = False
        self.error: Exception | None = None
        self.lock = threading.Condition()
        self.threads = [threading.Thread(target=self._worker, daemon=True) for _ in range(max(1, size))]
        for thread in self.threads:
            thread.start()

    def _wanted(self) -> int:
        return self.size + self.waiting - len(self.ready) - len(self.returned) - self.starting

    def _worker(self) -> None:
        while True:
            with self.lock:
                while not self.closed and not self.returned and self._wanted() <= 0:
                    self.lock.wait()
                if self.closed:
                    return
                slot = self.returned.popleft() if self.returned else None
                self.starting += 1
            error = None
            try:
                if slot is not None:
                    slot.reset()
                else:
                    slot = self.make()
                    slot.start()
            except (OSError, TaskFactoryError, _Gone) as exc:
                error = exc
            with self.lock:
                self.starting -= 1
                if error is None and not self.closed:
                    self.ready.append(slot)
                    slot = None
                self.error = error
                self.lock.notify_all()
            if slot is not None:
                slot.kill()
            if error is not None:
                time.sleep(0.5)

    def take(self) -> _Slot:
        with self.lock:
            self.waiting += 1
            self.lock.notify_all()
            try:
                while not self.ready:
                    if self.closed:
                        raise TaskFactoryError("the sandbox is closed")
                    if self.error is not None and not self.starting:
                        raise IsolationError(str(self.error))
                    self.lock.wait()
                return self.ready.popleft()
            finally:
                self.waiting -= 1
                self.lock.notify_all()

    def give_back(self, slot: _Slot) -> None:
        """A slot its workspace is done with: reset in the background, or ended when not needed."""
        with self.lock:
            keep = slot.alive and not self.closed and len(self.ready) + len(self.returned) < self.size + self.waiting
            if keep:
                self.returned.append(slot)
                self.lock.notify_all()
        if not keep:
            slot.kill()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            idle = [*self.ready, *self.returned]
            self.ready.clear()
            self.returned.clear()
            self.lock.notify_all()
        for slot in idle:
            slot.kill()
        for thread in self.threads:
            thread.join()


class Sandbox:
    """Warm pools of sandboxed sessions; :meth:`workspace` opens one episode's."""

    def __init__(self, limits: Limits = Limits(), languages=None, pool: int = 1, local: bool = False,
                 preload: dict | None = None):
        if not local and (problem := isolation_problem()):
            raise IsolationError(f"{problem}; without it the sandbox runs model code only in local mode "
                                 "(Sandbox(local=True), --unisolated), which does not isolate it")
        if local:
            warnings.warn(LOCAL_WARNING, stacklevel=2)
        wanted = tuple(languages) if languages is not None else self.available()
        unknown = [lang for lang in wanted if lang not in LANGUAGES]
        if unknown:
            raise TaskFactoryError(f"unknown language {unknown[0]!r}; the sandbox runs {', '.join(LANGUAGES)}")
        self.limits, self.local, self.languages = limits, local, wanted
        preload = PRELOAD if preload is None else preload
        self._pools = {lang: _Pool(functools.partial(_Slot, lang, limits, local, tuple(preload.get(lang, ()))),
                                   pool) for lang in wanted}
        self._open: set[Workspace] = set()

    @staticmethod
    def available() -> tuple[str, ...]:
        """The languages this machine can run: Python, and R where Rscript is installed."""
        return ("python", "r") if shutil.which("Rscript") else ("python",)

    def workspace(self, files: dict[str, bytes] | None = None) -> Workspace:
        """One episode's sessions, each holding ``files`` (name: bytes) in its working folder."""
        space = Workspace(self, dict(files or {}))
        self._open.add(space)
        return space

    def _take(self, language: str) -> _Slot:
        if language not in self._pools:
            raise TaskFactoryError(f"this sandbox runs {', '.join(self.languages)}, not {language}")
        return self._pools[language].take()

    def _give_back(self, slot: _Slot) -> None:
        self._pools[slot.language].give_back(slot)

    def close(self) -> None:
        for space in list(self._open):
            space.close()
        for pool in self._pools.values():
            pool.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_SHARED: Sandbox | None = None
_SHARED_LOCK = threading.Lock()


def shared_sandbox(pool: int = 4) -> Sandbox:
    """One sandbox for the whole process (for frameworks that call tools from
    many places): started on first use with ``pool`` ready sessions per
    language, closed at exit."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Sandbox(pool=pool)
            atexit.register(_SHARED.close)
        return _SHARED


class Workspace:
    """One episode: the task's files and a session per language, with the episode's limits."""

    def __init__(self, sandbox: Sandbox, files: dict[str, bytes]):
        self.sandbox, self.files = sandbox, files
        self.limits = sandbox.limits
        self._slots: dict[str, _Slot] = {}
        self._lost: set[str] = set()
        self._lock = threading.Lock()   # calls of one episode run one at a time
        self.calls, self.seconds = 0, 0.0

    def run(self, language: str, code: str) -> CallResult:
        """Run ``code`` in this episode's ``language`` session; never raises for what the code does."""
        with self._lock:
            return self._run(language, code)

    def _run(self, language: str, code: str) -> CallResult:
        if language not in self.sandbox.languages:
            return CallResult(f"[this sandbox has no {language} session; it runs {', '.join(self.sandbox.languages)}]",
                              "refused", 0.0)
        if self.calls >= self.limits.episode_calls:
            return CallResult(f"[refused: this episode's limit of {self.limits.episode_calls} calls is reached]",
                              "refused", 0.0)
        if self.seconds >= self.limits.episode_seconds:
            return CallResult(f"[refused: this episode's limit of {self.limits.episode_seconds:g} s of code is "
                              "reached]", "refused", 0.0)
        started = time.monotonic()
        self.calls += 1
        restarted = language in self._lost
        slot = self._slot(language)
        capture = _Capture(self.limits.output_chars)
        word = slot.run(code, capture)
        seconds = time.monotonic() - started
        self.seconds += seconds
        text = capture.text()
        if restarted:
            self._lost.discard(language)
            text = (f"[the {language} session restarted after the last call was stopped: its variables are gone "
                    f"and the working folder holds only the task's files]\n") + text
        if word in ("ok", "error"):
            return CallResult(text, word, seconds, restarted)
        self.sandbox._give_back(self._slots.pop(language))
        self._lost.add(language)
        if word == "timeout":
            why, status = f"it ran past the limit of {self.limits.call_seconds:g} s", "timeout"
        elif word.startswith("ended "):
            why, status = f"the session ended with status {word.split()[1]}", "ended"
        else:
            why, status = "its sandbox ended", "ended"
        note = (f"[stopped: {why}; the {language} session restarts on the next call, without its variables]")
        return CallResult((text.rstrip("\n") + "\n" if text.strip() else "") + note, status, seconds, restarted)

    def _slot(self, language: str) -> _Slot:
        slot = self._slots.get(language)
        if slot is None:
            slot = self.sandbox._take(language)
            try:
                for name, data in self.files.items():
                    slot.save(name, data)
            except IsolationError:
                self.sandbox._give_back(slot)
                raise
            self._slots[language] = slot
        return slot

    def close(self) -> None:
        with self._lock:
            for slot in self._slots.values():
                self.sandbox._give_back(slot)
            self._slots.clear()
        self.sandbox._open.discard(self)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
