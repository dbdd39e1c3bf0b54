"""Play in the web UI: the engine turn behind the forms, validation, stale tabs, restarts and the game's log."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.model import ModelAPI, modelapi

from conftest import ScriptedModelAPI
from test_llm_roles import scripted_reply
from virtualcrime.cli.main import main
from virtualcrime.engine import EngineConfig, Game, Roles
from virtualcrime.engine.replay import recorded_roles
from virtualcrime.harness.log_reader import find_logs, iter_runs, read_header
from virtualcrime.roles.rules import RulesJudge, RulesWorldManager
from virtualcrime.runs.logged import LogSummary
from virtualcrime.scenarios import get_task
from web_support import ScriptedPlayer, field_errors, games_of, session, start_game, web_client

TASK = "restaurant/robbery"


def _play_turns(client, game_id: str, turns: int, player: ScriptedPlayer) -> None:  # type: ignore[no-untyped-def]
    for _ in range(turns):
        if session(client, game_id).meta.status != "active":
            return
        response = client.post(f"/play/{game_id}/turn", data=player.form(client, game_id))
        assert response.status_code == 200, field_errors(response.text) or response.text[:500]


def test_consent_and_player_name_are_required(tmp_path: Path) -> None:
    with web_client(tmp_path) as client:
        page = client.get("/play").text
        assert "fictional sandbox" in page and "logged for research" in page
        response = client.post("/play", data={"player": "al ice!", "task": "nowhere/none"})
        assert response.status_code == 422
        errors = " ".join(field_errors(response.text))
        assert "letters, digits" in errors and "choose a task" in errors and "tick the box" in errors
        assert not games_of(client).all_meta()


def test_a_turn_runs_the_same_engine_turn_as_a_model_run(tmp_path: Path) -> None:
    """The records of a human game equal an engine run fed the same actions with the same seed and roles."""
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 6, player)
        live = session(client, game_id)
        records, seed = live.game.records, live.meta.seed
    assert len(records) == 6
    assert all(r.action is not None and r.verdict is not None for r in records)
    reference = Game(get_task(TASK).initial_state(),
                     Roles(recorded_roles(records).attacker, RulesJudge(), RulesWorldManager()), seed)  # fmt: skip
    for _ in records:
        asyncio.run(reference.step())
    assert [r.model_dump() for r in reference.records] == [r.model_dump() for r in records]


def test_every_field_is_validated_with_a_message_and_the_game_does_not_move(tmp_path: Path) -> None:
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        bad = {"turn": "1", "verb": "", "description": "x" * 1001, "actor": "nobody", "target": "no_such_place",
               "item": "no_such_item", "minutes": "500", "memory": "m" * 4001, "plan": ""}  # fmt: skip
        response = client.post(f"/play/{game_id}/turn", data=bad)
        assert response.status_code == 422
        errors = " ".join(field_errors(response.text))
        for expected in ("verb: required", "description: at most 1000", "actor: choose a team member",
                         "target: not an id", "item: not an item", "minutes: a whole number from 1 to 120",
                         "memory: at most 4000"):  # fmt: skip
            assert expected in errors
        assert 'value="no_such_place"' not in response.text  # a bad choice is not echoed as an option
        response = client.post(f"/play/{game_id}/turn", data={**bad, "minutes": "ten"})
        assert "minutes: a whole number" in " ".join(field_errors(response.text))
        assert session(client, game_id).game.state.turn == 0


def test_oversize_and_malformed_bodies_are_refused(tmp_path: Path) -> None:
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        huge = {"turn": "1", "description": "x" * 70_000}
        assert client.post(f"/play/{game_id}/turn", data=huge).status_code == 413
        many = "&".join(f"f{i}=1" for i in range(40))
        response = client.post(f"/play/{game_id}/turn", content=many,
                               headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
        assert response.status_code == 422 and "more than 32 fields" in response.text
        response = client.post(f"/play/{game_id}/turn", content=b"\xff\xfe",
                               headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
        assert response.status_code == 422 and "not UTF-8" in response.text
        assert client.get("/play/..%2F..%2Fetc").status_code == 404
        assert session(client, game_id).game.state.turn == 0


def test_a_second_tab_cannot_play_the_same_turn_twice(tmp_path: Path) -> None:
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        form = player.form(client, game_id)
        assert client.post(f"/play/{game_id}/turn", data=form).status_code == 200
        stale = client.post(f"/play/{game_id}/turn", data=form)  # the other tab still shows turn 1
        assert stale.status_code == 409 and "another tab" in stale.text
        assert session(client, game_id).game.state.turn == 1


def test_concurrent_submissions_of_one_turn_play_it_once(tmp_path: Path) -> None:
    """Two requests for the same turn at the same moment: the game's lock lets one through."""
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        form = player.form(client, game_id)
        games = games_of(client)
        from virtualcrime.roles import Action, PlanUpdate

        plan = PlanUpdate(memory=form["memory"], plan=form["plan"])
        action = Action(verb=form["verb"], description=form["description"], actor=form["actor"],
                        target=form["target"], item=form["item"], minutes=int(form["minutes"]))  # fmt: skip

        async def both() -> list[object]:
            return await asyncio.gather(games.play_turn(game_id, 1, plan, action),
                                        games.play_turn(game_id, 1, plan, action), return_exceptions=True)  # fmt: skip

        outcomes = client.portal.call(both)  # type: ignore[union-attr]
        assert sum(not isinstance(o, Exception) for o in outcomes) == 1
        assert [getattr(o, "status", None) for o in outcomes if isinstance(o, Exception)] == [409]
        assert session(client, game_id).game.state.turn == 1


def test_a_restart_loses_no_finished_turn(tmp_path: Path) -> None:
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 3, player)
        before = [r.model_dump() for r in session(client, game_id).game.records]
        state_before = session(client, game_id).game.state.model_dump()
    with web_client(tmp_path) as client:  # a new server process over the same log folder
        restored = session(client, game_id)
        assert [r.model_dump() for r in restored.game.records] == before
        assert restored.game.state.model_dump() == state_before
        page = client.get(f"/play/{game_id}").text
        assert "turn 4" in page
        _play_turns(client, game_id, 2, player)
        assert session(client, game_id).game.state.turn == 5


def test_a_torn_last_line_costs_only_the_unfinished_turn(tmp_path: Path) -> None:
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 2, player)
        path = session(client, game_id).checkpoint.path
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"turn": 3, "clock": "20:')  # the process died while writing turn 3
    with web_client(tmp_path) as client:
        assert session(client, game_id).game.state.turn == 2
        _play_turns(client, game_id, 2, player)  # turns 3 and 4 go on clean lines
    with web_client(tmp_path) as client:
        assert session(client, game_id).game.state.turn == 4
        page = client.post(f"/play/{game_id}/abandon").text
        assert "after 4 turn(s)" in page and "logged as" in page


def test_a_game_that_ended_just_before_a_crash_stays_ended(tmp_path: Path) -> None:
    """The last turn is on disk but game.json still says active: the rebuilt game is over, not playable."""
    player = ScriptedPlayer()
    with web_client(tmp_path, max_turns=3) as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 3, player)
        meta = games_of(client).meta(game_id)
    assert meta.status == "ended"
    games_folder = tmp_path / ".virtualcrime" / "play" / game_id
    (games_folder / "game.json").write_text(meta.model_copy(update={"status": "active", "log": ""}).model_dump_json())
    with web_client(tmp_path, max_turns=3) as client:
        page = client.get(f"/play/{game_id}").text
        assert "Game over" in page and "turn limit (3)" in page
        assert client.post(f"/play/{game_id}/turn", data=player.form(client, game_id)).status_code in (409, 422)
        assert session(client, game_id).game.state.turn == 3


def test_only_the_browser_that_started_a_game_can_see_or_play_it(tmp_path: Path) -> None:
    player = ScriptedPlayer()
    with web_client(tmp_path, browser="alice") as alice:
        game_id = start_game(alice, player="alice")
        form = player.form(alice, game_id)
        assert "alice" in alice.get("/play").text and f"/play/{game_id}" in alice.get("/play").text
    with web_client(tmp_path, browser="mallory") as mallory:
        assert f"/play/{game_id}" not in mallory.get("/play").text  # no one else's games listed
        assert mallory.get(f"/play/{game_id}").status_code == 403
        assert mallory.get(f"/play/{game_id}/view.json").status_code == 403
        assert mallory.post(f"/play/{game_id}/turn", data=form).status_code == 403
        assert mallory.post(f"/play/{game_id}/abandon").status_code == 403
        assert mallory.post(f"/play/{game_id}/log").status_code == 403
    with web_client(tmp_path, browser="alice") as alice:
        assert session(alice, game_id).game.state.turn == 0 and session(alice, game_id).meta.status == "active"
        assert alice.post(f"/play/{game_id}/turn", data=form).status_code == 200


def test_pages_show_the_last_complete_turn_while_a_turn_is_being_resolved(tmp_path: Path) -> None:
    """A slow referee's stages change the state in steps; the player's view and form checks wait for the end."""
    from virtualcrime.roles import Action, PlanUpdate, Stage, StageContext, StageResult
    from virtualcrime.web.games import GameError, GameStore
    from virtualcrime.web.settings import ServeSettings

    class GatedWorldManager(RulesWorldManager):
        def __init__(self, gate: asyncio.Event) -> None:
            super().__init__()
            self.gate = gate

        async def run_stage(self, stage: Stage, context: StageContext) -> StageResult:
            result = await super().run_stage(stage, context)
            if stage == "npcs":
                await self.gate.wait()
            return result

    async def scenario() -> None:
        gate = asyncio.Event()
        games = GameStore(
            ServeSettings(log_dir=tmp_path, play_seed=0), lambda j, w: (RulesJudge(), GatedWorldManager(gate))
        )
        meta = await games.create("alice", TASK, "owner")
        live = await games.session(meta.id)
        view = live.view
        move = Action(verb="observe", description="look around", actor=view.members[0], target="", minutes=5)
        notes = PlanUpdate(memory="", plan="")
        turn = asyncio.create_task(games.play_turn(meta.id, 1, notes, move))
        for _ in range(50):
            await asyncio.sleep(0)
        assert live.game.state.turn == 1 and live.lock.locked()  # mid-turn: the live state is already numbered 1
        assert live.view.turn == 1 and live.view == view  # the player still sees the start of turn 1
        gate.set()
        await turn
        assert live.view.turn == 2 and live.view.last_result.startswith("Turn 1:")
        try:
            await games.play_turn(meta.id, 1, notes, move)  # the second tab's form for turn 1
            raise AssertionError("a stale form was accepted")
        except GameError as err:
            assert err.status == 409

    asyncio.run(scenario())


def test_an_abandoned_game_is_a_normal_log_that_report_and_verify_read(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client, player="bob")
        _play_turns(client, game_id, 4, player)
        page = client.post(f"/play/{game_id}/abandon")
        assert "abandoned by the player after 4 turn(s)" in page.text and "logged as" in page.text
        meta = games_of(client).meta(game_id)
        again = client.post(f"/play/{game_id}/abandon")
        assert again.status_code == 409
        assert client.post(f"/play/{game_id}/turn", data={"turn": "5"}).status_code in (409, 422)
    [log] = find_logs([tmp_path])
    assert log.name == Path(meta.log).name
    header = read_header(log)
    assert isinstance(header, LogSummary) and header.attacker == "human/bob"
    [run] = list(iter_runs(header))
    assert run.result is not None and run.result.status.value == "abandoned" and len(run.turns) == 4
    assert run.result.seed == meta.seed
    verify = subprocess.run([sys.executable, "-m", "virtualcrime.cli.main", "replay", str(log), "--verify"],
                            capture_output=True, text=True)  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "4 turns reproduce exactly" in verify.stdout
    out = tmp_path / "report"
    report = subprocess.run([sys.executable, "-m", "virtualcrime.cli.main", "report", str(tmp_path), "--out",
                             str(out), "--jobs", "1"], capture_output=True, text=True)  # fmt: skip
    assert report.returncode == 0, report.stdout + report.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert "human/bob" in json.dumps(summary)
    assert main(["interrogate", str(log)]) == 0
    assert "is a person who played in the web UI" in capsys.readouterr().out
    assert main(["rejudge", str(log), "--judge", "virtualcrime/rules-strict"]) == 2  # people's games are left out
    assert "played in the web UI (--include-human to re-judge)" in capsys.readouterr().out
    assert main(["rejudge", str(log), "--judge", "virtualcrime/rules-strict", "--include-human"]) == 0
    assert "got a verdict from virtualcrime/rules-strict" in capsys.readouterr().out
    assert main(["fork", str(log), "--task", TASK, "--turn", "2"]) == 2
    assert "give --attacker MODEL" in capsys.readouterr().err


def test_a_finished_game_writes_its_log_at_once(tmp_path: Path) -> None:
    player = ScriptedPlayer()
    with web_client(tmp_path, max_turns=3) as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 3, player)
        meta = games_of(client).meta(game_id)
        assert meta.status == "ended" and meta.log and "turn limit (3)" in meta.result
        page = client.get(f"/play/{game_id}").text
        assert "Game over" in page and meta.log in page


def test_a_log_written_just_before_a_crash_is_not_written_twice(tmp_path: Path) -> None:
    """The log is on disk but game.json never heard of it: the next start finds it instead of writing another."""
    player = ScriptedPlayer()
    with web_client(tmp_path) as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 2, player)
        client.post(f"/play/{game_id}/abandon")
        meta = games_of(client).meta(game_id)
    [log] = find_logs([tmp_path])
    (tmp_path / ".virtualcrime" / "play" / game_id / "game.json").write_text(
        meta.model_copy(update={"log": ""}).model_dump_json()
    )
    with web_client(tmp_path) as client:
        assert games_of(client).meta(game_id).log == meta.log
    assert find_logs([tmp_path]) == [log]
    [run] = list(iter_runs(read_header(log)))  # type: ignore[arg-type]
    assert run.started == meta.created  # type: ignore[union-attr]


def test_a_log_that_could_not_be_written_is_written_at_the_next_start(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import virtualcrime.web.games as games_module

    def broken(*args: object, **kwargs: object) -> Path:
        raise OSError("disk full")

    player = ScriptedPlayer()
    with monkeypatch.context() as patch:
        patch.setattr(games_module, "write_human_log", broken)
        with web_client(tmp_path) as client:
            game_id = start_game(client)
            _play_turns(client, game_id, 2, player)
            page = client.post(f"/play/{game_id}/abandon").text
            assert "The log was not written: OSError: disk full" in page and "Try writing the log again" in page
    assert not find_logs([tmp_path])
    with web_client(tmp_path) as client:  # startup writes pending logs
        assert games_of(client).meta(game_id).log
    assert len(find_logs([tmp_path])) == 1


@pytest.mark.parametrize("judge", ["virtualcrime/scripted", "nonsense/model-x"])
def test_a_judge_that_cannot_judge_stops_the_server_at_start(tmp_path: Path, judge: str) -> None:
    from virtualcrime.web.app import ServeConfigError

    with pytest.raises((ServeConfigError, ValueError)), web_client(tmp_path, judge=judge):
        pass


def test_engine_config_of_the_game_is_the_servers(tmp_path: Path) -> None:
    with web_client(tmp_path, max_turns=7) as client:
        game_id = start_game(client)
        assert session(client, game_id).game.config == EngineConfig(max_turns=7, stall_turns=30)


class WebRefereeMock(ScriptedModelAPI):
    """A language-model Judge and World Manager for human games (valid replies; the first one is not JSON)."""

    calls = 0

    def reply(self, prompt: str) -> str:
        WebRefereeMock.calls += 1
        return "not json" if WebRefereeMock.calls == 1 else scripted_reply(prompt)


@modelapi(name="webrefmock")
def webrefmock() -> type[ModelAPI]:
    return WebRefereeMock


def test_language_model_referees_judge_human_games(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    player = ScriptedPlayer()
    with web_client(tmp_path, judge="webrefmock/judge", world_manager="webrefmock/wm") as client:
        game_id = start_game(client)
        _play_turns(client, game_id, 3, player)
        records = session(client, game_id).game.records
        client.post(f"/play/{game_id}/abandon")
        meta = games_of(client).meta(game_id)
    calls = [c for r in records for c in r.model_calls]
    assert {c.role for c in calls} == {"judge", "world_manager"} and all(c.ok for c in calls)
    assert any(c.attempts == 2 for c in calls)  # the unusable first reply was retried, as in a model run
    assert all(r.judge_called for r in records if not r.precheck)
    [log] = find_logs([tmp_path])
    header = read_header(log)
    assert (header.judge, header.world_manager) == ("webrefmock/judge", "webrefmock/wm")  # type: ignore[union-attr]
    assert meta.log and main(["replay", str(log), "--verify"]) == 0
    assert "3 turns reproduce exactly" in capsys.readouterr().out
