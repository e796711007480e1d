"""Exports round-trip into the frameworks that read them: verl's Parquet
through Hugging Face datasets, the lm-eval task through its scorer, the
Inspect AI task through Inspect's loader, the verifiers environment where
verifiers is installed."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import sys
import tomllib
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.use.agent import isolation_problem
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records
from taskfactory.errors import InputError
from taskfactory.use.export import deliver, export
from taskfactory.use.reward import compute_score
from conftest import folder_violations

GRID = {"name": "exported", "seed": 3, "methods": ["welch_t", "pearson"], "n": [40, 400],
        "effects": ["medium"], "perturbations": ["none"], "seeds": 1, "split": {"by": "scenario", "test": 0.3, "seed": 1}}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("exported") / "corpus"
    tf.build(GRID, out, progress=False)
    return out


@pytest.fixture(scope="module")
def first(corpus):
    return next(iter_records(corpus))


def right_answer(row: dict) -> str:
    g = row["ground_truth"]["gold"]
    return f"METHOD: whatever\nP_VALUE: {g['p_value']!r}\nDECISION: {g['decision']}"


def test_inline_puts_the_csv_before_the_answer_format_and_file_leaves_the_prompt(first):
    prompt, how = deliver(first, "inline")
    assert how == "inline" and first["data_csv"].rstrip("\n") in prompt
    assert prompt.index("```csv") < prompt.index("End your answer with")
    assert prompt.rstrip().endswith("DECISION: <reject | fail to reject>")
    assert deliver(first, "file") == (first["prompt"], "file")
    assert deliver(first, "auto", inline_max=len(first["data_csv"]) - 1)[1] == "file"


def test_jsonl_export_writes_prompts_files_and_ground_truth(corpus, tmp_path):
    counts = export(corpus, "jsonl", tmp_path / "x", data="auto", inline_max=2000)
    rows = [json.loads(line) for split in ("train", "test") if (tmp_path / "x" / f"tasks-{split}.jsonl").exists()
            for line in (tmp_path / "x" / f"tasks-{split}.jsonl").read_text().splitlines()]
    assert sum(counts.values()) == len(rows) == len(list(iter_records(corpus)))
    by_id = {r["task_id"]: r for r in iter_records(corpus)}
    for row in rows:
        rec = by_id[row["task_id"]]
        if row["delivery"] == "file":
            assert (tmp_path / "x" / row["data_file"]).read_text() == rec["data_csv"]
            assert len(rec["data_csv"]) > 2000
        else:
            assert row["data_file"] is None and len(rec["data_csv"]) <= 2000
        assert compute_score("taskfactory", right_answer(row), row["ground_truth"])["score"] == 1.0


def test_export_writes_nothing_on_a_bad_option(corpus, tmp_path):
    with pytest.raises(InputError, match="--to lm-eval puts the data in the prompt"):
        export(corpus, "lm-eval", tmp_path / "new", data="file")
    assert not (tmp_path / "new").exists()


def destination_violations(corpus, tmp_path) -> dict:
    """Each way a destination breaks the rule: (the folder, the message after ``-o <folder>: ``)."""
    return folder_violations(tmp_path, "x", {"inside the corpus": corpus})


DESTINATION_VIOLATIONS = ["not empty", "a file", "a symbolic link", "under a file", "inside the corpus",
                          "where nothing can be written", "a NUL in its name"]


@pytest.mark.parametrize("kind", DESTINATION_VIOLATIONS)
def test_export_refuses_a_destination_that_is_not_new_or_empty(kind, corpus, tmp_path):
    out, why = destination_violations(corpus, tmp_path)[kind]
    before = sorted([*tmp_path.rglob("*"), *corpus.rglob("*")])
    with pytest.raises(InputError) as err:
        export(corpus, "jsonl", out)
    assert str(err.value) == f"-o {out}: {why}"
    assert sorted([*tmp_path.rglob("*"), *corpus.rglob("*")]) == before


@pytest.mark.parametrize("kind", [k for k in DESTINATION_VIOLATIONS if k not in ("a file", "a NUL in its name")])
def test_the_export_command_refuses_a_destination_that_is_not_new_or_empty(kind, corpus, tmp_path):
    """(-o takes folders only: the command line refuses a file before the export sees it; no
    command line carries a NUL byte.)"""
    out, why = destination_violations(corpus, tmp_path)[kind]
    result = CliRunner().invoke(main, ["export", str(corpus), "--to", "verl", "-o", str(out)])
    assert result.exit_code == 2 and result.output == f"error: -o {out}: {why}\n"
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine" and list((tmp_path / "empty").iterdir()) == []


def test_verl_parquet_loads_in_datasets_with_nested_types_and_scores(corpus, tmp_path):
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
    export(corpus, "verl", tmp_path / "v", data="auto")
    records = {r["task_id"]: r for r in iter_records(corpus)}
    for split in ("train", "test"):
        ds = datasets.load_dataset("parquet", data_files={split: str(tmp_path / "v" / f"{split}.parquet")})[split]
        assert len(ds) == sum(r["split"] == split for r in records.values())
        for row in ds:
            assert row["agent_name"] == "tool_agent" and [m["role"] for m in row["prompt"]] == ["system", "user"]
            csv = records[row["extra_info"]["task_id"]]["data_csv"]
            for tool in ("run_python", "run_r"):   # never null: verl's tool loop reads it for every call
                assert row["extra_info"]["tools_kwargs"][tool]["create_kwargs"] == {
                    "data_filename": records[row["extra_info"]["task_id"]]["data_filename"] if csv else None,
                    "data_csv": csv}
    gt = json.loads(row["reward_model"]["ground_truth"])
    good = f"P_VALUE: {gt['gold']['p_value']!r}\nDECISION: {gt['gold']['decision']}"
    assert compute_score(row["data_source"], good, row["reward_model"]["ground_truth"], row["extra_info"])["score"] == 1.0
    assert pq.read_schema(tmp_path / "v" / "train.parquet").field("prompt").type.value_type.num_fields == 2
    lengths = json.loads((tmp_path / "v" / "prompt_lengths.json").read_text())
    assert lengths["test"]["prompts"] == len(ds)
    assert lengths["test"]["chars_max"] == max(len(m["prompt"][0]["content"] + m["prompt"][1]["content"]) for m in ds)


def test_verl_reward_loads_by_file_path_and_grades_only_the_final_turn(corpus, tmp_path):
    export(corpus, "verl", tmp_path / "v", data="file")
    spec = importlib.util.spec_from_file_location("custom_module", tmp_path / "v" / "reward.py")   # as verl loads it
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    truth = json.loads(pq.read_table(tmp_path / "v" / "test.parquet").to_pylist()[0]["reward_model"]["ground_truth"])
    gold = truth["gold"]
    answer = f"METHOD: t\nP_VALUE: {gold['p_value']!r}\nDECISION: {gold['decision']}"
    printed = f"<tool_call>...</tool_call>\nuser\n<tool_response>\n{answer}\n</tool_response>\nassistant\n"
    extra = {"reward_router_address": "127.0.0.1:1", "reward_model_tokenizer": None}
    assert module.compute_score("taskfactory", printed + "I could not decide.", json.dumps(truth), {}, **extra)[
        "score"] == 0.0
    assert module.compute_score("taskfactory", printed + "So:\n" + answer, json.dumps(truth), {}, **extra)[
        "score"] == 1.0


class _StandInVerl:
    """verl's tool interface as ``verl.tools.base_tool`` and ``verl.tools.schemas`` give it (0.9.1)."""

    class ToolResponse:
        def __init__(self, text=None, image=None, video=None):
            self.text, self.image, self.video = text, image, video

    class BaseTool:
        def __init__(self, config, tool_schema):
            self.config, self.tool_schema = config, tool_schema
            self.name = tool_schema.function.name


class _AgentData:
    """What verl's tool loop hands ``execute`` as ``agent_data``: a trajectory's state."""

    def __init__(self, tools_kwargs):
        self.tools_kwargs, self.extra_fields = tools_kwargs, {}


@pytest.fixture
def verl_tool_class(monkeypatch):
    if importlib.util.find_spec("verl") is None:
        from types import ModuleType
        modules = {name: ModuleType(name) for name in ("verl", "verl.tools", "verl.tools.base_tool",
                                                      "verl.tools.schemas")}
        modules["verl.tools.base_tool"].BaseTool = _StandInVerl.BaseTool
        modules["verl.tools.schemas"].ToolResponse = _StandInVerl.ToolResponse
        for name, module in modules.items():
            monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, "taskfactory.use.agent.verl_tool", raising=False)
    from taskfactory.use.agent.verl_tool import CodeTool
    return CodeTool


@pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")
def test_verl_tools_share_one_workspace_per_trajectory_and_close_it_after(corpus, tmp_path, verl_tool_class):
    import gc

    export(corpus, "verl", tmp_path / "v", data="file")
    config = yaml.safe_load((tmp_path / "v" / "tool_config.yaml").read_text())
    assert {t["class_name"] for t in config["tools"]} == {"taskfactory.use.agent.verl_tool.CodeTool"}
    tools = {t["tool_schema"]["function"]["name"]: verl_tool_class(
        t["config"], SimpleNamespace(function=SimpleNamespace(name=t["tool_schema"]["function"]["name"])))
        for t in config["tools"]}
    row = next(r for r in pq.read_table(tmp_path / "v" / "test.parquet").to_pylist() if r["extra_info"]["data_file"])
    name = row["extra_info"]["tools_kwargs"]["run_python"]["create_kwargs"]["data_filename"]
    agent_data = _AgentData(row["extra_info"]["tools_kwargs"])

    async def call(tool, code):   # what verl's ToolAgentLoop._call_tool does for each call
        instance_id, _ = await tools[tool].create(create_kwargs=agent_data.tools_kwargs[tool]["create_kwargs"])
        try:
            response, reward, metrics = await tools[tool].execute(instance_id, {"code": code}, agent_data=agent_data)
        finally:
            await tools[tool].release(instance_id)
        return response.text, reward, metrics["status"]

    rows = len(next(r for r in iter_records(corpus) if r["task_id"] == row["extra_info"]["task_id"])["data_csv"]
               .splitlines()) - 1
    first = asyncio.run(call("run_python", f"import pandas as pd\nd = pd.read_csv({name!r})\nlen(d)"))
    again = asyncio.run(call("run_python", "len(d) * 2"))
    assert first == (f"{rows}\n", 0.0, "ok") and again == (f"{rows * 2}\n", 0.0, "ok")
    if shutil.which("Rscript"):
        assert asyncio.run(call("run_r", f"nrow(read.csv({name!r}))"))[0] == f"[1] {rows}\n"
    bad = asyncio.run(tools["run_python"].execute("x", {"source": "1"}, agent_data=agent_data))[0].text
    assert bad == '[run_python takes a JSON object with one string, "code"; nothing ran]'
    space = agent_data.extra_fields["taskfactory_workspace"]
    del agent_data
    gc.collect()
    assert space._slots == {}   # the trajectory ended: its sessions went back to the pool


def test_lm_eval_task_folder_scores_a_right_and_a_wrong_answer(corpus, tmp_path):
    export(corpus, "lm-eval", tmp_path / "l")
    config = yaml.load((tmp_path / "l" / "taskfactory_train.yaml").read_text(), Loader=_FunctionLoader)
    assert config["process_results"] == "utils.process_results" and config["output_type"] == "generate_until"
    docs = [json.loads(line) for line in open(config["dataset_kwargs"]["data_files"]["test"])]
    assert all("```csv" in doc["prompt"] for doc in docs)
    spec = importlib.util.spec_from_file_location("lm_eval_utils", tmp_path / "l" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    gold = json.loads(docs[0]["ground_truth"])["gold"]
    right = utils.process_results(docs[0], [f"P_VALUE: {gold['p_value']!r}\nDECISION: {gold['decision']}"])
    wrong = utils.process_results(docs[0], ["P_VALUE: 0.5\nDECISION: maybe"])
    assert right == {"reward": 1.0, "raw": 1.0, "strict": 1.0, "valid": 1.0}
    assert wrong == {"reward": 0.0, "raw": 0.0, "strict": 0.0, "valid": 0.0}
    try:
        from lm_eval.tasks import TaskManager
    except ImportError:
        pytest.skip("lm-evaluation-harness is not installed (it needs torch); the YAML and its scorer were checked above")
    assert "taskfactory_train" in TaskManager(include_path=str(tmp_path / "l")).all_tasks


class _FunctionLoader(yaml.SafeLoader):
    """Reads lm-eval's ``!function`` tag as its dotted name."""


_FunctionLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _inspect_module(corpus, tmp_path):
    pytest.importorskip("inspect_ai", reason="Inspect AI is not installed")
    export(corpus, "inspect", tmp_path / "i", data="file")
    spec = importlib.util.spec_from_file_location("tf_inspect", tmp_path / "i" / "taskfactory_inspect.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_inspect_task_loads_with_files_and_scores(corpus, tmp_path):
    module = _inspect_module(corpus, tmp_path)
    samples = module.samples(module.HERE, "train")
    assert len(samples) == sum(1 for r in iter_records(corpus) if r["split"] == "train")
    sample = samples[0]
    (name, path), = sample.files.items()
    assert name.endswith(".csv") and open(path).read().startswith(next(iter_records(corpus))["data_csv"][:20])
    for make in (module.taskfactory, module.taskfactory_single_turn):
        assert len(make(split="train").dataset) == len(samples)
    from inspect_ai.scorer import Target
    gold = json.loads(sample.target)["gold"]
    score = module.taskfactory_reward()
    for text, value in ((f"P_VALUE: {gold['p_value']!r}\nDECISION: {gold['decision']}", 1.0), ("no answer", 0.0)):
        state = SimpleNamespace(output=SimpleNamespace(completion=text))   # what the scorer reads of a TaskState
        got = asyncio.run(score(state, Target(sample.target)))
        assert got.value["reward"] == value and got.value["strict"] == value


@pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")
def test_inspect_react_agent_runs_its_code_in_the_sandbox_on_the_samples_csv(corpus, tmp_path):
    module = _inspect_module(corpus, tmp_path)
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    sample = module.samples(module.HERE, "test")[0]
    reference = next(r for r in iter_records(corpus) if r["task_id"] == sample.id)["reference_py"]
    gold = json.loads(sample.target)["gold"]
    outputs = [ModelOutput.for_tool_call("mockllm/model", "run_python", {"code": reference}),
               ModelOutput.from_content("mockllm/model", "The test.\nMETHOD: Welch\nP_VALUE: "
                                        f"{gold['p_value']!r}\nDECISION: {gold['decision']}")]
    for output in outputs:   # usage given: the mock model would count tokens with a downloaded encoding
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    log, = inspect_eval(module.taskfactory(split="test"), model=get_model("mockllm/model", custom_outputs=outputs),
                        limit=1, display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    messages = log.samples[0].messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert f"The data file `{sample.metadata['data_filename']}` is in the working folder" in messages[0].text
    assert messages[3].text == f"P_VALUE: {gold['p_value']:.10g}\n"
    assert log.samples[0].scores["taskfactory_reward"].value == {"reward": 1.0, "raw": 1.0, "strict": 1.0}


def test_verifiers_package_holds_its_tasks_with_their_csv_and_loads_where_verifiers_is_installed(corpus, tmp_path):
    export(corpus, "verifiers", tmp_path / "vf", data="file")
    package = tmp_path / "vf" / "taskfactory_env"
    source = (package / "taskfactory_env" / "__init__.py").read_text()
    compile(source, "taskfactory_env", "exec")
    assert "verifiers" not in tomllib.loads((package / "pyproject.toml").read_text())["project"]["dependencies"]
    records = {r["task_id"]: r for r in iter_records(corpus)}
    rows = [json.loads(line) for line in (package / "taskfactory_env" / "tasks-test.jsonl").open()]
    assert sorted(r["task_id"] for r in rows) == sorted(t for t, r in records.items() if r["split"] == "test")
    assert all(r["data_csv"] == records[r["task_id"]]["data_csv"] and str(tmp_path) not in json.dumps(r) for r in rows)
    vf = pytest.importorskip("verifiers.v1", reason="verifiers 0.4 is not installed (an optional framework)")
    sys.path.insert(0, str(package))
    try:
        import taskfactory_env
        from taskfactory.use.agent.verifiers_env import TaskfactoryConfig
        taskset = taskfactory_env.TaskfactoryTaskset(TaskfactoryConfig(split="test"))   # as vf-eval makes it
        tasks = list(taskset)
        assert [t.data.task_id for t in tasks] == [r["task_id"] for r in rows]
        assert isinstance(taskset, vf.Taskset) and tasks[0].data.prompt[0].role == "system"
    finally:
        sys.path.pop(0)


def test_export_command_reports_counts(corpus, tmp_path):
    result = CliRunner().invoke(main, ["export", str(corpus), "--to", "jsonl", "-o", str(tmp_path / "j"),
                                       "--data", "inline"])
    assert result.exit_code == 0, result.output
    total = len(list(iter_records(corpus)))
    assert result.output.startswith(f"exported to {tmp_path / 'j'} (jsonl): ")
    assert sum(int(part.split()[-1]) for part in result.output.split(": ", 1)[1].split(", ")) == total
