"""``virtualcrime rejudge``: another Judge's verdicts on sampled, fixed turns of finished runs, stored in the logs."""

from __future__ import annotations

import argparse

from .common import (
    CliError,
    add_call_options,
    add_engine_options,
    call_settings,
    engine_mapper,
    non_negative_int,
    positive_int,
)
from .finished_logs import finished_logs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rejudge = sub.add_parser("rejudge", help="ask another Judge about sampled turns of finished runs (fixed states)")
    rejudge.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders (searched recursively)")
    rejudge.add_argument("--judge", required=True, metavar="MODEL", help="the second Judge")
    rejudge.add_argument("--per-attacker", type=positive_int, default=50, metavar="N",
                         help="turns per attacker (default 50)")  # fmt: skip
    rejudge.add_argument("--seed", type=non_negative_int, default=0, metavar="S",
                         help="sampling seed (default 0); another seed adds turns, keeping the verdicts so "
                         "far")  # fmt: skip
    rejudge.add_argument("--include-human", action="store_true",
                         help="also re-judge games people played in the web UI (left out by default)")  # fmt: skip
    add_call_options(rejudge)
    add_engine_options(rejudge, "this process", "one Ray task per log (its one writer) on a cluster")


def run(args: argparse.Namespace) -> int:
    from ..harness.human import is_human
    from ..harness.rejudge import rejudge_logs
    from ..harness.roles import RoleConfigError, RoleOptions, check_judge_model

    try:
        check_judge_model(args.judge)
    except RoleConfigError as err:
        raise CliError(str(err)) from err
    paths = []
    for path, header in finished_logs(args.logs):
        if header.judge == args.judge:
            print(f"skipped {path.name}: already judged by {args.judge}")
        elif is_human(header.attacker) and not args.include_human:
            print(f"skipped {path.name}: a game {header.attacker} played in the web UI (--include-human to re-judge)")
        else:
            paths.append(path)
    if not paths:
        raise CliError("no finished VirtualCrime logs to re-judge")
    mapper = engine_mapper(args)
    tally = rejudge_logs(paths, args.judge, args.per_attacker, args.seed, RoleOptions(**call_settings(args)),
                         mapper=mapper)  # fmt: skip
    for attacker, (asked, _) in sorted(tally.items()):
        print(f"{attacker:40} {asked:5} turn(s) re-judged")
    asked = sum(a for a, _ in tally.values())
    got = sum(g for _, g in tally.values())
    if not asked:
        print(f"\nNothing new to ask: every sampled turn already has a verdict from {args.judge}.")
        return 0
    print(f"\n{got} of {asked} turn(s) got a verdict from {args.judge}; stored in the logs beside the earlier ones.")
    print("virtualcrime report on these logs now compares the judges on the same turns.")
    return 0 if got == asked else 1
