"""score --from: what lm-evaluation-harness, Inspect and verifiers wrote, read back as predictions.

Inspect's logs are written here by Inspect itself (a mock model answering the
exported task); lm-eval (which needs torch) and verifiers (an optional
framework) are not installed, so their files are samples under
``tests/samples/``: ``verifiers_traces.jsonl`` was written by verifiers
0.4.0's own serializer (``write_episode``) for the tasks of :data:`GRID`, and
``lm_eval_samples.jsonl`` follows the sample dict lm-eval's evaluator logs
(doc_id, doc, target, arguments, resps, filtered_resps, ...).
"""

import importlib.util
import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfactory.cli import main
from taskfactory.store.corpus import iter_records
from taskfactory.errors import InputError
from taskfactory.use.export import export
from taskfactory.use.frameworks import framework_rows

from conftest import PINNED, built_once

SAMPLES = Path(__file__).resolve().parent / "samples"
GRID = {"name": "frameworks", "seed": 11, "methods": ["welch_t"], "scenarios": {"welch_t": PINNED["welch_t"][:1]},
        "n": [60], "effects": ["null", "medium"], "perturbations": ["none"], "prompt_styles": ["basic"]}


corpus = built_once(GRID, "frameworks")


@pytest.fixture(scope="module")
def tasks(corpus):
    return sorted(iter_records(corpus), key=lambda t: t["task_id"])


def answer(task: dict) -> str:
    gold = task["gold"]
    return f"The two groups differ.\nMETHOD: Welch two-sample t-test\nP_VALUE: {gold['p_value']!r}\nDECISION: {gold['decision']}"


def scored(corpus, path, fmt: str) -> dict:
    result = CliRunner().invoke(main, ["score", str(corpus), str(path), "--from", fmt, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_an_inspect_log_is_read_back_with_its_epochs_as_runs(corpus, tasks, tmp_path, log_format):
    pytest.importorskip("inspect_ai", reason="Inspect AI is not installed")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    export(corpus, "inspect", tmp_path / "i", data="inline")
    spec = importlib.util.spec_from_file_location("tf_inspect_logs", tmp_path / "i" / "taskfactory_inspect.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    first = module.samples(module.HERE, "train")[0].id
    # one sample, two epochs, one at a time: the mock model answers one epoch and not the other
    outputs = [ModelOutput.from_content("mockllm/model", text)
               for text in (answer(next(t for t in tasks if t["task_id"] == first)), "I cannot tell.")]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    log, = inspect_eval(module.taskfactory_single_turn(split="train"), epochs=2, limit=1, max_samples=1,
                        display="none", model=get_model("mockllm/model", custom_outputs=outputs),
                        log_format=log_format, log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    path = Path(log.location)
    assert sorted((r["task_id"], r["run"]) for _, r in framework_rows(path, "inspect")) == [(first, 0), (first, 1)]
    report = scored(corpus, path, "inspect")
    assert (report["overall"]["answers"], report["overall"]["raw_pass@1"], report["overall"]["invalid_share"]) \
        == (2, 0.5, 0.5)


def test_an_lm_eval_samples_file_is_read_back(corpus, tasks):
    report = scored(corpus, SAMPLES / "lm_eval_samples.jsonl", "lm-eval")
    assert (report["overall"]["answers"], report["overall"]["raw_pass@1"]) == (len(tasks), 1.0)


def test_a_verifiers_traces_file_is_read_back_with_a_tasks_rollouts_as_runs(corpus, tasks):
    rows = [row for _, row in framework_rows(SAMPLES / "verifiers_traces.jsonl", "verifiers")]
    assert sorted(r["task_id"] for r in rows) == [t["task_id"] for t in tasks for _ in range(2)]
    report = scored(corpus, SAMPLES / "verifiers_traces.jsonl", "verifiers")
    assert (report["overall"]["answers"], report["overall"]["raw_pass@1"]) == (2 * len(tasks), 0.5)


def test_a_predictions_file_of_framework_lines_is_refused_with_the_way_to_read_it(corpus, tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "resps": [["P_VALUE: 0.1"]]}) + "\n")
    result = CliRunner().invoke(main, ["score", str(corpus), str(path)])
    assert result.exit_code == 2
    assert result.output == (f"error: {path}: no line names a task_id (1 JSON objects); expected "
                             '{"task_id": ..., "completion": ...} per line; what an evaluation framework wrote is '
                             "read with --from verifiers|inspect|lm-eval\n")


@pytest.mark.parametrize("fmt, content, error", [
    ("inspect", '{"task_id": "x"}\n', ": not an Inspect log; expected an Inspect log (.eval or .json) that inspect eval "
                                       "writes"),
    ("lm-eval", '{"task_id": "x"}\n', ": a line without doc and resps; expected the samples_<task>_<date>.jsonl that "
                                       "lm_eval --log_samples writes"),
    ("verifiers", '{"doc": {}, "resps": []}\n', ": a line without task and traces; expected the traces.jsonl of a "
                                                 "verifiers run"),
    ("verifiers", "not json\n", " line 1: not valid JSON (Expecting value at line 1 column 1)"),
    ("lm-eval", "", ": holds no lm-eval sample; expected the samples_<task>_<date>.jsonl that lm_eval --log_samples "
                    "writes"),
])
def test_a_file_of_another_kind_is_named_in_one_line(tmp_path, fmt, content, error):
    path = tmp_path / "results"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        list(framework_rows(path, fmt))
    assert str(err.value) == f"{path}{error}"


def _eval_log(path, entries: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> None:
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("header.json", "{}")
        for name, data in entries.items():
            archive.writestr(name, data)


def test_an_eval_log_that_does_not_unpack_is_one_line(tmp_path):
    """A corrupt deflate stream and an unknown compression method: one InputError each, never zlib's or
    zipfile's own error."""
    sample = json.dumps({"id": "welch_t-0123456789ab", "epoch": 1, "output": {"completion": "x" * 5000}}).encode()
    corrupt = tmp_path / "corrupt.eval"
    _eval_log(corrupt, {"samples/a_epoch_1.json": sample})
    data = bytearray(corrupt.read_bytes())
    start = data.index(b"samples/a_epoch_1.json") + len("samples/a_epoch_1.json")
    data[start + 5:start + 25] = b"\xff" * 20    # inside the entry's compressed stream
    corrupt.write_bytes(bytes(data))
    unknown = tmp_path / "unknown.eval"
    _eval_log(unknown, {"samples/a_epoch_1.json": sample}, zipfile.ZIP_STORED)
    data = bytearray(unknown.read_bytes())
    for header, method_at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):   # local and central headers
        at = data.index(header, data.index(header) + 1)   # the sample's (header.json comes first)
        data[at + method_at:at + method_at + 2] = (99).to_bytes(2, "little")
    unknown.write_bytes(bytes(data))
    for path in (corrupt, unknown):
        with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: cannot unpack the Inspect log \("):
            list(framework_rows(path, "inspect"))


def test_an_eval_entry_is_unpacked_only_up_to_its_cap_whatever_size_it_declares(tmp_path, monkeypatch):
    from taskfactory.use import frameworks

    monkeypatch.setattr(frameworks, "MAX_ENTRY_BYTES", 1000)
    path = tmp_path / "bomb.eval"
    _eval_log(path, {"samples/a_epoch_1.json": b'{"id": "' + b"a" * 100_000 + b'"}'})
    with pytest.raises(InputError, match=r": the entry samples/a_epoch_1\.json is larger than 0 MB$"):
        list(framework_rows(path, "inspect"))


def test_a_key_given_twice_is_refused_and_a_trace_s_nodes_of_the_wrong_type_give_no_reply(tmp_path):
    twice = tmp_path / "twice.jsonl"
    twice.write_text('{"doc": {"task_id": "welch_t-0123456789ab"}, "filtered_resps": ["P_VALUE: 0.5"], '
                     '"filtered_resps": ["P_VALUE: 0.01"]}\n')
    with pytest.raises(InputError, match=r" line 1: the key 'filtered_resps' is given twice \(which value is meant "
                                         r"is ambiguous\)$"):
        list(framework_rows(twice, "lm-eval"))
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"task": {"data": {"task_id": "welch_t-0123456789ab"}},
                                  "traces": [{"nodes": 5}, {"nodes": True}, {"nodes": [{"sampled": True}]}]}) + "\n")
    assert [row for _, row in framework_rows(traces, "verifiers")] == [{"task_id": "welch_t-0123456789ab"}] * 3
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"eval": {}, "samples": [{"id": "welch_t-0123456789ab", "epoch": True,
                                                        "output": {"completion": "P_VALUE: 0.5"}}]}))
    assert list(framework_rows(log, "inspect")) == [(1, {"task_id": "welch_t-0123456789ab",
                                                         "completion": "P_VALUE: 0.5"})]
