"""The driver of a distributed matrix: an idempotent reconcile loop over the shards.

Every invocation reads the shards' logs, skips the shards that are complete, and submits the others as Ray tasks,
admitted per provider key (``plan.Admission``) and at most as many as the cluster has CPUs for. A shard whose
worker or node died, or whose process ended with runs left, is submitted again (at most ``retries`` more times);
one past its deadline is cancelled (its worker, and with it the shard process, is killed) and counts as a failed
attempt. A retried shard continues from its own checkpoints and logs, so no finished turn is played again. The
driver alone writes the matrix's status file, and holds the root's lock while it runs, so rerunning the same
command after anything (a killed driver included) continues the matrix.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..budget import MatrixSpend, Totals, read_ledger
from ..matrix import MatrixError, MatrixSpec, checked_prices, finished_runs, matrix_task_ids
from .plan import Admission, ShardSpec, load_providers, plan_shards
from .status import MatrixStatus, ShardPhase, ShardStatus, driver_lock
from .worker import NAMESPACE, ShardJob, ShardRun, SpendKeeper, run_shard

EXIT_BUDGET = 3


@dataclass(frozen=True)
class RayOptions:
    """How the matrix uses the cluster."""

    address: str | None = None  # None: RAY_ADDRESS, else a new single-machine cluster
    providers: Path | None = None
    retries: int = 2  # further attempts of a shard whose attempt failed, per invocation
    timeout: float | None = None  # seconds one attempt may take before it is cancelled
    cpus: float = 1.0  # Ray CPUs a shard takes
    poll: float = 0.25


class DistributedOutcome(BaseModel):
    """How the invocation ended."""

    model_config = ConfigDict(extra="forbid")

    total_runs: int
    shards: dict[str, ShardStatus]
    success: bool
    budget_stop: str | None
    status_line: str


def shard_complete(shard: ShardSpec) -> bool:
    """Whether the shard's logs hold every run of it and no checkpoint is left over."""
    if not shard.folder.exists():
        return False
    task_ids = set(shard.matrix.tasks or ())
    if finished_runs(shard.matrix, task_ids) < len(task_ids) * shard.matrix.seeds:
        return False
    return not any((shard.state_dir / "checkpoints").glob("*.jsonl"))


def _actor_name(root: Path) -> str:
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:12]
    return f"virtualcrime-spend-{digest}-{os.getpid()}"


def check_matrix(spec: MatrixSpec, options: RayOptions) -> tuple[list[str], MatrixSpend]:
    """Before anything runs: the models can play their roles, the prices and providers file are usable and the
    budget is not spent (summing the shards' ledgers); returns the task ids and the spend so far."""
    prices = checked_prices(spec)
    load_providers(options.providers)
    task_ids = matrix_task_ids(spec)
    spend = MatrixSpend(spec.max_tokens, spec.max_cost, prices)
    for shard in plan_shards(spec, task_ids):
        totals: Totals = {}
        read_ledger(shard.state_dir / "spend.jsonl", 0, totals)
        spend.shards[shard.shard_id] = totals
    spent = spend.exhausted()
    if spent is not None:
        raise MatrixError(f"{spent} already (in the shards' ledgers); raise the budget to continue the matrix")
    return task_ids, spend


def run_distributed(spec: MatrixSpec, options: RayOptions, on_status: Callable[[str], None],
                    every: float = 10.0) -> DistributedOutcome:  # fmt: skip
    """Play (or continue) the matrix on the Ray cluster; LockBusy when another driver runs on its root."""
    task_ids, spend = check_matrix(spec, options)
    with driver_lock(spec.log_dir):
        return _Driver(spec, options, task_ids, spend, on_status, every).run()


class _Driver:
    def __init__(self, spec: MatrixSpec, options: RayOptions, task_ids: list[str], spend: MatrixSpend,
                 on_status: Callable[[str], None], every: float) -> None:  # fmt: skip
        self.spec, self.options, self.on_status, self.every = spec, options, on_status, every
        self.shards = {s.shard_id: s for s in plan_shards(spec, task_ids)}
        self.status = MatrixStatus(driver_pid=os.getpid())
        for shard in self.shards.values():
            self.status.shards[shard.shard_id] = ShardStatus(attacker=shard.matrix.attackers[0],
                                                             task=(shard.matrix.tasks or ("",))[0],
                                                             folder=str(shard.folder))  # fmt: skip
        self.spend = spend
        self.total_runs = len(self.shards) * spec.seeds
        self.actor_name = _actor_name(spec.log_dir)

    def run(self) -> DistributedOutcome:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        pending = []
        for shard_id, shard in self.shards.items():
            if shard_complete(shard):
                self.status.shards[shard_id].phase, self.status.shards[shard_id].reused = "done", True
            else:
                pending.append(shard)
        self.status.tokens_spent = self.spend.tokens()
        self.status.write(self.spec.log_dir)
        if not pending:
            return self._outcome(None)
        if not ray.is_initialized():
            try:
                ray.init(address=self.options.address, include_dashboard=False, log_to_driver=False,
                         namespace=NAMESPACE)  # fmt: skip
            except (ConnectionError, RuntimeError, ValueError) as err:
                where = self.options.address or os.environ.get("RAY_ADDRESS") or "a new local cluster"
                raise MatrixError(f"cannot join the Ray cluster at {where}: {' '.join(str(err).split())}") from err
        admission = Admission(load_providers(self.options.providers), pending)
        # The spend actor lives on the driver's node when it can; restarted elsewhere if that node goes, it is
        # whole again within one relay period: every shard's relay reports its whole ledger's totals.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
        actor_class: Any = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(SpendKeeper)
        actor = actor_class.options(name=self.actor_name, namespace=NAMESPACE, scheduling_strategy=here).remote(
            self.spec.max_tokens,
            self.spec.max_cost,
            {m: p.model_dump() for m, p in self.spend.prices.items()},
            self.spend.shards,
        )
        task: Any = ray.remote(run_shard).options(num_cpus=self.options.cpus, max_retries=0)
        running: dict[Any, tuple[ShardSpec, float]] = {}
        cancelled: set[Any] = set()
        budget: str | None = None
        last_status = time.monotonic()
        try:
            while pending or running:
                cpus = float(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
                room = max(1, int(cpus // self.options.cpus)) - len(running)
                submitted = len(running)
                for shard in [s for s in pending if budget is None]:
                    if room <= 0:
                        break
                    if not admission.admissible(shard):
                        continue
                    admitted = admission.admit(shard)
                    pending.remove(shard)
                    state = self.status.shards[shard.shard_id]
                    state.phase, state.attempts = "running", state.attempts + 1
                    job = ShardJob(shard_id=shard.shard_id, spec_path=str(admitted.write()),
                                   attacker=shard.matrix.attackers[0], folder=str(shard.folder),
                                   state_dir=str(shard.state_dir), actor=self.actor_name,
                                   attempt=state.attempts)  # fmt: skip
                    running[task.remote(job.model_dump_json())] = (shard, time.monotonic())
                    room -= 1
                if len(running) != submitted:
                    self.status.write(self.spec.log_dir)
                ready = (
                    ray.wait(list(running), num_returns=len(running), timeout=self.options.poll)[0] if running else []
                )
                for ref in ready:
                    shard, started = running.pop(ref)
                    retry = self._ended(ref, shard, started, ref in cancelled)
                    admission.release(shard, finished=not retry)
                    if retry:
                        pending.insert(0, shard)
                    self.status.write(self.spec.log_dir)
                now = time.monotonic()
                limit = self.options.timeout
                for ref, (_, started) in running.items():
                    if limit is not None and now - started > limit and ref not in cancelled:
                        ray.cancel(ref, force=True)
                        cancelled.add(ref)
                budget = budget or ray.get(actor.exhausted.remote())
                if budget is not None and not running:
                    break
                if now - last_status >= self.every:
                    last_status = now
                    self.on_status(self._line(ray.get(actor.tokens.remote())))
            self.status.tokens_spent = ray.get(actor.tokens.remote())
        finally:
            for ref in running:
                ray.cancel(ref, force=True)
            ray.kill(actor)
        self.status.write(self.spec.log_dir)
        return self._outcome(budget)

    def _ended(self, ref: Any, shard: ShardSpec, started: float, cancelled: bool) -> bool:
        """Record how an attempt ended; whether the shard is to be submitted again."""
        import ray

        state = self.status.shards[shard.shard_id]
        state.seconds = round(time.monotonic() - started, 3)
        try:
            run = ShardRun.model_validate_json(ray.get(ref))
        except ray.exceptions.RayError as err:
            state.exit_code = None
            state.error = "cancelled past its deadline" if cancelled else " ".join(str(err).split())[:300]
            phase: ShardPhase = "timeout" if cancelled else "failed"
        else:
            state.exit_code, state.seconds = run.exit_code, round(run.seconds, 3)
            if run.exit_code == 0:
                state.phase, state.error = "done", ""
                return False
            if run.exit_code == EXIT_BUDGET:
                state.phase, state.error = "budget", ""
                return False
            state.error = f"the shard process exited with {run.exit_code} (see {shard.state_dir / 'shard.log'})"
            phase = "failed"
        state.phase = "pending" if state.attempts <= self.options.retries else phase
        return state.phase == "pending"

    def _line(self, tokens: int) -> str:
        phases = [s.phase for s in self.status.shards.values()]
        earlier = sum(s.reused for s in self.status.shards.values())
        failed = phases.count("failed") + phases.count("timeout")
        return (f"shards {phases.count('done')}/{len(phases)} done ({earlier} earlier), {phases.count('running')} "
                f"running, {failed} failed · {tokens:,} tokens spent")  # fmt: skip

    def _outcome(self, budget: str | None) -> DistributedOutcome:
        done = all(s.phase == "done" for s in self.status.shards.values())
        return DistributedOutcome(total_runs=self.total_runs, shards=dict(self.status.shards), success=done,
                                  budget_stop=None if done else budget,
                                  status_line=self._line(self.status.tokens_spent))  # fmt: skip
