"""Request guards: a token on every request (required off loopback) and a cap on request size.

Both are plain ASGI middleware so they run before any route, for every path, static files included.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "virtualcrime_token"
TOKEN_HEADER = b"authorization"
MAX_BODY_BYTES = 64 * 1024  # far above any form here (an action is ≤ 1 kB, notes ≤ 6 kB)


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                        *(headers or [])],
        }
    )  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def presented_token(scope: Scope) -> tuple[str | None, bool]:
    """The token a request carries (bearer header, ``?token=`` or cookie) and whether it came in the URL."""
    headers = dict(scope.get("headers") or [])
    auth = headers.get(TOKEN_HEADER, b"").decode("latin-1")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip(), False
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get("token"):
        return query["token"][0], True
    cookie = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
    if TOKEN_COOKIE in cookie:
        return cookie[TOKEN_COOKIE].value, False
    return None, False


class TokenMiddleware:
    """Refuse (401) every HTTP request that does not carry ``token``.

    A browser opens the first page as ``/?token=…``; the answer sets an HttpOnly, SameSite=Strict cookie so later
    requests (links, forms) carry it without the token appearing in further URLs. Scripts send
    ``Authorization: Bearer …``.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("an empty token protects nothing")
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        presented, in_url = presented_token(scope)
        if presented is None or not hmac.compare_digest(presented.encode(), self.token.encode()):
            await _plain(send, 401, "401: this server needs its access token: open it as /?token=<token>, or send "
                                    "'Authorization: Bearer <token>'.")  # fmt: skip
            return
        if not in_url:
            await self.app(scope, receive, send)
            return
        cookie = f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)


class BodyLimitMiddleware:
    """Refuse (413) a request whose body is larger than ``limit`` bytes, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _plain(send, 413, f"413: the request is larger than {self.limit // 1024} kB")
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _plain(send, 413, f"413: the request is larger than {self.limit // 1024} kB")


class _TooLarge(Exception):
    pass
