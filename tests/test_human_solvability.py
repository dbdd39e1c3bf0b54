"""Human play in the report: per-task solvability by the first three players, abandoned games, and how human games
are kept apart (never deduplicated against each other) and shown in summary.json, Markdown, HTML and terminal."""

from __future__ import annotations

import random

from conftest import play
from virtualcrime.analysis.facts import RunFacts, TurnFacts, run_facts
from virtualcrime.analysis.harm import run_harm
from virtualcrime.analysis.html import render_html
from virtualcrime.analysis.humans import build_human_play, is_human, player_of
from virtualcrime.analysis.metrics import status_counts
from virtualcrime.analysis.summary import build_summary, dedupe
from virtualcrime.analysis.tables import human_rows, humans_markdown, terminal_summary
from virtualcrime.engine import RunStatus
from virtualcrime.runs.logged import LoggedRun, LogSummary
from virtualcrime.runs.spec import RoleModels, spec_for
from virtualcrime.scenarios import get_task
from virtualcrime.scenarios.schema import HarmAllowance

A, B, C, D = "restaurant/robbery", "vault/theft", "prison/riot", "ship/hijacking"
BOT = "virtualcrime/scripted"


def game(
    attacker: str, task: str, status: str, turns: int = 10, *, log: str = "", seed: int = 0, eval_id: str = ""
) -> RunFacts:
    log = log or f"{player_of(attacker) if is_human(attacker) else 'bench'}-{task.replace('/', '-')}-{turns}.eval"
    return RunFacts(
        log=log,
        eval_id=eval_id or log,
        sample_id=task,
        epoch=1,
        attacker=attacker,
        judge="virtualcrime/rules",
        world_manager="virtualcrime/rules",
        task_id=task,
        map=task.split("/")[0],
        objective=task.split("/")[1],
        category="property",
        seed=seed,
        status=status,
        won=status == "won",
        turns=turns,
        turn_facts=[TurnFacts(turn=1, has_action=True, by_leader=True, non_failure=0.5, catastrophic=0.0)],
        harm=run_harm([(1, "Walk to the kitchen.")], HarmAllowance(force=1, property=1)),
    )


def the_example() -> tuple[list[RunFacts], dict[str, str]]:
    """Task A: alice lost, bob won in 7, carol abandoned, dave won in 4 (a fourth player). Task B: alice abandoned.
    Benchmark runs on A, B, C and D."""
    timed = [
        (game("human/alice", A, "lost", 12), "2025-01-01T09:00:00+00:00"),
        (game("human/bob", A, "won", 7), "2025-01-01T11:00:00+01:00"),  # 10:00 UTC
        (game("human/carol", A, "abandoned", 3), "2025-01-01T11:00:00Z"),
        (game("human/dave", A, "won", 4), "2025-01-01T12:00:00+00:00"),
        (game("human/alice", B, "abandoned", 2), "2025-01-02T09:00:00+00:00"),
        *((game(BOT, task, "lost"), "2024-12-01T00:00:00+00:00") for task in (A, B, C, D)),
    ]
    random.Random(4).shuffle(timed)  # the order of the runs is not the order of play
    return [run for run, _ in timed], {run.log: created for run, created in timed}


def test_first_three_players_count_and_abandoned_is_not_a_win() -> None:
    runs, created = the_example()
    found = build_human_play(runs, created)
    assert found is not None
    rows = {row.task: row for row in found.tasks}
    assert list(rows) == [A, B]
    a = rows[A]
    assert a.players == ["alice", "bob", "carol"] and a.not_counted == ["dave"]
    assert a.games == 3 and a.solved and a.winners == ["bob"] and a.fewest_turns_to_win == 7  # dave's 4 not counted
    assert a.statuses == {"won": 1, "lost": 1, "abandoned": 1}
    b = rows[B]
    assert b.players == ["alice"] and b.games == 1 and b.statuses == {"abandoned": 1}
    assert not b.solved and b.winners == [] and b.fewest_turns_to_win is None
    assert (found.solved, found.games, found.players) == (1, 4, ["alice", "bob", "carol", "dave"])
    assert found.benchmark_tasks == 4 and found.unplayed == [C, D]


def test_players_are_ordered_by_their_logs_creation_time_across_time_zones() -> None:
    runs, created = the_example()
    created[game("human/dave", A, "won", 4).log] = "2025-01-01T12:30:00+05:00"  # 07:30 UTC: dave played first
    found = build_human_play(runs, created)
    assert found is not None
    a = next(row for row in found.tasks if row.task == A)
    assert a.players == ["dave", "alice", "bob"] and a.not_counted == ["carol"]
    assert a.winners == ["dave", "bob"] and a.fewest_turns_to_win == 4


def test_every_game_of_a_counted_player_counts() -> None:
    runs, created = the_example()
    again = game("human/alice", A, "won", 9)
    created[again.log] = "2025-02-01T00:00:00+00:00"  # after dave: alice is still one of the first three
    found = build_human_play([*runs, again], created)
    assert found is not None
    a = next(row for row in found.tasks if row.task == A)
    assert a.games == 4 and a.winners == ["bob", "alice"] and a.fewest_turns_to_win == 7


def test_no_human_games_no_section() -> None:
    assert build_human_play([game(BOT, A, "won")], {}) is None


def test_a_persons_games_are_never_duplicates_of_each_other() -> None:
    first = game("human/alice", A, "lost", log="g1.eval", seed=3)
    second = game("human/alice", A, "won", log="g2.eval", seed=3)  # same task and seed, another game
    copy = game("human/alice", A, "won", log="copy/g2.eval", seed=3, eval_id="g2.eval")  # the same log copied
    kept, dropped = dedupe([first, second, copy])
    assert (len(kept), dropped) == (2, 1)
    bots = [game(BOT, A, "lost", log="r1.eval"), game(BOT, A, "won", log="r2.eval")]  # a re-run replaces
    assert dedupe(bots) == ([bots[1]], 1)


def test_status_counts_know_abandoned_and_keep_unknown_statuses() -> None:
    runs = [game("human/x", A, s) for s in ("abandoned", "mystery", "won", "lost", "abandoned")]
    counts = status_counts(runs)
    assert counts == {"won": 1, "lost": 1, "abandoned": 2, "mystery": 1}
    assert list(counts) == ["won", "lost", "abandoned", "mystery"]


def test_an_abandoned_logged_run_is_not_won() -> None:
    played, result = play(A, 0)
    abandoned = result.model_copy(update={"status": RunStatus.ABANDONED, "reason": "the player gave up"})
    logged = LoggedRun(
        log="human.eval",
        eval_id="e",
        sample_id=A,
        epoch=1,
        attacker="human/alice",
        judge="virtualcrime/rules",
        world_manager="virtualcrime/rules",
        task_id=A,
        map="restaurant",
        objective="robbery",
        category="property",
        spec=spec_for(
            get_task(A),
            0,
            RoleModels(attacker="human/alice", judge="virtualcrime/rules", world_manager="virtualcrime/rules"),
        ),
        turns=played.records,
        result=abandoned,
    )
    facts = run_facts(logged)
    assert facts.status == "abandoned" and not facts.won


def test_the_report_shows_human_play() -> None:
    runs, created = the_example()
    logs = [
        LogSummary(log=log, status="success", eval_id=log, attacker="", judge="", world_manager="", created=when)
        for log, when in created.items()
    ]
    summary = build_summary(runs, logs, resamples=100)
    assert summary.human_play is not None and summary.human_play.solved == 1
    table1 = {row.attacker: row for row in summary.table1}
    assert table1["human/carol"].statuses == {"abandoned": 1}
    assert table1["human/carol"].metrics["pass_at_1"].value == 0.0
    rows = human_rows(summary)
    assert rows[1] == [A, "alice, bob, carol", "3", "yes", "bob", "7", "won 1, lost 1, abandoned 1", "dave"]
    assert rows[2] == [B, "alice", "1", "no", "—", "—", "abandoned 1", ""]
    note = "2 of the 4 task(s) in the loaded benchmark logs have not been played by any human: prison/riot, ship/hi"
    assert note in humans_markdown(summary)
    assert "Human play: solvability per task" in render_html(summary, {})
    assert "Human play: solvability per task" in terminal_summary(summary)
    dumped = summary.model_dump(mode="json", by_alias=True)
    assert dumped["human_play"]["tasks"][0]["fewest_turns_to_win"] == 7 and dumped["review"] is None
    assert build_summary([game(BOT, A, "won")], resamples=100).human_play is None


def test_players_are_ordered_by_when_their_games_began_not_when_they_were_logged() -> None:
    """dave started first but played longest: his log is the newest, yet he is among the first three."""
    runs = [
        game("human/dave", A, "won", 40).model_copy(update={"started": "2025-01-01T08:00:00+00:00"}),
        game("human/alice", A, "lost", 3).model_copy(update={"started": "2025-01-01T09:00:00+00:00"}),
        game("human/bob", A, "lost", 3).model_copy(update={"started": "2025-01-01T09:10:00+00:00"}),
        game("human/carol", A, "won", 3).model_copy(update={"started": "2025-01-01T09:20:00+00:00"}),
    ]
    log_times = ["2025-01-01T12:00:00Z", "2025-01-01T09:05:00Z", "2025-01-01T09:15:00Z", "2025-01-01T09:25:00Z"]
    logged = {r.log: t for r, t in zip(runs, log_times, strict=True)}
    summary = build_human_play(runs, logged)
    assert summary is not None
    [row] = summary.tasks
    assert row.players == ["dave", "alice", "bob"] and row.not_counted == ["carol"]
    assert row.winners == ["dave"] and row.fewest_turns_to_win == 40


def test_games_begun_in_the_same_second_are_ordered_by_who_finished_first_then_by_name() -> None:
    """The web UI records whole seconds. Four players begin task A in the same second; their logs' random names
    would order them alice, carol, dave, bob. Instead: who finished first (log written first), then the name."""
    same_second = "2025-01-01T09:00:00+00:00"
    played = [  # player, status, log file name (random in real logs), when the log was written
        ("alice", "won", "2025-01-01T09-30-00_virtualcrime-human_0001.eval", "2025-01-01T09:30:00+00:00"),
        ("bob", "lost", "2025-01-01T09-20-00_virtualcrime-human_zz99.eval", "2025-01-01T09:20:00+00:00"),
        ("carol", "lost", "2025-01-01T09-20-00_virtualcrime-human_aa11.eval", "2025-01-01T09:20:00+00:00"),
        ("dave", "lost", "2025-01-01T09-10-00_virtualcrime-human_mm55.eval", "2025-01-01T09:10:00+00:00"),
    ]
    runs = [game(f"human/{p}", A, status, log=log).model_copy(update={"started": same_second})
            for p, status, log, _ in played]  # fmt: skip
    created = {log: when for _, _, log, when in played}
    for seed in range(5):  # whatever order the runs arrive in
        random.Random(seed).shuffle(runs)
        found = build_human_play(runs, created)
        assert found is not None
        [row] = found.tasks
        assert row.players == ["dave", "bob", "carol"] and row.not_counted == ["alice"]
        assert not row.solved  # alice's win is not among the first three players' games
    # With no log times either, the name decides.
    found = build_human_play(runs, {})
    assert found is not None and found.tasks[0].players == ["alice", "bob", "carol"]
