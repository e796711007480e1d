"""The programs that run inside a sandbox: a keeper, and a session server per language.

A sandbox holds one keeper and at most one session at a time. The keeper
starts as the sandbox's root where the sandbox has one (else as its only
user), imports the session's libraries once, makes itself undumpable, and
answers the host on fds 5 (orders) and 6 (answers):

- ``s``: fork a session: set its limits, become the session's user, go to the
  working folder, and serve Python in the forked interpreter (the libraries
  are already imported) or execute R's server; answer ``spawned``;
- ``k``: stop every process but itself, then, as the session's user, empty
  the working folder, ``/tmp`` and ``/dev/shm`` and remove SysV IPC objects;
  answer ``clean`` (or ``dirty`` when that did not finish in time).

When the session ends by itself the keeper answers ``ended <status>``. The
keeper is the user's root and undumpable, so the session's user can neither
signal nor trace it; where the sandbox has no root they share a user and a
session can only end its own sandbox, which the host then replaces.

A session reads requests on fd 3 and writes replies on fd 4; what the
agent's code prints goes to fds 1 and 2, one pipe the host reads while the
call runs. A request is a 4-byte big-endian length, one byte (``c``: code to
run; ``f``: a file, its name, a new line and its bytes) and the body; a reply
is a 4-byte length and a word: ``ready`` once, then ``ok`` or ``error``
after a call (its output already written) and ``saved`` after a file. After
every call the session stops every process the call left behind.
"""

KEEPER = r'''
import ast, ctypes, fcntl, os, resource, select, signal, stat, struct, sys, time, traceback
uid, address, fsize, nproc, cpu = (int(a) for a in sys.argv[1:6])
pipes = [int(a) for a in sys.argv[6:10]]
workdir, language, site = sys.argv[10], sys.argv[11], sys.argv[12]
rscript = sys.argv[13:]
contained = os.environ.get("TF_CONTAINED") == "1"
moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in pipes]
for target, fd in zip((3, 4, 5, 6), moved):
    os.dup2(fd, target)
for fd in set(pipes + moved) - {3, 4, 5, 6}:
    os.close(fd)
privileged = os.getuid() == 0 and uid != 0
if privileged:
    for fd in (3, 4):
        os.fchown(fd, uid, uid)
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: no tracing, no /proc/<pid>/mem
sys.path.insert(0, site)
sys.argv = [""]
if language == "python":
    for name in os.environ.pop("TF_PRELOAD", "").split():
        __import__(name)
keeper = os.getpid()


def say(fd, word):
    os.write(fd, struct.pack(">I", len(word)) + word.encode())


def as_session_user():
    os.close(5)
    os.close(6)
    os.setsid()
    for which, value in ((resource.RLIMIT_AS, address), (resource.RLIMIT_FSIZE, fsize),
                         (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_CPU, cpu),
                         (resource.RLIMIT_NOFILE, 256), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(which, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if privileged:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    os.chdir(workdir)


def others():
    """The sandbox's live processes but its init and the keeper: zombies
    aside, but not a process whose first thread has ended while others run."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, keeper):
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    if fh.read().rpartition(b")")[2].split()[0] != b"Z" or len(os.listdir(f"/proc/{entry}/task")) > 1:
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def stop(keep=()):
    """SIGKILL every process of others() but ``keep`` until none is left; False if some outlive 1 s."""
    for _ in range(500):
        pids = [pid for pid in others() if pid not in keep]
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()
        time.sleep(0.002)
    return False


def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def stop_all(session):
    if not contained:   # unisolated: the other processes are the host's; the session's group only
        try:
            os.killpg(session, signal.SIGKILL)
        except OSError:
            pass
        reap()
        return True
    return stop()


def emptied(folder):
    """Remove what sessions made under folder. Mount points (the read-only
    binds of the host's libraries may lie under /tmp) and the folders that
    hold them stay; True when folder holds one."""
    device = os.lstat(folder).st_dev
    holds_mount = False
    for entry in os.listdir(folder):
        path = os.path.join(folder, entry)
        info = os.lstat(path)
        if info.st_dev != device:
            holds_mount = True
        elif stat.S_ISDIR(info.st_mode):
            if info.st_uid == os.getuid():
                os.chmod(path, 0o700)
            if emptied(path):
                holds_mount = True
            else:
                os.rmdir(path)
        else:
            os.unlink(path)
    return holds_mount


def clean():
    cleaner = os.fork()
    if cleaner == 0:
        try:
            as_session_user()
            for folder in (workdir, "/tmp", "/dev/shm") if contained else (workdir,):
                emptied(folder)
            if contained and os.path.exists("/usr/bin/ipcrm"):
                os.execv("/usr/bin/ipcrm", ["ipcrm", "--all"])
            os._exit(0)
        except BaseException:
            os._exit(1)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(cleaner, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.002)
    os.kill(cleaner, signal.SIGKILL)
    os.waitpid(cleaner, 0)
    return False


def serve_python():
    requests, replies = os.fdopen(3, "rb", buffering=0), os.fdopen(4, "wb", buffering=0)
    me = os.getpid()

    def read(n):
        data = b""
        while len(data) < n:
            chunk = requests.read(n - len(data))
            if not chunk:
                os._exit(0)
            data += chunk
        return data

    def reply(word):
        sys.stdout.flush()
        replies.write(struct.pack(">I", len(word)) + word.encode())

    def stop_strays():
        if contained:
            stop(keep=(me,))

    def shown_error(exc):
        lines = traceback.format_exception(exc)
        keep = [lines[0]] + [l for l in lines[1:-1] if 'File "<cell' in l] + [lines[-1]]
        return "".join(keep if len(lines) > 1 else lines)

    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    cells = 0
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="backslashreplace", buffering=1)
    sys.stderr = sys.stdout
    reply("ready")
    while True:
        length = struct.unpack(">I", read(4))[0]
        body = read(length)
        op, body = body[:1], body[1:]
        if op == b"f":
            name, _, data = body.partition(b"\n")
            with open(name.decode(), "wb") as fh:
                fh.write(data)
            reply("saved")
            continue
        cells += 1
        word = "ok"
        try:
            tree = ast.parse(body.decode("utf-8", "replace"), f"<cell {cells}>")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, f"<cell {cells}>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), f"<cell {cells}>", "eval"), namespace)
                if value is not None:
                    print(repr(value))
        except BaseException as exc:
            word = "error"
            try:
                print(shown_error(exc), end="")
            except MemoryError:
                print(type(exc).__name__)
        stop_strays()
        reply(word)


def spawn():
    child = os.fork()
    if child == 0:
        code = 70
        try:
            as_session_user()
            if language == "python":
                serve_python()
            os.environ["TF_KEEPER"] = str(keeper)
            os.execv(rscript[0], rscript)
        except BaseException:
            traceback.print_exc()
        os._exit(code)
    return child, os.pidfd_open(child)


session = pidfd = group = None
say(6, "up")
while True:
    ready, _, _ = select.select([5] + ([pidfd] if pidfd is not None else []), [], [])
    if pidfd is not None and pidfd in ready:
        status = os.waitpid(session, 0)[1]
        os.close(pidfd)
        session, pidfd = None, None
        say(6, f"ended {os.waitstatus_to_exitcode(status)}")
    if 5 in ready:
        order = os.read(5, 1)
        if not order:
            os._exit(0)
        if order == b"s" and session is None:
            session, pidfd = spawn()
            group = session
            say(6, "spawned")
        elif order == b"k":
            stopped = stop_all(group) if group is not None or contained else True
            if pidfd is not None:
                os.close(pidfd)
            session, pidfd = None, None
            reap()
            say(6, "clean" if stopped and clean() else "dirty")
'''

R_SERVER = r'''
local({  # the server's own objects stay out of the global environment, where the code runs
requests <- file("/proc/self/fd/3", "rb")
replies <- file("/proc/self/fd/4", "wb")
reply <- function(word) {
  flush(stdout()); flush(stderr())
  bytes <- charToRaw(word)
  writeBin(c(as.raw(c(0, 0, 0, length(bytes))), bytes), replies)
  flush(replies)
}
read_exactly <- function(n) {
  got <- raw(0)
  while (length(got) < n) {
    chunk <- readBin(requests, "raw", n - length(got))
    if (length(chunk) == 0) quit(save = "no", status = 0)
    got <- c(got, chunk)
  }
  got
}
stop_strays <- function() {
  if (Sys.getenv("TF_CONTAINED") != "1") return(invisible(NULL))
  pids <- suppressWarnings(as.integer(list.files("/proc")))
  keep <- c(1L, Sys.getpid(), as.integer(Sys.getenv("TF_KEEPER")))
  for (attempt in 1:500) {
    live <- pids[!is.na(pids) & !(pids %in% keep) & file.exists(file.path("/proc", pids))]
    live <- live[vapply(live, function(p) {
      state <- tryCatch(strsplit(sub(".*\\) ", "", readLines(file.path("/proc", p, "stat"), warn = FALSE)), " ")[[1]][1],
                        error = function(e) "Z")
      state != "Z" || length(list.files(file.path("/proc", p, "task"))) > 1  # a zombie's threads may still run
    }, logical(1))]
    if (!length(live)) break
    tools::pskill(live, tools::SIGKILL)
    Sys.sleep(0.002)
    pids <- suppressWarnings(as.integer(list.files("/proc")))
  }
  invisible(NULL)
}
shown_call <- function(cond) {
  call <- conditionCall(cond)
  if (is.null(call) || identical(call, quote(eval(e, envir = globalenv())))) "" else paste0(" in ", paste(deparse(call, nlines = 1L), collapse = ""))
}
run_cell <- function(code) {
  warned <- character(0)
  failed <- FALSE
  exprs <- tryCatch(parse(text = code, keep.source = FALSE), error = function(e) {
    cat("Error: ", conditionMessage(e), "\n", sep = "")
    NULL
  })
  if (is.null(exprs)) return("error")
  for (e in exprs) {
    ok <- withCallingHandlers(
      tryCatch({
        shown <- withVisible(eval(e, envir = globalenv()))
        if (shown$visible) print(shown$value)
        TRUE
      }, error = function(err) {
        cat("Error", shown_call(err), ": ", conditionMessage(err), "\n", sep = "")
        FALSE
      }),
      warning = function(w) {
        where <- shown_call(w)
        warned <<- c(warned, if (nzchar(where)) paste0(sub("^ in", "In", where), " : ", conditionMessage(w)) else conditionMessage(w))
        invokeRestart("muffleWarning")
      })
    if (!ok) { failed <- TRUE; break }
  }
  if (length(warned) == 1) cat("Warning message:\n", warned, "\n", sep = "")
  if (length(warned) > 1) cat("Warning messages:\n", paste0(seq_along(warned), ": ", warned, collapse = "\n"), "\n", sep = "")
  if (failed) "error" else "ok"
}
for (pkg in strsplit(Sys.getenv("TF_PRELOAD"), " ")[[1]]) if (nzchar(pkg)) suppressPackageStartupMessages(library(pkg, character.only = TRUE))
reply("ready")
repeat {
  header <- as.integer(read_exactly(4))
  length <- sum(header * c(16777216, 65536, 256, 1))
  body <- read_exactly(length)
  op <- rawToChar(body[1])
  body <- body[-1]
  if (op == "f") {
    cut <- match(as.raw(10), body)
    writeBin(body[-seq_len(cut)], rawToChar(body[seq_len(cut - 1)]))
    reply("saved")
    next
  }
  code <- tryCatch(rawToChar(body), error = function(e) NULL)
  word <- if (is.null(code)) { cat("Error: the code holds a NUL byte\n"); "error" } else run_cell(code)
  stop_strays()
  reply(word)
}
})
'''
