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
