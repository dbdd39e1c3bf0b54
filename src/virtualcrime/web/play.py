"""Play: a person takes the Attacker's seat, with exactly the Attacker's view and rules.

A game belongs to the browser that started it: a random player cookie (HttpOnly, SameSite=Strict) is set then,
and only its hash is kept in the game, so no other visitor can look at, play or give up that game.
"""

from __future__ import annotations

import hashlib
import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..scenarios import load_tasks
from .forms import FormErrors, parse_form, player_name, turn_form, turn_limits
from .games import GameError, GameStore, Session
from .pages import error_page, page

PLAYER_COOKIE = "virtualcrime_player"
COOKIE_SECONDS = 365 * 24 * 3600


def browser_owner(request: Request) -> str:
    """The hash of this browser's player cookie ("" when it has none)."""
    cookie = request.cookies.get(PLAYER_COOKIE, "")
    return hashlib.sha256(cookie.encode()).hexdigest() if cookie else ""


def play_router(games: GameStore) -> APIRouter:
    router = APIRouter()

    def tasks() -> list[tuple[str, str]]:
        known = load_tasks()
        return [(task_id, known[task_id].initial_state().briefing.objective_name) for task_id in sorted(known)]

    def start_page(request: Request, errors: dict[str, str] | None = None, values: dict[str, str] | None = None,
                   status: int = 200) -> HTMLResponse:  # fmt: skip
        owner = browser_owner(request)
        mine = [m for m in games.all_meta() if owner and m.owner == owner][:30]
        return page("play_start.html", status=status, tasks=tasks(), errors=errors or {}, values=values or {},
                    games=mine)  # fmt: skip

    async def owned(game_id: str, request: Request) -> Session:
        session = await games.session(game_id)
        games.check_owner(session.meta, browser_owner(request))
        return session

    @router.get("/play", response_class=HTMLResponse)
    async def start(request: Request) -> Response:
        return start_page(request)

    @router.post("/play")
    async def create(request: Request) -> Response:
        try:
            values = parse_form(await request.body())
        except FormErrors as err:
            return start_page(request, err.errors, err.values, 422)
        errors: dict[str, str] = {}
        player = player_name(values, errors)
        task_id = values.get("task", "")
        if task_id not in load_tasks():
            errors["task"] = "choose a task from the list"
        if values.get("consent") != "yes":
            errors["consent"] = "please read the notice and tick the box to play"
        if errors:
            return start_page(request, errors, values, 422)
        cookie = request.cookies.get(PLAYER_COOKIE) or secrets.token_urlsafe(24)
        meta = await games.create(player, task_id, hashlib.sha256(cookie.encode()).hexdigest())
        response = RedirectResponse(f"/play/{meta.id}", status_code=303)
        response.set_cookie(PLAYER_COOKIE, cookie, max_age=COOKIE_SECONDS, httponly=True, samesite="strict")
        return response

    async def turn_page(session: Session, errors: dict[str, str] | None = None, values: dict[str, str] | None = None,
                        status: int = 200, notice: str = "") -> Response:  # fmt: skip
        meta = session.meta
        if meta.status != "active":
            return page("play_end.html", status=status, meta=meta, turns=len(session.game.records), notice=notice)
        if not notice and session.lock.locked():
            notice = "Your last action is still being resolved; reload in a moment to see its result."
        return page("play_turn.html", status=status, meta=meta, view=session.view, errors=errors or {},
                    values=values or {}, notice=notice, limits=turn_limits())  # fmt: skip

    def refused(err: GameError) -> Response:
        return error_page(str(err), err.status, "/play", "Your games")

    @router.get("/play/{game_id}")
    async def show(game_id: str, request: Request) -> Response:
        try:
            return await turn_page(await owned(game_id, request))
        except GameError as err:
            return refused(err)

    @router.get("/play/{game_id}/view.json")
    async def view_json(game_id: str, request: Request) -> Response:
        try:
            session = await owned(game_id, request)
        except GameError as err:
            return JSONResponse({"error": str(err)}, status_code=err.status)
        if session.meta.status != "active":
            return JSONResponse({"status": session.meta.status, "result": session.meta.result})
        return JSONResponse(session.view.model_dump(mode="json"))

    @router.post("/play/{game_id}/turn")
    async def turn(game_id: str, request: Request) -> Response:
        try:
            session = await owned(game_id, request)
            values = parse_form(await request.body())
            expected, plan, action = turn_form(values, session.view)
            await games.play_turn(game_id, expected, plan, action)
        except FormErrors as err:
            return await turn_page(session, err.errors, err.values, 422)
        except GameError as err:
            if err.status == 409:
                return await turn_page(await games.session(game_id), status=409, notice=str(err))
            return refused(err)
        if session.meta.status != "active":
            await games.write_log(game_id)
        return RedirectResponse(f"/play/{game_id}", status_code=303)

    @router.post("/play/{game_id}/abandon")
    async def abandon(game_id: str, request: Request) -> Response:
        return await end_and_log(game_id, request, give_up=True)

    @router.post("/play/{game_id}/log")
    async def retry_log(game_id: str, request: Request) -> Response:
        return await end_and_log(game_id, request, give_up=False)

    async def end_and_log(game_id: str, request: Request, give_up: bool) -> Response:
        """Give the game up (if asked) and write its log; then show the end page."""
        try:
            session = await owned(game_id, request)
            if give_up:
                await games.abandon(game_id)
            await games.write_log(game_id)
        except GameError as err:
            if err.status == 409:
                return await turn_page(session, status=409, notice=str(err))
            return refused(err)
        return RedirectResponse(f"/play/{game_id}", status_code=303)

    return router
