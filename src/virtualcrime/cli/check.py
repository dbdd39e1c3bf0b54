"""``virtualcrime check [PATH] [--solve]``: lint a scenario corpus and prove its tasks winnable offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from .main import CliError


def check_command(args: argparse.Namespace) -> int:
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
        return 1
    return 0
