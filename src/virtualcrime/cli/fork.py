"""``virtualcrime fork``: a new run from the state of a logged run before turn N, with other seed or roles."""

from __future__ import annotations

import argparse
from pathlib import Path

from .main import CliError


def add_fork_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fork = sub.add_parser("fork", help="start a new run from a logged run's state before turn N (what-if)")
    fork.add_argument("log", metavar="LOG", help="the parent run's log file")
    fork.add_argument("--sample", required=True, metavar="ID", help="the parent run's task id")
    fork.add_argument("--epoch", type=int, default=1, metavar="N", help="the parent run's epoch (default 1)")
    fork.add_argument("--turn", type=int, required=True, metavar="N", help="the first turn the fork plays itself")
    fork.add_argument("--seed", type=int, metavar="S", help="the fork's seed from turn N on (default: the parent's)")
    fork.add_argument("--attacker", metavar="MODEL", help="Attacker from turn N on (default: the parent's)")
    fork.add_argument("--judge", metavar="MODEL", help="Judge from turn N on (default: the parent's)")
    fork.add_argument("--world-manager", metavar="MODEL", help="World Manager from turn N on (default: the parent's)")
    fork.add_argument("--log-dir", default="logs", metavar="DIR", help="where the fork's log goes (default logs)")
    fork.add_argument("--display", default="none", choices=["full", "conversation", "rich", "plain", "log", "none"])


def fork_command(args: argparse.Namespace) -> int:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from ..engine.render import render_result
    from ..harness.fork import ForkError, parent_run, virtualcrime_fork
    from ..harness.human import is_human
    from ..harness.log_reader import TASK_NAMES, role_model
    from ..harness.roles import RoleConfigError, check_role_models
    from ..harness.solver import run_seed
    from ..harness.store import LogFormatError, records_from_store

    try:
        header = read_eval_log(args.log, header_only=True)
    except Exception as err:
        raise CliError(f"cannot read log {args.log}: {err}") from err
    if header.eval.task not in TASK_NAMES:
        raise CliError(f"{args.log} is a log of task {header.eval.task!r}; fork runs of the virtualcrime task")
    task_args = header.eval.task_args or {}
    attacker = args.attacker or header.eval.model
    if is_human(attacker):
        raise CliError(f"{args.log} was played by a person ({attacker}); give --attacker MODEL to play on from turn "
                       f"{args.turn} with a model")  # fmt: skip
    judge = args.judge or role_model(header.eval.model_roles, "judge")
    world_manager = args.world_manager or role_model(header.eval.model_roles, "world_manager")
    try:
        check_role_models(attacker, judge, world_manager)
        _, result, _ = parent_run(args.log, args.sample, args.epoch)
        parent_seed = result.seed if result is not None else run_seed(args.epoch, int(task_args.get("seed", 0)))
        task = virtualcrime_fork(
            log=str(Path(args.log).resolve()),
            sample_id=args.sample,
            epoch=args.epoch,
            turn=args.turn,
            parent_seed=parent_seed,
            seed=args.seed,
            max_turns=int(task_args.get("max_turns", 60)),
            stall_turns=int(task_args.get("stall_turns", 30)),
        )
    except (RoleConfigError, ForkError, LogFormatError) as err:
        raise CliError(str(err)) from err
    [log] = inspect_eval(
        task,
        model=attacker,
        model_roles={"judge": judge, "world_manager": world_manager},
        log_dir=args.log_dir,
        display=args.display,
        max_retries=3,
        timeout=120,
    )
    if log.status != "success" or not log.samples:
        raise CliError(f"the fork did not finish: {log.error.message if log.error else log.status}")
    _, forked = records_from_store(dict(log.samples[0].store))
    print(f"Fork of {args.sample} epoch {args.epoch} (seed {parent_seed}) at turn {args.turn}: "
          f"attacker {attacker}, judge {judge}, world manager {world_manager}, seed "
          f"{args.seed if args.seed is not None else f'{parent_seed} (continued)'}")  # fmt: skip
    if forked is not None:
        print(render_result(forked))
    print(f"Log: {Path(log.location).resolve()}")
    return 0
