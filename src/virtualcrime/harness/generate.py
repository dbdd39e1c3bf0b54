"""The ``generate`` function LLM roles receive, built on an Inspect model with the role's configuration."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ResponseSchema
from inspect_ai.util import JSONSchema

from ..roles.llm import Generate
from .budget import active

ROLE_TEMPERATURE: dict[str, float | None] = {"attacker": None, "judge": 0.0, "world_manager": 0.0, "annotator": 0.0}


class RoleModelError(RuntimeError):
    """The provider returned an error instead of a completion (after Inspect's own retries)."""


def inspect_generate(
    model: Model,
    role: str,
    *,
    run_scope: str,
    max_retries: int = 3,
    timeout: int = 120,
    cache: bool = False,
    structured: bool = True,
    max_connections: int | None = None,
) -> Generate:
    """A ``generate`` for ``role`` on ``model``: the role's temperature (provider default for the Attacker, 0 for
    the Judge and World Manager), bounded retries, a per-attempt ``timeout`` in seconds, the call's JSON schema as
    a response schema, and (with ``cache``) a cache policy scoped to the run, turn and role so identical prompts on
    different turns are never served from cache."""

    async def generate(prompt: str, *, call: str, turn: int, schema: dict[str, Any]) -> str:
        config = GenerateConfig(
            temperature=ROLE_TEMPERATURE.get(role),
            max_connections=max_connections,
            max_retries=max_retries,
            attempt_timeout=timeout,  # per attempt; a hung connection is abandoned and retried
            timeout=timeout * (max_retries + 1) + 60,  # the whole call, retries and back-off included
            response_schema=ResponseSchema(name=call, json_schema=JSONSchema.model_validate(schema))
            if structured
            else None,
        )
        policy = CachePolicy(per_epoch=True, scopes={"run": run_scope, "turn": str(turn), "role": role, "call": call})
        try:
            output = await model.generate(prompt, config=config, cache=policy if cache else False)
        except Exception as err:
            cause = _root_cause(err)
            raise RoleModelError(f"{role}/{call}: provider error: {type(cause).__name__}: {cause}") from err
        monitor = active()
        if monitor is not None and output.usage is not None:
            monitor.record_call(role, str(model), output.usage.input_tokens, output.usage.output_tokens)
        if output.error:
            raise RoleModelError(f"{role}/{call}: {output.error}")
        return output.completion

    return generate


def _root_cause(err: BaseException) -> BaseException:
    """The provider's own exception inside retry wrappers (tenacity's RetryError keeps it in last_attempt)."""
    last_attempt = getattr(err, "last_attempt", None)
    if last_attempt is not None:
        inner = last_attempt.exception()
        if inner is not None:
            return _root_cause(inner)
    return err
