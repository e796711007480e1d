"""folders.staged: a command's output is built in a folder of its own and moved into place at the end, so
that nothing it did not make is ever removed or replaced, however long it works."""

import pytest

from taskfactory.errors import InputError
from taskfactory.folders import staged


def fill(work):
    (work / "data").mkdir()
    (work / "data" / "a.parquet").write_text("shard")
    (work / "manifest.json").write_text("{}")


@pytest.mark.parametrize("given", ["absent", "empty"])
def test_the_output_is_moved_into_place_whole(tmp_path, given):
    out = tmp_path / "out"
    if given == "empty":
        out.mkdir()
    with staged(out) as work:
        assert work.name.startswith(".") and work.parent == (out if given == "empty" else tmp_path)
        fill(work)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["data", "data/a.parquet", "manifest.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_failure_leaves_a_file_put_into_the_folder_meanwhile(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError):
        with staged(out) as work:
            fill(work)
            (out / "notes.txt").write_text("mine")
            raise RuntimeError("interrupted")
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"


def test_a_failure_removes_the_folders_it_made_above_the_output_while_they_are_empty(tmp_path):
    with pytest.raises(RuntimeError):
        with staged(tmp_path / "a" / "b" / "out") as work:
            fill(work)
            raise RuntimeError("interrupted")
    assert not list(tmp_path.iterdir())
    with pytest.raises(RuntimeError):
        with staged(tmp_path / "a" / "b" / "out") as work:
            (tmp_path / "a" / "keep.txt").write_text("mine")
            raise RuntimeError("interrupted")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["a", "a/keep.txt"]


@pytest.mark.parametrize("given", ["absent", "empty"])
def test_an_output_folder_no_longer_empty_at_the_end_is_left_as_it_is(tmp_path, given):
    out = tmp_path / "out"
    if given == "empty":
        out.mkdir()
    with pytest.raises(InputError) as caught:
        with staged(out, "--drop-out") as work:
            fill(work)
            out.mkdir(exist_ok=True)
            (out / "manifest.json").write_text("mine")
    assert str(caught.value) == (f"--drop-out {out}: the folder is no longer empty (something was put in it while "
                                 "this command ran); nothing was written to it; give a new or empty folder")
    assert [p.name for p in out.iterdir()] == ["manifest.json"] and (out / "manifest.json").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_name_taken_while_the_output_is_moved_is_not_replaced(tmp_path, monkeypatch):
    """The files are moved one by one into a folder that existed, the manifest last: one whose name is taken
    meanwhile fails the move, and what was moved before it goes again."""
    import taskfactory.folders as folders

    out = tmp_path / "out"
    out.mkdir()
    move = folders._move_one

    def racing(child, target, moved):
        if child.name == "manifest.json":
            target.write_text("mine")
        move(child, target, moved)

    monkeypatch.setattr(folders, "_move_one", racing)
    with pytest.raises(InputError, match="the folder is no longer empty"):
        with staged(out) as work:
            fill(work)
    assert [p.name for p in out.iterdir()] == ["manifest.json"] and (out / "manifest.json").read_text() == "mine"
