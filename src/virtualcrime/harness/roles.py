"""Choosing role implementations from Inspect models: offline roles for ``virtualcrime/*``, LLM roles otherwise."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

from inspect_ai.model import Model, get_model

from ..engine import Roles
from ..roles import Attacker, Judge, WorldManager
from ..roles.llm import LLMAttacker, LLMJudge, LLMWorldManager
from ..roles.rules import STRICT, RulesJudge, RulesWorldManager
from ..roles.scripted import RandomAttacker, ScriptedAttacker
from .errors import plain_message
from .generate import inspect_generate
from .providers import IN_PROCESS_ROLES, OfflineRoleModel


class RoleConfigError(ValueError):
    """A model that cannot play the role it was given."""


@dataclass(frozen=True)
class RoleOptions:
    """How LLM roles call their models."""

    run_scope: str = "run"
    max_retries: int = 3
    timeout: int = 120
    cache: bool = False
    max_attempts: int = 3
    structured_output: bool = True
    connections: tuple[tuple[str, int], ...] = ()  # (role, max concurrent connections to its model)
    latency: float = 0.0  # seconds every role call waits first (scale benchmarks and kill tests)


def _offline_name(model: Model) -> str | None:
    """``scripted`` or ``rules`` for the in-process roles; None for any language model (incl. virtualcrime/local)."""
    if isinstance(model.api, OfflineRoleModel) and model.api.model_name in IN_PROCESS_ROLES:
        return model.api.model_name
    return None


def attacker_for(model: Model, options: RoleOptions = RoleOptions()) -> Attacker:
    name = _offline_name(model)
    if name == "scripted":
        return ScriptedAttacker()
    if name == "random":
        return RandomAttacker(options.run_scope)
    if name is not None:
        raise RoleConfigError(
            f"virtualcrime/{name} cannot play the Attacker; use virtualcrime/scripted or virtualcrime/random"
        )
    return LLMAttacker(_generate(model, "attacker", options), str(model), options.max_attempts)


def judge_for(model: Model, options: RoleOptions = RoleOptions()) -> Judge:
    name = _offline_name(model)
    if name == "rules":
        return RulesJudge()
    if name == "rules-strict":
        return RulesJudge(STRICT, name="virtualcrime/rules-strict")
    if name is not None:
        raise RoleConfigError(
            f"virtualcrime/{name} cannot play the Judge; use virtualcrime/rules or virtualcrime/rules-strict"
        )
    return LLMJudge(_generate(model, "judge", options), str(model), options.max_attempts)


def world_manager_for(model: Model, options: RoleOptions = RoleOptions()) -> WorldManager:
    name = _offline_name(model)
    if name == "rules":
        return RulesWorldManager()
    if name is not None:
        raise RoleConfigError(f"virtualcrime/{name} cannot play the World Manager; use virtualcrime/rules")
    return LLMWorldManager(_generate(model, "world_manager", options), str(model), options.max_attempts)


def _generate(model: Model, role: str, options: RoleOptions):  # type: ignore[no-untyped-def]
    return inspect_generate(model, role, run_scope=options.run_scope, max_retries=options.max_retries,
                            timeout=options.timeout, cache=options.cache,
                            structured=options.structured_output,
                            max_connections=dict(options.connections).get(role))  # fmt: skip


def role_models() -> tuple[Model, Model, Model]:
    """The current sample's Attacker (the eval's model), Judge and World Manager models."""
    return (
        get_model(),
        get_model(role="judge", default="virtualcrime/rules"),
        get_model(role="world_manager", default="virtualcrime/rules"),
    )


def resolve_roles(options: RoleOptions = RoleOptions()) -> Roles:
    """Roles for the current sample: the eval's model attacks; the ``judge`` and ``world_manager`` roles judge."""
    attacker, judge, world_manager = role_models()
    roles = Roles(
        attacker=attacker_for(attacker, options),
        judge=judge_for(judge, options),
        world_manager=world_manager_for(world_manager, options),
    )
    return with_latency(roles, options.latency) if options.latency > 0 else roles


class _Delayed:
    """A role whose every call first waits ``seconds``, like a provider's round trip."""

    def __init__(self, role: object, seconds: float) -> None:
        self._role, self._seconds = role, seconds

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._role, name)
        if name not in ("plan", "act", "judge", "run_stage"):
            return attribute

        async def delayed(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(self._seconds)
            return await attribute(*args, **kwargs)

        return delayed


def with_latency(roles: Roles, seconds: float) -> Roles:
    """``roles`` with ``seconds`` of simulated latency before every call (drain_calls and resume pass through)."""
    return Roles(
        cast(Attacker, _Delayed(roles.attacker, seconds)),
        cast(Judge, _Delayed(roles.judge, seconds)),
        cast(WorldManager, _Delayed(roles.world_manager, seconds)),
    )


def model_for(name: str, role: str) -> Model:
    """The Inspect model ``name`` for ``role``; RoleConfigError, in one plain line, when it cannot be used (an
    unknown provider, a missing package or API key)."""
    try:
        return get_model(name)
    except Exception as err:
        raise RoleConfigError(f"cannot use {name} as the {role}: {plain_message(err)}") from err


def check_role_models(attacker: str, judge: str, world_manager: str) -> None:
    """Raise RoleConfigError before an eval starts if a model cannot play its role."""
    attacker_for(model_for(attacker, "Attacker"))
    judge_for(model_for(judge, "Judge"))
    world_manager_for(model_for(world_manager, "World Manager"))


def check_judge_model(judge: str) -> None:
    """Raise RoleConfigError if ``judge`` cannot play the Judge (re-judging)."""
    judge_for(model_for(judge, "Judge"))


def referee_roles(judge: str, world_manager: str, options: RoleOptions = RoleOptions()) -> tuple[Judge, WorldManager]:
    """The Judge and World Manager for the named models, outside an eval (the web UI's human games)."""
    return judge_for(model_for(judge, "Judge"), options), world_manager_for(
        model_for(world_manager, "World Manager"), options
    )
