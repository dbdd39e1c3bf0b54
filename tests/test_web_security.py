"""Request guards of the web UI: the token (required off loopback) and the body size cap."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from virtualcrime.web.app import ServeConfigError, create_app
from virtualcrime.web.security import TOKEN_COOKIE
from virtualcrime.web.settings import ServeSettings, is_loopback

TOKEN = "correct-horse-battery"
PATHS = ["/", "/play", "/replay", "/review", "/static/style.css", "/play/abc/view.json", "/nowhere"]


def test_loopback_detection() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10") and not is_loopback("example.org")


def test_binding_off_loopback_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(ServeConfigError, match="--token"):
        create_app(ServeSettings(host="0.0.0.0", log_dir=tmp_path))
    create_app(ServeSettings(host="0.0.0.0", log_dir=tmp_path, token=TOKEN))


def test_every_request_needs_the_token(tmp_path: Path) -> None:
    app = create_app(ServeSettings(host="0.0.0.0", log_dir=tmp_path, token=TOKEN))
    with TestClient(app) as client:
        for path in PATHS:
            assert client.get(path).status_code == 401, path
            assert client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401, path
            assert client.get(path, params={"token": TOKEN[:-1]}).status_code == 401, path
        refused = client.post("/play", data={"player": "eve", "task": "restaurant/robbery", "consent": "yes"})
        assert refused.status_code == 401 and not app.state.games.all_meta()
        assert "token" in refused.text
        assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_the_token_in_the_first_url_becomes_a_strict_cookie(tmp_path: Path) -> None:
    app = create_app(ServeSettings(host="0.0.0.0", log_dir=tmp_path, token=TOKEN))
    with TestClient(app) as client:
        first = client.get("/replay/log", params={"token": TOKEN, "path": "x.eval"}, follow_redirects=False)
        assert first.status_code == 303 and first.headers["location"] == "/replay/log?path=x.eval"  # token gone
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{TOKEN_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert client.get("/play").status_code == 200  # the cookie is sent from now on
        # another local app's cookie that a strict parser chokes on does not hide ours
        client.cookies.set("o", '{"a":1}')
        assert client.get("/play").status_code == 200
        client.cookies.clear()
        assert client.get("/play").status_code == 401


def test_a_token_works_on_loopback_too(tmp_path: Path) -> None:
    app = create_app(ServeSettings(log_dir=tmp_path, token=TOKEN))
    with TestClient(app) as client:
        assert client.get("/").status_code == 401
        assert client.get("/", params={"token": TOKEN}).status_code == 200


def test_without_a_token_loopback_serves_openly(tmp_path: Path) -> None:
    with TestClient(create_app(ServeSettings(log_dir=tmp_path)), base_url="http://localhost:8000") as client:
        assert client.get("/").status_code == 200


def test_without_a_token_other_host_names_and_other_sites_forms_are_refused(tmp_path: Path) -> None:
    """DNS rebinding (a foreign Host) and cross-site form posts (a foreign Origin) cannot use a loopback server."""
    app = create_app(ServeSettings(log_dir=tmp_path))
    form = {"player": "eve", "task": "restaurant/robbery", "consent": "yes"}
    with TestClient(app, base_url="http://attacker.example:8000") as client:
        assert client.get("/replay").status_code == 400
    with TestClient(app, base_url="http://127.0.0.1:8000", follow_redirects=False) as client:
        assert client.get("/replay").status_code == 200
        assert client.post("/play", data=form, headers={"Origin": "https://attacker.example"}).status_code == 403
        assert client.post("/play", data=form, headers={"Origin": "null"}).status_code == 403
        assert not app.state.games.all_meta()
        assert client.post("/play", data=form, headers={"Origin": "http://127.0.0.1:8000"}).status_code == 303
    with TestClient(app, base_url="http://[::1]:8000") as client:
        assert client.get("/").status_code == 200


@pytest.mark.parametrize("token", ["short", "has space in it 12345", "x" * 15])
def test_weak_or_odd_tokens_are_refused(tmp_path: Path, token: str) -> None:
    with pytest.raises(ValueError):
        ServeSettings(log_dir=tmp_path, token=token)


def test_declared_oversize_bodies_are_refused_before_any_route(tmp_path: Path) -> None:
    with TestClient(create_app(ServeSettings(log_dir=tmp_path)), base_url="http://localhost") as client:
        response = client.post("/play", content=b"a=" + b"x" * 70_000,
                               headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
        assert response.status_code == 413


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_refuses_a_network_address_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "virtualcrime.cli.main", "serve", "--host", "0.0.0.0", "--log-dir",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "give --token or set VIRTUALCRIME_TOKEN" in done.stderr


def test_a_real_server_on_every_interface_checks_the_token_on_the_wire(tmp_path: Path) -> None:
    """``virtualcrime serve --host 0.0.0.0`` with the token from the environment, over a real socket."""
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "virtualcrime.cli.main",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--log-dir",
            str(tmp_path),
        ],
        env={**os.environ, "VIRTUALCRIME_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert httpx.get(f"{url}/play").status_code == 401
        assert httpx.get(f"{url}/play", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        with httpx.Client() as browser:  # keeps cookies, as a browser would
            assert browser.get(f"{url}/play", params={"token": TOKEN}, follow_redirects=True).status_code == 200
            assert browser.get(f"{url}/replay").status_code == 200
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0]
    assert "/?token=<token>" in output and TOKEN not in output  # the banner never prints the token itself


async def asgi_get(app: object, raw_path: bytes, host: bytes, query: bytes = b"") -> tuple[int, dict[bytes, bytes]]:
    """One GET straight to the ASGI app, with the raw path and Host exactly as a client could send them."""
    from urllib.parse import unquote

    sent: list[dict[str, object]] = []
    scope = {"type": "http", "method": "GET", "path": unquote(raw_path.decode()), "raw_path": raw_path,
             "query_string": query, "headers": [(b"host", host)], "scheme": "http",
             "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5555), "root_path": "", "http_version": "1.1",
             "asgi": {"version": "3.0"}}  # fmt: skip

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    await app(scope, receive, send)  # type: ignore[operator]
    start = next(m for m in sent if m["type"] == "http.response.start")
    return int(start["status"]), dict(start.get("headers", []))  # type: ignore[arg-type, call-overload]


@pytest.mark.parametrize("raw_path", [b"/%2F%2Fevil.com", b"//evil.com", b"/\\evil.com", b"/%5Cevil.com/x"])
def test_the_token_redirect_never_leaves_this_server(tmp_path: Path, raw_path: bytes) -> None:
    import asyncio

    app = create_app(ServeSettings(host="0.0.0.0", log_dir=tmp_path, token=TOKEN))
    status, headers = asyncio.run(asgi_get(app, raw_path, b"127.0.0.1:8000", f"token={TOKEN}".encode()))
    location = headers[b"location"].decode()
    assert status == 303
    # a path on this server: one slash, then no second slash or backslash a browser would read as another host
    assert location.startswith("/") and not location.startswith(("//", "/\\")) and "\\" not in location


@pytest.mark.parametrize("host", [b"127.0.0.1:8000@evil.com", b"localhost@evil.com", b"localhost:8000/x",
                                  b"evil.com#localhost", b"localhost evil.com"])  # fmt: skip
def test_only_an_exact_local_host_name_is_accepted(tmp_path: Path, host: bytes) -> None:
    import asyncio

    app = create_app(ServeSettings(log_dir=tmp_path))
    status, _ = asyncio.run(asgi_get(app, b"/", host))
    assert status == 400
    for good in (b"localhost:8000", b"127.0.0.1", b"[::1]:8000"):
        assert asyncio.run(asgi_get(app, b"/", good))[0] == 200


def test_log_listings_do_not_follow_links_out_of_the_log_folder(tmp_path: Path) -> None:
    from virtualcrime.harness.log_browser import list_logs
    from virtualcrime.harness.log_reader import find_logs

    outside, folder = tmp_path / "outside", tmp_path / "logs"
    outside.mkdir()
    folder.mkdir()
    (outside / "secret.eval").write_bytes(b"not really a log")
    (folder / "link.eval").symlink_to(outside / "secret.eval")
    (folder / "linked_dir").symlink_to(outside, target_is_directory=True)
    assert find_logs([folder]) == [] and list_logs(folder) == []
    assert find_logs([outside]) == [outside / "secret.eval"]  # inside its own folder it is found
