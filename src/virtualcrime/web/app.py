"""The web application: Play, Replay and Review behind one server, with the request guards in front."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from ..harness.roles import RoleOptions, referee_roles
from ..roles import Judge, WorldManager
from .games import GameStore, RoleFactory
from .pages import STATIC, page
from .play import play_router
from .replay import replay_router
from .review import review_router
from .run_cache import RunCache
from .security import BodyLimitMiddleware, LocalOnlyMiddleware, TokenMiddleware
from .settings import ServeSettings, is_loopback

logger = logging.getLogger(__name__)


class ServeConfigError(ValueError):
    """The server cannot start with these settings (the message says what to change)."""


def model_referees(settings: ServeSettings) -> RoleFactory:
    """The Judge and World Manager of human games (offline rules roles, or language models through Inspect), with
    the server's bounds on model calls."""
    options = RoleOptions(run_scope="play", timeout=settings.timeout, max_retries=settings.max_retries,
                          max_attempts=settings.max_attempts, structured_output=settings.structured_output)  # fmt: skip

    def referees(judge: str, world_manager: str) -> tuple[Judge, WorldManager]:
        return referee_roles(judge, world_manager, options)

    return referees


def create_app(settings: ServeSettings, roles: RoleFactory | None = None) -> FastAPI:
    """The app for ``settings``; refuses a non-loopback host without a token."""
    roles = roles or model_referees(settings)
    if not is_loopback(settings.host) and not settings.token:
        raise ServeConfigError(
            f"binding {settings.host} exposes the server to the network: give --token or set VIRTUALCRIME_TOKEN"
        )
    try:
        roles(settings.judge, settings.world_manager)  # a model that cannot play its role fails now, not mid-game
    except ValueError as err:
        raise ServeConfigError(str(err)) from err
    games = GameStore(settings, roles)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        for meta in games.pending_logs():  # games that ended while the server was stopping get their logs now
            written = await games.write_log(meta.id)
            if written.log_error:
                logger.warning("game %s: %s", meta.id, written.log_error)
        yield

    app = FastAPI(title="VirtualCrime", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.settings = settings
    app.state.games = games

    @app.get("/", response_class=HTMLResponse)
    async def home() -> Response:
        return page("home.html", log_dir=str(settings.log_dir), judge=settings.judge,
                    world_manager=settings.world_manager, max_turns=settings.max_turns)  # fmt: skip

    app.include_router(play_router(games))
    opened_runs = RunCache(settings.log_dir)  # Replay and Review open the same runs
    app.include_router(replay_router(settings, opened_runs))
    app.include_router(review_router(settings, opened_runs))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimitMiddleware)
    if settings.token:
        app.add_middleware(TokenMiddleware, token=settings.token)  # outermost: checked before anything else
    else:  # only possible on loopback (checked above)
        app.add_middleware(LocalOnlyMiddleware)
    return app
