"""``virtualcrime bench``: the attacker × task × seed matrix, resumable after anything, with budgets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import (
    DISPLAYS,
    CliError,
    add_call_options,
    add_engine_options,
    add_limit_options,
    add_referee_options,
    call_settings,
    non_negative_int,
    positive_float,
    positive_int,
    referees,
    require_ray,
)

if TYPE_CHECKING:
    from ..harness.matrix import MatrixSpec

EXIT_BUDGET = 3
SHARD_LINES = 40  # more shards than this: list only those not done
SHARD_LOCK_WAIT = 120.0  # seconds a shard process waits for its killed predecessor to be gone


def _status(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    bench = sub.add_parser("bench", help="the full attacker × task × seed matrix, resumable, with budgets")
    bench.add_argument("--attackers", required=True, metavar="M1,M2,...", help="Attacker models, comma separated")
    add_referee_options(bench)
    bench.add_argument("--task", action="append", metavar="ID", help="task id or map name; repeatable; default all")
    bench.add_argument("--seeds", type=positive_int, default=3, metavar="N",
                       help="runs per task and attacker (default 3)")  # fmt: skip
    bench.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="base seed (default 0)")
    add_limit_options(bench)
    bench.add_argument("--log-dir", required=True, metavar="DIR", help="the matrix's own folder (re-use to resume)")
    bench.add_argument("--max-samples", type=positive_int, metavar="N",
                       help="runs at once per attacker (default: Inspect's)")  # fmt: skip
    for role in ("attacker", "judge", "world-manager"):
        bench.add_argument(f"--{role}-connections", type=positive_int, metavar="N",
                           help=f"concurrent calls to the {role} model")  # fmt: skip
    bench.add_argument("--max-tokens", type=positive_int, metavar="N",
                       help="stop when the matrix has used this many tokens")  # fmt: skip
    bench.add_argument("--max-cost", type=positive_float, metavar="USD",
                       help="stop at this estimated cost (needs prices)")  # fmt: skip
    bench.add_argument("--prices", metavar="FILE", help="YAML/JSON {model: {input: $/Mtok, output: $/Mtok}}")
    bench.add_argument("--retry-attempts", type=non_negative_int, default=3, metavar="N",
                       help="eval_set retries (default 3)")  # fmt: skip
    bench.add_argument("--latency", type=float, default=0.0, metavar="SECONDS", help=argparse.SUPPRESS)
    bench.add_argument("--progress-every", type=positive_float, default=10.0, metavar="SECONDS",
                       help="status line interval (default 10)")  # fmt: skip
    bench.add_argument("--display", default="none", choices=DISPLAYS)
    add_call_options(bench)
    ray = bench.add_argument_group("distributed (--engine ray; docs/distributed.md)")
    add_engine_options(ray, "one process", "shards of attacker × task on a Ray cluster")
    ray.add_argument("--providers", metavar="FILE",
                     help="YAML: per provider key, runs and calls at once, requests/tokens per minute")  # fmt: skip
    ray.add_argument("--shard-retries", type=non_negative_int, default=2, metavar="N",
                     help="further attempts of a shard whose worker or node died (default 2)")  # fmt: skip
    ray.add_argument("--shard-timeout", type=positive_float, metavar="SECONDS",
                     help="cancel a shard's attempt after this long (default: none)")  # fmt: skip
    ray.add_argument("--shard-cpus", type=positive_float, default=1.0, metavar="N",
                     help="Ray CPUs one shard takes (default 1)")  # fmt: skip
    bench.add_argument("--shard", metavar="SPEC", help=argparse.SUPPRESS)  # a shard process (harness/distributed)


def run(args: argparse.Namespace) -> int:
    from ..harness.matrix import MatrixError, MatrixSpec, prepare, run_matrix
    from ..harness.roles import RoleConfigError

    if args.shard:
        return run_shard(args)
    attackers = tuple(dict.fromkeys(a.strip() for a in args.attackers.split(",") if a.strip()))
    if not attackers:
        raise CliError("--attackers names no model")
    judge, world_manager = referees(args)
    spec = MatrixSpec(
        attackers=attackers,
        judge=judge,
        world_manager=world_manager,
        log_dir=Path(args.log_dir),
        tasks=tuple(args.task) if args.task else None,
        seeds=args.seeds,
        seed=args.seed,
        max_turns=args.max_turns,
        stall_turns=args.stall_turns,
        max_samples=args.max_samples,
        attacker_connections=args.attacker_connections,
        judge_connections=args.judge_connections,
        world_manager_connections=args.world_manager_connections,
        max_tokens=args.max_tokens,
        max_cost=args.max_cost,
        prices=Path(args.prices) if args.prices else None,
        retry_attempts=args.retry_attempts,
        latency=args.latency,
        display=args.display,
        **call_settings(args),
    )
    if args.engine == "ray":
        return run_ray(spec, args)
    try:
        monitor, total = prepare(spec)
    except (RoleConfigError, MatrixError, ValueError) as err:
        raise CliError(str(err)) from err
    earlier = f"; {monitor.runs_reused} finished earlier" if monitor.runs_reused else ""
    print(f"matrix: {len(attackers)} attacker(s) × {total // (len(attackers) * args.seeds)} task(s) × {args.seeds} "
          f"seed(s) = {total} runs{earlier}; judge {judge}, world manager {world_manager}")  # fmt: skip

    outcome = run_matrix(spec, monitor, total, _status, args.progress_every)
    print(outcome.status_line, file=sys.stderr)
    for log in outcome.logs:
        print(f"  {log.status:9} {log.attacker:32} {log.runs:4} runs  {log.location}")
    if outcome.primed:
        print(f"{outcome.primed} finished run(s) of earlier invocations were replayed from their records into the "
              "new log (no model calls)")  # fmt: skip
    for name in outcome.repaired:
        print(f"repaired: {name}: its log had lost its turn records; they came back from its checkpoint")
    for problem in outcome.problems:
        print(f"problem: {problem}")
    unfinished = _unfinished(outcome.budget_stop, outcome.success, "logs", "runs did not finish (see the logs above)")
    if unfinished is not None:
        return unfinished
    superseded = f", {outcome.superseded_logs} superseded log(s) of killed attempts removed" \
        if outcome.superseded_logs else ""  # fmt: skip
    print(f"\nAll {total} runs finished ({outcome.checkpoints_cleared} checkpoint file(s) cleared{superseded}). "
          f"Next: virtualcrime report {args.log_dir}")  # fmt: skip
    return 0


def run_shard(args: argparse.Namespace) -> int:
    """One shard of a distributed matrix, in its own process: the single-machine bench on the shard's spec, with
    the matrix-wide budget read from the shard's stop file and its share of its keys' rates."""
    from ..harness.budget import StopFile
    from ..harness.distributed.plan import ShardSpec
    from ..harness.distributed.status import LockBusy, shard_lock
    from ..harness.matrix import MatrixError, prepare, run_matrix
    from ..harness.roles import RoleConfigError

    try:
        shard = ShardSpec.model_validate_json(Path(args.shard).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CliError(f"cannot read the shard spec {args.shard}: {' '.join(str(err).split())[:300]}") from err
    if (shard.matrix.attackers[0], shard.folder) != (args.attackers, Path(args.log_dir)):
        raise CliError(f"the shard spec {args.shard} is not for {args.attackers} in {args.log_dir}")
    try:
        with shard_lock(shard.state_dir, SHARD_LOCK_WAIT):
            monitor, total = prepare(shard.matrix)
            monitor.external, monitor.pace = StopFile(shard.stop_file), shard.pace
            outcome = run_matrix(shard.matrix, monitor, total, _status, args.progress_every)
    except (RoleConfigError, MatrixError, ValueError, LockBusy) as err:
        raise CliError(str(err)) from err
    print(outcome.model_dump_json())
    if outcome.budget_stop is not None:
        return EXIT_BUDGET
    return 0 if outcome.success else 1


def _unfinished(budget_stop: str | None, success: bool, parts: str, what: str) -> int | None:
    """The exit status of an invocation that left the matrix unfinished, said how to continue; None if finished."""
    if budget_stop is not None:
        print(f"\nStopped: {budget_stop}. The {parts} are resumable: rerun this command with a higher budget to "
              "continue.")  # fmt: skip
        return EXIT_BUDGET
    if not success:
        print(f"\nSome {what}. Rerun this command to continue where it stopped.")
        return 1
    return None


def run_ray(spec: MatrixSpec, args: argparse.Namespace) -> int:
    """``--engine ray``: the matrix's shards on a Ray cluster (harness/distributed/driver.py)."""
    require_ray()
    from ..harness.distributed.driver import RayOptions, run_distributed
    from ..harness.distributed.status import LockBusy
    from ..harness.matrix import MatrixError
    from ..harness.roles import RoleConfigError

    options = RayOptions(address=args.ray_address, providers=Path(args.providers) if args.providers else None,
                         retries=args.shard_retries, timeout=args.shard_timeout, cpus=args.shard_cpus)  # fmt: skip
    try:
        outcome = run_distributed(spec, options, _status, args.progress_every)
    except (RoleConfigError, MatrixError, ValueError, LockBusy) as err:
        raise CliError(str(err)) from err
    shards = outcome.shards.values()
    earlier = sum(s.reused for s in shards)
    print(f"matrix: {len(spec.attackers)} attacker(s) × {len(shards) // len(spec.attackers)} task(s) × "
          f"{spec.seeds} seed(s) = {outcome.total_runs} runs in {len(shards)} shards"
          + (f"; {earlier} shard(s) finished earlier" if earlier else ""))  # fmt: skip
    print(outcome.status_line, file=sys.stderr)
    listed = [s for s in shards if s.phase != "done"] if len(shards) > SHARD_LINES else list(shards)
    if len(listed) < len(shards):
        print(f"  {len(shards) - len(listed)} shard(s) done (each one's line: {args.log_dir}/.virtualcrime/"
              "matrix-status.json)")  # fmt: skip
    for state in listed:
        tries = f"{state.attempts} attempt(s)" if state.attempts else "earlier"
        print(f"  {state.phase:8} {state.attacker:32} {state.task:28} {tries:13} {state.folder}"
              + (f"  ({state.error})" if state.error else ""))  # fmt: skip
    unfinished = _unfinished(outcome.budget_stop, outcome.success, "shards", "shards did not finish (see above)")
    if unfinished is not None:
        return unfinished
    print(f"\nAll {outcome.total_runs} runs finished. Next: virtualcrime report {args.log_dir}")
    return 0
