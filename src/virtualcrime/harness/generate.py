"""The ``generate`` function LLM roles receive, built on an Inspect model with the role's configuration.

Each call sends the prompt's system and user messages, asks for the call's JSON schema as a structured response
(unless turned off), and returns a typed ``Reply`` (text and why the model stopped). A provider failure becomes
the role layer's ``ProviderError``. Retries: Inspect retries what it classifies as transient (rate limits,
server errors, timeouts); the providers' own SDK retries are switched off when the model is built
(``roles.model_for``), so one failing call costs at most ``max_retries + 1`` requests; a response that arrived
but could not be read (a truncated or garbled body, which Inspect does not classify) is asked again here, within
the same budget. Per-role connection limits hold even when two roles share one model (``RoleConnections``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from .. import defaults
from ..roles.llm import Generate
from ..roles.types import Prompt, ProviderError, Reply, StopReason
from .budget import active

ROLE_TEMPERATURE: dict[str, float | None] = {"attacker": None, "judge": 0.0, "world_manager": 0.0, "annotator": 0.0}
UNREADABLE_RESPONSES = ("JSONDecodeError", "APIResponseValidationError", "RemoteProtocolError", "ReadError")


def reply_of(output: ModelOutput) -> Reply:
    """The role layer's view of a completion: its text and why it stopped (a refusal when the provider says so)."""
    stop: StopReason
    details = output.choices[0].stop_details if output.choices else None
    content = output.message.content if output.choices else ""
    refused_content = not isinstance(content, str) and any(
        isinstance(part, ContentText) and part.refusal for part in content
    )
    if output.stop_reason == "content_filter":
        stop = "content_filter"
    elif refused_content or (details is not None and details.type == "refusal"):
        stop = "refusal"
    elif output.stop_reason in ("max_tokens", "model_length"):
        stop = "max_tokens"
    elif output.stop_reason in ("stop", "tool_calls"):
        stop = "stop"
    else:
        stop = "other"
    return Reply(text=output.completion, stop_reason=stop)


class RoleConnections:
    """Per-role limits on calls in flight, process-wide (like Inspect's own per-model limits).

    Inspect keeps one connection pool per model, sized by whichever call comes first; two roles on the same model
    would then share one limit. So Inspect is given the sum of the limits of the roles on a model, and each role's
    own limit is enforced here."""

    _semaphores: dict[tuple[str, str, int], tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = {}

    @classmethod
    @asynccontextmanager
    async def slot(cls, role: str, model: str, limit: int | None) -> AsyncIterator[None]:
        """Hold one of ``role``'s ``limit`` slots on ``model`` for the enclosed call (no limit: no wait)."""
        if limit is None:
            yield
            return
        loop = asyncio.get_running_loop()
        key = (role, model, limit)
        held = cls._semaphores.get(key)
        if held is None or held[0] is not loop:  # semaphores belong to one event loop; each eval runs its own
            held = (loop, asyncio.Semaphore(limit))
            cls._semaphores[key] = held
        async with held[1]:
            yield


def inspect_generate(
    model: Model,
    role: str,
    *,
    run_scope: str,
    max_retries: int = defaults.MAX_RETRIES,
    timeout: int = defaults.CALL_TIMEOUT,
    cache: bool = False,
    structured: bool = True,
    max_connections: int | None = None,
    model_connections: int | None = None,
) -> Generate:
    """A ``generate`` for ``role`` on ``model``: the role's temperature (provider default for the Attacker, 0 for
    the Judge and World Manager), bounded retries, a per-attempt ``timeout`` in seconds, the call's JSON schema as
    a response schema, and (with ``cache``) a cache policy scoped to the run, turn and role so identical prompts on
    different turns are never served from cache. ``max_connections`` limits this role's calls in flight;
    ``model_connections`` is the limit Inspect enforces for the model as a whole (the sum over the roles on it)."""

    async def generate(prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        config = GenerateConfig(
            temperature=ROLE_TEMPERATURE.get(role),
            max_connections=model_connections or max_connections,
            max_retries=max_retries,
            attempt_timeout=timeout,  # per attempt; a hung connection is abandoned and retried
            timeout=timeout * (max_retries + 1) + 60,  # the whole call, retries and back-off included
            response_schema=ResponseSchema(name=call, json_schema=JSONSchema.model_validate(schema))
            if structured
            else None,
        )
        policy = CachePolicy(per_epoch=True, scopes={"run": run_scope, "turn": str(turn), "role": role, "call": call})
        messages: list[ChatMessage] = [ChatMessageSystem(content=prompt.system), ChatMessageUser(content=prompt.user)]
        for attempt in range(max_retries + 1):
            try:
                async with RoleConnections.slot(role, str(model), max_connections):
                    output = await model.generate(messages, config=config, cache=policy if cache else False)
                break
            except Exception as err:
                cause = _root_cause(err)
                if type(cause).__name__ in UNREADABLE_RESPONSES and attempt < max_retries:
                    await asyncio.sleep(min(2.0**attempt, 30.0))
                    continue
                raise ProviderError(f"{type(cause).__name__}: {_one_line(cause)}") from err
        monitor = active()
        if monitor is not None and output.usage is not None:
            monitor.record_call(role, str(model), output.usage.input_tokens, output.usage.output_tokens)
        if output.error:
            raise ProviderError(_one_line(output.error))
        return reply_of(output)

    return generate


def _one_line(err: object) -> str:
    text = " ".join(str(err).split())
    return text[:500]


def _root_cause(err: BaseException) -> BaseException:
    """The provider's own exception inside retry wrappers (tenacity's RetryError keeps it in last_attempt)."""
    last_attempt = getattr(err, "last_attempt", None)
    if last_attempt is not None:
        inner = last_attempt.exception()
        if inner is not None:
            return _root_cause(inner)
    return err
