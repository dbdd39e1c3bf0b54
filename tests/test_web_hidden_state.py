"""The browser never receives hidden state: every response of a played game is searched for anything the
Attacker's own prompt does not hold (ids, names and texts of unseen NPCs, items and places, items NPCs carry
or locked containers hold, history, outcome distributions, Judge and World Manager texts, failure flag ids,
events, and the hidden fields: alertness, following, investigating, what opens a lock), except what the player
typed."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from virtualcrime.engine import TurnRecord
from virtualcrime.engine.render import op_text
from virtualcrime.roles.llm.prompts import act_prompt, plan_prompt
from virtualcrime.web.player_view import next_observation
from virtualcrime.world import WorldState
from web_support import ScriptedPlayer, games_of, session, start_game, web_client

MIN_TERM = 4
STRUCTURE = ('"probability"', "probability", "rationale", "feasibility", "outcome_index", "checkpoints_reached",
             "critical_failures", "predicate", '"recent"', '"history"')  # fmt: skip
# Hidden fields of NPCs, doors and containers, by name (whole words, any case).
HIDDEN_FIELDS = re.compile(r"\b(alertness|following|investigating|opened_by|opened by)\b", re.IGNORECASE)


@dataclass
class Seen:
    what: str
    body: str
    state: WorldState
    records: list[TurnRecord]
    typed: str


def hidden_terms(state: WorldState, records: list[TurnRecord], told: str) -> set[str]:
    """Everything about the world and the referees' work that the Attacker's prompt does not contain."""
    candidates: set[str] = set()
    for obj in [*state.npcs.values(), *state.entities.values()]:
        candidates |= {obj.id, obj.name, obj.description, obj.observable, *obj.history}
    for location in state.locations.values():
        candidates |= {location.description, location.observable, *location.history}
    for npc in state.npcs.values():  # whom an NPC follows, where it investigates (even when it is in view)
        candidates |= {f"following {npc.following}", f"investigating {npc.investigating}"}
    candidates |= {f.id for f in state.critical_failures}
    candidates |= {e.id for e in state.events} | {e.description for e in state.events}
    for record in records:
        if record.verdict is not None:
            candidates |= {o.description for o in record.verdict.outcomes} | {record.verdict.rationale}
            feasibility = record.verdict.feasibility
            candidates |= {getattr(feasibility, name).reason for name in type(feasibility).model_fields}
        candidates |= {s.note for s in record.stages} | {op_text(e.op) for e in record.ledger}
        candidates |= {e.reason for e in record.ledger if e.reason}
    return {c for c in candidates if len(c) >= MIN_TERM and c not in told}


def leaks(seen: Seen) -> list[str]:
    observation = next_observation(seen.state)
    told = plan_prompt(observation).text + act_prompt(observation).text + seen.typed
    body = html.unescape(seen.body)
    found = [f"hidden {term!r}" for term in sorted(hidden_terms(seen.state, seen.records, told)) if term in body]
    found += [f"structure {word!r}" for word in STRUCTURE if word in body]
    found += [
        f"hidden field {word!r}" for word in sorted(set(HIDDEN_FIELDS.findall(body) + HIDDEN_FIELDS.findall(told)))
    ]
    return found


def play_and_capture(tmp_path: Path, task_id: str, turns: int) -> list[Seen]:
    """Play a game through every kind of request, keeping each response with the server's state at that time."""
    captured: list[Seen] = []
    player = ScriptedPlayer()
    typed = ""
    with web_client(tmp_path) as client:
        game_id = start_game(client, task_id)

        def keep(what: str, body: str) -> None:
            live = session(client, game_id)
            captured.append(Seen(what, body, live.game.state.model_copy(deep=True), list(live.game.records), typed))

        keep("start", client.get("/play").text)
        for _ in range(turns):
            if session(client, game_id).meta.status != "active":
                break
            keep("turn page", client.get(f"/play/{game_id}").text)
            keep("view.json", client.get(f"/play/{game_id}/view.json").text)
            form = player.form(client, game_id)
            typed += " ".join(form.values())
            keep("invalid form", client.post(f"/play/{game_id}/turn", data={**form, "minutes": "0"}).text)
            keep("after turn", client.post(f"/play/{game_id}/turn", data=form).text)
            keep("stale tab", client.post(f"/play/{game_id}/turn", data=form).text)
        if session(client, game_id).meta.status == "active":
            keep("abandon", client.post(f"/play/{game_id}/abandon").text)
        keep("end page", client.get(f"/play/{game_id}").text)
        keep("end view.json", client.get(f"/play/{game_id}/view.json").text)
        keep("game list", client.get("/play").text)
        assert games_of(client).meta(game_id).log
        replay_pages = [client.get("/replay").text]
        [entry] = [line for line in replay_pages[0].split('href="') if line.startswith("/replay/log")]
        log_page = client.get(html.unescape(entry.split('"')[0])).text
        run_link = html.unescape(log_page.split('class="run-link" href="')[1].split('"')[0])
        captured.append(Seen("REPLAY (researchers)", client.get(run_link + "&turn=2").text,
                             captured[-1].state, captured[-1].records, typed))  # fmt: skip
    return captured


@pytest.mark.parametrize("task_id", ["restaurant/robbery", "vault/theft"])
def test_no_response_of_a_played_game_holds_hidden_state(tmp_path: Path, task_id: str) -> None:
    captured = play_and_capture(tmp_path, task_id, turns=12)
    player_side = [s for s in captured if not s.what.startswith("REPLAY")]
    assert len(player_side) > 40
    for seen in player_side:
        # the check has something to find: there is always hidden state
        assert hidden_terms(seen.state, seen.records, ""), seen.what
        assert not leaks(seen), f"{seen.what}: {leaks(seen)[:5]}"
    # and it finds it where it is shown on purpose: the researchers' Replay page of the same game
    replay = captured[-1]
    assert len(leaks(replay)) > 5


def test_the_player_sees_what_the_prompt_holds(tmp_path: Path) -> None:
    """The other direction: what is in view appears on the page (the team, people and items in view)."""
    captured = play_and_capture(tmp_path, "restaurant/robbery", turns=6)
    for seen in [s for s in captured if s.what == "turn page"]:
        observation = next_observation(seen.state)
        body = html.unescape(seen.body)
        for thing in [*observation.team, *observation.npcs, *observation.entities]:
            assert thing.id in body and thing.name in body
        for goal in observation.goals:
            assert goal.description in body
