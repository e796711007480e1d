#!/usr/bin/env python3
"""Benchmark the leakage check: a corpus of about 10,000 tasks against a
500-item benchmark, timed, with peak memory; the same benchmark against a
corpus a third the size (the same cells, one seed instead of three), to show
that memory does not grow with the corpus; and the paper corpus
(``grids/paper.yaml``) against a 2,000-item benchmark whose items name 50
CSV files, as real benchmarks do.

    python scripts/bench_leakage.py [--work /tmp/leakbench] [--jobs 2] [--no-paper] [--record FILE]

Each check is timed reading the corpus in ``--jobs`` processes, with the peak
RSS of the main process and of the largest worker; the Python heap's peak is
measured in a second run in one process (tracing allocations inflates that
run's RSS, so it is not read).

The first benchmark holds 480 look-alike items (statistical questions in the
corpus's vocabulary, each with its own random dataset) and 20 planted copies
(questions, paraphrased contexts, shuffled and renamed datasets, half
datasets). The 2,000-item one holds 1,920 look-alike questions, each naming
one of 40 random datasets, and 80 planted copies: prompts, questions and
contexts with a tenth or a fifth of their words replaced, and datasets copied
with tabs, semicolons and decimal commas, CR line endings, rounded, or with a
tenth of their rows dropped (10 files). The script reports how many of each
were flagged. ``--no-paper`` leaves the paper corpus out (its build takes
minutes); ``--record FILE`` writes the figures with the command, date and
machine for scripts/performance_doc.py.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import taskfactory as tf
from performance_doc import Recorder, add_record_option
from taskfactory.store.corpus import iter_records

BASE = {"seed": 77, "methods": "all", "effects": ["null", "borderline", "medium"], "prompt_styles": ["basic", "guided"],
        "perturbations": ["none", "missing"], "shard_rows": 1000,
        "exclude": [{"method": ["chi_square_independence", "two_proportion_z"], "n": [30]}]}
GRIDS = {"small": {**BASE, "name": "leak-small", "n": [30, 120, 300, 800], "seeds": 1},
         "large": {**BASE, "name": "leak-large", "n": [30, 120, 300, 800], "seeds": 3}}
SUBJECTS = ["blood pressure", "reaction time", "crop yield", "test score", "hourly wage", "tensile strength",
            "cholesterol", "sleep duration", "customer spend", "river flow", "body weight", "heart rate"]
GROUPS = ["the two groups", "treatment and control", "the three sites", "men and women", "the two schools"]
FORMS = ["Is there a significant difference in mean {s} between {g}?",
         "Does {s} differ between {g} at the 5% level?",
         "Is {s} associated with age in this sample?",
         "Test whether the median {s} is the same across {g}.",
         "Is the correlation between {s} and income different from zero?"]

CHILD = """
import json, resource, sys, time, tracemalloc
from joblib.externals.loky import get_reusable_executor
from taskfactory.audit.leakage import check_leakage
trace = sys.argv[3] == "trace"
if trace:
    tracemalloc.start()
t = time.perf_counter()
r = check_leakage(sys.argv[1], [sys.argv[2]], jobs=1 if trace else int(sys.argv[4]))
out = {"seconds": time.perf_counter() - t, "tasks": r.tasks, "flagged": sorted(it.id for it in r.flagged)}
if trace:
    out["python_heap_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
else:
    get_reusable_executor().shutdown(wait=True)   # the workers ended, so that their peak is counted
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["worker_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(out))
"""

def make_bench(corpus: Path, path: Path, seed: int = 0) -> None:
    rnd = random.Random(seed)
    items = []
    for k in range(480):
        q = rnd.choice(FORMS).format(s=rnd.choice(SUBJECTS), g=rnd.choice(GROUPS))
        rows = ["id,group,value,age"] + [f"{i},{rnd.choice('ab')},{rnd.gauss(50, 10):.2f},{rnd.randint(18, 80)}"
                                          for i in range(rnd.randint(20, 200))]
        items.append({"id": f"lookalike_{k}", "question": q, "data_csv": "\n".join(rows) + "\n"})
    recs = [r for r in iter_records(corpus, columns=["task_id", "question", "context", "data_csv"]) if r["data_csv"]]
    for k, rec in enumerate(rnd.sample(recs, 20)):
        kind = k % 4
        if kind == 0:
            items.append({"id": f"planted_question_{k}", "question": rec["question"], "context": rec["context"]})
        elif kind == 1:
            sentences = rec["context"].split(". ")
            rnd.shuffle(sentences)
            items.append({"id": f"planted_paraphrase_{k}", "question": rec["question"].replace("Does", "Do the data show")
                          + " " + ". ".join(sentences)})
        else:
            lines = rec["data_csv"].splitlines()
            body = lines[1:]
            rnd.shuffle(body)
            if kind == 3:
                body = body[: len(body) // 2]
            head = ",".join(f"c{j}" for j in range(len(lines[0].split(","))))
            items.append({"id": f"planted_data_{k}", "question": "Which test fits?",
                          "data_csv": "\n".join([head] + body) + "\n"})
    path.write_text("".join(json.dumps(it) + "\n" for it in items))


REPLACEMENTS = "apple river stone cloud market engine garden window silver planet quiet yellow".split()


def _paraphrase(text: str, share: float, rnd: random.Random) -> str:
    words = text.split()
    for k in rnd.sample(range(len(words)), round(share * len(words))):
        words[k] = rnd.choice(REPLACEMENTS)
    return " ".join(words)


def _copied_dataset(text: str, how: str, rnd: random.Random) -> str:
    lines = text.splitlines()
    head, body = lines[0], lines[1:]
    rnd.shuffle(body)
    if how == "tabs":
        return "\n".join(line.replace(",", "\t") for line in [head, *body]) + "\n"
    if how == "semicolons":
        cells = [[c.replace(".", ",") for c in line.split(",")] for line in [head, *body]]
        return "\n".join(";".join(row) for row in cells) + "\n"
    if how == "CR":
        return "\r".join([head, *body]) + "\r"
    body = body[: len(body) * 9 // 10]
    if how == "rounded":
        body = [",".join(f"{float(c):.1f}" if c.count(".") == 1 and c.replace(".", "").lstrip("-").isdigit() else c
                         for c in line.split(",")) for line in body]
    return "\n".join([head, *body]) + "\n"


def make_goal_bench(corpus: Path, folder: Path, seed: int = 0) -> Path:
    """The 2,000-item benchmark naming 50 CSV files (see the module), written into ``folder``."""
    rnd = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k in range(40):
        rows = ["id,group,value,age"] + [f"{i},{rnd.choice('ab')},{rnd.gauss(50, 10):.2f},{rnd.randint(18, 80)}"
                                          for i in range(rnd.randint(20, 300))]
        (folder / f"lookalike_{k}.csv").write_text("\n".join(rows) + "\n")
        files.append(f"lookalike_{k}.csv")
    items = [{"id": f"lookalike_{k}", "question": rnd.choice(FORMS).format(s=rnd.choice(SUBJECTS), g=rnd.choice(GROUPS)),
              "data_path": rnd.choice(files)} for k in range(1920)]
    recs = [r for r in iter_records(corpus, columns=["task_id", "prompt", "question", "context", "data_csv"])
            if r["data_csv"]]
    for k, rec in enumerate(rnd.sample(recs, 70)):
        part, share = ("prompt", "question", "context")[k % 3], (0.1, 0.2)[k % 2]
        items.append({"id": f"planted_{part}_{share}_{k}", "question": _paraphrase(rec[part], share, rnd)})
    for k, rec in enumerate(rnd.sample(recs, 10)):
        how = ("tabs", "semicolons", "CR", "rounded", "dropped")[k % 5]
        (folder / f"planted_{k}.csv").write_text(_copied_dataset(rec["data_csv"], how, rnd), newline="")
        items.append({"id": f"planted_data_{how}_{k}", "question": "Which test fits these data?",
                      "data_path": f"planted_{k}.csv"})
    path = folder / "bench.jsonl"
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    return path


def _run(corpus: Path, bench: Path, jobs: int) -> dict:
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, str(corpus), str(bench), mode, str(jobs)],
                                      check=True, capture_output=True, text=True).stdout) for mode in ("time", "trace")]
    return {**runs[0], "python_heap_peak_mb": runs[1]["python_heap_peak_mb"]}


def _line(name: str, res: dict, items: int, jobs: int) -> str:
    planted = [f for f in res["flagged"] if f.startswith("planted")]
    false = [f for f in res["flagged"] if f.startswith("lookalike")]
    return (f"{name:<6} corpus {res['tasks']:>6} tasks vs {items} items: {res['seconds']:.1f} s in {jobs} "
            f"process{'es' if jobs > 1 else ''}, peak RSS {res['peak_rss_mb']:.0f} MB (largest worker "
            f"{res['worker_peak_rss_mb']:.0f} MB); Python heap peak in one process "
            f"{res['python_heap_peak_mb']:.0f} MB; planted copies "
            f"flagged {len(planted)}, look-alikes flagged {len(false)}")


def figures(res: dict, bench: Path) -> dict:
    """One check's figures: its time, memory, and planted copies and look-alikes flagged of those in ``bench``."""
    ids = [json.loads(line)["id"] for line in bench.read_text().splitlines()]
    kept = ("tasks", "seconds", "peak_rss_mb", "worker_peak_rss_mb", "python_heap_peak_mb")
    return {**{k: res[k] for k in kept}, "items": len(ids),
            "planted": sum(i.startswith("planted") for i in ids),
            "planted_flagged": sum(f.startswith("planted") for f in res["flagged"]),
            "lookalikes": sum(i.startswith("lookalike") for i in ids),
            "lookalikes_flagged": sum(f.startswith("lookalike") for f in res["flagged"])}


def paper(work: Path, jobs: int) -> tuple[dict, dict]:
    """The paper corpus against the 2,000-item benchmark: the check's figures,
    and per kind of planted copy [flagged, planted]."""
    corpus = work / "paper"
    if not (corpus / "manifest.json").exists():
        tf.build(Path(__file__).resolve().parent.parent / "grids" / "paper.yaml", corpus, jobs=jobs, overwrite=True)
    bench = make_goal_bench(corpus, work / "bench-2000")
    res = _run(corpus, bench, jobs)
    print(_line("paper", res, 2000, jobs) + " (of 80 and 1,920)")
    planted = Counter(json.loads(line)["id"].rsplit("_", 1)[0] for line in bench.read_text().splitlines()
                      if line.startswith('{"id": "planted'))
    caught = Counter(f.rsplit("_", 1)[0] for f in res["flagged"] if f.startswith("planted"))
    kinds = {kind.removeprefix("planted_"): [caught[kind], n] for kind, n in sorted(planted.items())}
    print("  planted, flagged: " + ", ".join(f"{kind} {got}/{n}" for kind, (got, n) in kinds.items()))
    return figures(res, bench), kinds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/taskfactory-leakbench")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-paper", action="store_true", help="leave out the paper corpus (its build takes minutes)")
    add_record_option(ap)
    args = ap.parse_args(argv)
    run = Recorder(__file__, argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results, corpora = {}, {}
    for size in ("small", "large"):
        corpus = work / size
        if not (corpus / "manifest.json").exists():
            tf.build(GRIDS[size], corpus, jobs=args.jobs, overwrite=True)
        bench = work / f"bench-{size}.jsonl"
        make_bench(corpus, bench)
        results[size] = _run(corpus, bench, args.jobs)
        corpora[size] = figures(results[size], bench)
        print(_line(size, results[size], 500, args.jobs) + " (of 20 and 480)")
    ratio = results["large"]["tasks"] / results["small"]["tasks"]
    peak = {size: max(res["peak_rss_mb"], res["worker_peak_rss_mb"]) for size, res in results.items()}
    print(f"corpus {ratio:.1f}x larger: peak RSS x{peak['large'] / peak['small']:.2f}, "
          f"Python heap peak x{results['large']['python_heap_peak_mb'] / results['small']['python_heap_peak_mb']:.2f}")
    found = {"jobs": args.jobs, "corpora": corpora}
    if not args.no_paper:
        corpora["paper"], found["paper_kinds"] = paper(work, args.jobs)
    if args.record:
        run.write(args.record, found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
