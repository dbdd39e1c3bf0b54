"""What runs on the cluster's nodes: the Ray task that plays one shard in a subprocess and relays the matrix-wide
budget to it, and the named actor that keeps the matrix's spend.

The shard process is the single-machine bench (``python -m virtualcrime bench --shard SPEC``) with its crash
safety: turn checkpoints, reconciliation and eval_set's passes, in the shard's own folder. It gets no Ray
connection: the task tails the shard's spend ledger, reports its totals to the spend actor, and writes the actor's
answer, once the budget is spent, into the shard's stop file, which the shard's budget check reads at every turn
boundary (``budget.StopFile``). The process is killed with its worker (``PR_SET_PDEATHSIG``), so a retried shard
never has two orchestrators on its folder; the shard process's folder lock covers the moment in between.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..budget import MatrixSpend, Totals, read_ledger

NAMESPACE = "virtualcrime"
RELAY_SECONDS = 0.2
PR_SET_PDEATHSIG = 1


class ShardJob(BaseModel):
    """What the driver sends a Ray task: paths and names only (the spec itself is in the shard's folder)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    shard_id: str
    spec_path: str
    attacker: str
    folder: str
    state_dir: str
    actor: str | None
    attempt: int


class ShardRun(BaseModel):
    """How one attempt at a shard ended."""

    model_config = ConfigDict(extra="forbid")

    exit_code: int
    seconds: float
    node: str
    pid: int


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class SpendKeeper:
    """The spend actor's state: ``MatrixSpend`` behind Ray's actor calls (one at a time, so no lock)."""

    def __init__(self, max_tokens: int | None, max_cost: float | None, prices: dict[str, Any],
                 shards: dict[str, Totals]) -> None:  # fmt: skip
        from ..budget import Price

        self.spend = MatrixSpend(max_tokens, max_cost, {m: Price.model_validate(p) for m, p in prices.items()},
                                 dict(shards))  # fmt: skip

    def report(self, shard: str, totals: Totals) -> str | None:
        return self.spend.report(shard, totals)

    def exhausted(self) -> str | None:
        return self.spend.exhausted()

    def tokens(self) -> int:
        return self.spend.tokens()


def run_shard(job_json: str) -> str:
    """The body of the Ray task: play one shard in a subprocess to its end; returns a ``ShardRun`` as JSON."""
    import ray

    job = ShardJob.model_validate_json(job_json)
    state = Path(job.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    stop = state / "budget-stop"
    stop.unlink(missing_ok=True)  # a budget raised since the last attempt: the actor answers anew
    node = ray.get_runtime_context().get_node_id()
    (state / "worker.json").write_text(json.dumps({"pid": os.getpid(), "node": node, "attempt": job.attempt}))
    actor = ray.get_actor(job.actor, namespace=NAMESPACE) if job.actor else None
    ledger, offset = state / "spend.jsonl", 0
    totals: Totals = {}
    started = time.monotonic()
    with (state / "shard.log").open("ab") as log:
        log.write(f"\n--- attempt {job.attempt} on node {node}, worker pid {os.getpid()}\n".encode())
        log.flush()
        command = [sys.executable, "-m", "virtualcrime", "bench", "--shard", job.spec_path, "--attackers",
                   job.attacker, "--log-dir", job.folder]  # fmt: skip
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   preexec_fn=_die_with_parent)  # fmt: skip
        while True:
            ended = process.poll() is not None
            offset = read_ledger(ledger, offset, totals)
            if actor is not None:
                try:
                    reason = str(ray.get(actor.report.remote(job.shard_id, totals)) or "")
                except ray.exceptions.RayError:  # the actor is being restarted: report again next time
                    reason = ""
                if reason and not stop.exists():
                    temporary = stop.with_suffix(".tmp")
                    temporary.write_text(reason, encoding="utf-8")
                    temporary.replace(stop)
            if ended:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(RELAY_SECONDS)
    return ShardRun(exit_code=process.returncode, seconds=time.monotonic() - started, node=node,
                    pid=os.getpid()).model_dump_json()  # fmt: skip
