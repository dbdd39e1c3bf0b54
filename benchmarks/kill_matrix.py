"""Kill ``virtualcrime bench`` with SIGKILL at random moments until the matrix finishes, then check nothing was lost
or paid twice. Prints figures (not a test; the suite runs one kill in tests/test_bench.py).

    python benchmarks/kill_matrix.py [--kills 15] [--seed 0] [--judge offline|server|both]

Each scenario plays 2 attackers (scripted, random) × 3 restaurant tasks × 2 seeds with the rules World Manager and
either the rules Judge ("offline") or a Judge behind a local fake OpenAI-compatible server on 127.0.0.1 answering
deterministic verdicts with a little latency ("server"). Kills come at random delays, right after a checkpoint line
is written, and right after a log file is written (finalisation). After the last, uninterrupted invocation it
checks: every (attacker, task, seed) run is logged exactly once, with records identical to an uninterrupted run of
the same matrix; no run lost records; the Judge calls paid (the server's request count) minus the calls the kept
records account for is at most the turns that were in flight at the kills; and ``replay --verify`` passes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from virtualcrime.runs.store import records_from_store

sys.path.insert(0, str(Path(__file__).parent))
from _fake_openai import verdict_for  # the shared fake server's deterministic verdicts

BIN = Path(sys.executable).parent
TASKS = ["restaurant/robbery", "restaurant/arson", "restaurant/kidnapping"]
ATTACKERS = "virtualcrime/scripted,virtualcrime/random"


class FakeJudge(BaseHTTPRequestHandler):
    requests = 0
    lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with FakeJudge.lock:
            FakeJudge.requests += 1
        time.sleep(0.05)
        text = body["messages"][-1]["content"]
        if isinstance(text, list):
            text = " ".join(part.get("text", "") for part in text)
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": json.dumps(verdict_for(text))}}],
                 "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": 60,
                           "total_tokens": len(text) // 4 + 60}}  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def command(log_dir: Path, judge: str) -> list[str]:
    args = [str(BIN / "virtualcrime"), "bench", "--attackers", ATTACKERS, "--judge", judge, "--world-manager",
            "virtualcrime/rules", "--seeds", "2", "--max-turns", "12", "--log-dir", str(log_dir), "--max-samples",
            "3", "--latency", "0.1", "--progress-every", "60", "--no-structured-output"]  # fmt: skip
    for task in TASKS:
        args += ["--task", task]
    return args


def logged(log_dir: Path) -> tuple[dict[tuple[str, str, int], list[str]], int, int]:
    """(attacker, task, seed) → records as JSON; how many runs appear more than once; Judge attempts recorded."""
    runs: dict[tuple[str, str, int], list[str]] = {}
    duplicates = attempts = 0
    newest: dict[tuple[str, str, int], float] = {}
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            turns, result = records_from_store(dict(sample.store))
            if result is None:
                continue
            key = (log.eval.model, str(sample.id), result.seed)
            if key in runs:
                duplicates += 1
                if path.stat().st_mtime < newest[key]:
                    continue
            newest[key] = path.stat().st_mtime
            runs[key] = [t.model_dump_json() for t in turns]
    for records in runs.values():
        for line in records:
            attempts += sum(c["attempts"] for c in json.loads(line)["model_calls"] if c["role"] == "judge")
    return runs, duplicates, attempts


def _files(folder: Path, pattern: str) -> list[tuple[Path, os.stat_result]]:
    """The files matching now, with their stat (a file the bench renames or removes meanwhile is left out)."""
    found = []
    for path in folder.glob(pattern):
        try:
            found.append((path, path.stat()))
        except FileNotFoundError:
            continue
    return found


def checkpoint_bytes(log_dir: Path) -> int:
    """The checkpoints' total size: it grows with every checkpoint line written."""
    return sum(stat.st_size for _, stat in _files(log_dir / ".virtualcrime" / "checkpoints", "*.jsonl"))


def log_mtimes(log_dir: Path) -> dict[str, float]:
    return {path.name: stat.st_mtime for path, stat in _files(log_dir, "*.eval")}


def kill_until_done(log_dir: Path, judge: str, kills: int, rng: random.Random, env: dict[str, str]) -> int:
    """SIGKILL the bench ``kills`` times at varied moments; returns how many kills landed on a running process."""
    landed = 0
    for index in range(kills):
        process = subprocess.Popen(command(log_dir, judge), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True, env=env)  # fmt: skip
        mode = ("delay", "checkpoint", "log")[index % 3]
        deadline = time.monotonic() + rng.uniform(1.0, 8.0)
        written, mtimes = checkpoint_bytes(log_dir), log_mtimes(log_dir)
        while process.poll() is None and time.monotonic() < deadline + 20:
            if mode == "delay" and time.monotonic() >= deadline:
                break
            if mode == "checkpoint" and checkpoint_bytes(log_dir) > written and time.monotonic() >= deadline - 6:
                break
            if mode == "log" and log_mtimes(log_dir) != mtimes and time.monotonic() >= deadline - 6:
                break
            time.sleep(0.005)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            landed += 1
        process.wait()
    final = subprocess.run(command(log_dir, judge), capture_output=True, text=True, env=env, timeout=1800)
    if final.returncode != 0:
        raise SystemExit(f"the last invocation failed: {final.stdout[-2000:]} {final.stderr[-2000:]}")
    return landed


def scenario(name: str, judge: str, kills: int, seed: int, env: dict[str, str]) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"kill-{name}-"))
    FakeJudge.requests = 0
    subprocess.run(command(root / "reference", judge), check=True, capture_output=True, env=env, timeout=1800)
    reference, _, reference_attempts = logged(root / "reference")
    reference_requests = FakeJudge.requests
    FakeJudge.requests = 0
    started = time.monotonic()
    landed = kill_until_done(root / "killed", judge, kills, random.Random(seed), env)
    runs, duplicates, attempts = logged(root / "killed")
    lost = sum(1 for key in reference if key not in runs) + sum(1 for k in runs if runs[k] != reference.get(k))
    verify = [subprocess.run([str(BIN / "virtualcrime"), "replay", str(p), "--verify"], capture_output=True,
                             env=env).returncode for p in sorted((root / "killed").glob("*.eval"))]  # fmt: skip
    return {"scenario": name, "kills": landed, "runs": len(runs), "expected_runs": len(reference),
            "runs_differing_or_missing": lost, "duplicates": duplicates, "verify_failures": sum(v != 0 for v in verify),
            "judge_requests": FakeJudge.requests if judge != "virtualcrime/rules" else None,
            "judge_attempts_kept": attempts, "reference_attempts": reference_attempts,
            "reference_requests": reference_requests if judge != "virtualcrime/rules" else None,
            "seconds": round(time.monotonic() - started, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", choices=["offline", "server", "both"], default="both")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "LOCAL_API_KEY": "not-needed",
           "LOCAL_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1"}  # fmt: skip
    results = []
    if args.judge in ("offline", "both"):
        results.append(scenario("offline", "virtualcrime/rules", args.kills, args.seed, env))
    if args.judge in ("server", "both"):
        results.append(scenario("server", "openai-api/local/fake", args.kills, args.seed + 1, env))
    server.shutdown()
    for result in results:
        print(json.dumps(result))
        repaid = None if result["judge_requests"] is None else result["judge_requests"] - result["judge_attempts_kept"]
        print(f"{result['scenario']}: {result['kills']} kills, {result['runs']}/{result['expected_runs']} runs, "
              f"{result['runs_differing_or_missing']} lost or different, {result['duplicates']} logged twice "
              f"(reports keep the newest), {result['verify_failures']} failing replay --verify, "
              f"Judge calls paid beyond the kept records: {repaid}, {result['seconds']} s")  # fmt: skip


if __name__ == "__main__":
    main()
