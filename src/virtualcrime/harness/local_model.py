"""``virtualcrime/local``: SmolLM2-135M-Instruct in llama.cpp, run in a child process (``local_worker``).

Replies are grammar-constrained to the call's JSON schema (llama.cpp ignores numeric bounds, so the parsers
clamp and record). The child is started on the first call and serves every call of this process, one at a time.
If it dies (a native crash, an out-of-memory kill) the call fails with ``LocalModelCrashed``, which names the
signal and the llama-cpp-python version, and the role records a failed call; the next call starts a new child,
up to ``MAX_CONSECUTIVE_CRASHES`` in a row. Needs the ``local`` extra (``bash install.sh``).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.metadata
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO, Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage

from .local_worker import INSTALL_HINT, LocalModelUnavailable, gguf_path, llama_installed

DEFAULT_MAX_TOKENS = 384
START_TIMEOUT = 120.0  # seconds for the child to load the model
REPLY_TIMEOUT = 600.0  # seconds for one completion (long prompts on two cores take tens of seconds)
MAX_CONSECUTIVE_CRASHES = 3
WORKER_COMMAND = [sys.executable, "-m", "virtualcrime.harness.local_worker"]
LIBRARY = "llama-cpp-python"

__all__ = ["LocalModelCrashed", "LocalModelUnavailable", "library_versions", "local_generate", "probe"]


class LocalModelCrashed(RuntimeError):
    """The local model's child process died, hung or could not load the model."""


def library_versions() -> tuple[str | None, str | None]:
    """The installed llama-cpp-python version and the one VirtualCrime pins (None where unknown)."""
    try:
        installed: str | None = importlib.metadata.version(LIBRARY)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    tested = None
    try:
        for requirement in importlib.metadata.requires("virtualcrime") or []:
            name, _, rest = requirement.partition("==")
            if rest and name.split("[")[0].strip().lower() == LIBRARY:
                tested = rest.split(";")[0].strip()
    except importlib.metadata.PackageNotFoundError:
        pass
    return installed, tested


def _library() -> str:
    installed, tested = library_versions()
    text = f"{LIBRARY} {installed or '(not installed)'}"
    if tested and installed != tested:
        text += f"; the tested version is {tested}: {INSTALL_HINT}"
    return text


class _Worker:
    """One child process and the pipe to it; callers hold the owner's lock."""

    def __init__(self, command: list[str]) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=_child_env()
        )
        self.buffer = b""
        ready = self._read(START_TIMEOUT, "loading the model")
        if "error" in ready:
            self.close()
            raise LocalModelCrashed(f"the local model did not load: {ready['error']} ({_library()})")

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died("receiving a request") from None
        return self._read(REPLY_TIMEOUT, "answering a chat completion")

    def _read(self, timeout: float, doing: str) -> dict[str, Any]:
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise LocalModelCrashed(f"the local model gave no answer within {timeout:.0f} s while {doing} "
                                        f"({_library()}); its process was stopped")  # fmt: skip
            readable, _, _ = select.select([descriptor], [], [], left)
            if not readable:
                continue
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                raise self._died(doing)
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply: dict[str, Any] = json.loads(line)
        except ValueError:
            self.close()
            raise LocalModelCrashed(f"the local model's process wrote an unreadable reply while {doing} "
                                    f"({_library()}): {line[:200]!r}") from None  # fmt: skip
        return reply

    def _died(self, doing: str) -> LocalModelCrashed:
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
        self.stderr.seek(0)
        tail = self.stderr.read()[-600:].decode(errors="replace").strip().replace("\n", " | ")
        self.close()
        detail = f"; its last output: {tail}" if tail else ""
        return LocalModelCrashed(f"the local model's process {how} while {doing} ({_library()}){detail}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self.stderr.close()


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "1")  # a native crash prints the Python stack to the child's stderr
    return env


class LocalModel:
    """The shared child process of ``virtualcrime/local``, started on first use, restarted after a crash."""

    def __init__(self, command: list[str] | None = None) -> None:
        self.command = command
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._crashes = 0
        self._last_crash = ""

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """One chat completion (blocking); LocalModelCrashed when the child dies, hangs or cannot load."""
        with self._lock:
            if self._crashes >= MAX_CONSECUTIVE_CRASHES:
                raise LocalModelCrashed(f"{self._last_crash} (not restarted after {self._crashes} crashes in a row; "
                                        "run virtualcrime doctor)")  # fmt: skip
            try:
                if self._worker is None or not self._worker.alive():
                    self._worker = _Worker(self.command or WORKER_COMMAND)
                reply = self._worker.ask(request)
            except LocalModelCrashed as err:
                self._worker = None
                self._crashes += 1
                self._last_crash = str(err)
                raise
            self._crashes = 0
        if "error" in reply:
            raise RuntimeError(f"the local model failed: {reply['error']}")
        result: dict[str, Any] = reply["result"]
        return result

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.close()
                self._worker = None


SHARED = LocalModel()
atexit.register(SHARED.close)


def _check_installed() -> None:
    if not llama_installed():
        raise LocalModelUnavailable(f"virtualcrime/local needs llama-cpp-python (the local extra): {INSTALL_HINT}")
    gguf_path()


def request_for(
    messages: list[dict[str, str]], schema: dict[str, Any] | None, config: GenerateConfig
) -> dict[str, Any]:
    """The worker request of one call: the messages, the JSON schema and the sampling settings."""
    return {
        "messages": messages,
        "schema": schema,
        "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
        "temperature": 0.0 if config.temperature is None else config.temperature,
        "seed": config.seed if config.seed is not None else 0,
    }


async def local_generate(model_name: str, messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
    """One completion from the local model, off the event loop."""
    _check_installed()
    chat = [{"role": m.role if m.role in ("system", "user", "assistant") else "user", "content": m.text}
            for m in messages]  # fmt: skip
    schema = config.response_schema.json_schema.model_dump(exclude_none=True) if config.response_schema else None
    result = await asyncio.to_thread(SHARED.complete, request_for(chat, schema, config))
    choice = result["choices"][0]
    output = ModelOutput.from_content(
        model=f"virtualcrime/{model_name}",
        content=choice["message"].get("content") or "",
        stop_reason="max_tokens" if choice.get("finish_reason") == "length" else "stop",
    )
    usage = result.get("usage") or {}
    output.usage = ModelUsage(
        input_tokens=int(usage.get("prompt_tokens", 0)),
        output_tokens=int(usage.get("completion_tokens", 0)),
        total_tokens=int(usage.get("total_tokens", 0)),
    )
    return output


PROBE_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def probe(command: list[str] | None = None) -> tuple[float, str]:
    """Start a fresh child, ask one short schema-constrained question, stop it: ``(seconds, reply text)``.

    Raises LocalModelUnavailable when the extra is missing and LocalModelCrashed when the child fails."""
    _check_installed()
    started = time.perf_counter()
    model = LocalModel(command)
    try:
        messages = [{"role": "user", "content": 'Reply with JSON: {"answer": "ready"}'}]
        result = model.complete(request_for(messages, PROBE_SCHEMA, GenerateConfig(max_tokens=16)))
    finally:
        model.close()
    text = str(result["choices"][0]["message"].get("content") or "")
    return time.perf_counter() - started, text
