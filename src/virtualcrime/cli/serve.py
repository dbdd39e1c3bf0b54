"""``virtualcrime serve``: the web UI (Play, Replay, Review) on one local server."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import defaults
from .common import CliError, add_call_options, add_referee_options, call_settings, referees


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = sub.add_parser("serve", help="web UI: people play tasks, researchers replay runs and rate key turns")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; others need a token)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    add_referee_options(serve, " of human games")
    serve.add_argument("--log-dir", default="logs", metavar="DIR",
                       help="logs to replay and review; human games are logged here (default logs)")  # fmt: skip
    serve.add_argument("--token", metavar="TOKEN",
                       help="require this token on every request (default: $VIRTUALCRIME_TOKEN; "
                       "needed off loopback)")  # fmt: skip
    serve.add_argument("--max-turns", type=int, default=defaults.MAX_TURNS, metavar="N",
                       help=f"turn limit of human games (default {defaults.MAX_TURNS})")  # fmt: skip
    serve.add_argument("--play-seed", type=int, metavar="S",
                       help="RNG seed of every human game (default: a fresh random one per game, logged)")  # fmt: skip
    serve.add_argument("--review-seed", type=int, default=0, metavar="S", help="seed of the review sample (default 0)")
    serve.add_argument("--review-share", type=float, default=0.1, metavar="F",
                       help="share of the other judged turns sampled for review (default 0.1)")  # fmt: skip
    add_call_options(serve)


def run(args: argparse.Namespace) -> int:
    import uvicorn
    from pydantic import ValidationError

    from ..web.app import ServeConfigError, create_app
    from ..web.settings import TOKEN_ENV, ServeSettings, is_loopback

    try:
        judge, world_manager = referees(args)
        settings = ServeSettings(
            host=args.host, port=args.port, judge=judge, world_manager=world_manager, **call_settings(args),
            log_dir=Path(args.log_dir), token=args.token or os.environ.get(TOKEN_ENV) or None,
            max_turns=args.max_turns, play_seed=args.play_seed, review_seed=args.review_seed,
            review_share=args.review_share,
        )  # fmt: skip
        app = create_app(settings)
    except ValidationError as err:
        first = err.errors()[0]
        raise CliError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from err
    except ServeConfigError as err:
        raise CliError(str(err)) from err
    settings.log_dir.mkdir(parents=True, exist_ok=True)
    shown = "localhost" if is_loopback(settings.host) else settings.host
    suffix = "/?token=<token>" if settings.token else "/"
    print(f"VirtualCrime web UI for {settings.log_dir.resolve()}: judge {settings.judge}, world manager "
          f"{settings.world_manager}")  # fmt: skip
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning", workers=1)
    server = uvicorn.Server(config)

    original_startup = server.startup

    async def startup(sockets=None):  # type: ignore[no-untyped-def]
        await original_startup(sockets)
        for bound in server.servers:
            for sock in bound.sockets:
                port = sock.getsockname()[1]
                print(f"Serving on http://{shown}:{port}{suffix}  (Ctrl+C to stop)", flush=True)
                return

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0
