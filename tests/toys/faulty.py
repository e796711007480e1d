"""Two toy families that misbehave on purpose, each the toy regression of
:mod:`toys.models` otherwise (their scenarios: ``toy_bug.yaml``,
``toy_waits.yaml``):

- ``toy_bug``: its ``generate`` has a bug (it raises TypeError), which must
  stop a command with its traceback rather than read as a bad scenario;
- ``toy_waits``: the first time a process draws its data, it sends its pid to
  the test that started it (over the Unix socket named by the environment
  variable ``TOY_WAITS_SOCKET``, in the abstract namespace) and waits until
  the test closes the connection; a test thereby holds a build's workers in
  its clipping probe for as long as it likes.

In a process the test starts, :func:`toys.process_env` registers them."""

from __future__ import annotations

import os
import socket

from toys.models import ToyOls, generate_ols

SOCKET = "TOY_WAITS_SOCKET"
_waited = False


def generate_with_a_bug(condition, rng):
    return len(condition.n)   # TypeError: an int has no len()


def generate_after_waiting(condition, rng):
    global _waited
    if not _waited:
        _waited = True
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect("\0" + os.environ[SOCKET])
            conn.sendall(f"{os.getpid()}\n".encode())
            conn.recv(1)   # until the test closes its end
    return generate_ols(condition, rng)


class ToyBug(ToyOls):
    name = "toy_bug"
    question_kind = "toy_bug"
    title = "Toy: a family whose generate has a bug"
    generate = staticmethod(generate_with_a_bug)


class ToyWaits(ToyOls):
    name = "toy_waits"
    question_kind = "toy_waits"
    title = "Toy: a family whose first draw in a process waits for the test"
    generate = staticmethod(generate_after_waiting)
