"""Human play in the report: is each task solvable by people? (The paper lets up to three people play each task.)

A game played in the web UI is logged like any run, with the attacker model ``human/<player>``. Per task that
anyone played, the first three distinct players (in the order their games began, see ``play_order``) are counted:
how many games they played, whether any of them won and who, and the fewest turns to a win. Only status ``won`` is
a win; an abandoned game (the player gave up) is a game played and not won.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from .facts import HUMAN_PREFIX, RunFacts
from .metrics import status_counts
from .review import utc_time

MAX_PLAYERS = 3


class _H(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HumanTaskRow(_H):
    """One task's human games, by its first ``MAX_PLAYERS`` players."""

    task: str
    players: list[str]
    games: int
    statuses: dict[str, int]
    solved: bool
    winners: list[str]
    fewest_turns_to_win: int | None
    not_counted: list[str]


class HumanPlaySummary(_H):
    """Per task people played, and the benchmark tasks nobody played. ``players``: everyone who played; ``games``:
    the games of the counted players, ``games_not_counted`` the others'."""

    max_players: int
    players: list[str]
    games: int
    games_not_counted: int
    tasks: list[HumanTaskRow]
    solved: int
    benchmark_tasks: int
    unplayed: list[str]


def is_human(attacker: str) -> bool:
    """Whether an attacker model stands for a person who played in the web UI."""
    return attacker.startswith(HUMAN_PREFIX)


def player_of(attacker: str) -> str:
    """``human/alice`` → ``alice``."""
    return attacker[len(HUMAN_PREFIX) :]


def build_human_play(runs: Sequence[RunFacts], created: Mapping[str, str]) -> HumanPlaySummary | None:
    """The human solvability section, or None when no human played.

    Players are ordered by when each game began (``RunFacts.started``, recorded by the web UI), else by their log's
    creation time: ``created`` maps each log (``RunFacts.log``) to it (``LogSummary.created``); runs with neither
    come last. ``unplayed`` lists the tasks of the benchmark (non-human) runs
    that no human played.
    """
    human = [r for r in runs if is_human(r.attacker)]
    if not human:
        return None
    human.sort(key=lambda r: play_order(r, created))
    by_task: dict[str, list[RunFacts]] = defaultdict(list)
    for run in human:
        by_task[run.task_id].append(run)
    rows = [task_row(task, games) for task, games in sorted(by_task.items())]
    benchmark = {r.task_id for r in runs if not is_human(r.attacker)}
    return HumanPlaySummary(
        max_players=MAX_PLAYERS,
        players=sorted({player_of(r.attacker) for r in human}),
        games=sum(row.games for row in rows),
        games_not_counted=len(human) - sum(row.games for row in rows),
        tasks=rows,
        solved=sum(row.solved for row in rows),
        benchmark_tasks=len(benchmark),
        unplayed=sorted(benchmark - set(by_task)),
    )


def play_order(run: RunFacts, created: Mapping[str, str]) -> tuple[Any, ...]:
    """The sort key of a human game: when it began (``started``, else its log's creation time; unknown last), then,
    for games that began at the same moment (the web UI records whole seconds), the one whose log was written first
    (it ended first), then the player's name and the seed. Log file names and eval ids, which
    are random, come only last, so the order never depends on them unless two games agree in all of that."""
    log_created = utc_time(created.get(run.log, ""), datetime.max)
    began = utc_time(run.started, datetime.max) if run.started else log_created
    return (began, log_created, player_of(run.attacker), run.seed, run.eval_id, run.log, run.sample_id,
            run.epoch)  # fmt: skip


def task_row(task: str, games: Sequence[RunFacts]) -> HumanTaskRow:
    """One task's row from its human games, which must be in the order played."""
    order = list(dict.fromkeys(player_of(r.attacker) for r in games))
    players = order[:MAX_PLAYERS]
    counted = [r for r in games if player_of(r.attacker) in players]
    wins = [r for r in counted if r.won]
    return HumanTaskRow(
        task=task,
        players=players,
        games=len(counted),
        statuses=status_counts(counted),
        solved=bool(wins),
        winners=list(dict.fromkeys(player_of(r.attacker) for r in wins)),
        fewest_turns_to_win=min((r.turns for r in wins), default=None),
        not_counted=order[MAX_PLAYERS:],
    )
