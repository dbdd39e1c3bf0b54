"""Play: a person takes the Attacker's seat, with exactly the Attacker's view and rules."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..scenarios import load_tasks
from .forms import FormErrors, parse_form, player_name, turn_form
from .games import GameError, GameStore
from .pages import error_page, page
from .player_view import next_observation, player_view


def play_router(games: GameStore) -> APIRouter:
    router = APIRouter()

    def tasks() -> list[tuple[str, str]]:
        known = load_tasks()
        return [(task_id, known[task_id].initial_state().briefing.objective_name) for task_id in sorted(known)]

    def start_page(errors: dict[str, str] | None = None, values: dict[str, str] | None = None,
                   status: int = 200) -> HTMLResponse:  # fmt: skip
        return page("play_start.html", status=status, tasks=tasks(), errors=errors or {}, values=values or {},
                    games=games.all_meta()[:30])  # fmt: skip

    @router.get("/play", response_class=HTMLResponse)
    async def start() -> Response:
        return start_page()

    @router.post("/play")
    async def create(request: Request) -> Response:
        try:
            values = parse_form(await request.body())
        except FormErrors as err:
            return start_page(err.errors, err.values, 422)
        errors: dict[str, str] = {}
        player = player_name(values, errors)
        task_id = values.get("task", "")
        if task_id not in load_tasks():
            errors["task"] = "choose a task from the list"
        if values.get("consent") != "yes":
            errors["consent"] = "please read the notice and tick the box to play"
        if errors:
            return start_page(errors, values, 422)
        meta = await games.create(player, task_id)
        return RedirectResponse(f"/play/{meta.id}", status_code=303)

    async def turn_page(game_id: str, errors: dict[str, str] | None = None, values: dict[str, str] | None = None,
                        status: int = 200, notice: str = "") -> Response:  # fmt: skip
        session = await games.session(game_id)
        meta = session.meta
        if meta.status != "active":
            return page("play_end.html", status=status, meta=meta, turns=len(session.game.records), notice=notice)
        view = player_view(next_observation(session.game.state))
        return page("play_turn.html", status=status, meta=meta, view=view, errors=errors or {}, values=values or {},
                    notice=notice)  # fmt: skip

    @router.get("/play/{game_id}")
    async def show(game_id: str) -> Response:
        try:
            return await turn_page(game_id)
        except GameError as err:
            return error_page(str(err), err.status, "/play", "All games")

    @router.get("/play/{game_id}/view.json")
    async def view_json(game_id: str) -> Response:
        try:
            session = await games.session(game_id)
        except GameError as err:
            return JSONResponse({"error": str(err)}, status_code=err.status)
        if session.meta.status != "active":
            return JSONResponse({"status": session.meta.status, "result": session.meta.result})
        return JSONResponse(player_view(next_observation(session.game.state)).model_dump(mode="json"))

    @router.post("/play/{game_id}/turn")
    async def turn(game_id: str, request: Request) -> Response:
        try:
            session = await games.session(game_id)
            values = parse_form(await request.body())
            view = player_view(next_observation(session.game.state))
            expected, plan, action = turn_form(values, view)
            await games.play_turn(game_id, expected, plan, action)
        except FormErrors as err:
            return await turn_page(game_id, err.errors, err.values, 422)
        except GameError as err:
            if err.status == 409:
                return await turn_page(game_id, status=409, notice=str(err))
            return error_page(str(err), err.status, "/play", "All games")
        if session.meta.status != "active":
            await games.write_log(game_id)
        return RedirectResponse(f"/play/{game_id}", status_code=303)

    @router.post("/play/{game_id}/abandon")
    async def abandon(game_id: str) -> Response:
        return await end_and_log(game_id, give_up=True)

    @router.post("/play/{game_id}/log")
    async def retry_log(game_id: str) -> Response:
        return await end_and_log(game_id, give_up=False)

    async def end_and_log(game_id: str, give_up: bool) -> Response:
        """Give the game up (if asked) and write its log; then show the end page."""
        try:
            if give_up:
                await games.abandon(game_id)
            await games.write_log(game_id)
        except GameError as err:
            if err.status == 409:
                return await turn_page(game_id, status=409, notice=str(err))
            return error_page(str(err), err.status, "/play", "All games")
        return RedirectResponse(f"/play/{game_id}", status_code=303)

    return router
