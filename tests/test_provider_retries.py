"""One retry layer, bounded: against a local fake OpenAI-compatible server, a failing call costs exactly
``max_retries + 1`` requests (the SDK's own retries are off), and a response cut off mid-body is asked again
instead of failing the call. The server listens on 127.0.0.1 only and answers a bounded number of requests."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from virtualcrime.harness.generate import inspect_generate
from virtualcrime.harness.roles import model_for
from virtualcrime.roles.types import Prompt, ProviderError

COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"ok": true}'}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}  # fmt: skip


class FakeOpenAI(BaseHTTPRequestHandler):
    """Answers chat completions by ``mode``: "500" always fails; "truncated" drops the connection mid-body once and
    "cut-json" sends a complete response whose JSON is cut off once, then each answers properly."""

    mode = "500"
    requests: list[str] = []

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.requests.append(self.path)
        if len(self.requests) > 20:  # bounded: a runaway retry loop cannot keep the test busy
            self._send(503, b'{"error": {"message": "enough"}}')
        elif self.mode == "500":
            self._send(500, b'{"error": {"message": "internal error"}}')
        elif self.mode == "truncated" and len(self.requests) == 1:  # the connection drops mid-body
            body = json.dumps(COMPLETION).encode()
            self._send(200, body[: len(body) // 2], length=len(body))
        elif self.mode == "cut-json" and len(self.requests) == 1:  # a complete response whose JSON is cut off
            body = json.dumps(COMPLETION).encode()
            self._send(200, body[: len(body) // 2])
        else:
            self._send(200, json.dumps(COMPLETION).encode())

    def _send(self, status: int, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length if length is not None else len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if length is not None:
            self.close_connection = True


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One server for the module: Inspect memoises a model with the base URL it was first built with."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def fake_server(server: str, monkeypatch: pytest.MonkeyPatch) -> type[FakeOpenAI]:
    FakeOpenAI.requests = []
    monkeypatch.setenv("LOCAL_API_KEY", "not-needed")
    monkeypatch.setenv("LOCAL_BASE_URL", server)
    return FakeOpenAI


def ask(max_retries: int) -> Any:
    model = model_for("openai-api/local/m", "Judge")
    generate = inspect_generate(model, "judge", run_scope="test", max_retries=max_retries, timeout=10)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    return asyncio.run(generate(Prompt(system="s", user="u"), call="judge", turn=1, schema=schema))


def test_a_failing_call_costs_max_retries_plus_one_requests(fake_server: type[FakeOpenAI]) -> None:
    fake_server.mode = "500"
    with pytest.raises(ProviderError, match="InternalServerError"):
        ask(max_retries=1)
    assert len(fake_server.requests) == 2  # Inspect's try and one retry; the SDK's own retries would make it 6


@pytest.mark.parametrize("mode", ["truncated", "cut-json"])
def test_a_response_cut_off_mid_body_is_asked_again(fake_server: type[FakeOpenAI], mode: str) -> None:
    fake_server.mode = mode
    reply = ask(max_retries=1)
    assert reply.text == '{"ok": true}' and reply.stop_reason == "stop"
    assert len(fake_server.requests) == 2
