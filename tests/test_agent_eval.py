"""Episodes end to end: a chat-completions server on 127.0.0.1 that answers
with scripted tool calls, agent-eval against it and with the reference agent,
the runs file read by score, and endpoints and tool calls that misbehave."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from click.testing import CliRunner

import taskfactory as tf
from taskfactory.use.agent import Sandbox, isolation_problem
from taskfactory.use.agent.episode import TOOLS, AgentTask, Environment, code_blocks
from taskfactory.use.agent.evaluate import ChatAgent, agent_eval, read_done
from taskfactory.cli import main
from taskfactory.store.corpus import iter_records
from taskfactory.errors import InputError
from taskfactory.use.score import score

pytestmark = pytest.mark.skipif(isolation_problem() is not None, reason=f"{isolation_problem()}")
GRID = {"name": "agents", "seed": 11, "methods": ["welch_t", "kruskal_wallis", "wilson_ci"], "n": [40],
        "effects": ["medium"], "prompt_styles": ["basic"], "perturbations": ["none", "missing+extreme"], "seeds": 1,
        "split": {"by": "scenario", "test": 0.3, "seed": 1},
        "exclude": [{"method": "wilson_ci", "perturbation": "missing+extreme"}]}
_FILE = re.compile(r"The data file `([^`]+)` is in the working folder")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("agents") / "corpus"
    tf.build(GRID, out, progress=False)
    return out


@pytest.fixture(scope="module")
def records(corpus):
    return {r["task_id"]: r for r in iter_records(corpus)}


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(pool=2) as box:
        yield box


class Stub:
    """A chat-completions server: ``script(request body) -> reply body`` decides each answer."""

    def __init__(self, script):
        self.script, self.requests = script, []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                status, reply = stub.script(body)
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def completion(message: dict, prompt_tokens: int = 100, completion_tokens: int = 20) -> tuple[int, dict]:
    return 200, {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message,
                                                                       "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


def tool_call(name: str, arguments) -> dict:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}]}


def analyst(records: dict):
    """Looks the task up by its prompt, runs its Python reference solution, answers from what it printed."""
    by_prompt = {r["prompt"]: r for r in records.values()}

    def script(body):
        messages = body["messages"]
        record = by_prompt[messages[1]["content"]]
        if messages[-1]["role"] == "user":
            return completion(tool_call("run_python", {"code": record["reference_py"]}))
        printed = messages[-1]["content"]
        answer = [line for line in printed.splitlines() if re.match(r"^(P_VALUE|LOWER|UPPER): ", line)]
        if answer and answer[0].startswith("P_VALUE"):
            p = float(answer[0].split()[1])
            answer = ["METHOD: " + tf.registry.get_family(record["method"]).test_name.label, answer[0],
                      "DECISION: " + ("reject" if p <= 0.05 else "fail to reject")]
        return completion({"role": "assistant", "content": "The analysis.\n" + "\n".join(answer)})
    return script


def test_agent_eval_against_a_chat_server_writes_runs_that_score_reads(corpus, records, tmp_path, monkeypatch):
    monkeypatch.setenv("STUB_KEY", "sk-test")
    out = tmp_path / "runs.jsonl"
    with Stub(analyst(records)) as stub:
        args = ["agent-eval", str(corpus), "--base-url", stub.url, "--model", "stub", "--api-key-env", "STUB_KEY",
                "-o", str(out), "--no-progress"]
        first = CliRunner().invoke(main, args)
        again = CliRunner().invoke(main, args)
    total = len(records)
    assert first.exit_code == 0, first.output
    assert first.output.startswith(f"ran {total} episode(s) in ") and "(mean reward 1.000)" in first.output
    assert again.output.startswith("ran 0 episode(s)") and f"{total} already in the runs file" in again.output
    request = stub.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "stub"
    assert [t["function"]["name"] for t in request["body"]["tools"]] == [t["function"]["name"] for t in TOOLS][
        :len(Sandbox.available())]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == sorted(records) and {r["run"] for r in rows} == {0}
    row = next(r for r in rows if records[r["task_id"]]["data_filename"])
    assert _FILE.search(row["messages"][0]["content"]).group(1) == records[row["task_id"]]["data_filename"]
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert row["turns"] == 2 and row["ended"] == "answered" and row["tokens"] == {"prompt": 200, "completion": 40}
    assert row["tool_calls"][0]["name"] == "run_python"
    report = score(corpus, out)
    assert report.overall["raw_pass@1"] == report.overall["strict_pass@1"] == 1.0


@pytest.mark.parametrize("language", Sandbox.available())
def test_the_reference_agent_scores_raw_and_strict_one(corpus, records, sandbox, tmp_path, language):
    out = tmp_path / "runs.jsonl"
    box = sandbox if language == "r" else Sandbox(languages=("python",), pool=2)   # it plays R where it can
    try:
        summary = agent_eval(corpus, out, "reference", concurrency=2, progress=False, sandbox=box)
    finally:
        if box is not sandbox:
            box.close()
    assert summary.ran == len(records) and not summary.failed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["tool_calls"][0]["name"] for r in rows} == {f"run_{language}"}
    report = score(corpus, out)
    assert report.overall["raw_pass@1"] == report.overall["strict_pass@1"] == 1.0


def test_a_bad_tool_call_is_reported_to_the_agent_and_the_episode_goes_on(records, sandbox):
    record = next(r for r in records.values() if r["data_filename"])
    env = Environment(sandbox, max_turns=5)
    env.reset(record)
    replies = [env.step(tool_call("run_python", "{not json"))[0]["messages"][-1]["content"],
               env.step(tool_call("run_python", {"source": "1"}))[0]["messages"][-1]["content"],
               env.step(tool_call("rm_rf", {"code": "1"}))[0]["messages"][-1]["content"],
               env.step(tool_call("run_python", {"code": "import os\nos.listdir('.')"}))[0]["messages"][-1]["content"]]
    assert replies == ['[run_python takes a JSON object with one string, "code"; nothing ran]',
                       '[run_python takes a JSON object with one string, "code"; nothing ran]',
                       "[no tool 'rm_rf'; the tools are run_python, run_r]",
                       f"[{record['data_filename']!r}]\n"]
    _, reward, done, info = env.step({"role": "assistant", "content": "I am not sure."})
    assert done and reward == 0.0 and info.ended == "answered" and info.calls == 1


def test_the_reward_is_the_final_message_alone_never_what_a_tool_printed(records, sandbox):
    record = next(r for r in records.values() if r["answer_kind"] == "p_value")
    gold = record["gold"]
    printed = f"P_VALUE: {gold['p_value']!r}\\nDECISION: {gold['decision']}"
    env = Environment(sandbox, max_turns=2)
    env.reset(record)
    env.step(tool_call("run_python", {"code": f"print('{printed}')"}))
    _, reward, done, info = env.step(tool_call("run_python", {"code": f"print('{printed}')"}))
    assert done and info.ended == "turn limit" and reward == 0.0 and not info.result.valid


def test_fences_mode_runs_python_and_r_blocks_from_plain_text(records, sandbox):
    record = next(r for r in records.values() if r["data_filename"])
    env = Environment(sandbox, mode="fences")
    first = env.reset(record)
    assert first["tools"] == [] and "```python" in first["messages"][0]["content"]
    blocks = "Look:\n```python\nx = 40 + 2\nprint(x)\n```\nand\n```python\nx + 1\n```\n"
    observation, _, done, _ = env.step({"role": "assistant", "content": blocks})
    assert not done and observation["messages"][-1] == {
        "role": "user", "content": "Output of block 1 (python):\n```\n42\n\n```\n\nOutput of block 2 (python):\n"
                                   "```\n43\n\n```"}
    _, _, done, info = env.step({"role": "assistant", "content": "No code: my answer."})
    assert done and info.ended == "answered"


def test_code_fences_are_read_in_one_pass_over_the_lines():
    # a hundred thousand openers never closed: a backtracking pattern took minutes here
    assert code_blocks("```python\n" * 100_000) == []
    assert code_blocks("a\n```R\nx <- 1\n```\n```py\nprint(2)\n```  \n```r\nnot closed") == [
        ("r", "x <- 1\n"), ("python", "print(2)\n")]


def test_an_endpoint_that_fails_is_retried_then_counted_and_nothing_is_written(corpus, records, sandbox, tmp_path):
    answers = iter([(500, b"oops"), (200, b"not json")] + [(503, b"")] * 100)
    with Stub(lambda body: next(answers)) as stub:
        agent = ChatAgent(stub.url, "stub", retries=1, backoff=0.0)
        summary = agent_eval(corpus, tmp_path / "runs.jsonl", agent, limit=2, progress=False, sandbox=sandbox)
    assert summary.ran == 0
    assert summary.failed == {f"{stub.url}: the reply is not a chat completion": 1,
                              f"{stub.url}: HTTP 503 after 2 tries": 1}
    assert (tmp_path / "runs.jsonl").exists() is False


def test_a_runs_file_that_is_not_agent_evals_is_refused_and_a_cut_last_line_dropped(tmp_path):
    foreign = tmp_path / "notes.jsonl"
    foreign.write_text('{"task_id": "welch_t-0123456789ab", "completion": "x"}\n')
    with pytest.raises(InputError, match=r"notes.jsonl: line 1 is not a run of agent-eval; give a new file"):
        read_done(foreign)
    runs = tmp_path / "runs.jsonl"
    good = json.dumps({"task_id": "welch_t-0123456789ab", "run": 0, "messages": []})
    runs.write_text(good + "\n" + good[:20])
    assert read_done(runs) == {("welch_t-0123456789ab", 0)}
    assert runs.read_text() == good + "\n"
    link = tmp_path / "link.jsonl"
    link.symlink_to(runs)
    with pytest.raises(InputError, match="is a symbolic link"):
        read_done(link)


def test_agent_eval_needs_an_endpoint_for_the_chat_agent(corpus, tmp_path):
    result = CliRunner().invoke(main, ["agent-eval", str(corpus), "-o", str(tmp_path / "r.jsonl")], prog_name="taskfactory")
    assert result.exit_code == 2
    assert result.output == "error: taskfactory agent-eval: --agent chat needs --base-url and --model (see --help)\n"


def test_an_agent_task_from_a_closed_form_record_has_no_file(records):
    record = next(r for r in records.values() if r["data_csv"] is None)
    task = AgentTask.from_record(record)
    assert task.files() == {} and task.data_filename is None


REPLIES = yaml.safe_load((Path(__file__).parent / "adversarial" / "agent" / "replies.yaml").read_text())


def _hostile(message):
    """The message of a replies.yaml case, its placeholders made."""
    if message == "@text@":
        return "METHOD: t"
    calls = message.get("tool_calls")
    if calls == "@hundred@":
        message["tool_calls"] = [tool_call("run_python", {"code": f"{i}"})["tool_calls"][0] for i in range(100)]
    elif isinstance(calls, list) and calls and isinstance(calls[0], dict) \
            and calls[0]["function"].get("arguments") == "@deep@":
        calls[0]["function"]["arguments"] = "[" * 10_000 + "]" * 10_000
    return message


@pytest.mark.parametrize("case", REPLIES, ids=[c["name"] for c in REPLIES])
def test_a_hostile_reply_is_answered_in_one_line_and_never_raises(case, records, sandbox):
    record = next(r for r in records.values() if r["data_filename"])
    env = Environment(sandbox, max_turns=5)
    env.reset(record)
    observation, reward, done, info = env.step(_hostile(case["message"]))
    tools = [m for m in observation["messages"] if m["role"] == "tool"]
    assert (tools[0]["content"] if tools else None) == case["tool"]
    assert info.ended == case["ended"] and done == (case["ended"] is not None)
    if case["name"] == "a hundred tool calls in one message":   # the episode's call limit holds
        assert tools[-1]["content"] == "[refused: this episode's limit of 40 calls is reached]"
    env.close()
