"""The programs that run inside a sandbox: a launcher and one server per language.

The launcher starts as the sandbox's root (or as the unprivileged user where
the sandbox has no root), sets the session's limits, hands the protocol pipes
to the session's user, becomes that user and executes the server. A server
reads requests on fd 3 and writes replies on fd 4; everything the agent's code
prints goes to fd 1 and 2, one pipe the host reads while the call runs.

A request is a 4-byte big-endian length, then one byte saying what it is
(``c``: code to run; ``f``: a file, its name, a new line and its bytes), then
its body. A reply is a 4-byte length and a word: ``ready`` once the server has
imported its libraries, ``ok`` or ``error`` after a call (the call's output
was already written), ``saved`` after a file. After every call the server
stops every process the call left behind.
"""

LAUNCHER = r"""
import fcntl, os, resource, signal, sys
uid, address, fsize, nproc, cpu, requests, replies = (int(a) for a in sys.argv[1:8])
program = sys.argv[8:]
moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (requests, replies)]
for fd, moved_fd in zip((3, 4), moved):
    os.dup2(moved_fd, fd)
for fd in {requests, replies, *moved} - {3, 4}:
    os.close(fd)
drop = os.getuid() == 0 and uid != 0
if drop:
    for fd in (3, 4):
        os.fchown(fd, uid, uid)
for which, value in ((resource.RLIMIT_AS, address), (resource.RLIMIT_FSIZE, fsize),
                     (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_CPU, cpu),
                     (resource.RLIMIT_NOFILE, 256), (resource.RLIMIT_CORE, 0)):
    resource.setrlimit(which, (value, value))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
if drop:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
os.execv(program[0], program)
"""

PYTHON_SERVER = r'''
import ast, os, signal, struct, sys, traceback
sys.path.insert(0, sys.argv[1])
sys.argv = [""]
for name in os.environ.pop("TF_PRELOAD", "").split():
    __import__(name)
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
    sys.stderr.flush()
    replies.write(struct.pack(">I", len(word)) + word.encode())


def stop_strays():
    if os.environ.get("TF_CONTAINED") != "1":   # unisolated: the other processes are the host's
        return
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, me):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


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
'''

R_SERVER = r'''
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
  pids <- pids[!is.na(pids) & pids != 1L & pids != Sys.getpid()]
  if (length(pids)) tools::pskill(pids, tools::SIGKILL)
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
'''
