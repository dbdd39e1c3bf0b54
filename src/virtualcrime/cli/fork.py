"""``virtualcrime fork``: a new run from the state of a logged run before turn N, with other seed or roles."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import (
    DISPLAYS,
    CliError,
    add_call_options,
    call_settings,
    markdown_to_text,
    non_negative_int,
    positive_int,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fork = sub.add_parser("fork", help="start a new run from a logged run's state before turn N (what-if)")
    fork.add_argument("log", metavar="LOG", help="the parent run's log file")
    fork.add_argument("--task", required=True, metavar="ID", help="the parent run's task id")
    fork.add_argument("--sample", dest="task", help=argparse.SUPPRESS)  # the Inspect name of the same thing
    fork.add_argument("--seed", type=non_negative_int, metavar="S",
                      help="the parent run's seed, as `virtualcrime run` shows it (needed when the log holds "
                      "several runs of the task)")  # fmt: skip
    fork.add_argument("--turn", type=positive_int, required=True, metavar="N",
                      help="the first turn the fork plays itself")  # fmt: skip
    fork.add_argument("--new-seed", type=non_negative_int, metavar="S",
                      help="the fork's own seed from turn N on (default: continue the parent's)")  # fmt: skip
    fork.add_argument("--attacker", metavar="MODEL", help="Attacker from turn N on (default: the parent's)")
    fork.add_argument("--judge", metavar="MODEL", help="Judge from turn N on (default: the parent's)")
    fork.add_argument("--world-manager", metavar="MODEL",
                      help="World Manager from turn N on (default: the new Judge if one is named, else the "
                      "parent's)")  # fmt: skip
    fork.add_argument("--log-dir", default="logs", metavar="DIR", help="where the fork's log goes (default logs)")
    fork.add_argument("--display", default="none", choices=DISPLAYS)
    add_call_options(fork)


def run(args: argparse.Namespace) -> int:
    from ..harness.fork import ForkError
    from ..harness.fork_run import fork_run

    try:
        outcome = fork_run(
            Path(args.log),
            args.task,
            args.seed,
            args.turn,
            new_seed=args.new_seed,
            attacker=args.attacker,
            judge=args.judge,
            world_manager=args.world_manager,
            log_dir=args.log_dir,
            display=args.display,
            **call_settings(args),
        )
    except ForkError as err:
        raise CliError(str(err)) from err
    seed = outcome.new_seed if outcome.new_seed is not None else f"{outcome.parent_seed} (continued)"
    print(f"Fork of {outcome.task} seed {outcome.parent_seed} at turn {outcome.turn}: attacker {outcome.attacker}, "
          f"judge {outcome.judge}, world manager {outcome.world_manager}, seed {seed}")  # fmt: skip
    print(markdown_to_text(outcome.result))
    print(f"Log: {outcome.log}")
    return 0
