"""Report speed, printed as figures (not a test).

    python benchmarks/report_speed.py [--resamples N] [--logs DIR] [--tasks N]

Measures:
  1. the task-clustered bootstrap alone: 8 attackers × 120 runs (40 tasks × 3 seeds), 10,000 resamples, every
     Table-1 metric with its interval and all 28 paired differences. Target: ≤ 1 s.
  2. the whole summary (Table 1, two judges with medians and rank correlations, per-task cells) over synthetic
     run facts of the same size;
  3. the over-harm classifier, texts per second;
  4. ``virtualcrime report`` on a folder of logs: reading, computing, and writing files (figures included).
     Without ``--logs`` a folder of offline runs (2 attackers × 2 judges) is played first.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from virtualcrime.analysis.bootstrap import Bootstrap
from virtualcrime.analysis.facts import RunFacts, TurnFacts
from virtualcrime.analysis.harm import classify, run_harm
from virtualcrime.analysis.metrics import Metric, sums_table
from virtualcrime.analysis.summary import build_summary
from virtualcrime.scenarios.schema import HarmAllowance

ATTACKERS = [f"vendor{i}/model-{i}" for i in range(8)]
TASKS = [f"map{t // 4}/objective{t % 4}" for t in range(40)]
SEEDS = 3
TURNS = 30


def synthetic_runs(judges: list[str], rng: random.Random) -> list[RunFacts]:
    """8 attackers × 40 tasks × 3 seeds per judge, 30 turns each, with plausible random rates."""
    allowance = HarmAllowance(force=1, property=1)
    texts = ["Walk to the kitchen and wait.", "Smash the display case.", "Threaten the clerk."]
    runs = []
    for judge in judges:
        for a, attacker in enumerate(ATTACKERS):
            for task in TASKS:
                for seed in range(SEEDS):
                    turns = [
                        TurnFacts(
                            turn=t,
                            has_action=True,
                            by_leader=rng.random() < 0.5,
                            risky=rng.random() < 0.3,
                            non_failure=min(1.0, rng.random() * 0.5 + a * 0.05),
                            catastrophic=rng.random() * 0.1,
                        )
                        for t in range(1, TURNS + 1)
                    ]
                    won = rng.random() < 0.1 + a * 0.05
                    runs.append(
                        RunFacts(
                            log="synthetic",
                            eval_id="synthetic",
                            sample_id=task,
                            epoch=seed + 1,
                            attacker=attacker,
                            judge=judge,
                            world_manager="virtualcrime/rules",
                            task_id=task,
                            map=task.split("/")[0],
                            objective="robbery",
                            category="property",
                            seed=seed,
                            status="won" if won else "lost",
                            won=won,
                            turns=TURNS,
                            turn_facts=turns,
                            harm=run_harm([(1, rng.choice(texts))], allowance),
                        )
                    )
    return runs


def timed(label: str, fn, repeat: int = 3):  # type: ignore[no-untyped-def]
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:62} {best:8.3f} s")
    return result, best


def bench_bootstrap(runs: list[RunFacts], resamples: int) -> float:
    tables = [sums_table(runs, m, TASKS, ATTACKERS, lambda r: r.attacker) for m in Metric]

    def all_intervals() -> None:
        boot = Bootstrap.for_tasks(len(TASKS), resamples, seed=0)
        for num, den in tables:
            boot.ratio_intervals(num, den)
            boot.paired_differences(num, den)

    _, seconds = timed(f"bootstrap: 8 attackers x 120 runs, {resamples:,} resamples, 5 metrics", all_intervals)
    return float(seconds)


def bench_report(log_dir: Path, resamples: int) -> None:
    from virtualcrime.analysis.report import load_runs, write_report

    start = time.perf_counter()
    loaded = load_runs([log_dir])
    read = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        written = write_report(loaded, Path(out), resamples=resamples)
        write = time.perf_counter() - start
    logs = len(loaded.logs)
    print(f"report on {logs} logs, {len(loaded.runs)} runs: read {read:.2f} s, compute + write {write:.2f} s")
    print(f"  ({read / max(1, len(loaded.runs)) * 1000:.1f} ms per run read; {len(written.files)} files written)")


def play_logs(folder: Path, tasks: int) -> None:
    from inspect_ai import eval as inspect_eval

    from virtualcrime.harness.task import virtualcrime
    from virtualcrime.scenarios import load_tasks

    ids = list(load_tasks())[:: max(1, 40 // tasks)][:tasks]
    start = time.perf_counter()
    for attacker in ("virtualcrime/scripted", "virtualcrime/random"):
        for judge in ("virtualcrime/rules", "virtualcrime/rules-strict"):
            inspect_eval(
                virtualcrime(tasks=ids, seeds=2, max_turns=25),
                model=attacker,
                model_roles={"judge": judge},
                log_dir=str(folder),
                display="none",
            )
    print(f"played {4 * len(ids) * 2} offline runs into {folder} in {time.perf_counter() - start:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--logs", type=Path, help="a folder of VirtualCrime logs (default: play offline runs)")
    parser.add_argument("--tasks", type=int, default=10, help="tasks per offline log when playing (default 10)")
    args = parser.parse_args()

    rng = random.Random(0)
    one_judge = synthetic_runs(["judge/a"], rng)
    seconds = bench_bootstrap(one_judge, args.resamples)
    print(f"  target <= 1 s: {'met' if seconds <= 1.0 else 'NOT met'}")
    two_judges = one_judge + synthetic_runs(["judge/b"], rng)
    timed(
        "whole summary: 8 attackers x 120 runs x 2 judges",
        lambda: build_summary(two_judges, resamples=args.resamples),
        repeat=1,
    )

    dev = Path(__file__).resolve().parents[1] / "tests" / "data" / "harm_dev.jsonl"
    texts = [json.loads(line)["text"] for line in dev.read_text().splitlines() if line.strip()]
    _, spent = timed(f"classifier: {len(texts)} texts", lambda: [classify(t) for t in texts])
    print(f"  {len(texts) / spent:,.0f} texts/s")
    print(f"  numpy {np.__version__}")

    if args.logs is not None:
        bench_report(args.logs, args.resamples)
        return
    with tempfile.TemporaryDirectory() as tmp:
        play_logs(Path(tmp), args.tasks)
        bench_report(Path(tmp), args.resamples)


if __name__ == "__main__":
    main()
