"""``virtualcrime run``: play tasks through Inspect, then print the roles, a summary table and the log's path."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import (
    DISPLAYS,
    OFFLINE_ATTACKER,
    CliError,
    add_call_options,
    add_limit_options,
    add_referee_options,
    call_settings,
    non_negative_int,
    positive_int,
    referees,
)

if TYPE_CHECKING:
    from ..harness.run_eval import EvalSummary


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = sub.add_parser("run", help="play one or a few tasks through Inspect and print a summary")
    run.add_argument("--task", action="append", dest="tasks", metavar="ID",
                     help="task id (map/objective) or map name; repeatable; default: every task")  # fmt: skip
    run.add_argument("--attacker", default=OFFLINE_ATTACKER, metavar="MODEL",
                     help=f"Attacker model (default {OFFLINE_ATTACKER})")  # fmt: skip
    add_referee_options(run)
    run.add_argument("--seeds", type=positive_int, default=3, metavar="N", help="runs per task (default 3)")
    run.add_argument("--seed", type=non_negative_int, default=0, metavar="S",
                     help="base seed; run i uses S+i (default 0)")  # fmt: skip
    add_limit_options(run)
    run.add_argument("--log-dir", default="logs", metavar="DIR", help="where Inspect writes the log (default logs)")
    run.add_argument("--display", default="plain", choices=DISPLAYS, help="Inspect's progress display (default plain)")
    add_call_options(run)


def run(args: argparse.Namespace) -> int:
    from ..harness.run_eval import RoleConfigError, play_tasks

    judge, world_manager = referees(args)
    print(f"attacker {args.attacker} · judge {judge} · world manager {world_manager}", flush=True)
    try:
        summary = play_tasks(
            args.tasks,
            attacker=args.attacker,
            judge=judge,
            world_manager=world_manager,
            seeds=args.seeds,
            seed=args.seed,
            max_turns=args.max_turns,
            stall_turns=args.stall_turns,
            log_dir=args.log_dir,
            display=args.display,
            **call_settings(args),
        )
    except (RoleConfigError, ValueError) as err:
        raise CliError(str(err)) from err
    print()
    print(summary_text(summary))
    if summary.status != "success":
        raise CliError(f"the eval did not finish: {summary.error or summary.status}")
    if summary.errored:
        print(f"{summary.errored} run(s) ended with an error; see the log", file=sys.stderr)
        return 1
    return 0


def summary_text(summary: EvalSummary) -> str:
    """One line per run (task × seed), token usage per role and where the log is."""
    lines = [f"{'task':28} {'seed':>4}  {'status':11} {'turns':>5}  reason"]
    for row in summary.runs:
        turns = "-" if row.turns is None else str(row.turns)
        lines.append(f"{row.task:28} {row.seed:>4}  {row.status:11} {turns:>5}  {row.reason}")
    lines.append(f"won {summary.wins} of {len(summary.runs)} runs")
    if summary.tokens:
        lines += ["", "tokens per role"]
        lines += [f"{t.role:14} {t.input:>10} in {t.output:>8} out  {t.model}" for t in summary.tokens]
    lines += ["", f"Log: {summary.log}", f"Open it with: inspect view --log-dir {Path(summary.log).parent}"]
    if summary.runs:
        first = summary.runs[0]
        lines.append(f"Transcript:   virtualcrime replay {summary.log} --task {first.task} --seed {first.seed}")
    return "\n".join(lines)
