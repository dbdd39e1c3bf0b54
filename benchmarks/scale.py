"""Concurrency through Inspect's model layer and the projected wall time of the paper's matrix, printed as figures
(not a test).

    python benchmarks/scale.py [--quick] [--latencies 0.2,1] [--n 8,40,64] [--turns 8] [--runs-from LOG_DIR]

All three roles are language models (``openai-api/scalefake/attacker`` and one ``openai-api/scalefake/referee``
for the Judge and the World Manager, as in the paper), built the way ``virtualcrime bench`` builds them, with
``timeout`` and ``max_retries`` on every call, and served by ``benchmarks/_fake_openai.py``: an OpenAI-compatible
server on 127.0.0.1 in a subprocess that answers every call with a valid reply after a fixed latency and counts the
requests in flight per role. So every call goes through ``model.generate``, Inspect's connection pool and retry
layer, the call records and HTTP, as a user's matrix does (nothing leaves 127.0.0.1). Every run plays ``--turns``
full turns (7 calls: plan, act, judge, four World Manager stages; the fake World Manager changes nothing, so no run
ends early), with per-run checkpoints as ``bench`` writes them. Eight turns by default: users' runs average 19
(below), and runs of 3 turns (the earlier default) put the eval's own start and finish on 21 calls a run, which
alone cost about two points of speed-up at N=40 (34.4-35.2x at 3 turns against 36.4-37.1x at 8, the same commit).

For each latency and each N, the N runs (tasks × seeds) play with N at a time; a serial pass (one at a time) of a
few runs gives the serial time of N runs (Inspect's per-sample time × N, plus the eval's start-up once). Printed:
  * the speed-up of N at once over serial (ideal N; issue 20's goal: >= 36x at N=40 with 1 s latency);
  * harness CPU per call: the harness process's CPU time over the pass (the server's is not in it) / calls
    (goal <= 5 ms), and the server's CPU for comparison;
  * the model layer alone (``_model_layer.py``): at the largest latency and each N, an eval that makes the same
    seven calls a turn with the same prompts, schemas and ``generate`` but no engine; its CPU per call is what
    Inspect's model layer, the provider SDK and HTTP cost by themselves, and a run's CPU per call less it is the
    harness's own share (the two passes run a minute apart, so on this VM the difference is within its noise);
  * requests in flight per role, peak and time-weighted mean, as the server saw them;
  * the projected wall time of the paper's matrix (8 attackers x 40 tasks x 3 seeds = 960 runs, 64 at a time,
    3 s per call), from a measured mean run length: the turns and calls per run of ``--runs-from`` logs (a pilot
    of a real matrix), else of the offline attackers (``virtualcrime/scripted`` and ``virtualcrime/random`` with
    the rules referees) over the 40 tasks x 3 seeds at the default turn limits, which this benchmark plays first.

Memory: two fresh processes play 8 and 40 runs at once (20 turns each, 0.2 s a call) and report their own peak
resident memory; the difference over the 32 extra runs is the memory per run in flight (issue 20's goal: <= 5 MiB).

Measured here (default invocation, about 12 min; 2 cores; this VM's CPU figures vary by about +-30 % between
sessions and within one: the same commit measured 7.9-10.2 ms per call one day and 10.6-18.0 ms another):
  at 3 turns, before the current default: latency 1 s: N=8 7.7-7.8x, N=40 31.0-35.2x, N=64 41.0-47.1x; harness CPU
  7.9-18.7 ms per call; 7.5 MiB per run in flight
  now (8 turns; the Judge's and stages' shared text rendered once a turn; the harness keeps no records of its own
  while a run plays, the store holds them): latency 0.2 s: N=8 7.2x, N=40 21.1x, N=64 27.6x (the harness is
  CPU-bound: 200 calls a second at N=40); latency 1 s: N=8 7.9x, N=40 37.1x, N=64 53.0x; harness CPU 7.3-13.0 ms per
  call, of which the model layer alone 7.8-8.4 ms
  in flight at 1 s, N=40, peak/mean: attacker 40/10.2, judge 29/5.1, world manager 40/20.4, all 40/35.7 (of 40)
  memory: 233 MiB with 8 runs at once, 447 MiB with 40: 6.7-6.8 MiB per run in flight (was 7.5)
  run length (offline attackers, 240 runs): 19.0 turns, 133 calls; projection 1.8 h (at most 2.0 h)
  Goals of issue 20: 36x at N=40, 1 s (37.1x: met); <= 5 ms CPU per call (not met: Inspect's model layer, the SDK
  and HTTP alone take 7.8-8.7 ms a call here; Inspect's realtime event buffer is 10-15 % of it, and turning it off,
  which would lose the live view of running samples, did not change the speed-up: 34.5x against 34.4-35.2x at 3
  turns); <= 5 MiB per run in flight (not met: of the 198 KiB a run's Python heap grows by per turn (tracemalloc),
  Inspect's own event records are 120 KiB, the prompt texts its events keep 46 KiB and the store's JSON lines 9 KiB).
  Tried since for memory, each over the same 8- and 40-run passes (20 turns): Inspect 0.3.285's bounded transcript
  (INSPECT_TRANSCRIPT_BOUNDED=1, which keeps the last 100 events in memory and the rest in the realtime buffer):
  246 / 498 MiB, 7.9 MiB per run, worse; glibc's MALLOC_ARENA_MAX=2 (and a 128 KiB trim threshold): 6.6-6.7 MiB
  (6.5 without, the same session); every system message held once per run (interned): 6.7 MiB. None is kept.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log_sample_summaries

from _model_layer import calls_only_task, turn_calls
from virtualcrime import defaults
from virtualcrime.harness.roles import eval_models
from virtualcrime.harness.task import virtualcrime
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import load_tasks

HERE = Path(__file__).resolve().parent
SERVICE = "scalefake"  # openai-api/<service>/<model> reads <SERVICE>_API_KEY and <SERVICE>_BASE_URL
ATTACKER, REFEREE = f"openai-api/{SERVICE}/attacker", f"openai-api/{SERVICE}/referee"
ROLES = ("attacker", "judge", "world_manager")
CALL_TIMEOUT, MAX_RETRIES = 30, 2
MATRIX_RUNS, MATRIX_AT_ONCE, MATRIX_CALL_SECONDS = 960, 64, 3.0
# The two fresh-process passes whose peak memories give the memory per run in flight: runs at once, and turns and
# latency per run (memory grows with the turns a run has played, not with the latency).
MEMORY_N, MEMORY_TURNS, MEMORY_LATENCY = (8, 40), 20, 0.2
LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy


class FakeServer:
    """``_fake_openai.py`` in a subprocess (its CPU stays out of the harness process's)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, str(HERE / "_fake_openai.py"), "--latency", "0"],
                                        stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise SystemExit(f"the fake server did not start: {line!r}")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"

    def reset(self, latency: float) -> None:
        LOCAL.open(urllib.request.Request(f"{self.base}/reset?latency={latency}", data=b"", method="POST"),
                   timeout=10).read()  # fmt: skip

    def stats(self) -> dict[str, Any]:
        return dict(json.loads(LOCAL.open(f"{self.base}/stats", timeout=10).read()))

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Pass:
    runs: int
    at_once: int
    wall: float  # seconds, the whole eval
    cpu: float  # harness process CPU seconds over the eval
    calls: int
    turns: int
    sample_times: list[float]  # Inspect's total_time per run
    server: dict[str, Any]  # the server's counters over the eval
    server_cpu: float  # the server process's CPU seconds over the eval

    @property
    def startup(self) -> float:
        """The eval's own time outside its runs (one at a time only: runs do not overlap)."""
        return max(0.0, self.wall - sum(self.sample_times))


def runs_of(n: int, task_ids: list[str]) -> tuple[list[str], int]:
    """Tasks and seeds giving (at least) n runs: 64 = 32 tasks x 2 seeds."""
    seeds = math.ceil(n / len(task_ids))
    return task_ids[: math.ceil(n / seeds)], seeds


def play(server: FakeServer, task_ids: list[str], seeds: int, turns: int, latency: float, at_once: int,
         max_connections: int | None) -> Pass:  # fmt: skip
    """One eval of the tasks x seeds with ``at_once`` runs in flight, every role through the fake server."""
    attacker, model_roles = eval_models(ATTACKER, REFEREE, REFEREE)
    with tempfile.TemporaryDirectory() as folder:
        task = virtualcrime(tasks=task_ids, seeds=seeds, max_turns=turns, stall_turns=turns + 1,
                            timeout=CALL_TIMEOUT, max_retries=MAX_RETRIES,
                            checkpoint_dir=str(Path(folder) / "checkpoints"))  # fmt: skip
        server.reset(latency)
        server_cpu = server.stats()["cpu_seconds"]
        cpu, start = time.process_time(), time.perf_counter()
        [log] = inspect_eval(task, model=attacker, model_roles=model_roles, max_samples=at_once,
                             max_connections=max_connections, log_dir=folder, display="none")  # fmt: skip
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        counters = server.stats()
        calls, played, failed = count_calls(log)
    if log.status != "success" or failed:
        raise SystemExit(f"the eval did not play cleanly ({log.status}, {failed} failed calls): {log.error}")
    times = [s.total_time or 0.0 for s in log.samples or []]
    return Pass(len(times), at_once, wall, cpu, calls, played, times, counters, counters["cpu_seconds"] - server_cpu)


def model_layer(server: FakeServer, n: int, turns: int, latency: float, task_id: str) -> tuple[float, int]:
    """CPU seconds and calls of an eval making a run's seven calls a turn with no engine (``_model_layer.py``),
    ``n`` runs at once."""
    attacker, model_roles = eval_models(ATTACKER, REFEREE, REFEREE)
    task = calls_only_task(turn_calls(task_id), n, turns, CALL_TIMEOUT, MAX_RETRIES)
    with tempfile.TemporaryDirectory() as folder:
        server.reset(latency)
        cpu = time.process_time()
        [log] = inspect_eval(task, model=attacker, model_roles=model_roles, max_samples=n, log_dir=folder,
                             display="none")  # fmt: skip
        cpu = time.process_time() - cpu
        calls = int(server.stats()["roles"]["all"]["requests"])
    if log.status != "success":
        raise SystemExit(f"the model-layer eval failed ({log.status}): {log.error}")
    return cpu, calls


def peak_memory(n: int, turns: int, latency: float) -> float:
    """Peak resident memory (MiB) of a fresh process that plays n runs at once through a fake server of its own, as
    it reports itself (``VmHWM``: a parent's ``wait4`` would count the parent's size at the fork)."""
    command = [sys.executable, __file__, "--memory-child", str(n), "--turns", str(turns), "--latencies", str(latency)]
    found = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False)
    line = next((x for x in found.stdout.splitlines() if x.startswith("PEAK ")), None)
    if found.returncode or line is None:
        raise SystemExit(f"the memory pass failed ({found.returncode}): {' '.join(command)}")
    return float(line.split()[1])


def memory_child(n: int, turns: int, latency: float) -> None:
    """What ``peak_memory`` runs: n runs at once, in this process; prints ``PEAK <MiB>``."""
    os.environ.update({f"{SERVICE.upper()}_API_KEY": "dummy", "NO_PROXY": "127.0.0.1,localhost",
                       "no_proxy": "127.0.0.1,localhost"})  # fmt: skip
    server = FakeServer()
    os.environ[f"{SERVICE.upper()}_BASE_URL"] = f"{server.base}/v1"
    try:
        task_ids, seeds = runs_of(n, sorted(load_tasks()))
        play(server, task_ids, seeds, turns, latency, n, None)
    finally:
        server.close()
    status = Path("/proc/self/status").read_text()
    peak = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM:"))
    print(f"PEAK {peak / 1024:.1f}")


def count_calls(log: EvalLog) -> tuple[int, int, int]:
    """Role calls, turns, and calls that did not succeed, from the runs' records."""
    calls = turns = failed = 0
    for sample in log.samples or []:
        records, _ = records_from_store(dict(sample.store))
        turns += len(records)
        for record in records:
            calls += sum(c.attempts for c in record.model_calls)
            failed += sum(not c.ok for c in record.model_calls) + len(record.errors)
    return calls, turns, failed


def offline_run_length(seeds: int) -> tuple[float, float, int, str]:
    """Mean turns and mean role calls per run of the offline attackers at the default limits, and the longest run."""
    with tempfile.TemporaryDirectory() as folder:
        logs = inspect_eval(virtualcrime(seeds=seeds), model=["virtualcrime/scripted", "virtualcrime/random"],
                            max_samples=80, log_dir=folder, display="none")  # fmt: skip
        turns: list[int] = []
        calls: list[int] = []
        for log in logs:
            for sample in log.samples or []:
                records, result = records_from_store(dict(sample.store))
                turns.append(result.turns if result is not None else len(records))
                calls.append(sum(2 + int(r.judge_called) + len(r.stages) for r in records))
    source = (f"offline attackers (scripted, random) x {len(turns) // 2} runs each at max_turns "
              f"{defaults.MAX_TURNS}, stall_turns {defaults.STALL_TURNS}")  # fmt: skip
    return statistics.fmean(turns), statistics.fmean(calls), max(turns), source


def logged_run_length(folder: Path) -> tuple[float, float, int, str]:
    """Mean turns per run of the scored runs in the logs under ``folder``; calls per run at 7 per turn."""
    turns: list[int] = []
    for path in sorted(folder.rglob("*.eval")):
        for summary in read_eval_log_sample_summaries(str(path)):
            value = summary.scores["run_outcome"].value if summary.scores and "run_outcome" in summary.scores else None
            if isinstance(value, dict) and isinstance(value.get("turns"), int | float) and value["turns"]:
                turns.append(int(value["turns"]))
    if not turns:
        raise SystemExit(f"no scored runs in {folder}")
    mean = statistics.fmean(turns)
    return mean, mean * 7, max(turns), f"{len(turns)} logged runs in {folder}"


def in_flight(server: dict[str, Any]) -> str:
    roles = server["roles"]
    return "  ".join(f"{role} {roles[role]['peak']}/{roles[role]['mean']:.1f}" for role in (*ROLES, "all"))


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 8, 40; 2 turns; 1 serial run; 1 offline seed")
    parser.add_argument("--latencies", default=None, help="seconds per call, comma separated (default 0.2,1)")
    parser.add_argument("--n", default=None, help="runs at once, comma separated (default 8,40,64)")
    parser.add_argument("--turns", type=int, default=None, help="turns per run (default 8; --quick 2)")
    parser.add_argument("--serial-runs", type=int, default=None, help="runs of the serial pass (default 2)")
    parser.add_argument(
        "--max-connections",
        type=int,
        default=None,
        help="Inspect's max_connections per model (default: Inspect's own, as bench uses)",
    )
    parser.add_argument(
        "--runs-from",
        type=Path,
        default=None,
        help="take the mean run length from these logs (a pilot matrix) instead of offline runs",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the two fresh-process memory passes")
    parser.add_argument("--no-floor", action="store_true", help="skip the model-layer-alone passes")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    latencies = [float(x) for x in (args.latencies or "0.2,1").split(",")]
    if args.memory_child is not None:
        memory_child(args.memory_child, args.turns or 3, max(latencies))
        return
    ns = [int(x) for x in (args.n or ("8,40" if args.quick else "8,40,64")).split(",")]
    turns = args.turns or (2 if args.quick else 8)
    serial_runs = args.serial_runs or (1 if args.quick else 2)
    all_tasks = sorted(load_tasks())

    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    if args.runs_from is not None:
        mean_turns, mean_calls, longest, source = logged_run_length(args.runs_from)
    else:
        mean_turns, mean_calls, longest, source = offline_run_length(1 if args.quick else 3)
    print(f"run length: {mean_turns:.1f} turns, {mean_calls:.0f} role calls per run on average, longest "
          f"{longest} turns ({source})")  # fmt: skip

    os.environ.update({f"{SERVICE.upper()}_API_KEY": "dummy", f"{SERVICE.upper()}_BASE_URL": "",
                       "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})  # fmt: skip
    server = FakeServer()
    os.environ[f"{SERVICE.upper()}_BASE_URL"] = f"{server.base}/v1"
    results: dict[tuple[float, int], tuple[Pass, float]] = {}
    floors: dict[int, float] = {}
    try:
        play(server, all_tasks[:1], 1, 1, 0.0, 1, args.max_connections)  # warm-up: imports, registries, clients
        for latency in latencies:
            serial = play(server, all_tasks[:serial_runs], 1, turns, latency, 1, args.max_connections)
            per_run = statistics.fmean(serial.sample_times)
            calls_per_run = serial.calls / serial.runs
            print(f"\nlatency {latency * 1000:.0f} ms, {turns} turns, {calls_per_run:.0f} calls per run; serial "
                  f"({serial.runs} run{'s' * (serial.runs != 1)} one at a time): {per_run:.2f} s per run (sleeping "
                  f"alone "
                  f"{calls_per_run * latency:.2f} s), eval start-up {serial.startup:.2f} s, harness CPU "
                  f"{serial.cpu / serial.calls * 1000:.1f} ms per call")  # fmt: skip
            print(f"  {'N':>3} {'wall s':>7} {'serial s':>8} {'speed-up':>9} {'CPU ms/call':>11} "
                  f"{'server ms/call':>14}  in flight peak/mean: attacker judge world_manager all")  # fmt: skip
            for n in ns:
                task_ids, seeds = runs_of(n, all_tasks)
                result = play(server, task_ids, seeds, turns, latency, n, args.max_connections)
                serial_wall = serial.startup + result.runs * per_run
                speedup = serial_wall / result.wall
                results[(latency, n)] = (result, speedup)
                print(f"  {result.runs:>3} {result.wall:7.2f} {serial_wall:8.1f} {speedup:8.1f}x "
                      f"{result.cpu / result.calls * 1000:11.1f} {result.server_cpu / result.calls * 1000:14.1f}  "
                      f"{in_flight(result.server)}")  # fmt: skip
        if not args.no_floor:
            latency = max(latencies)
            print(f"\nthe model layer alone (the same 7 calls a turn, prompts and schemas, no engine), latency "
                  f"{latency:g} s:")  # fmt: skip
            for n in ns:
                cpu, calls = model_layer(server, n, turns, latency, all_tasks[0])
                own = results[(latency, n)][0]
                total = own.cpu / own.calls
                floors[n] = cpu / calls
                print(f"  N={n:<3} {cpu / calls * 1000:.1f} ms CPU per call; a VirtualCrime run's {total * 1000:.1f} ms"
                      f" less this: the harness's own {(total - cpu / calls) * 1000:.1f} ms")  # fmt: skip
    finally:
        server.close()

    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    if (1.0, 40) in results:
        speedup = results[(1.0, 40)][1]
        print(f"goal >= 36x at N=40, 1 s latency: {speedup:.1f}x, {'met' if speedup >= 36 else 'NOT met'}")
    if not args.no_memory:
        small, large = MEMORY_N
        low, high = (peak_memory(n, MEMORY_TURNS, MEMORY_LATENCY) for n in MEMORY_N)
        per_run = (high - low) / (large - small)
        verdict = "met" if per_run <= 5 else "NOT met"
        print(f"memory: peak {low:.0f} MiB with {small} runs at once, {high:.0f} MiB with {large}: {per_run:.1f} MiB "
              f"per run in flight ({MEMORY_TURNS} turns a run, fresh processes); goal <= 5 MiB: {verdict}")  # fmt: skip
    worst_cpu = max(r.cpu / r.calls for r, _ in results.values())
    floor = f"; the model layer alone takes {max(floors.values()) * 1000:.1f} ms of it" if floors else ""
    print(f"goal <= 5 ms harness CPU per call: worst {worst_cpu * 1000:.1f} ms, "
          f"{'met' if worst_cpu <= 0.005 else 'NOT met'}{floor}")  # fmt: skip

    # The projection: Inspect keeps MATRIX_AT_ONCE runs in flight (no waves), every call takes the provider's time
    # plus the harness's stretch measured at the largest N and latency, and one event loop carries the CPU.
    latency, n = max(latencies), max(ns)
    biggest, _ = results[(latency, n)]
    per_call_wall = statistics.fmean(biggest.sample_times) / (biggest.calls / biggest.runs)
    stretch = max(0.0, per_call_wall - latency)
    cpu_per_call = biggest.cpu / biggest.calls
    total_calls = MATRIX_RUNS * mean_calls
    provider_bound = total_calls * (MATRIX_CALL_SECONDS + stretch) / MATRIX_AT_ONCE
    tail = longest * 7 * (MATRIX_CALL_SECONDS + stretch)
    cpu_bound = total_calls * cpu_per_call
    load_share = MATRIX_AT_ONCE / (MATRIX_CALL_SECONDS + stretch) * cpu_per_call
    estimate = max(provider_bound, cpu_bound)
    print(f"projected {MATRIX_RUNS}-run matrix, {MATRIX_AT_ONCE} at once, {MATRIX_CALL_SECONDS:.0f} s per call, "
          f"{mean_turns:.1f} turns ({mean_calls:.0f} calls) per run as measured: {hours(estimate)} "
          f"(at most {hours(estimate + tail)} with the longest run, {longest} turns, starting last)")  # fmt: skip
    print(f"  = {total_calls:,.0f} calls x ({MATRIX_CALL_SECONDS:.0f} s + {stretch * 1000:.0f} ms harness stretch "
          f"per call, measured at N={n}, {latency:g} s) / {MATRIX_AT_ONCE}; the harness needs {load_share:.0%} of "
          f"one core for it ({cpu_per_call * 1000:.1f} ms CPU per call at N={n})")  # fmt: skip
    capped = MATRIX_RUNS * defaults.MAX_TURNS * 7 * (MATRIX_CALL_SECONDS + stretch) / MATRIX_AT_ONCE
    print(f"  (every run to the {defaults.MAX_TURNS}-turn cap, the old benchmark's upper case: {hours(capped)})")


if __name__ == "__main__":
    main()
