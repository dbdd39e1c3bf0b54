"""``virtualcrime bench``: the attacker × task × seed matrix, resumable after anything, with budgets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import (
    DISPLAYS,
    CliError,
    add_call_options,
    add_limit_options,
    add_referee_options,
    call_settings,
    non_negative_int,
    positive_float,
    positive_int,
    referees,
)

EXIT_BUDGET = 3


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


def run(args: argparse.Namespace) -> int:
    from ..harness.matrix import MatrixError, MatrixSpec, prepare, run_matrix
    from ..harness.roles import RoleConfigError

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
    try:
        monitor, total = prepare(spec)
    except (RoleConfigError, MatrixError, ValueError) as err:
        raise CliError(str(err)) from err
    earlier = f"; {monitor.runs_reused} finished earlier" if monitor.runs_reused else ""
    print(f"matrix: {len(attackers)} attacker(s) × {total // (len(attackers) * args.seeds)} task(s) × {args.seeds} "
          f"seed(s) = {total} runs{earlier}; judge {judge}, world manager {world_manager}")  # fmt: skip

    def status(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    outcome = run_matrix(spec, monitor, total, status, args.progress_every)
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
    if outcome.budget_stop is not None:
        print(f"\nStopped: {outcome.budget_stop}. The logs are resumable: rerun this command with a higher budget "
              "to continue.")  # fmt: skip
        return EXIT_BUDGET
    if not outcome.success:
        print("\nSome runs did not finish (see the logs above). Rerun this command to continue where it stopped.")
        return 1
    superseded = f", {outcome.superseded_logs} superseded log(s) of killed attempts removed" \
        if outcome.superseded_logs else ""  # fmt: skip
    print(f"\nAll {total} runs finished ({outcome.checkpoints_cleared} checkpoint file(s) cleared{superseded}). "
          f"Next: virtualcrime report {args.log_dir}")  # fmt: skip
    return 0
