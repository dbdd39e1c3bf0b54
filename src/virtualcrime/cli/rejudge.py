"""``virtualcrime rejudge``: another Judge's verdicts on sampled, fixed turns of finished runs, stored in the logs."""

from __future__ import annotations

import argparse
from collections import defaultdict

from .finished_logs import finished_logs
from .main import CliError


def add_rejudge_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rejudge = sub.add_parser("rejudge", help="ask another Judge about sampled turns of finished runs (fixed states)")
    rejudge.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders (searched recursively)")
    rejudge.add_argument("--judge", required=True, metavar="MODEL", help="the second Judge")
    rejudge.add_argument("--per-attacker", type=int, default=50, metavar="N", help="turns per attacker (default 50)")
    rejudge.add_argument("--seed", type=int, default=0, metavar="S", help="sampling seed (default 0)")


def rejudge_command(args: argparse.Namespace) -> int:
    from inspect_ai.log import read_eval_log

    from ..harness.rejudge import candidate_turns, choose_turns, rejudge_log
    from ..harness.roles import RoleConfigError, judge_for

    if args.per_attacker < 1:
        raise CliError("--per-attacker must be at least 1")
    try:
        from inspect_ai.model import get_model

        judge_for(get_model(args.judge))
    except RoleConfigError as err:
        raise CliError(str(err)) from err
    logs = []
    for path, header in finished_logs(args.logs):
        if header.judge == args.judge:
            print(f"skipped {path.name}: already judged by {args.judge}")
        else:
            logs.append(read_eval_log(str(path)))
    if not logs:
        raise CliError("no finished VirtualCrime logs to re-judge")
    chosen = choose_turns(candidate_turns(logs, args.judge), args.per_attacker, args.seed)
    by_log = defaultdict(list)
    for ref in chosen:
        by_log[ref.log].append(ref)
    by_location = {log.location: log for log in logs}
    asked = got = 0
    per_attacker: dict[str, int] = defaultdict(int)
    for location, refs in sorted(by_log.items()):
        log = by_location[location]
        n, ok = rejudge_log(log, refs, args.judge)
        asked, got = asked + n, got + ok
        per_attacker[log.eval.model] += n
    for attacker, n in sorted(per_attacker.items()):
        print(f"{attacker:40} {n:5} turn(s) re-judged")
    print(f"\n{got} of {asked} turn(s) got a verdict from {args.judge}; stored in {len(by_log)} log(s).")
    print("virtualcrime report on these logs now compares the judges on the same turns.")
    return 0 if got == asked else 1
