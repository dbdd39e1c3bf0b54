"""The paper's matrix on Ray: ``bench --engine ray`` against one process (``--engine local``) at the same runs at
once, every role behind a fake OpenAI-compatible server with a fixed latency. Prints figures (not a test).

    python benchmarks/ray_matrix.py [--tasks 40] [--turns 3] [--latency 0.5] [--runs-at-once 24]

The matrix is 8 attackers (``openai-api/raybench/a1`` … ``a8``) × ``--tasks`` tasks × 3 seeds (the paper's 960 runs
with ``--tasks 40``); the Judge and World Manager are one model on the same server (7 calls a turn), every run plays
``--turns`` turns (the fake World Manager changes nothing, so no run ends early). Both engines get the same
budget: ``--runs-at-once`` runs and three calls per run in flight (one process: ``--max-samples``; Ray: a providers
file with the same key budget, so ``runs // 3`` shards of 3 seeds at once, on a local cluster with one CPU per
shard). Printed:
  * wall time of each engine and the speed-up of Ray over one process;
  * per-shard overhead: a shard's wall time (Ray task start to its process's exit) minus its eval's own time
    (the log's start to end), i.e. process start, imports, eval_set set-up and read-back;
  * whether both engines logged the same turn records for every (attacker, task, seed);
  * the full matrix's projected Ray wall time here, from the measured mean shard time.

Measured here (2 cores, shared, load average ~2; --tasks 10 --turns 3 --latency 1.0: 240 runs, 80 shards, ~10 min):
  one process 159 s, Ray 428 s (8 shards at once): speed-up 0.37x; per-shard overhead 18.0 s mean (19.0 s median)
  of 41.2 s per shard; peak calls in flight 24 of 72; records identical; the 960-run matrix projected at ~27 min.
  Each shard is a new process importing Inspect (~3.5 s of CPU); 8 at once on 2 cores make that 18 s. More in
  docs/distributed.md (Speed).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from virtualcrime.cli.main import main as cli
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import load_tasks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import FakeServer  # the shared fake server in a subprocess

SERVICE = "raybench"
ATTACKERS = [f"openai-api/{SERVICE}/a{i}" for i in range(1, 9)]
REFEREE = f"openai-api/{SERVICE}/referee"
SEEDS = 3
PAPER_SHARDS = 8 * 40


def records(root: Path) -> dict[tuple[str, str, int], list[str]]:
    runs = {}
    for path in sorted(root.rglob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            turns, result = records_from_store(dict(sample.store))
            if result is not None:
                runs[(log.eval.model, str(sample.id), sample.epoch)] = [t.model_dump_json() for t in turns]
    return runs


def eval_seconds(folder: Path) -> float:
    """The eval's own time in a shard's folder: its log's start to its end."""
    from datetime import datetime

    spans = []
    for path in folder.glob("*.eval"):
        stats = read_eval_log(str(path), header_only=True).stats
        spans.append(
            (datetime.fromisoformat(stats.completed_at) - datetime.fromisoformat(stats.started_at)).total_seconds()
        )
    return sum(spans)


def bench(root: Path, tasks: list[str], args: argparse.Namespace, *extra: str) -> float:
    command = ["bench", "--attackers", ",".join(ATTACKERS), "--judge", REFEREE, "--seeds", str(SEEDS),
               "--max-turns", str(args.turns), "--stall-turns", str(args.turns + 1), "--log-dir", str(root),
               "--progress-every", "600", *extra]  # fmt: skip
    for task in tasks:
        command += ["--task", task]
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = cli(command)
    if code != 0:
        raise SystemExit(f"bench {' '.join(extra)} failed ({code}): {out.getvalue()[-3000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40, help="tasks of the 40 (default all: 960 runs)")
    parser.add_argument("--turns", type=int, default=3, help="turns per run (default 3)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call (default 0.5)")
    parser.add_argument("--runs-at-once", type=int, default=24, help="runs in flight, both engines (default 24)")
    args = parser.parse_args()
    every = sorted(load_tasks())
    tasks = every[:: max(1, len(every) // args.tasks)][: args.tasks]
    server = FakeServer()
    os.environ[f"{SERVICE.upper()}_API_KEY"] = "not-needed"
    os.environ[f"{SERVICE.upper()}_BASE_URL"] = f"{server.base}/v1"
    runs, at_once = len(ATTACKERS) * len(tasks) * SEEDS, args.runs_at_once
    calls = 3 * at_once  # one call per role per run in flight
    folder = Path(tempfile.mkdtemp(prefix="ray-matrix-"))
    try:
        server.reset(args.latency)
        local = bench(folder / "local", tasks, args, "--max-samples", str(at_once), "--attacker-connections",
                      str(at_once), "--judge-connections", str(at_once), "--world-manager-connections",
                      str(at_once))  # fmt: skip
        import ray

        shards_at_once = max(1, at_once // SEEDS)
        ray.init(num_cpus=shards_at_once, include_dashboard=False, log_to_driver=False)
        providers = folder / "providers.yaml"
        providers.write_text(f"keys:\n  - name: {SERVICE}\n    models: ['openai-api/{SERVICE}/']\n"
                             f"    runs: {at_once}\n    connections: {calls}\n")  # fmt: skip
        server.reset(args.latency)
        distributed = bench(folder / "ray", tasks, args, "--engine", "ray", "--providers", str(providers))
        peak = server.stats()["roles"]["all"]["peak"]
        status = json.loads((folder / "ray" / ".virtualcrime" / "matrix-status.json").read_text())["shards"]
        walls = [s["seconds"] for s in status.values()]
        overheads = [s["seconds"] - eval_seconds(Path(s["folder"])) for s in status.values()]
        same = records(folder / "local") == records(folder / "ray")
        ray.shutdown()
    finally:
        server.close()
    mean_shard = statistics.mean(walls)
    result: dict[str, Any] = {
        "runs": runs, "shards": len(status), "turns": args.turns, "latency": args.latency, "runs_at_once": at_once,
        "shards_at_once": shards_at_once, "local_seconds": round(local, 1), "ray_seconds": round(distributed, 1),
        "speedup": round(local / distributed, 2), "shard_seconds_mean": round(mean_shard, 2),
        "shard_overhead_mean": round(statistics.mean(overheads), 2),
        "shard_overhead_median": round(statistics.median(overheads), 2), "peak_calls_in_flight": peak,
        "records_identical": same, "paper_matrix_projection_minutes": round(
            PAPER_SHARDS / shards_at_once * mean_shard / 60, 1),
    }  # fmt: skip
    print(json.dumps(result))
    print(f"{runs} runs ({len(status)} shards) x {args.turns} turns at {args.latency} s per call, {at_once} runs at "
          f"once: one process {local:.0f} s, Ray {distributed:.0f} s ({shards_at_once} shards at once): speed-up "
          f"{local / distributed:.2f}x; per-shard overhead {statistics.mean(overheads):.1f} s mean "
          f"({statistics.median(overheads):.1f} s median) of {mean_shard:.1f} s per shard; peak calls in flight "
          f"{peak} of {calls}; records identical: {same}; the 960-run matrix here: "
          f"~{result['paper_matrix_projection_minutes']} min")  # fmt: skip
    subprocess.run(["rm", "-rf", str(folder)], check=False)


if __name__ == "__main__":
    main()
