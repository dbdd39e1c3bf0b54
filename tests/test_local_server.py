"""A real OpenAI-compatible server (llama.cpp serving SmolLM2) plays all three LLM roles through Inspect's
``openai-api`` provider, the path a user takes with DeepSeek, Qwen, Doubao or vLLM; a fault-injecting proxy in
front of it shows that rate limits, server errors, hung connections and non-JSON bodies are retried or recorded
and never crash a run. Skips when the ``local`` extra is not installed."""

from __future__ import annotations

import itertools
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import Model, get_model

from virtualcrime.harness.task import virtualcrime
from virtualcrime.runs.store import records_from_store

pytestmark = pytest.mark.usefixtures("local_model")  # skips without the local extra, fails if it crashes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from virtualcrime.harness.local_model import library_versions
    from virtualcrime.harness.local_worker import LocalModelUnavailable, gguf_path

    try:
        model = gguf_path()
    except LocalModelUnavailable as err:
        pytest.skip(str(err))
    port = free_port()
    server_log = (tmp_path_factory.mktemp("server") / "llama_server.log").open("w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "8192", "--model_alias", "smollm2"],
        stdout=server_log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2).read()
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            if process.poll() is not None:
                server_log.seek(0)
                installed, _ = library_versions()
                pytest.fail(f"the llama.cpp server (llama-cpp-python {installed}) exited with status "
                            f"{process.returncode}: {server_log.read()[-2000:]}")  # fmt: skip
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("llama server did not start within 120 s")
    yield base
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=20)
    server_log.close()


class FaultProxy(BaseHTTPRequestHandler):
    """Forwards to the upstream server; the first requests meet one fault each, in this order."""

    upstream = ""
    faults: Iterator[str] = iter(())
    seen: list[str] = []

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self._forward(b"")

    def do_POST(self) -> None:
        self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def _forward(self, body: bytes) -> None:
        fault = next(self.faults, "pass")
        self.seen.append(fault)
        if fault == "429":
            self._reply(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "1"})
        elif fault == "500":
            self._reply(500, b'{"error": {"message": "internal error"}}')
        elif fault == "hang":
            time.sleep(12)  # past the client's timeout
            self._reply(504, b"{}")
        elif fault == "garbage":
            self._reply(200, b"<html>this is not json</html>", {"Content-Type": "application/json"})
        else:
            request = urllib.request.Request(self.upstream + self.path, data=body or None, method=self.command,
                                             headers={"Content-Type": "application/json"})  # fmt: skip
            with urllib.request.urlopen(request, timeout=300) as response:
                self._reply(response.status, response.read())

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def run_llm_roles(base_url: str, log_dir: Path, max_turns: int, timeout: int, max_retries: int = 3) -> Path:
    def model() -> Model:  # a fresh client per role and run: memoised models would keep an older base URL
        return get_model("openai-api/local/smollm2", base_url=base_url, api_key="not-needed", memoize=False)

    logs = inspect_eval(
        # llama-cpp-python's server rejects OpenAI's json_schema response format: replies are parsed from text
        virtualcrime(tasks="restaurant/robbery", seeds=1, max_turns=max_turns, timeout=timeout,
                     max_retries=max_retries, max_attempts=2, structured_output=False),
        model=model(),
        model_roles={"judge": model(), "world_manager": model()},
        log_dir=str(log_dir),
        display="none",
    )  # fmt: skip
    return Path(logs[0].location)


def test_all_three_roles_through_openai_api_against_llama_server(llama_server: str, tmp_path: Path) -> None:
    log = read_eval_log(str(run_llm_roles(llama_server, tmp_path, max_turns=1, timeout=120)))
    assert log.status == "success" and log.samples
    turns, result = records_from_store(dict(log.samples[0].store))
    assert result is not None and len(turns) == 1
    calls = [c for t in turns for c in t.model_calls]
    assert {c.role for c in calls} >= {"attacker"}, [t.errors for t in turns]
    assert all(c.ok or (c.raw and c.errors) for c in calls)  # every call either parsed or is recorded with why
    judged = [c for c in calls if c.role == "judge"]
    assert not judged or log.stats.role_usage["judge"].input_tokens > 0


def test_faults_are_retried_or_recorded_and_the_run_finishes(llama_server: str, tmp_path: Path) -> None:
    FaultProxy.upstream = llama_server.removesuffix("/v1")
    FaultProxy.faults = itertools.chain(["429", "500", "hang", "garbage"])
    FaultProxy.seen = []
    proxy = ThreadingHTTPServer(("127.0.0.1", free_port()), FaultProxy)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        log = read_eval_log(str(run_llm_roles(base, tmp_path, max_turns=1, timeout=8, max_retries=6)))
    finally:
        proxy.shutdown()
    assert FaultProxy.seen[:4] == ["429", "500", "hang", "garbage"]  # 429, 500 and the hang were retried
    assert log.status == "success" and log.samples
    turns, result = records_from_store(dict(log.samples[0].store))
    assert result is not None and len(turns) == 1  # the run finished despite the faults
    # the call after the faults either got through (and was parsed) or its failure is recorded with the cause
    assert turns[0].model_calls or any("provider error" in e.message for e in turns[0].errors), turns[0].errors
