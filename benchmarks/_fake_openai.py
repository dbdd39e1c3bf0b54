"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 that plays all three VirtualCrime roles with valid,
deterministic replies after a fixed latency, and counts the requests in flight per role. Standard library only, so
it can run as a separate process (its CPU time then stays out of the harness's).

    python benchmarks/_fake_openai.py [--latency 0.2]    # prints "PORT <n>" on its first line, then serves

Endpoints: ``POST /v1/chat/completions``; ``GET /stats`` (per role and for ``all``: requests, peak and time-weighted
mean in flight since the last reset; the server's CPU seconds; the 429s sent); ``POST /reset?latency=S`` (zero the
counters, set the latency; also ``fail_every=N`` and ``capacity=N``, as the options below).

Rate limits, as a provider's: with ``--fail-every N`` every Nth request is answered 429 (deterministic, to exercise
the retries); with ``--capacity N`` a request arriving while N are in flight is answered 429 (a budget that holds
never sees one). Neither counts as a request in flight.
The role is read from the request's JSON response schema name (``attacker_plan``, ``attacker_act``, ``judge``,
``world_manager_<stage>``), so the harness must ask for structured output. Replies: the Attacker keeps one plan
and has its first team member wait (a valid action on every map, so the Judge and all four World Manager stages
are called every turn); the Judge's verdict depends on the action as in ``kill_matrix.py``; the World Manager
stages apply no operations (so no run ends early: every run plays its turn limit).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

ROLES = ("attacker", "judge", "world_manager")
DIMENSIONS = ["existence", "physical", "method", "logical_consistency", "safety", "skill", "relationship",
              "objectivity"]  # fmt: skip


def verdict_for(prompt: str) -> dict[str, Any]:
    """A deterministic verdict that depends on the action (so runs differ, but identically every time); also the
    Judge of ``kill_matrix.py``."""
    chance = 0.55 + (sum(map(ord, prompt[-400:])) % 40) / 100
    return {"feasibility": {d: {"score": 4, "reason": "ok"} for d in DIMENSIONS}, "risky": chance < 0.7,
            "outcomes": [{"category": "success", "description": "It works.", "probability": round(chance, 2),
                          "catastrophic": False},
                         {"category": "failure", "description": "It does not work.",
                          "probability": round(1 - round(chance, 2), 2), "catastrophic": False}],
            "rationale": "deterministic"}  # fmt: skip


def reply_for(call: str, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
    """A valid reply to one role call, from the call's name and JSON schema."""
    if call == "attacker_plan":
        return {"memory": "We are at the start; nothing has happened yet.", "plan": "Wait and watch the area."}
    if call == "attacker_act":
        members = schema.get("properties", {}).get("actor", {}).get("enum") or ["?"]
        return {"verb": "wait", "description": "Waits quietly and watches.", "actor": members[0], "target": "",
                "item": "", "minutes": 5}  # fmt: skip
    if call == "judge":
        return verdict_for(prompt)
    return {"ops": [], "note": "Nothing changes."}


def role_of(call: str) -> str:
    return next((role for role in ROLES if call.startswith(role)), "other")


class Counters:
    """Requests, requests in flight (peak and time-weighted mean) per role, since the last reset."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency = 0.2
        self.fail_every = 0
        self.capacity = 0
        self.reset()

    def refuse(self) -> str | None:
        """Whether to answer this request 429, and why (``every`` or ``capacity``)."""
        with self.lock:
            self.arrived += 1
            reason = None
            if self.fail_every and self.arrived % self.fail_every == 0:
                reason = "every"
            elif self.capacity and self.in_flight["all"] >= self.capacity:
                reason = "capacity"
            if reason is not None:
                self.rejected[reason] += 1
            return reason

    def reset(self) -> None:
        with self.lock:
            self.started = time.monotonic()
            self.requests = {role: 0 for role in (*ROLES, "other", "all")}
            self.in_flight = dict.fromkeys(self.requests, 0)
            self.peak = dict.fromkeys(self.requests, 0)
            self.area = dict.fromkeys(self.requests, 0.0)  # ∫ in flight dt
            self.changed = dict.fromkeys(self.requests, self.started)
            self.arrived = 0
            self.rejected = {"every": 0, "capacity": 0}

    def _move(self, role: str, by: int) -> None:
        with self.lock:
            now = time.monotonic()
            self.area[role] += self.in_flight[role] * (now - self.changed[role])
            self.changed[role] = now
            self.in_flight[role] += by
            if by > 0:
                self.requests[role] += 1
                self.peak[role] = max(self.peak[role], self.in_flight[role])

    def enter(self, role: str) -> None:
        self._move(role, 1)
        self._move("all", 1)

    def leave(self, role: str) -> None:
        self._move(role, -1)
        self._move("all", -1)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            now = time.monotonic()
            window = max(now - self.started, 1e-9)
            roles = {role: {"requests": self.requests[role], "peak": self.peak[role],
                            "mean": (self.area[role] + self.in_flight[role] * (now - self.changed[role])) / window}
                     for role in self.requests}  # fmt: skip
            return {"seconds": window, "roles": roles, "cpu_seconds": time.process_time(), "latency": self.latency,
                    "rejected": dict(self.rejected)}  # fmt: skip


COUNTERS = Counters()


class FakeOpenAI(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as providers do

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        if urlparse(self.path).path.rstrip("/").endswith("stats"):
            self._send(200, COUNTERS.stats())
        else:
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        url = urlparse(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if url.path.rstrip("/").endswith("reset"):
            query = parse_qs(url.query)
            if query.get("latency"):
                COUNTERS.latency = float(query["latency"][0])
            if query.get("fail_every"):
                COUNTERS.fail_every = int(query["fail_every"][0])
            if query.get("capacity"):
                COUNTERS.capacity = int(query["capacity"][0])
            COUNTERS.reset()
            self._send(200, {"ok": True})
            return
        body = json.loads(raw)
        response_format = body.get("response_format") or {}
        call = str(response_format.get("json_schema", {}).get("name", ""))
        schema = response_format.get("json_schema", {}).get("schema", {})
        role = role_of(call)
        refused = COUNTERS.refuse()
        if refused is not None:
            self._send(429, {"error": {"message": f"rate limit ({refused})", "type": "rate_limit_error",
                                       "code": "rate_limit_exceeded"}})  # fmt: skip
            return
        COUNTERS.enter(role)
        try:
            time.sleep(COUNTERS.latency)
            text = body["messages"][-1]["content"]
            if isinstance(text, list):
                text = " ".join(part.get("text", "") for part in text)
            content = json.dumps(reply_for(call, schema, text))
            prompt_tokens = sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4
            self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": content}}],
                             "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                                       "total_tokens": prompt_tokens + len(content) // 4}})  # fmt: skip
        finally:
            COUNTERS.leave(role)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # a burst of 64+ new connections must not be refused


def serve(latency: float, port: int = 0, fail_every: int = 0, capacity: int = 0) -> ThreadingHTTPServer:
    """Start the server on 127.0.0.1 in a daemon thread; its port is ``server.server_address[1]``."""
    COUNTERS.latency, COUNTERS.fail_every, COUNTERS.capacity = latency, fail_every, capacity
    server = _Server(("127.0.0.1", port), FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before every reply (default 0.2)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--fail-every", type=int, default=0, help="answer every Nth request 429 (default: never)")
    parser.add_argument("--capacity", type=int, default=0, help="429 while N requests are in flight (default: no cap)")
    args = parser.parse_args()
    server = serve(args.latency, args.port, args.fail_every, args.capacity)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.shutdown()
        sys.exit(0)


if __name__ == "__main__":
    main()
