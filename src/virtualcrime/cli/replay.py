"""``virtualcrime replay``: a readable transcript of logged runs, turn by turn, or ``--verify`` that they reproduce."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CliError, non_negative_int, positive_int, print_markdown


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    replay = sub.add_parser("replay", help="print a readable turn-by-turn transcript of a logged run")
    replay.add_argument("log", metavar="LOG", help="an Inspect .eval / .json log file")
    replay.add_argument("--task", metavar="ID", help="the run's task id (default: every run in the log)")
    replay.add_argument("--sample", dest="task", help=argparse.SUPPRESS)  # the Inspect name of the same thing
    replay.add_argument("--seed", type=non_negative_int, metavar="S",
                        help="the run's seed, as `virtualcrime run` shows it (default: every seed)")  # fmt: skip
    replay.add_argument("--turn", type=positive_int, metavar="N", help="only this turn")
    replay.add_argument("--brief", action="store_true", help="omit the per-turn observation summary")
    replay.add_argument("--verify", action="store_true",
                        help="re-execute each run from its recorded role outputs and draws; exit 1 unless all "
                        "reproduce exactly")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ..harness.log_browser import RunNotFound, select_runs

    path = Path(args.log)
    try:
        entry, runs = select_runs(path, args.task, args.seed)
    except RunNotFound as err:
        raise CliError(str(err)) from err
    if args.verify:
        return _verify(path, entry, runs)
    return _transcripts(path, entry, runs, args.turn, args.brief)


def _transcripts(path, entry, runs, turn: int | None, brief: bool) -> int:  # type: ignore[no-untyped-def]
    from ..engine.render import render_result, render_turn
    from ..harness.log_browser import read_selected

    shown = 0
    for run in runs:
        logged = read_selected(path, entry, run)
        turns = [t for t in logged.turns if turn is None or t.turn == turn]
        if turn is not None and not turns:
            if len(runs) == 1:
                raise CliError(f"run {run.sample_id} seed {logged.seed} has turns 1–{len(logged.turns)}; no turn {turn}"
                               if logged.turns else f"run {run.sample_id} seed {logged.seed} has no turns")  # fmt: skip
            continue
        shown += len(turns)
        parts = [f"## {run.sample_id} · seed {logged.seed}"]
        if logged.error and not logged.turns:
            parts.append(f"No turns to show: {logged.error}")
        parts += [render_turn(record, observation=not brief) for record in turns]
        if logged.result is not None and turn is None:
            parts.append(render_result(logged.result))
        print_markdown("\n\n".join(parts) + "\n")
    if turn is not None and not shown:
        raise CliError(f"no run of {path.name} has a turn {turn}")
    return 0


def _verify(path, entry, runs) -> int:  # type: ignore[no-untyped-def]
    from ..harness.verify import verify_runs

    failed = 0
    for outcome in verify_runs(path, entry, runs):
        name = f"{outcome.task} seed {outcome.seed}"
        if outcome.ok:
            print(f"OK       {name}: {outcome.turns} turns reproduce exactly ({outcome.how}), {outcome.ending}")
        else:
            failed += 1
            print(f"MISMATCH {name} ({outcome.how}): {len(outcome.problems)} difference(s)")
            for problem in outcome.problems[:10]:
                print(f"  {problem}")
    print(f"\n{len(runs) - failed} of {len(runs)} run(s) reproduce exactly")
    return 1 if failed else 0
