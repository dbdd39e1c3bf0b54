"""Entry point of the ``virtualcrime`` command. Subcommands import their dependencies lazily so that
``--help`` answers without loading Inspect."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

OFFLINE_ATTACKER = "virtualcrime/scripted"
OFFLINE_ROLE = "virtualcrime/rules"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="virtualcrime",
        description="VirtualCrime: measure what a language model does in a criminal team role inside a "
        "text sandbox that fights back.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="play one or a few tasks through Inspect and print a summary")
    run.add_argument(
        "--task",
        action="append",
        dest="tasks",
        metavar="ID",
        help="task id (map/objective) or map name; repeatable; default: every task",
    )
    run.add_argument(
        "--attacker",
        default=OFFLINE_ATTACKER,
        metavar="MODEL",
        help=f"Attacker model (default {OFFLINE_ATTACKER})",
    )
    run.add_argument("--judge", default=OFFLINE_ROLE, metavar="MODEL", help=f"Judge model (default {OFFLINE_ROLE})")
    run.add_argument(
        "--world-manager",
        default=OFFLINE_ROLE,
        metavar="MODEL",
        help=f"World Manager model (default {OFFLINE_ROLE})",
    )
    run.add_argument("--seeds", type=int, default=3, metavar="N", help="runs per task (default 3)")
    run.add_argument("--seed", type=int, default=0, metavar="S", help="base seed; run i uses S+i (default 0)")
    run.add_argument("--max-turns", type=int, default=60, metavar="N", help="turn limit (default 60)")
    run.add_argument(
        "--stall-turns",
        type=int,
        default=30,
        metavar="N",
        help="stop after N turns without a new checkpoint (default 30)",
    )
    run.add_argument("--log-dir", default="logs", metavar="DIR", help="where Inspect writes the log (default logs)")
    run.add_argument(
        "--display",
        default="plain",
        choices=["full", "conversation", "rich", "plain", "log", "none"],
        help="Inspect's progress display (default plain)",
    )

    tasks = sub.add_parser("tasks", help="list the bundled tasks")
    tasks.add_argument("--json", action="store_true", help="print JSON instead of a table")

    check = sub.add_parser("check", help="lint a scenario corpus; --solve proves every task winnable offline")
    check.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="corpus directory with objectives.yaml, maps/ and tasks/ (default: the bundled one)",
    )
    check.add_argument(
        "--solve", action="store_true", help="also play the scripted Attacker against the rules roles on every task"
    )
    check.add_argument("--seeds", type=int, default=10, metavar="N", help="seeds per task for --solve (default 10)")
    check.add_argument("--task", action="append", metavar="ID", help="with --solve: only these tasks (or maps)")

    map_parser = sub.add_parser("map", help="draw a map's location graph to a PNG")
    map_parser.add_argument("id", metavar="ID", help="map id (e.g. restaurant) or task id (adds its team and NPCs)")
    map_parser.add_argument("--out", metavar="FILE.png", help="output file (default ID.png)")

    replay = sub.add_parser("replay", help="print a readable turn-by-turn transcript of a logged run")
    replay.add_argument("log", metavar="LOG", help="an Inspect .eval / .json log file")
    replay.add_argument("--sample", metavar="ID", help="task id of the run (default: every run in the log)")
    replay.add_argument("--epoch", type=int, metavar="N", help="which seed's run (Inspect epoch, 1-based)")
    replay.add_argument("--turn", type=int, metavar="N", help="only this turn")
    replay.add_argument("--brief", action="store_true", help="omit the per-turn observation summary")
    replay.add_argument(
        "--verify",
        action="store_true",
        help="re-execute each run from its recorded role outputs and draws; exit 1 unless all reproduce exactly",
    )

    report = sub.add_parser("report", help="tables, intervals, figures and an HTML page from logs")
    report.add_argument("logs", nargs="+", metavar="LOGS", help="Inspect log files or folders (searched recursively)")
    report.add_argument("--out", default="report", metavar="DIR", help="output folder (default report)")
    report.add_argument("--judge", metavar="MODEL", help="the judge of Table 1 (default: the judge with most runs)")
    report.add_argument(
        "--resamples", type=int, default=10_000, metavar="N", help="bootstrap resamples (default 10000)"
    )
    report.add_argument("--seed", type=int, default=0, metavar="S", help="bootstrap seed (default 0)")
    report.add_argument("--jobs", type=int, metavar="N", help="processes reading logs (default: one per CPU)")
    report.add_argument(
        "--include-unfinished",
        action="store_true",
        help="use the finished runs of evals that did not finish (left out by default, and listed)",
    )

    harm = sub.add_parser("harm", help="the over-harm classifier: classify texts or validate against labels")
    harm.add_argument("action", choices=["classify", "validate"], help="classify: add levels; validate: score labels")
    harm.add_argument("file", metavar="FILE.jsonl", help="JSON Lines with a 'text' per line ('-' for stdin)")
    harm.add_argument("--show-errors", action="store_true", help="validate: list the lines classified wrongly")
    harm.add_argument("--json", action="store_true", help="validate: print the figures as JSON")
    # Imported here, not at the top: these modules import CliError from this one.
    from .annotate import add_annotate_parser
    from .bench import add_bench_parser
    from .fork import add_fork_parser
    from .interrogate import add_interrogate_parser
    from .rejudge import add_rejudge_parser
    from .serve import add_serve_parser

    add_bench_parser(sub)
    add_fork_parser(sub)
    add_rejudge_parser(sub)
    add_annotate_parser(sub)
    add_interrogate_parser(sub)
    add_serve_parser(sub)
    return parser


# Subcommand → (module in this package, function): imported only when used, so --help stays fast.
COMMANDS = {
    "run": ("run", "run_command"),
    "bench": ("bench", "bench_command"),
    "tasks": ("tasks", "tasks_command"),
    "check": ("check", "check_command"),
    "map": ("map_cmd", "map_command"),
    "replay": ("replay", "replay_command"),
    "fork": ("fork", "fork_command"),
    "rejudge": ("rejudge", "rejudge_command"),
    "annotate": ("annotate", "annotate_command"),
    "interrogate": ("interrogate", "interrogate_command"),
    "report": ("report", "report_command"),
    "harm": ("harm", "harm_command"),
    "serve": ("serve", "serve_command"),
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module_name, function_name = COMMANDS[args.command]
    try:
        command = getattr(importlib.import_module(f".{module_name}", __package__), function_name)
        return int(command(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except CliError as err:
        print(f"virtualcrime: error: {err}", file=sys.stderr)
        return 2


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


if __name__ == "__main__":
    # ``python -m virtualcrime.cli.main`` runs this file as __main__; the subcommands import the package module,
    # whose CliError is the one they raise, so the package module's main must catch it.
    from virtualcrime.cli.main import main as package_main

    sys.exit(package_main())
