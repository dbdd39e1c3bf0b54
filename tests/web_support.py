"""Helpers for the web UI tests: an app over a temporary log folder, and a player that submits the scripted
Attacker's choices through the Play forms (so games travel the map the way a capable player would)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from virtualcrime.roles.scripted import ScriptedAttacker
from virtualcrime.web.app import create_app
from virtualcrime.web.games import GameStore, Session
from virtualcrime.web.player_view import next_observation
from virtualcrime.web.settings import ServeSettings

BROWSER_COOKIES: dict[str, str] = {}


@contextmanager
def web_client(log_dir: Path, browser: str = "default", **settings: object) -> Iterator[TestClient]:
    """A client of a fresh app (lifespan run) serving ``log_dir``, as the browser named ``browser``: its cookies
    (the player cookie that owns its games) carry over to the next app, as a browser's would over a restart."""
    settings.setdefault("play_seed", 0)  # deterministic games in tests
    app = create_app(ServeSettings(log_dir=log_dir, **settings))  # type: ignore[arg-type]
    with TestClient(app, base_url="http://localhost", follow_redirects=True) as client:
        saved = BROWSER_COOKIES.get(f"{log_dir}|{browser}")
        if saved:
            client.cookies.set("virtualcrime_player", saved)
        yield client
        cookie = client.cookies.get("virtualcrime_player")
        if cookie:
            BROWSER_COOKIES[f"{log_dir}|{browser}"] = cookie


def games_of(client: TestClient) -> GameStore:
    return client.app.state.games  # type: ignore[attr-defined, no-any-return]


def start_game(client: TestClient, task_id: str = "restaurant/robbery", player: str = "alice") -> str:
    """Start a game through the consent form; returns its id."""
    response = client.post("/play", data={"player": player, "task": task_id, "consent": "yes"}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return str(response.headers["location"]).rsplit("/", 1)[1]


def session(client: TestClient, game_id: str) -> Session:
    """The server's live game (loaded by the server itself, on its own event loop)."""
    client.get(f"/play/{game_id}/view.json")
    return games_of(client)._sessions[game_id]


class ScriptedPlayer:
    """Chooses each turn's notes and action as the scripted Attacker would, from the observation a player sees."""

    def __init__(self) -> None:
        self.attacker = ScriptedAttacker()

    def form(self, client: TestClient, game_id: str) -> dict[str, str]:
        state = session(client, game_id).game.state
        observation = next_observation(state)
        plan = asyncio.run(self.attacker.plan(observation))
        acting = observation.model_copy(update={"memory": plan.memory, "plan": plan.plan})
        action = asyncio.run(self.attacker.act(acting))
        return {
            "turn": str(observation.turn),
            "memory": plan.memory,
            "plan": plan.plan,
            "verb": action.verb,
            "description": action.description or f"{action.verb} {action.target}".strip(),
            "actor": action.actor,
            "target": action.target,
            "item": action.item,
            "minutes": str(action.minutes),
        }


def field_errors(html: str) -> list[str]:
    return re.findall(r'class="field-error"[^>]*>(.*?)</p>', html, re.S)
