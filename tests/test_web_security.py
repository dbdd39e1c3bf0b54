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
        first = client.get("/", params={"token": TOKEN})
        assert first.status_code == 200
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{TOKEN_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert client.get("/play").status_code == 200  # the cookie is sent from now on
        client.cookies.clear()
        assert client.get("/play").status_code == 401


def test_a_token_works_on_loopback_too(tmp_path: Path) -> None:
    app = create_app(ServeSettings(log_dir=tmp_path, token=TOKEN))
    with TestClient(app) as client:
        assert client.get("/").status_code == 401
        assert client.get("/", params={"token": TOKEN}).status_code == 200


def test_without_a_token_loopback_serves_openly(tmp_path: Path) -> None:
    with TestClient(create_app(ServeSettings(log_dir=tmp_path))) as client:
        assert client.get("/").status_code == 200


def test_declared_oversize_bodies_are_refused_before_any_route(tmp_path: Path) -> None:
    with TestClient(create_app(ServeSettings(log_dir=tmp_path))) as client:
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
        assert httpx.get(f"{url}/play", params={"token": TOKEN}).status_code == 200
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0]
    assert "/?token=<token>" in output and TOKEN not in output  # the banner never prints the token itself
