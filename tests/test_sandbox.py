"""The sandbox verify runs emitted scripts in: limits, isolation, blame."""

import hashlib

from taskfactory.audit.sandbox import Limits, run_scripts

WRITE = "import sys\nopen(sys.argv[1], 'w').write({text!r})\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_each_script_is_judged_on_its_own_output():
    scripts = [
        WRITE.format(text="a"),
        "import time\ntime.sleep(30)\n",                         # outlives its time
        WRITE.format(text="b"),
        "import os, sys\nsys.stderr.write('task 0 failed')\nos._exit(3)\n",   # ends the interpreter
        WRITE.format(text="c"),
        "import sys\nsys.exit(4)\n",
        "x = bytearray(1 << 40)\n",                              # more memory than allowed
        "pass\n",                                                # writes nothing
        "raise ValueError('no\\nluck')\n",
        WRITE.format(text="d"),
    ]
    outcomes = run_scripts(scripts, Limits(seconds=1.0, memory_mb=512))
    assert [o.error for o in outcomes] == [
        None,
        "ran longer than 1 s",
        None,
        "ended the interpreter with exit status 3",
        None,
        "exited with status 4",
        "ran out of memory (limit 512 MB)",
        "it wrote no file at the path it was given",
        "ValueError: no luck",
        None,
    ]
    assert [o.sha256 for o in outcomes if o.error is None] == [sha("a"), sha("b"), sha("c"), sha("d")]


def test_scripts_see_an_empty_environment_and_a_throwaway_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.chdir(tmp_path)
    script = ("import os, sys\nopen(sys.argv[1], 'w').write(repr((sorted(k for k in os.environ if 'TOKEN' in k), "
              "os.getcwd() == os.path.dirname(sys.argv[1]), sys.flags.isolated)))\n")
    (outcome,) = run_scripts([script])
    assert outcome.sha256 == sha(repr(([], True, 1)))
    assert list(tmp_path.iterdir()) == []


def test_the_throwaway_folder_is_in_memory_only_with_room_to_spare(tmp_path, monkeypatch):
    from taskfactory.audit import sandbox

    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(sandbox, "SCRATCH", str(tmp_path))
    monkeypatch.setattr(sandbox, "SCRATCH_FREE", 1)
    assert sandbox.scratch_folder() == str(tmp_path)
    script = ("import os, sys\nopen(sys.argv[1], 'w').write(os.path.dirname(os.getcwd()))\n")
    (outcome,) = run_scripts([script])
    assert outcome.sha256 == sha(str(tmp_path))
    assert list(tmp_path.iterdir()) == []          # the folder is gone with the run
    monkeypatch.setenv("TMPDIR", str(tmp_path / "elsewhere"))
    assert sandbox.scratch_folder() is None        # the user named the temporary folder
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(sandbox, "SCRATCH_FREE", 1 << 62)
    assert sandbox.scratch_folder() is None        # too little room: the temporary folder
    monkeypatch.setattr(sandbox, "SCRATCH_FREE", 1)
    monkeypatch.setattr(sandbox, "SCRATCH", str(tmp_path / "absent"))
    assert sandbox.scratch_folder() is None
