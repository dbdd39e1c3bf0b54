"""Choosing role implementations from Inspect models: offline roles for ``virtualcrime/*``, LLM roles otherwise."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

from inspect_ai.model import Model, get_model

from .. import defaults
from ..engine import Roles
from ..roles import Attacker, Judge, WorldManager
from ..roles.llm import Generate, LLMAttacker, LLMJudge, LLMWorldManager
from ..roles.rules import STRICT, RulesJudge, RulesWorldManager
from ..roles.scripted import RandomAttacker, ScriptedAttacker
from ..runs.spec import default_world_manager
from .errors import plain_message
from .generate import inspect_generate
from .providers import IN_PROCESS_ROLES, OfflineRoleModel

DEFAULT_REFEREE = defaults.REFEREE
# Providers whose SDK client retries failed requests on its own (on top of Inspect's retries) unless told not to.
SDK_RETRY_PROVIDERS = ("openai", "openai-api", "anthropic", "deepseek", "openrouter")


class RoleConfigError(ValueError):
    """A model that cannot play the role it was given."""


def referee_models(judge: str | None, world_manager: str | None) -> tuple[str, str]:
    """The Judge and World Manager to play with: the Judge defaults to the rules roles, and the World Manager to
    the Judge's model (the paper uses one model for both), so a mixed setup is always one asked for by name."""
    chosen_judge = judge or DEFAULT_REFEREE
    return chosen_judge, world_manager or default_world_manager(chosen_judge)


@dataclass(frozen=True)
class RoleOptions:
    """How LLM roles call their models."""

    run_scope: str = "run"
    max_retries: int = defaults.MAX_RETRIES
    timeout: int = defaults.CALL_TIMEOUT
    cache: bool = False
    max_attempts: int = defaults.MAX_ATTEMPTS
    structured_output: bool = True
    connections: tuple[tuple[str, int], ...] = ()  # (role, max concurrent calls of that role to its model)
    latency: float = 0.0  # seconds every role call waits first (scale benchmarks and kill tests)


def _offline_name(model: Model) -> str | None:
    """``scripted`` or ``rules`` for the in-process roles; None for any language model (incl. virtualcrime/local)."""
    if isinstance(model.api, OfflineRoleModel) and model.api.model_name in IN_PROCESS_ROLES:
        return model.api.model_name
    return None


def attacker_for(model: Model, options: RoleOptions = RoleOptions(), model_connections: int | None = None) -> Attacker:
    name = _offline_name(model)
    if name == "scripted":
        return ScriptedAttacker()
    if name == "random":
        return RandomAttacker(options.run_scope)
    if name is not None:
        raise RoleConfigError(
            f"virtualcrime/{name} cannot play the Attacker; use virtualcrime/scripted or virtualcrime/random"
        )
    return LLMAttacker(role_generate(model, "attacker", options, model_connections), str(model), options.max_attempts)


def judge_for(model: Model, options: RoleOptions = RoleOptions(), model_connections: int | None = None) -> Judge:
    name = _offline_name(model)
    if name == "rules":
        return RulesJudge()
    if name == "rules-strict":
        return RulesJudge(STRICT, name="virtualcrime/rules-strict")
    if name is not None:
        raise RoleConfigError(
            f"virtualcrime/{name} cannot play the Judge; use virtualcrime/rules or virtualcrime/rules-strict"
        )
    return LLMJudge(role_generate(model, "judge", options, model_connections), str(model), options.max_attempts)


def world_manager_for(
    model: Model, options: RoleOptions = RoleOptions(), model_connections: int | None = None
) -> WorldManager:
    name = _offline_name(model)
    if name == "rules":
        return RulesWorldManager()
    if name is not None:
        raise RoleConfigError(f"virtualcrime/{name} cannot play the World Manager; use virtualcrime/rules")
    return LLMWorldManager(
        role_generate(model, "world_manager", options, model_connections), str(model), options.max_attempts
    )


def role_generate(model: Model, role: str, options: RoleOptions, model_connections: int | None = None) -> Generate:
    """The ``generate`` a role gets: ``options``' retries, timeout, cache, structured output and connection limit."""
    return inspect_generate(model, role, run_scope=options.run_scope, max_retries=options.max_retries,
                            timeout=options.timeout, cache=options.cache,
                            structured=options.structured_output,
                            max_connections=dict(options.connections).get(role),
                            model_connections=model_connections)  # fmt: skip


def role_models() -> tuple[Model, Model, Model]:
    """The current sample's Attacker (the eval's model), Judge and World Manager models; a World Manager not named
    is the Judge's model."""
    judge = get_model(role="judge", default=DEFAULT_REFEREE)
    world_manager = default_world_manager(str(judge))
    return (
        get_model(),
        judge,
        get_model(role="world_manager", default=judge if world_manager == str(judge) else world_manager),
    )


def model_connection_limits(models: dict[str, Model], options: RoleOptions) -> dict[str, int | None]:
    """Per role, the connection limit Inspect should keep for that role's model: the sum of the limits of every
    role on the same model (a role without a limit counts the provider's default), so that the roles' own limits,
    enforced per role, are what binds. None where no role on the model has a limit."""
    limits = dict(options.connections)
    totals: dict[str, int | None] = {}
    for role, model in models.items():
        sharing = [r for r, m in models.items() if str(m) == str(model)]
        if not any(r in limits for r in sharing):
            totals[role] = None
            continue
        totals[role] = sum(limits.get(r) or models[r].api.max_connections() for r in sharing)
    return totals


def resolve_roles(options: RoleOptions = RoleOptions()) -> Roles:
    """Roles for the current sample: the eval's model attacks; the ``judge`` and ``world_manager`` roles judge."""
    attacker, judge, world_manager = role_models()
    models = {"attacker": attacker, "judge": judge, "world_manager": world_manager}
    totals = model_connection_limits(models, options)
    roles = Roles(
        attacker=attacker_for(attacker, options, totals["attacker"]),
        judge=judge_for(judge, options, totals["judge"]),
        world_manager=world_manager_for(world_manager, options, totals["world_manager"]),
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
    provider = name.partition("/")[0]
    sdk_args: dict[str, Any] = {"max_retries": 0} if provider in SDK_RETRY_PROVIDERS else {}  # Inspect retries
    try:
        return get_model(name, **sdk_args)
    except Exception as err:
        raise RoleConfigError(f"cannot use {name} as the {role}: {plain_message(err)}") from err


def eval_models(attacker: str, judge: str, world_manager: str) -> tuple[Model, dict[str, Model]]:
    """The eval's Attacker model and its ``model_roles``, built with ``model_for`` (one retry layer); raises
    RoleConfigError before anything runs if a model cannot play its role."""
    models = (model_for(attacker, "Attacker"), model_for(judge, "Judge"), model_for(world_manager, "World Manager"))
    attacker_for(models[0])
    judge_for(models[1])
    world_manager_for(models[2])
    return models[0], {"judge": models[1], "world_manager": models[2]}


def check_role_models(attacker: str, judge: str, world_manager: str) -> None:
    """Raise RoleConfigError before an eval starts if a model cannot play its role."""
    eval_models(attacker, judge, world_manager)


def check_judge_model(judge: str) -> None:
    """Raise RoleConfigError if ``judge`` cannot play the Judge (re-judging)."""
    judge_for(model_for(judge, "Judge"))


def referee_roles(judge: str, world_manager: str, options: RoleOptions = RoleOptions()) -> tuple[Judge, WorldManager]:
    """The Judge and World Manager for the named models, outside an eval (the web UI's human games)."""
    return judge_for(model_for(judge, "Judge"), options), world_manager_for(
        model_for(world_manager, "World Manager"), options
    )
