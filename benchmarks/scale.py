"""Concurrency and projected wall time of a full matrix, printed as figures (not a test).

    python benchmarks/scale.py [--latency 0.2] [--turns 3] [--tasks 40]

Every role call first waits ``--latency`` seconds (the ``latency`` task option: a provider round trip without a
provider), then the offline roles answer. The same 40 tasks × 1 seed run once with 40 runs at a time and once
serially, through Inspect, after a one-run warm-up (imports and registries load once per process). Printed:
  * the speed-up of the concurrent run over the serial one (target ≥ 32×, ideal 40×);
  * the harness overhead per role call: serial wall time minus the sleeping, divided by the calls;
  * the projected wall time of the paper's matrix (8 attackers × 40 tasks × 3 seeds = 960 runs, up to 60 turns,
    7 calls a turn) at 64 runs at a time and 3 s per call.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time

from inspect_ai import eval as inspect_eval

from virtualcrime.harness.task import virtualcrime
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import load_tasks

CALLS_PER_FULL_TURN = 7  # plan, act, judge, four World Manager stages


def play(task_ids: list[str], turns: int, latency: float, at_once: int) -> tuple[float, int]:
    """Wall seconds and role calls of one pass over the tasks with ``at_once`` runs in flight."""
    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        [log] = inspect_eval(
            virtualcrime(tasks=task_ids, seeds=1, max_turns=turns, latency=latency),
            model="virtualcrime/scripted",
            max_samples=at_once,
            log_dir=log_dir,
            display="none",
        )
        wall = time.perf_counter() - start
        calls = 0
        for sample in log.samples or []:  # read while the log file still exists
            records, _ = records_from_store(dict(sample.store))
            calls += sum(2 + int(r.judge_called) + len(r.stages) for r in records)
    return wall, calls


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per role call (default 0.2)")
    parser.add_argument("--turns", type=int, default=3, help="turns per run (default 3)")
    parser.add_argument("--tasks", type=int, default=40, help="tasks (default all 40)")
    args = parser.parse_args()
    task_ids = sorted(load_tasks())[: args.tasks]
    n = len(task_ids)

    play(task_ids[:1], 1, 0.0, at_once=1)  # warm-up: imports and registries load once per process, not per eval
    concurrent_wall, calls = play(task_ids, args.turns, args.latency, at_once=n)
    serial_wall, serial_calls = play(task_ids, args.turns, args.latency, at_once=1)
    assert calls == serial_calls, "the two passes played different runs"
    speedup = serial_wall / concurrent_wall
    overhead = (serial_wall - serial_calls * args.latency) / serial_calls
    per_run_calls = calls / n
    print(f"{n} runs x {args.turns} turns, {calls} role calls, {args.latency * 1000:.0f} ms per call")
    print(f"  serial:        {serial_wall:7.2f} s   (sleeping alone: {serial_calls * args.latency:.2f} s)")
    print(f"  {n} at once:   {concurrent_wall:7.2f} s   (ideal: {per_run_calls * args.latency:.2f} s)")
    print(f"  speed-up:      {speedup:7.1f}x  (target >= {0.8 * n:.0f}x, ideal {n}x): "
          f"{'met' if speedup >= 0.8 * n else 'NOT met'}")  # fmt: skip
    print(f"  overhead:      {overhead * 1000:7.2f} ms per role call (harness + Inspect, serial pass)")

    runs, parallel, call_seconds = 960, 64, 3.0
    waves = math.ceil(runs / parallel)
    for label, turns in (("every run to 60 turns", 60), ("runs of 30 turns on average", 30)):
        per_run = turns * CALLS_PER_FULL_TURN * (call_seconds + overhead)
        print(f"  projected 960-run matrix, {parallel} at once, {call_seconds:.0f} s per call, {label}: "
              f"{hours(waves * per_run)} ({waves} waves of {per_run / 60:.0f} min)")  # fmt: skip


if __name__ == "__main__":
    main()
