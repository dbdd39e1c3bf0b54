"""``virtualcrime check [PATH] [--solve]``: lint a scenario corpus and prove its tasks winnable offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import CliError, positive_int

DEFAULT_SOLVE_SEEDS = 10


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = sub.add_parser("check", help="lint a scenario corpus; --solve proves every task winnable offline")
    check.add_argument("path", nargs="?", metavar="PATH",
                       help="corpus directory with objectives.yaml, maps/ and tasks/ (default: the bundled "
                       "one)")  # fmt: skip
    check.add_argument("--solve", action="store_true",
                       help="also play the scripted Attacker against the rules roles on every task")  # fmt: skip
    check.add_argument("--seeds", type=positive_int, default=DEFAULT_SOLVE_SEEDS, metavar="N",
                       help=f"seeds per task for --solve (default {DEFAULT_SOLVE_SEEDS})")  # fmt: skip
    check.add_argument("--task", action="append", metavar="ID", help="with --solve: only these tasks (or maps)")


def run(args: argparse.Namespace) -> int:
    from ..scenarios import DATA_DIR
    from ..scenarios.lint import lint_corpus

    path = Path(args.path) if args.path else DATA_DIR
    if not path.exists():
        raise CliError(f"{path} does not exist")
    if path.is_dir() and not any((path / part).exists() for part in ("objectives.yaml", "maps", "tasks")):
        raise CliError(f"{path} is not a corpus directory (expected objectives.yaml, maps/ and/or tasks/)")
    findings = lint_corpus(path, base=DATA_DIR)
    errors = [f for f in findings if f.severity == "error"]
    for finding in findings:
        print(finding)
    print(f"{path}: {len(errors)} error(s), {len(findings) - len(errors)} warning(s)")
    if errors:
        print(f"check failed: {len(errors)} error(s) in the corpus", file=sys.stderr)
        return 1
    if args.solve:
        if path != DATA_DIR and not ((path / "maps").is_dir() and (path / "tasks").is_dir()):
            raise CliError("--solve needs a corpus directory with maps/ and tasks/ (and objectives.yaml)")
        return _solve(path, args.seeds, args.task)
    return 0


def _solve(path: Path, seeds: int, only: list[str] | None) -> int:
    from ..engine.solve import solve
    from ..scenarios import load_tasks

    tasks = load_tasks(path)
    chosen = [t for t in sorted(tasks) if not only or any(t == o or t.startswith(o.rstrip("/") + "/") for o in only)]
    if not chosen:
        raise CliError(f"no task matches {only}")
    print(f"\n{'task':34} {'won':>7}  {'turns when won':20} other endings")
    unsolved: list[str] = []
    total_wins = 0
    for task_id in chosen:
        report = solve(tasks[task_id], range(seeds))
        total_wins += report.wins
        if report.wins == 0:
            unsolved.append(task_id)
        turns = ",".join(str(t) for t in report.win_turns) or "-"
        losses = "; ".join(f"{n}× {why}" for why, n in sorted(report.losses.items())) or "-"
        print(f"{task_id:34} {report.wins:>3}/{seeds:<3}  {turns:20} {losses}")
    solved = len(chosen) - len(unsolved)
    print(f"\n{solved} of {len(chosen)} tasks won on at least one of {seeds} seeds; {total_wins} wins in "
          f"{len(chosen) * seeds} runs")  # fmt: skip
    if unsolved:
        print(f"never won: {', '.join(unsolved)}")
        hint = (f"; the default, {DEFAULT_SOLVE_SEEDS} seeds, gives the scripted planner more tries"
                if seeds < DEFAULT_SOLVE_SEEDS else "")  # fmt: skip
        print(f"check failed: {len(unsolved)} of {len(chosen)} task(s) never won in {seeds} seed(s){hint}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0
