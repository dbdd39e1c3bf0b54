"""``virtualcrime bench``: the attacker × task × seed matrix through Inspect's ``eval_set``, resumable after anything.

Re-running the same command continues where the last one stopped: ``eval_set`` reuses every finished run from
the logs, and the runs that were in progress resume after their last finished turn from the checkpoints in
``LOG_DIR/.virtualcrime/checkpoints``. Budgets (``--max-tokens``, ``--max-cost``) stop the runs at their next
turn boundary; the logs stay resumable, so raising the budget and re-running continues the matrix.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .main import CliError

if TYPE_CHECKING:
    from ..harness.budget import BenchMonitor

STATE_DIR = ".virtualcrime"
EXIT_BUDGET = 3


def add_bench_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    bench = sub.add_parser("bench", help="the full attacker × task × seed matrix, resumable, with budgets")
    bench.add_argument("--attackers", required=True, metavar="M1,M2,...", help="Attacker models, comma separated")
    bench.add_argument("--judge", default="virtualcrime/rules", metavar="MODEL", help="Judge model")
    bench.add_argument("--world-manager", default="virtualcrime/rules", metavar="MODEL", help="World Manager model")
    bench.add_argument("--task", action="append", metavar="ID", help="task id or map name; repeatable; default all")
    bench.add_argument("--seeds", type=int, default=3, metavar="N", help="runs per task and attacker (default 3)")
    bench.add_argument("--seed", type=int, default=0, metavar="S", help="base seed (default 0)")
    bench.add_argument("--max-turns", type=int, default=60, metavar="N")
    bench.add_argument("--stall-turns", type=int, default=30, metavar="N")
    bench.add_argument("--log-dir", required=True, metavar="DIR", help="the matrix's own folder (re-use to resume)")
    bench.add_argument("--max-samples", type=int, metavar="N", help="runs at once per attacker (default: Inspect's)")
    for role in ("attacker", "judge", "world-manager"):
        bench.add_argument(f"--{role}-connections", type=int, metavar="N", help=f"concurrent calls to the {role} model")
    bench.add_argument("--max-tokens", type=int, metavar="N", help="stop when the matrix has used this many tokens")
    bench.add_argument("--max-cost", type=float, metavar="USD", help="stop at this estimated cost (needs prices)")
    bench.add_argument("--prices", metavar="FILE", help="YAML/JSON {model: {input: $/Mtok, output: $/Mtok}}")
    bench.add_argument("--retry-attempts", type=int, default=3, metavar="N", help="eval_set retries (default 3)")
    bench.add_argument("--latency", type=float, default=0.0, metavar="SECONDS", help=argparse.SUPPRESS)
    bench.add_argument("--progress-every", type=float, default=10.0, metavar="SECONDS", help="status line interval")
    bench.add_argument("--display", default="none", choices=["full", "conversation", "rich", "plain", "log", "none"])


def bench_command(args: argparse.Namespace) -> int:
    from inspect_ai import eval_set

    from ..harness.budget import BenchMonitor, activate, load_prices
    from ..harness.checkpoint import clear_checkpoints
    from ..harness.roles import RoleConfigError, check_role_models
    from ..harness.task import virtualcrime

    attackers = list(dict.fromkeys(a.strip() for a in args.attackers.split(",") if a.strip()))
    if not attackers:
        raise CliError("--attackers names no model")
    for value, flag, least in ((args.seeds, "--seeds", 1), (args.max_turns, "--max-turns", 1),
                               (args.retry_attempts, "--retry-attempts", 0)):  # fmt: skip
        if value < least:
            raise CliError(f"{flag} must be at least {least}")
    try:
        for attacker in attackers:
            check_role_models(attacker, args.judge, args.world_manager)
        prices = load_prices(Path(args.prices) if args.prices else None)
    except (RoleConfigError, ValueError) as err:
        raise CliError(str(err)) from err
    models = [*attackers, args.judge, args.world_manager]
    unpriced = sorted({m for m in models if m not in prices})
    if args.max_cost is not None and unpriced:
        raise CliError(f"--max-cost needs a price for every model; none for {', '.join(unpriced)} (see --prices)")

    log_dir = Path(args.log_dir)
    state = log_dir / STATE_DIR
    monitor = BenchMonitor(args.max_tokens, args.max_cost, prices, state / "spend.jsonl")
    monitor.load_ledger()
    spent = monitor.exhausted()
    if spent is not None:
        raise CliError(f"{spent} already (in {state / 'spend.jsonl'}); raise the budget to continue the matrix")
    try:
        task = virtualcrime(
            tasks=args.task,
            seeds=args.seeds,
            seed=args.seed,
            max_turns=args.max_turns,
            stall_turns=args.stall_turns,
            attacker_connections=args.attacker_connections,
            judge_connections=args.judge_connections,
            world_manager_connections=args.world_manager_connections,
            checkpoint_dir=str(state / "checkpoints"),
            latency=args.latency,
        )
    except ValueError as err:
        raise CliError(str(err)) from err
    total = len(task.dataset) * args.seeds * len(attackers)
    print(f"matrix: {len(attackers)} attacker(s) × {len(task.dataset)} task(s) × {args.seeds} seed(s) = {total} runs")

    activate(monitor)
    stop = threading.Event()
    ticker = threading.Thread(target=_progress, args=(monitor, total, args.progress_every, stop), daemon=True)
    ticker.start()
    try:
        success, logs = eval_set(
            tasks=[task],
            log_dir=str(log_dir),
            model=attackers,
            model_roles={"judge": args.judge, "world_manager": args.world_manager},
            max_samples=args.max_samples,
            retry_attempts=args.retry_attempts,
            display=args.display,
            log_dir_allow_dirty=True,
        )
    finally:
        stop.set()
        ticker.join()
        activate(None)
    print(monitor.status_line(total), file=sys.stderr)
    for log in logs:
        runs = log.results.completed_samples if log.results is not None else 0
        print(f"  {log.status:9} {log.eval.model:32} {runs:4} runs  {log.location}")
    budget = monitor.exhausted()
    if budget is not None and not success:
        print(f"\nStopped: {budget}. The logs are resumable: rerun this command with a higher budget to continue.")
        return EXIT_BUDGET
    if not success:
        print("\nSome runs did not finish (see the logs above). Rerun this command to continue where it stopped.")
        return 1
    removed = clear_checkpoints(state / "checkpoints")
    print(f"\nAll {total} runs finished ({removed} checkpoint file(s) cleared). Next: virtualcrime report {log_dir}")
    return 0


def _progress(monitor: BenchMonitor, total: int, every: float, stop: threading.Event) -> None:
    while not stop.wait(every):
        print(monitor.status_line(total), file=sys.stderr, flush=True)
