"""Re-executing a logged run's roles: offline roles run again, language-model roles get their recorded replies.

This is the strong form of ``replay --verify``: no decision is taken from the turn records. The in-process roles
(``virtualcrime/scripted``, ``random``, ``rules``, ``rules-strict``) decide again from the state; each language
model role is given, call by call, the replies its model returned (``ModelCall.replies`` in the records, which
travel with the run through every checkpoint and invocation; for logs written before records kept them, the log's
model events), and parses them again (repairs and retries included). If the new records equal the logged ones,
the log is a faithful and reproducible account of the run, parsing included.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import get_model

from ..engine import Roles, TurnRecord
from ..roles.llm import LLMAttacker, LLMJudge, LLMWorldManager
from ..roles.llm.roles import Generate
from ..roles.types import Prompt, ProviderError, Reply
from .generate import reply_of
from .providers import is_game_role
from .roles import RoleOptions, attacker_for, judge_for, world_manager_for

ROLES = ("attacker", "judge", "world_manager")


class RecordedRepliesExhausted(RuntimeError):
    """A re-executed role asked its model more often than the log shows (the run diverged)."""


Recorded = Reply | ProviderError


def recorded_replies(events: Sequence[Any]) -> dict[str, deque[tuple[str | None, Recorded]]]:
    """Per role, the (call name, reply) of every model call in the sample's events, in order; a call that failed
    at the provider is kept as the ProviderError it raised.

    Model events without a model role are the Attacker's (the eval's own model); other roles (e.g. a later
    ``rejudge``) are ignored.
    """
    replies: dict[str, deque[tuple[str | None, Recorded]]] = defaultdict(deque)
    for event in events:
        if getattr(event, "event", None) != "model" or getattr(event, "pending", False):
            continue
        role = event.role or "attacker"
        if role not in ROLES:
            continue
        schema = event.config.response_schema if event.config is not None else None
        name = schema.name if schema is not None else None
        error = getattr(event, "error", None)
        replies[role].append((name, ProviderError(" ".join(str(error).split())) if error else reply_of(event.output)))
    return replies


def replies_in_records(records: Sequence[TurnRecord]) -> dict[str, deque[tuple[str | None, Recorded]]] | None:
    """Per role, the (call name, reply or provider error) of every attempt the records keep, in order; None when
    some call's replies were not recorded (a log written before records kept them)."""
    replies: dict[str, deque[tuple[str | None, Recorded]]] = defaultdict(deque)
    for record in records:
        for call in record.model_calls:
            if len(call.replies) != call.attempts:
                return None
            for attempt in call.replies:
                answer = ProviderError(attempt.provider_error) if attempt.provider_error else attempt.reply
                replies[call.role].append((call.call, answer))
    return replies


def replay_generate(role: str, queue: deque[tuple[str | None, Recorded]]) -> Generate:
    """A ``generate`` that answers each call with the next recorded completion of ``role``."""

    async def generate(prompt: Prompt, *, call: str, turn: int, schema: dict[str, Any]) -> Reply:
        if not queue:
            raise RecordedRepliesExhausted(f"{role}: turn {turn} asks for {call}, but the log has no more replies")
        recorded_call, completion = queue.popleft()
        if recorded_call is not None and recorded_call != call:
            raise RecordedRepliesExhausted(
                f"{role}: turn {turn} asks for {call}; the log's next reply was {recorded_call}"
            )
        if isinstance(completion, ProviderError):
            raise completion
        return completion

    return generate


def reexecution_roles(
    models: dict[str, str], records: Sequence[TurnRecord], events: Sequence[Any], options: RoleOptions
) -> Roles:
    """Roles for re-executing a run played by ``models`` (role → model name): language-model roles answered from
    the replies in ``records``, or from the log's ``events`` for records that do not keep them."""
    found = replies_in_records(records)
    replies = found if found is not None else recorded_replies(events)

    def llm(role: str) -> Generate:
        return replay_generate(role, replies[role])

    attacker, judge, world_manager = (models[r] for r in ROLES)
    attempts = options.max_attempts
    return Roles(
        attacker_for(get_model(attacker), options)
        if is_game_role(attacker)
        else LLMAttacker(llm("attacker"), attacker, attempts),
        judge_for(get_model(judge), options) if is_game_role(judge) else LLMJudge(llm("judge"), judge, attempts),
        world_manager_for(get_model(world_manager), options)
        if is_game_role(world_manager)
        else LLMWorldManager(llm("world_manager"), world_manager, attempts),
    )
