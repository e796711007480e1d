"""What a build's worker processes do before their first call: take the
build's scenario setting, and stop when the build's main process is gone.
"""

from __future__ import annotations

import os
import threading
import time

from ..scenarios import use_scenario_setting

#: How often a worker looks whether the build's main process is still there, in seconds.
WATCH_SECONDS = 0.5

_watching = False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exit_with_parent(parent_pid: int) -> None:
    """In a worker process the build started: exit as soon as the build's main
    process is gone, instead of computing shards nobody will collect. Does
    nothing in the main process or in a worker another program started (a
    cluster's)."""
    global _watching
    if _watching or os.getpid() == parent_pid:
        return
    if os.getppid() != parent_pid:
        if not _alive(parent_pid):  # the build died before this worker took its first call
            os._exit(1)
        return  # a worker of a cluster, not of this build
    _watching = True

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="taskfactory-parent-watch", daemon=True).start()


def enter_worker(scenarios: str | None, parent_pid: int | None) -> None:
    """What every call a build sends to its workers (the clipping probe's and
    the chunks') does first: take the build's scenario setting (see
    :func:`~taskfactory.scenarios.scenario_setting`) and, given the pid of the
    build's main process, stop when it dies (:func:`_exit_with_parent`)."""
    use_scenario_setting(scenarios)
    if parent_pid is not None:
        _exit_with_parent(parent_pid)
