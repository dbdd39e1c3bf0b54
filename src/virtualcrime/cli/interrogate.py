"""``virtualcrime interrogate``: show each run's action log to the model that played it (or, with
``--questioned-model``, to another model), under six framings."""

from __future__ import annotations

import argparse

from .common import CliError, add_call_options, call_settings
from .finished_logs import finished_logs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ask = sub.add_parser("interrogate", help="ask each run's Attacker model about its own actions, six framings")
    ask.add_argument("logs", nargs="+", metavar="LOGS", help="log files or folders (searched recursively)")
    ask.add_argument("--conditions", default="CTRL,B1,A1,A1B1,A2,A2B1", metavar="LIST",
                     help="framings to ask under (default all six)")  # fmt: skip
    ask.add_argument("--min-turns", type=int, default=10, metavar="N", help="runs with at least N executed turns")
    ask.add_argument("--questioned-model", default=None, metavar="MODEL",
                     help="ask this model about the logs instead of the model that wrote each log (the paper's "
                          "Appendix J); logs of offline Attackers and people can then be shown too")  # fmt: skip
    add_call_options(ask, attempts=False)  # one question per framing, never asked again: no attempts to set


def run(args: argparse.Namespace) -> int:
    from ..harness.human import is_human
    from ..harness.interrogate import interrogate_log
    from ..harness.providers import is_game_role
    from ..harness.roles import RoleConfigError, RoleOptions, model_for
    from ..roles.interrogation import CONDITIONS

    options = RoleOptions(**call_settings(args))

    conditions = [c.strip().upper() for c in args.conditions.split(",") if c.strip()]
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown or not conditions:
        raise CliError(f"unknown condition(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(CONDITIONS)}")
    if args.min_turns < 1:
        raise CliError("--min-turns must be at least 1")
    questioned = None
    if args.questioned_model is not None:
        name = args.questioned_model
        if is_game_role(name) or is_human(name):
            raise CliError(f"{name} is not a language model to question (virtualcrime/local works offline)")
        try:
            questioned = model_for(name, "questioned model")
        except RoleConfigError as err:
            raise CliError(str(err)) from err
    runs = calls = 0
    for path, header in finished_logs(args.logs):
        if questioned is None and is_game_role(header.attacker):
            print(f"skipped {path.name}: its Attacker {header.attacker} is a game role, not a model to question "
                  "(--questioned-model asks another model about it)")  # fmt: skip
            continue
        if questioned is None and is_human(header.attacker):
            print(f"skipped {path.name}: its Attacker {header.attacker} is a person who played in the web UI")
            continue
        asked, made = interrogate_log(path, conditions, args.min_turns, options, questioned)
        runs, calls = runs + asked, calls + made
        who = header.attacker if questioned is None else f"{questioned} about {header.attacker}'s log"
        print(f"{path.name}: {asked} run(s) questioned ({made} call(s) to {who})")
    print(f"\n{runs} run(s) questioned with {calls} call(s)" if runs else "\nNothing new to ask.")
    return 0
