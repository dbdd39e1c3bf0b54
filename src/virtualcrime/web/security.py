"""Request guards: a token on every request (required off loopback) and a cap on request size.

Both are plain ASGI middleware so they run before any route, for every path, static files included.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from starlette.requests import cookie_parser

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
    cookies = cookie_parser(headers.get(b"cookie", b"").decode("latin-1"))  # lenient: other apps' cookies are odd
    return cookies.get(TOKEN_COOKIE), False


class TokenMiddleware:
    """Refuse (401) every HTTP request that does not carry ``token``.

    A browser opens the first page as ``/?token=…``; the answer redirects to the same address without the token
    and sets an HttpOnly, SameSite=Strict cookie, so later requests (links, forms) carry it and the token does not
    stay in the address bar or history. Scripts send ``Authorization: Bearer …``.
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
        if scope.get("method") == "GET":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            rest = urlencode([(k, v) for k, values in query.items() if k != "token" for v in values])
            location = same_site_path(scope) + (f"?{rest}" if rest else "")
            await _plain(send, 303, "303: the token is now a cookie", [(b"location", location.encode("latin-1")),
                                                                       (b"set-cookie", cookie)])  # fmt: skip
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def same_site_path(scope: Scope) -> str:
    """The request's path as a redirect target that stays on this server: the path as it came on the wire (still
    percent-encoded, so ``/%2F%2Fevil.com`` stays one path segment), never starting with ``//`` or ``/\\`` (which a
    browser reads as another host) and with any backslash encoded."""
    raw = scope.get("raw_path") or quote(scope.get("path", "/")).encode()
    path = raw.decode("latin-1").replace("\\", "%5C")
    return "/" + path.lstrip("/")


LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
HOST_PORT = re.compile(r"^(?P<host>\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$")


def _host_only(value: str) -> str:
    """``localhost`` from a Host header ``localhost:8000``, or from an Origin ``http://localhost:8000``; ``[::1]``
    kept whole. Anything that is not exactly host[:port] (user info such as ``127.0.0.1:8000@evil.com``, a path,
    spaces) is returned whole, so it matches no local name."""
    value = value.strip().lower()
    if "://" in value:
        value = value.split("://", 1)[1]
    match = HOST_PORT.match(value)
    return match.group("host") if match else value


class LocalOnlyMiddleware:
    """Without a token on loopback: refuse requests for another Host name (DNS rebinding) and form posts from
    pages of other sites (their Origin), which a browser would otherwise send to localhost for them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = _host_only(headers.get(b"host", b"localhost").decode("latin-1"))
        if host not in LOCAL_HOSTS:
            await _plain(send, 400, f"400: this server answers only to localhost, not {host!r}")
            return
        origin = headers.get(b"origin", b"").decode("latin-1")
        if scope.get("method") not in ("GET", "HEAD") and origin and _host_only(origin) not in LOCAL_HOSTS:
            await _plain(send, 403, "403: forms posted from another site are refused")
            return
        await self.app(scope, receive, send)


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
