"""The ``taskfactory`` command line: a thin layer over the library."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from click.exceptions import NoArgsIsHelpError

from ._version import __version__
from .errors import TaskFactoryError
from .store.resplit import BY as RESPLIT_BY
from .use.schema import KINDS as SCHEMA_KINDS


class Group(click.Group):
    """Turns library errors into ``error: <message>`` and their exit code, and
    a bad option or argument into one such line with exit code 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:  # no command: the help, as click shows it
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
            sys.exit(2)
        except click.UsageError as exc:
            where = f"{exc.ctx.command_path}: " if exc.ctx is not None else ""
            click.echo(f"error: {where}{exc.format_message().rstrip('.')} (see --help)", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TaskFactoryError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)


# --- the options every command spells alike (tests/test_cli.py holds each command to them) ---

def out_folder(what: str = "Folder to write (new or empty)."):
    """``-o/--out DIR``: the folder a command writes."""
    return click.option("-o", "--out", required=True, metavar="DIR", type=click.Path(), help=what)


def out_file(what: str, required: bool = True):
    """``-o/--out FILE``: the file a command writes."""
    return click.option("-o", "--out", required=required, metavar="FILE", type=click.Path(), help=what)


def jobs_option(what: str, default: int = 1):
    """``-j/--jobs N``: how much of the command's work runs at once."""
    return click.option("-j", "--jobs", default=default, show_default=True, type=click.IntRange(min=1), help=what)


def json_option(what: str):
    """``--json``: print what the command reports as JSON instead of text."""
    return click.option("--json", "as_json", is_flag=True, help=what)


def progress_option():
    """``--progress/--no-progress``: a bar on standard error, by default when it is a terminal."""
    return click.option("--progress/--no-progress", default=None,
                        help="Show a progress bar on standard error (default: when it is a terminal).")


def from_option():
    """``--from FORMAT``: predictions are the result files an evaluation framework wrote."""
    from .use.frameworks import FORMATS

    return click.option("--from", "fmt", type=click.Choice(FORMATS), default=None,
                        help="Read the predictions from what this framework wrote (see taskfactory.use.frameworks).")


def shown_progress(progress: bool | None) -> bool:
    """Whether to show a progress bar: as asked, else when standard error is a terminal."""
    return sys.stderr.isatty() if progress is None else progress


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="taskfactory")
def main():
    """Manufacture verifiable hypothesis-testing tasks with R-exact gold answers.

    Example:

        taskfactory plan grids/demo.yaml && taskfactory build grids/demo.yaml -o corpus/
    """


@main.command()
@click.argument("grid", type=click.Path(dir_okay=False))
@out_folder("Folder to write the corpus into (new or empty; an earlier corpus with --resume or --overwrite).")
@jobs_option("Chunks built at once.")
@click.option("--resume", is_flag=True, help="Continue an interrupted build, reusing finished shards and chunks.")
@click.option("--overwrite", is_flag=True, help="Replace an earlier corpus in the output folder.")
@click.option("--backend", default="loky", show_default=True,
              type=click.Choice(["loky", "threading", "dask", "ray"]), help="joblib backend that runs the chunks.")
@click.option("--address", default=None, help="Scheduler address for the dask or ray backend.")
@progress_option()
@json_option("Print the summary as JSON.")
def build(grid, out, jobs, resume, overwrite, backend, address, progress, as_json):
    """Build the corpus a GRID file describes into a folder of Parquet shards.

    Example:

        taskfactory build grids/demo.yaml -o corpus/ --jobs 2
    """
    from .store.build import build as run_build

    s = run_build(grid, out, jobs=jobs, resume=resume, overwrite=overwrite,
                  progress=shown_progress(progress),
                  backend=backend, address=address)
    by_method = s.manifest["counts"]["rejected_by_method"]
    if as_json:
        click.echo(json.dumps({"out": str(s.out), "tasks": s.tasks, "shards": s.shards, "resumed_shards": s.skipped_shards,
                               "chunks": s.chunks, "resumed_chunks": s.skipped_chunks,
                               "seconds": round(s.seconds, 3), "tasks_per_second": round(s.tasks_per_second, 1),
                               "rejected": s.rejected, "rejected_by_method": dict(sorted(by_method.items())),
                               "traps": s.manifest["counts"]["traps"]}, indent=1))
        return
    per_method = f" ({', '.join(f'{m}: {k}' for m, k in sorted(by_method.items()))})" if by_method else ""
    click.echo(f"built {s.tasks} tasks in {s.shards} shard(s) ({s.skipped_shards} resumed) from {s.chunks} "
               f"chunk(s) ({s.skipped_chunks} resumed) into {s.out} "
               f"in {s.seconds:.1f} s ({s.tasks_per_second:.1f} tasks/s); rejected: {s.rejected}{per_method}; "
               f"traps: {s.manifest['counts']['traps']}")


@main.command()
@click.argument("grid", type=click.Path(dir_okay=False))
@jobs_option("Cores to assume for the time estimate.")
@json_option("Print the counts as JSON.")
def plan(grid, jobs, as_json):
    """Validate a GRID file and count its tasks; writes nothing.

    Prints counts per dimension, the total, the shards and an estimate of the
    build time.

    Example:

        taskfactory plan grids/paper.yaml --jobs 2
    """
    from .store.plan import format_plan, plan as run_plan

    p = run_plan(grid)
    if as_json:
        click.echo(json.dumps({"name": p.grid.name, "grid_sha256": p.grid.sha256, "total": p.total,
                               "datasets": p.datasets, "by_split": dict(p.by_split),
                               "by": {k: {str(a): b for a, b in v.items()} for k, v in p.by.items()},
                               "estimated_seconds": round(p.estimate_seconds(jobs), 1)}, indent=1))
    else:
        click.echo(format_plan(p, jobs))


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@click.argument("task_id", required=False)
@click.option("--method", default=None, help="Show the first task of this method.")
@click.option("--rows", default=8, show_default=True, type=click.IntRange(min=0), help="CSV rows to show.")
@json_option("Print the whole record as JSON.")
def inspect(corpus, task_id, method, rows, as_json):
    """Show one task of a CORPUS as the agent sees it and as the grader sees it.

    Without TASK_ID, shows the first task (of --method, when given).

    Example:

        taskfactory inspect corpus/ --method welch_t
    """
    from .store.corpus import find_task
    from .use.show import render_task, task_json

    task = find_task(corpus, task_id, method)
    click.echo(task_json(task) if as_json else render_task(task, rows), nl=False)


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@click.argument("predictions", required=False, type=click.Path(dir_okay=False))
@click.option("--baseline", type=click.Choice(["gold", "naive"]), default=None,
              help="Score the corpus's own gold or naive answers instead of a predictions file.")
@click.option("--by", default="method", show_default=True,
              help="Comma-separated record columns to break the figures down by "
                   "(method, effect, prompt_style, perturbation, trap, n, split, scenario, answer_kind, "
                   "difficulty).")
@click.option("--no-method-aware", "paper", is_flag=True,
              help="Grade every answer against the canonical gold, as the paper does.")
@from_option()
@json_option("Print the figures as JSON.")
def score(corpus, predictions, baseline, by, paper, fmt, as_json):
    """Score answers to a CORPUS: Raw and Strict pass@1 and pass@k, mean reward.

    PREDICTIONS is JSONL, one answer per line: {"task_id", "completion"} or
    {"task_id", "p_value", "decision", "method"}, with an optional "run";
    with --from, the result file an evaluation framework wrote (lm-eval's
    samples_*.jsonl, an Inspect log, a verifiers traces.jsonl).
    --baseline naive shows how much the corpus punishes the tempting test.

    Example:

        taskfactory score corpus/ answers.jsonl --by method,effect
    """
    from .use.score import format_report, score as score_corpus

    columns = tuple(b.strip() for b in by.split(",") if b.strip())
    report = score_corpus(corpus, predictions, columns, baseline, method_aware=not paper, fmt=fmt)
    click.echo(json.dumps(report.as_dict(), indent=1) if as_json else format_report(report))


@main.command("agent-eval")
@click.argument("corpus", type=click.Path(file_okay=False))
@out_file("Runs file (JSONL) to write; runs already in it are not run again.")
@click.option("--agent", type=click.Choice(["chat", "reference"]), default="chat", show_default=True,
              help="chat: the endpoint; reference: each task's own reference solution, through the same tools.")
@click.option("--base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--model", help="The model name the endpoint serves.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="The environment variable holding the endpoint's key.")
@click.option("--temperature", type=float, default=None, help="Sampling temperature (the endpoint's default).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Tokens per reply.")
@click.option("--runs", default=1, show_default=True, type=click.IntRange(min=1), help="Runs per task.")
@click.option("-j", "--jobs", "--concurrency", "jobs", default=2, show_default=True, type=click.IntRange(min=1),
              help="Episodes at once.")
@click.option("--max-turns", default=20, show_default=True, type=click.IntRange(min=1),
              help="Assistant turns per episode.")
@click.option("--mode", type=click.Choice(["tools", "fences"]), default="tools", show_default=True,
              help="Code as tool calls, or as ```python / ```r blocks for endpoints without tool calling.")
@click.option("--split", default=None, type=click.Choice(["train", "test"]), help="Only this split.")
@click.option("--method", default=None, help="Only this method.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N tasks.")
@click.option("--call-seconds", default=30.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Wall time per code call.")
@click.option("--unisolated", is_flag=True, help="Run model code without bubblewrap (NOT isolated).")
@progress_option()
@json_option("Print the summary as JSON.")
def agent_eval(corpus, out, agent, base_url, model, api_key_env, temperature, max_tokens, runs, jobs,
               max_turns, mode, split, method, limit, call_seconds, unisolated, progress, as_json):
    """Run agents on a CORPUS's tasks in the sandbox, writing a runs file.

    Each episode gives the agent Python and R sessions (run_python, run_r)
    holding the task's CSV; the final assistant message is graded. The runs
    file is a predictions file: score and report --predictions read it.

    Example:

        taskfactory agent-eval corpus/ --base-url http://127.0.0.1:8000/v1 --model m -o runs.jsonl
    """
    from .use.agent import Limits
    from .use.agent.evaluate import ChatAgent, agent_eval as run_agents

    if agent == "chat":
        if not base_url or not model:
            raise click.UsageError("--agent chat needs --base-url and --model")
        agent = ChatAgent(base_url, model, os.environ.get(api_key_env) or None, temperature, max_tokens)
    else:
        agent = "reference"
    summary = run_agents(corpus, out, agent, runs, jobs, max_turns, split, method, limit,
                         Limits(call_seconds=call_seconds), mode, unisolated, shown_progress(progress))
    if as_json:
        click.echo(json.dumps({"ran": summary.ran, "skipped": summary.skipped, "failed": summary.failed,
                               "mean_reward": summary.reward / summary.ran if summary.ran else None,
                               "seconds": round(summary.seconds, 3)}, indent=1))
    else:
        click.echo(summary.line())
    return 1 if summary.failed else 0


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@out_folder()
@click.option("--split", default=None, type=click.Choice(["train", "test"]), help="Only this split.")
@click.option("--method", default=None, help="Only this method.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N tasks.")
@jobs_option("Episodes at once.", default=2)
@click.option("--language", type=click.Choice(["python", "r", "mixed"]), default="python", show_default=True,
              help="The language of the look, the checks and the test; mixed: either, drawn per task.")
@click.option("--mode", type=click.Choice(["tools", "fences"]), default="tools", show_default=True,
              help="Code as tool calls, or as ```python / ```r blocks for trainers without tool calls.")
@progress_option()
@json_option("Print the retention per family as JSON.")
def trajectories(corpus, out, split, method, limit, jobs, language, mode, progress, as_json):
    """Write worked trajectories of a CORPUS's tasks for supervised warm-up.

    A scripted statistician plays each task in the sandbox: it reads the
    file, describes the data, runs the checks that separate the candidate
    tests, runs the test they point to and answers. The kept trajectories go
    to trajectories.parquet and .jsonl; those whose test is neither the
    canonical nor an accepted one, or whose answer fails the SFT filter, to
    left_out.jsonl with the reason.

    Example:

        taskfactory trajectories corpus/ -o trajectories/ --split train
    """
    from .use.agent.trajectories import write_trajectories

    summary = write_trajectories(corpus, out, split, method, limit, jobs, language, mode, shown_progress(progress))
    if as_json:
        click.echo(json.dumps({"tasks": summary.tasks, "kept": summary.kept, "seconds": round(summary.seconds, 3),
                               "families": summary.families}, indent=1))
    else:
        click.echo(summary.line())


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@click.option("--to", "to", required=True, type=click.Choice(["jsonl", "verl", "lm-eval", "inspect", "verifiers"]),
              help="The framework to export for.")
@out_folder()
@click.option("--data", default="auto", show_default=True, type=click.Choice(["inline", "file", "auto"]),
              help="Put each CSV in the prompt (inline), beside the export (file), or inline when small (auto).")
@click.option("--inline-max", default=16000, show_default=True, type=click.IntRange(min=0),
              help="Largest CSV, in characters, that auto puts inline.")
@click.option("--split", "splits", default="train,test", show_default=True, help="Comma-separated splits to export.")
@json_option("Print the counts per split and delivery as JSON.")
def export(corpus, to, out, data, inline_max, splits, as_json):
    """Export a CORPUS for a training or evaluation framework.

    Example:

        taskfactory export corpus/ --to verl -o exports/verl
    """
    from .use.export import export as export_corpus

    chosen = tuple(s.strip() for s in splits.split(",") if s.strip())
    counts = export_corpus(corpus, to, out, data, inline_max, chosen)
    if as_json:
        click.echo(json.dumps({"out": str(out), "to": to, "tasks": dict(sorted(counts.items()))}, indent=1))
        return
    shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no tasks"
    click.echo(f"exported to {out} ({to}): {shown}")


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@click.option("--sample", default=None, type=click.IntRange(min=1),
              help="Re-derive this many tasks, drawn with --seed (default: 1000).")
@click.option("--all", "all_tasks", is_flag=True, help="Re-derive every task instead of a sample.")
@jobs_option("Chunks of tasks checked at once.")
@click.option("--seed", default=0, show_default=True, help="Seed of the sample.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(min=0.1, max=86400.0),
              help="Wall seconds each script may run.")
@click.option("--memory-mb", default=2048, show_default=True, type=click.IntRange(min=256),
              help="Address space each script interpreter may use, in MB.")
@progress_option()
@json_option("Print the report as JSON.")
@click.pass_context
def verify(ctx, corpus, sample, all_tasks, jobs, seed, timeout, memory_mb, progress, as_json):
    """Prove that a CORPUS reproduces.

    Checks that the shards and files match manifest.json, that task ids are
    well formed and unique, and that each sampled task's record, re-derived
    from its coordinates with this taskfactory, matches field by field (CSV,
    gold, naive test, trap, prompt, reference code, script). The file and id
    checks cover every shard; the re-derivation covers a sample of 1000 tasks
    (--sample K for another size, --all for every task).

    What it executes: each task's script, and only when it is byte for byte
    the script this taskfactory emits for that task (a script that differs is
    a failure and is never run). It runs in a fresh isolated Python
    interpreter with an empty environment, in a throwaway folder, with
    --timeout seconds and --memory-mb of address space per script, and writes
    only the CSV it regenerates there.

    Exits 1 naming each task, shard or file that differs and what differed.

    Example:

        taskfactory verify corpus/ --sample 200 --jobs 2
    """
    from .audit.sandbox import Limits
    from .audit.verify import DEFAULT_SAMPLE, format_report, verify as run_verify

    if all_tasks and sample is not None:
        raise click.UsageError("--all and --sample cannot be used together", ctx=ctx)
    if sample is None and not all_tasks:
        sample = DEFAULT_SAMPLE
    report = run_verify(corpus, sample=None if all_tasks else sample, jobs=jobs, seed=seed,
                        limits=Limits(seconds=timeout, memory_mb=memory_mb), progress=shown_progress(progress))
    click.echo(json.dumps(report.to_json(), indent=1) if as_json else format_report(report))
    if not report.ok:
        sys.exit(1)


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@click.option("--against", "benches", multiple=True, required=True,
              help="Benchmark: a Parquet or JSONL file, or a folder of them. Repeat for several.")
@click.option("--report", "report_path", type=click.Path(),
              help="Write every item's scores as JSON to this file (new, or a report written before).")
@click.option("--overwrite", is_flag=True, help="Let --report replace a file that is not a leakage report.")
@click.option("--drop-out", "drop_dir", type=click.Path(),
              help="Write the corpus without the flagged tasks (and their data_id siblings) into this new or empty "
                   "folder.")
@click.option("--fail-on", type=click.Choice(["any", "none"]), default="any", show_default=True,
              help="Exit 1 when any item is flagged, or never.")
@click.option("--semantic", is_flag=True, help="Add embedding similarity (needs taskfactory[embed]).")
@click.option("--id-field", multiple=True, help="Field(s) holding an item's id.")
@click.option("--question-field", multiple=True, help="Field(s) holding the question text.")
@click.option("--context-field", multiple=True, help="Field(s) holding the context text.")
@click.option("--data-field", multiple=True, help="Field(s) holding CSV text or a path to a CSV file.")
@click.option("--ngram8", default=0.5, show_default=True, help="Flag at this share of an item's 8-grams in one task.")
@click.option("--ngram13", default=1, show_default=True, help="Flag at this many shared 13-grams (0: off).")
@click.option("--containment", default=0.5, show_default=True,
              help="Flag at this rarity-weighted share of an item's 2-grams in one scenario's prompts.")
@click.option("--jaccard", default=0.5, show_default=True, help="Flag at this content-word Jaccard.")
@click.option("--data-share", default=0.5, show_default=True, help="Flag at this share of an item's rows in one dataset.")
@click.option("--semantic-threshold", default=0.9, show_default=True, help="Flag at this cosine similarity.")
@click.option("--boilerplate", default=0.05, show_default=True,
              help="Ignore n-grams in more than this share of corpus tasks (from 2+ scenarios).")
@jobs_option("Processes reading the corpus.")
@progress_option()
@json_option("Print every item's scores as JSON (what --report writes).")
def leakage(corpus, benches, report_path, overwrite, drop_dir, fail_on, semantic, id_field, question_field,
            context_field, data_field, ngram8, ngram13, containment, jaccard, data_share, semantic_threshold, boilerplate,
            jobs, progress, as_json):
    """Check a CORPUS against held-out benchmarks for copied text or data.

    Prints the flagged items (evidence, score, matching task) and a summary;
    exits 1 when any item is flagged (unless --fail-on none), 0 when clean,
    2 on bad input.

    Example:

        taskfactory leakage corpus/ --against bench/pbench.jsonl --report leak.json --drop-out clean/
    """
    from .audit.leakage import (Thresholds, check_leakage, check_output_paths, check_threshold, format_report,
                                write_report)
    from .audit.leakage.bench import Fields
    from .audit.leakage.dropout import drop_out
    from .store.copying import check_carried

    given = {"ngram8": ("--ngram8", ngram8), "ngram13": ("--ngram13", ngram13),
             "containment": ("--containment", containment), "jaccard": ("--jaccard", jaccard),
             "data": ("--data-share", data_share), "semantic": ("--semantic-threshold", semantic_threshold),
             "boilerplate": ("--boilerplate", boilerplate)}
    for name, (option, value) in given.items():
        check_threshold(name, value, option)
    thr = Thresholds(**{name: value for name, (_, value) in given.items()})
    check_output_paths(corpus, benches, report_path, drop_dir, overwrite)
    if drop_dir:
        check_carried(corpus)
    defaults = Fields()
    fields = Fields(id=id_field or defaults.id, question=question_field or defaults.question,
                    context=context_field or defaults.context, data=data_field or defaults.data)
    report = check_leakage(corpus, list(benches), fields=fields, thresholds=thr, semantic=semantic, jobs=jobs,
                           progress=shown_progress(progress))
    if report_path:
        write_report(report, report_path, overwrite)
    if not as_json:
        click.echo(format_report(report))
    if drop_dir:
        new = drop_out(corpus, drop_dir, report)
        if not as_json:
            click.echo(f"wrote {drop_dir}: {new['counts']['tasks']} tasks "
                       f"({new['leakage_filter']['dropped_tasks']} dropped)")
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1))
    if report.flagged and fail_on == "any":
        sys.exit(1)


@main.command()
@json_option("Print a JSON array, one object per family.")
def methods(as_json):
    """List the method families: canonical R call, naive test, scenarios.

    Example:

        taskfactory methods --json
    """
    from .design.catalogue import load_scenarios
    from .registry import families
    from .tables import render_table

    listed = [{**f.describe(), "scenarios": [s.id for s in load_scenarios(f.name)]} for f in families()]
    if as_json:
        click.echo(json.dumps(listed, indent=1))
        return
    rows = []
    for d in listed:
        lines = [d["canonical"]] + ([f"also accepted: {'; '.join(d['accepted'])}"] if d["accepted"] else [])
        if not d["has_data"]:
            lines.append(f"no dataset: the question states its numbers; answer: {d['answer']}; "
                         f"n at least {d['min_n']}; {len(d['scenarios'])} scenarios")
        else:
            lines.append(f"naive: {d['naive'] or '-'}; medium: {d['medium']:g} ({d['effect_unit']}); "
                         f"n counts {d['n_unit']}, at least {d['min_n']}"
                         + (f", at most {d['max_n']}" if d["max_n"] is not None else "")
                         + f"; {len(d['scenarios'])} scenarios of {d['question_kind']}")
        rows.append((d["name"], "\n".join(lines)))
    click.echo(render_table(("family", "canonical R call, accepted alternatives, naive test, effect, n"), rows))


@main.command()
@click.argument("method")
@json_option("Print the scenarios as JSON.")
def scenarios(method, as_json):
    """List the scenarios of METHOD: id, domain, title, question, roles.

    Example:

        taskfactory scenarios welch_t
    """
    from .design.catalogue import load_scenarios
    from .registry import get_family
    from .tables import render_table

    get_family(method)
    scens = load_scenarios(method)
    if as_json:
        click.echo(json.dumps([{"id": s.id, "domain": s.domain, "title": s.title, "question": s.question,
                                "roles": s.roles, "columns": [v.name for v in s.variables]} for s in scens], indent=1))
        return
    click.echo(render_table(("scenario", "domain", "title, question and roles"),
                            [(s.id, s.domain, f"{s.title}\n{s.question}\nroles: {json.dumps(s.roles)}") for s in scens]))


@main.command(name="import")
@click.argument("spec", type=click.Path(dir_okay=False))
@out_folder("Folder to write the corpus into (new or empty).")
@json_option("Print the corpus's counts as JSON.")
def import_(spec, out, as_json):
    """Make a corpus of real-data tasks from a SPEC of datasets, questions and methods.

    Each item of the SPEC (YAML, or JSONL of items; `taskfactory schema
    import` prints its JSON Schema) names a CSV file beside it, the question,
    the family whose canonical test answers it and the columns of its roles;
    each becomes one task per prompt style with an R-exact gold, in the
    corpus format `score`, `agent-eval`, `export`, `report`, `leakage` and
    `verify` read.

    Example:

        taskfactory import examples/real/spec.yaml -o real/
    """
    from .store.real import import_spec

    manifest = import_spec(spec, out)
    counts = manifest["counts"]
    if as_json:
        click.echo(json.dumps(counts, indent=1))
    else:
        click.echo(f"wrote {out}: {counts['tasks']} tasks from {counts['datasets']} datasets "
                   f"({', '.join(f'{s} {n}' for s, n in counts['by_split'].items())})")


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@out_folder("Folder to write the re-split corpus into (new or empty).")
@click.option("--by", type=click.Choice(RESPLIT_BY), default=RESPLIT_BY[0], show_default=True,
              help="Hold out whole scenarios (no wording on both sides) or whole datasets (their prompts together).")
@click.option("--test", "test_share", default=0.2, show_default=True, type=click.FloatRange(0, 1, min_open=True,
                                                                                            max_open=True),
              help="The share held out for the test split.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the choice.")
@json_option("Print the counts per split as JSON.")
def split(corpus, out, by, test_share, seed, as_json):
    """Split a CORPUS anew into train and test, writing a copy with the new split.

    --by scenario holds out whole scenarios, as a grid's split does (sibling
    families together, so no scenario's wording is on both sides); --by
    data_id holds out whole datasets, a dataset's prompt styles together.
    verify checks the copy against the rule its manifest keeps.

    Example:

        taskfactory split corpus/ -o resplit/ --by scenario --test 0.25 --seed 3
    """
    from .store.resplit import resplit

    manifest = resplit(corpus, out, by, test_share, seed)
    by_split = manifest["counts"]["by_split"]
    if as_json:
        click.echo(json.dumps({"out": str(out), "by_split": by_split}, indent=1))
    else:
        click.echo(f"wrote {out}: " + ", ".join(f"{s} {n}" for s, n in by_split.items()) + " tasks")


@main.command()
@click.argument("kind", type=click.Choice(SCHEMA_KINDS))
@out_file("Write the schema to this file instead (new, or a schema written before).", required=False)
@click.option("--overwrite", is_flag=True, help="Let -o replace a file that is not a schema this command wrote.")
def schema(kind, out, overwrite):
    """Print the JSON Schema of a grid, scenario or real-data spec file, for editors.

    A YAML file whose first line is `# yaml-language-server:
    $schema=grid.schema.json` is then checked as it is typed (VS Code's YAML
    extension).

    Example:

        taskfactory schema grid -o grid.schema.json
    """
    from .use.schema import schema_text, write_schema

    if out:
        write_schema(kind, out, overwrite)
    else:
        click.echo(schema_text(kind), nl=False)


@main.command()
@click.argument("corpus", type=click.Path(file_okay=False))
@out_folder()
@click.option("--predictions", "predictions", multiple=True, type=click.Path(dir_okay=False),
              help="Answers to score in the Agents section: JSONL as `taskfactory score` reads it. Repeat for "
                   "several; each is labelled by its file name.")
@from_option()
@json_option("Print the summary (every number the page shows) as JSON.")
def report(corpus, out, predictions, fmt, as_json):
    """Write an HTML report of a CORPUS: composition, calibration, traps, perturbations, floors, agents.

    Writes OUT/index.html (one self-contained page, the plots embedded), the
    PNG plots beside it and OUT/summary.json with every number the page shows.
    The Agents section scores each --predictions file and the corpus's own
    gold and naive answers. Needs matplotlib (pip install 'taskfactory[report]').

    Example:

        taskfactory report corpus/ -o report/ --predictions answers.jsonl
    """
    from .use.report import report as write_report

    summary = write_report(corpus, out, predictions, fmt)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
        return
    click.echo(f"wrote {Path(out) / 'index.html'} ({summary['corpus']['tasks']} tasks) and "
               f"{Path(out) / 'summary.json'}")


if __name__ == "__main__":
    main()
