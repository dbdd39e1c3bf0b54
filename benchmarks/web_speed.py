"""Web UI response times, printed as figures (not a test).

    python benchmarks/web_speed.py [--turns N] [--runs N]

Measures, in-process (FastAPI's test client, no network) with the offline rules roles:
  1. Play: a turn submitted and its next page rendered (the engine turn plus the fsynced record), per turn;
     the turn page alone; writing a finished game's log (an Inspect eval of one sample);
  2. Replay: opening a run (read from the log and replayed to rebuild every turn's state) and then stepping
     through its turns from the cache;
  3. Review: building the key-turn sample for a folder of logs, first and then cached, and saving a rating.
Targets: a turn, a replayed step and a rating each under 100 ms, so the pages feel immediate.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from inspect_ai import eval as inspect_eval

from virtualcrime.harness.task import virtualcrime
from virtualcrime.roles.scripted import ScriptedAttacker
from virtualcrime.web.app import create_app
from virtualcrime.web.player_view import next_observation
from virtualcrime.web.review import review_items
from virtualcrime.web.settings import ServeSettings

TASK = "restaurant/robbery"


def _ms(seconds: list[float]) -> str:
    return f"median {1000 * statistics.median(seconds):.1f} ms, max {1000 * max(seconds):.1f} ms (n={len(seconds)})"


def play(client: TestClient, turns: int) -> None:
    response = client.post("/play", data={"player": "bench", "task": TASK, "consent": "yes"}, follow_redirects=False)
    game_id = response.headers["location"].rsplit("/", 1)[1]
    attacker, games = ScriptedAttacker(), client.app.state.games  # type: ignore[attr-defined]
    turn_times, page_times, ending = [], [], ""
    for _ in range(turns):
        client.get(f"/play/{game_id}/view.json")
        session = games._sessions[game_id]
        if session.meta.status != "active":
            break
        observation = next_observation(session.game.state)
        plan = asyncio.run(attacker.plan(observation))
        action = asyncio.run(attacker.act(observation.model_copy(update={"memory": plan.memory, "plan": plan.plan})))
        form = {"turn": str(observation.turn), "memory": plan.memory, "plan": plan.plan, "verb": action.verb,
                "description": action.description or action.verb, "actor": action.actor, "target": action.target,
                "item": action.item, "minutes": str(action.minutes)}  # fmt: skip
        started = time.perf_counter()
        client.post(f"/play/{game_id}/turn", data=form)
        elapsed = time.perf_counter() - started
        if session.meta.status != "active":  # this turn ended the game: its request also wrote the log
            ending = f"last turn, ending the game and writing its log  {1000 * elapsed:.0f} ms"
            break
        turn_times.append(elapsed)
        started = time.perf_counter()
        client.get(f"/play/{game_id}")
        page_times.append(time.perf_counter() - started)
    if games._sessions[game_id].meta.status == "active":
        started = time.perf_counter()
        client.post(f"/play/{game_id}/abandon")
        ending = f"giving up and writing the log  {1000 * (time.perf_counter() - started):.0f} ms"
    print(f"Play:   turn submitted + next page  {_ms(turn_times)}")
    print(f"        turn page alone             {_ms(page_times)}")
    print(f"        {ending}")


def replay(client: TestClient, log_dir: Path) -> None:
    log = next(p for p in sorted(log_dir.glob("*.eval")) if "human" not in p.name)
    page = client.get(f"/replay/log?path={log.name}").text
    link = re.findall(r'class="run-link" href="([^"]+)"', page)[0].replace("&amp;", "&")
    started = time.perf_counter()
    client.get(link + "&turn=1")
    opened = time.perf_counter() - started
    steps = []
    for turn in range(2, 21):
        started = time.perf_counter()
        client.get(f"{link}&turn={turn}")
        steps.append(time.perf_counter() - started)
    print(f"Replay: open a run (read + replay)   {1000 * opened:.0f} ms; each further step {_ms(steps)}")


def review(client: TestClient, settings: ServeSettings) -> None:
    started = time.perf_counter()
    items = review_items(settings)
    first = time.perf_counter() - started
    started = time.perf_counter()
    review_items(settings)
    cached = time.perf_counter() - started
    saves = []
    for _ in range(10):
        page = client.get("/review/next?rater=bench").text
        index = re.search(r'name="i" value="(\d+)"', page)
        assert index, page[:300]
        started = time.perf_counter()
        client.post("/review/rate", data={"rater": "bench", "i": index.group(1), "judge_rating": "4",
                                          "world_manager_rating": "3"})  # fmt: skip
        saves.append(time.perf_counter() - started)
    print(f"Review: key-turn sample of {len(items)} turns: first {1000 * first:.0f} ms, cached {1000 * cached:.0f} ms")
    print(f"        rating saved + next turn    {_ms(saves)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="turns to play (default 30)")
    parser.add_argument("--runs", type=int, default=2, help="seeds per task in the review folder (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log_dir = Path(folder)
        started = time.perf_counter()
        benchmark = virtualcrime(tasks="restaurant,vault", seeds=args.runs, max_turns=30)
        inspect_eval(benchmark, model="virtualcrime/scripted", log_dir=str(log_dir), display="none")
        print(f"(setup: {args.runs} seeds of 8 tasks logged offline in {time.perf_counter() - started:.1f} s)")
        settings = ServeSettings(log_dir=log_dir)
        with TestClient(create_app(settings), base_url="http://localhost", follow_redirects=True) as client:
            play(client, args.turns)
            replay(client, log_dir)
            review(client, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
