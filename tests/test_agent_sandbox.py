"""The agent's sandbox: sessions that keep state, limits that stop a call and
say so, and hostile code (tests/adversarial/agent/cases.yaml) contained."""

import os
import shutil
import socket
import sysconfig
import threading
import warnings
from pathlib import Path

import pytest
import yaml

from taskfactory.use.agent import IsolationError, Limits, Sandbox, isolation_problem
from taskfactory.use.agent import sandbox as sandbox_module

CASES = yaml.safe_load((Path(__file__).parent / "adversarial" / "agent" / "cases.yaml").read_text())
HAS_R = shutil.which("Rscript") is not None
needs_bwrap = pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")
needs_r = pytest.mark.skipif(not HAS_R, reason="Rscript is not installed")
DATA = b"g,y\na,1.5\nb,2.5\na,3.5\nb,4.0\na,2.0\nb,6.0\n"


@pytest.fixture(scope="module")
def sandbox():
    # No libraries preloaded: the cases below need none, and restarts stay cheap.
    with Sandbox(limits=Limits(call_seconds=3), languages=Sandbox.available(), pool=2, preload={}) as box:
        yield box


def _fill(code: str, values: dict) -> str:
    for key, value in values.items():
        code = code.replace("{" + key + "}", str(value))
    return code


def _processes_of(uids: set[int]) -> list[str]:
    """Command lines of the host's live processes run by ``uids`` (zombies
    aside, but not one whose first thread has ended while others run)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid in uids \
                    and (Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
                         or len(os.listdir(f"/proc/{entry}/task")) > 1):
                found.append(Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80])
        except OSError:
            pass
    return found


@needs_bwrap
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hostile_code_is_contained(case, sandbox, tmp_path):
    if case["language"] == "r" and not HAS_R:
        pytest.skip("Rscript is not installed")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "manifest.json").write_text("{}")
    marker = tmp_path / "escaped"
    values = {"port": listener.getsockname()[1], "corpus": corpus, "marker": marker,
              "site": sysconfig.get_paths()["purelib"]}
    with sandbox.workspace({"data.csv": DATA}) as space:
        result = space.run(case["language"], _fill(case["code"], values))
        after = space.run(case["language"], "nchar('ok')" if case["language"] == "r" else "len('ok')")
        left = _processes_of({space._slots[case["language"]].uid})
    assert case["expect"] in result.output, result.output[:2000]
    assert result.status == case["status"]
    assert after.status == "ok" and after.output.endswith("2\n"), after.output
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    assert not marker.exists()
    assert (corpus / "manifest.json").read_text() == "{}"
    if os.getuid() == 0:   # each sandbox has a user of its own: its session is all that runs as it
        assert len(left) == 1, left


@needs_bwrap
def test_a_session_keeps_its_variables_and_sees_the_task_file(sandbox):
    with sandbox.workspace({"data.csv": DATA}) as space:
        first = space.run("python", "import os\nrows = open('data.csv').read().splitlines()\nos.getcwd(), len(rows)")
        second = space.run("python", "rows[1]")
        failed = space.run("python", "rows[99]")
    assert first.output == "('/workspace', 7)\n" and first.status == "ok"
    assert second.output == "'a,1.5'\n"
    assert failed.status == "error"
    assert failed.output == ('Traceback (most recent call last):\n  File "<cell 3>", line 1, in <module>\n'
                             'IndexError: list index out of range\n')


@needs_bwrap
@needs_r
def test_r_prints_visible_values_warnings_and_errors_as_r_does(sandbox):
    with sandbox.workspace({"data.csv": DATA}) as space:
        space.run("r", 'd <- read.csv("data.csv")')
        shown = space.run("r", "tapply(d$y, d$g, mean)\ninvisible(7)\nas.integer('x')")
        failed = space.run("r", "stop('no such column')\n1")
        fn = space.run("r", "f <- function(x) log(x)\nf(-1)")
    assert shown.output == ('       a        b \n2.333333 4.166667 \n[1] NA\n'
                            "Warning message:\nNAs introduced by coercion\n")
    assert failed.output == "Error: no such column\n" and failed.status == "error"
    assert fn.output == "[1] NaN\nWarning message:\nIn log(x) : NaNs produced\n"


@needs_bwrap
@needs_r
def test_the_r_session_starts_with_an_empty_global_environment(sandbox):
    """The server's own objects (a `length` among them) stay out of the code's
    environment, so base functions passed by name are base functions."""
    with sandbox.workspace() as space:
        listed = space.run("r", "ls(all.names = TRUE)")
        by_group = space.run("r", "ave(1:6, rep(1:2, each = 3), FUN = length)")
        clobbered = space.run("r", "reply <- 1; run_cell <- NULL; 2 + 2")
        after = space.run("r", "3 + 3")
    assert listed.output == "character(0)\n"
    assert by_group.output == "[1] 3 3 3 3 3 3\n"
    assert (clobbered.output, after.output) == ("[1] 4\n", "[1] 6\n")


@needs_bwrap
@needs_r
def test_r_t_test_in_the_sandbox_gives_rscripts_p_value(sandbox):
    # Rscript -e 'd <- read.csv("data.csv"); cat(format(t.test(y ~ g, data = d)$p.value, digits = 7))'
    # on the same six rows prints 0.2107029.
    with sandbox.workspace({"data.csv": DATA}) as space:
        result = space.run("r", 'd <- read.csv("data.csv")\ncat(format(t.test(y ~ g, data = d)$p.value, digits = 7))')
    assert result.output == "0.2107029"


@needs_bwrap
def test_a_stopped_call_restarts_the_session_and_says_its_variables_are_gone(sandbox):
    with sandbox.workspace({"data.csv": DATA}) as space:
        space.run("python", "x = 1")
        stopped = space.run("python", "import time\ntime.sleep(10)")
        again = space.run("python", "sorted(os.listdir('.')) if 'os' in dir() else x")
    assert stopped.status == "timeout"
    assert again.restarted and again.output.startswith("[the python session restarted after the last call was "
                                                       "stopped: its variables are gone and the working folder "
                                                       "holds only the task's files]\n")
    assert "NameError: name 'x' is not defined" in again.output


def test_episode_limits_refuse_further_calls():
    with Sandbox(limits=Limits(episode_calls=2), languages=("python",), pool=1, preload={},
                 local=isolation_problem() is not None) as box, box.workspace() as space:
        outputs = [space.run("python", "1").output for _ in range(3)]
    assert outputs == ["1\n", "1\n", "[refused: this episode's limit of 2 calls is reached]"]


def test_output_is_cut_to_its_head_and_tail():
    capture = sandbox_module._Capture(30)
    for chunk in (b"0123456789" * 5, b"abcdefghij"):
        capture.add(chunk)
    assert capture.text() == "01234567890123456789\n[... 30 of 60 bytes of output cut ...]\nabcdefghij"


def test_without_bubblewrap_the_sandbox_refuses_unless_asked_for_local_mode(monkeypatch):
    sandbox_module.isolation_problem.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    try:
        with pytest.raises(IsolationError, match=r"^bubblewrap is not installed \(Debian's package: bubblewrap\); "
                                                 r"without it the sandbox runs model code only in local mode"):
            Sandbox(languages=("python",), preload={})
    finally:
        sandbox_module.isolation_problem.cache_clear()


def test_local_mode_says_so_at_every_start():
    for _ in range(2):
        with pytest.warns(UserWarning, match="runs model code UNISOLATED"):
            box = Sandbox(languages=("python",), pool=1, preload={}, local=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with box.workspace({"data.csv": DATA}) as space:
                result = space.run("python", "import os\nos.listdir('.')")
                folder = space._slots["python"].folder
            box.close()
        assert result.output == "['data.csv']\n"
        assert not os.path.exists(folder)


@needs_bwrap
def test_the_sandbox_runs_as_an_unprivileged_user_with_no_network_device_up_but_loopback(sandbox):
    with sandbox.workspace() as space:
        result = space.run("python", "import os, socket\nprint(os.getuid() != 0, [n for _, n in socket.if_nameindex()])")
    assert result.output == "True ['lo']\n"



@needs_bwrap
def test_the_session_sees_its_own_environment_and_none_of_the_hosts(sandbox, monkeypatch):
    monkeypatch.setenv("HOST_SECRET", "s3cret")
    with Sandbox(languages=("python",), pool=1, preload={"python": ("json",)}) as box, box.workspace() as space:
        result = space.run("python", "import os, sys\n(os.environ['HOME'], os.environ.get('HOST_SECRET'), "
                                     "os.environ['OPENBLAS_NUM_THREADS'], 'json' in sys.modules)")
    assert result.output == "('/workspace', None, '1', True)\n"


@needs_bwrap
def test_a_session_that_stops_reading_cannot_stall_the_host(sandbox):
    """Code that shrinks its request pipe, answers its own call and sleeps
    leaves the next call's request unread: the host gives up at the call's
    limit, not never, and the session after it works."""
    stall = ("import fcntl, os, struct, time\nfcntl.fcntl(3, 1031, 4096)\n"
             "os.write(4, struct.pack('>I', 2) + b'ok')\ntime.sleep(600)\n")
    results = []

    def calls():
        with sandbox.workspace({"data.csv": DATA}) as space:
            space.run("python", stall)
            results.append(space.run("python", "x = 1\n" + "#" * 200_000 + "\nx"))
            results.append(space.run("python", "len('ok')"))

    worker = threading.Thread(target=calls, daemon=True)
    worker.start()
    worker.join(60)   # the limit is 3 s a call: a host that waits for ever fails here instead of hanging the suite
    assert not worker.is_alive()
    stalled, after = results
    assert stalled.status == "ended", stalled
    assert after.status == "ok" and after.output.endswith("2\n")
