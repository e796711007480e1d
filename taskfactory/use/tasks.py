"""A corpus's tasks as objects: what an agent may see, what the grader needs, the data as a DataFrame.

::

    import taskfactory

    corpus = taskfactory.open("corpus/", split="test")
    for task in corpus:
        view = task.agent_view()       # prompt, data file and dictionary: nothing of the answer
        df = task.dataframe()          # the CSV as R's read.csv reads it (None without a dataset)
        task.grade(completion)         # the reward of an answer, as taskfactory score grades it
        truth = task.grader_view()     # what grading needs: the gold and the accepted tests

A whole record (gold, naive test, reference solutions and all) is
``task.record``; hand an agent its :meth:`Task.agent_view` only, which holds
no field that names or implies the family, the gold or the effect.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError, MissingTask, check_path
from ..store.corpus import SPLITS, find_task, is_task_id, iter_records, load_manifest

#: What an agent may see of a task: the prompt and what it names (the data file, its dictionary); not
#: the task id, which begins with the family's name (the harness keeps it as :attr:`Task.task_id`).
AGENT_FIELDS = ("prompt", "context", "question", "data_dictionary", "data_filename", "data_csv",
                "n_rows", "answer_kind", "alpha")


class Task:
    """One task of a corpus, read from its record (see :func:`open`)."""

    def __init__(self, record: dict):
        self._record = dict(record)

    @property
    def record(self) -> dict:
        """Every field of the task's record (a copy): the answer included."""
        return dict(self._record)

    @property
    def task_id(self) -> str:
        return self._record["task_id"]

    @property
    def split(self) -> str:
        return self._record["split"]

    def agent_view(self) -> dict:
        """What an agent may see: the prompt, the data file's name and text, the
        data dictionary, the answer's kind and alpha (both stated in the prompt)."""
        view = {name: self._record[name] for name in AGENT_FIELDS}
        if view["data_csv"] is None:
            view["data_filename"] = None
        return view

    def grader_view(self) -> dict:
        """What grading needs: the task id, the family, the gold answer and the
        accepted alternatives (:func:`taskfactory.use.reward.ground_truth`)."""
        from .reward import ground_truth

        return ground_truth(self._record)

    def dataframe(self):
        """The task's CSV as a pandas DataFrame, read as R's ``read.csv(f,
        na.strings = "")`` reads it (the reading the gold was computed on);
        None for a question without a dataset."""
        from ..make.analysis import read_csv_text

        csv = self._record["data_csv"]
        return None if csv is None else read_csv_text(csv)

    def grade(self, completion: str):
        """The :class:`~taskfactory.use.reward.RewardResult` of ``completion``, as ``taskfactory score`` grades it."""
        from .reward import reward

        return reward(self._record, completion)

    def __repr__(self) -> str:
        return f"Task({self.task_id!r}, split={self.split!r})"


class Corpus:
    """The tasks of a corpus folder, of one split or family when asked: iterated
    shard by shard from checked shards, or looked up by id."""

    def __init__(self, path, split: str | None = None, method: str | None = None):
        check_path(path, "corpus")
        if split is not None and split not in SPLITS:
            raise InputError(f"split ({split!r}) must be one of {', '.join(SPLITS)}")
        self.path, self.split, self.method = Path(path), split, method
        self.manifest = load_manifest(self.path)

    def __iter__(self) -> Iterator[Task]:
        for record in iter_records(self.path, method=self.method):
            if self.split is None or record["split"] == self.split:
                yield Task(record)

    def __len__(self) -> int:
        counts = self.manifest["counts"]
        if self.method is None:
            return counts["tasks"] if self.split is None else counts["by_split"].get(self.split, 0)
        return sum(1 for rec in iter_records(self.path, columns=["split"], method=self.method)
                   if self.split is None or rec["split"] == self.split)

    def __getitem__(self, task_id: str) -> Task:
        """The task of ``task_id``; ``KeyError`` when this corpus (of its split
        and family, when asked) holds none, or ``task_id`` is not a task id."""
        if not is_task_id(task_id):
            raise KeyError(task_id)
        try:
            task = Task(find_task(self.path, task_id))
        except MissingTask:
            raise KeyError(task_id) from None
        if (self.split or task.split) != task.split or (self.method or task.record["method"]) != task.record["method"]:
            raise KeyError(task_id)
        return task

    def __contains__(self, task_id) -> bool:
        return is_task_id(task_id) and any(
            rec["task_id"] == task_id and (self.split is None or rec["split"] == self.split)
            for rec in iter_records(self.path, columns=["task_id", "split"], method=self.method))

    def __repr__(self) -> str:
        return f"Corpus({str(self.path)!r}, split={self.split!r}, method={self.method!r})"


def open(corpus, split: str | None = None, method: str | None = None) -> Corpus:  # noqa: A001 (taskfactory.open)
    """The tasks of ``corpus`` (of ``split`` and ``method`` when given) as :class:`Task` objects."""
    return Corpus(corpus, split, method)
