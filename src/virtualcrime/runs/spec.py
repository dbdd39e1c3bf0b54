"""What a logged run *is*: the task, seed, engine limits, role models, harm allowance and digests it was played
under. Written once, into the run's store, when the run starts (benchmark runs, forks and human games alike) and
read once by every reader, so analysis never re-derives a run from the code that happens to be installed later.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..engine import EngineConfig
from ..engine.replay import Reseed
from ..scenarios.schema import HarmAllowance
from ..scenarios.schema import Task as ScenarioTask
from .digests import Digests, current_digests

# 1: the first run spec (task, seed, limits, roles, allowance, digests; fork and human origins).
RUN_SPEC_VERSION = 1
RunKind = Literal["benchmark", "fork", "human"]


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Offline Judges whose World Manager is the plain rules one (they exist to judge differently, not to run the world).
JUDGE_ONLY_ROLES = ("rules-strict",)


def default_world_manager(judge: str) -> str:
    """The World Manager that goes with ``judge`` when none is named: the Judge's own model, except for an offline
    Judge that only judges (``virtualcrime/rules-strict``), whose World Manager is ``virtualcrime/rules``."""
    provider, _, name = judge.partition("/")
    return "virtualcrime/rules" if provider == "virtualcrime" and name in JUDGE_ONLY_ROLES else judge


class RoleModels(_S):
    """The model that played each role (``virtualcrime/...`` for the offline roles, ``human/<player>`` for people)."""

    attacker: str
    judge: str
    world_manager: str


class ForkOrigin(_S):
    """Where a fork (what-if) run branched off: its parent run and the turn it played again from."""

    log: str = Field(description="The parent's log, as the fork was given it.")
    sample_id: str
    epoch: int
    turn: int = Field(ge=1, description="The first turn the fork played itself; earlier turns are the parent's.")
    new_seed: int | None = Field(None, description="The fork's own RNG seed from ``turn`` on; None keeps the parent's.")


class HumanOrigin(_S):
    """A game a person played in the web UI."""

    player: str
    game_id: str
    started: str = Field("", description="When the game began, ISO-8601; orders a task's players.")
    abandoned: bool = False


class RunSpec(_S):
    """One run's provenance. ``seed`` is the seed its records replay with from turn 1 (a fork's parent seed;
    ``reseed`` switches to the fork's own from its branching turn)."""

    version: int = RUN_SPEC_VERSION
    kind: RunKind = "benchmark"
    task_id: str
    objective: str
    seed: int
    limits: EngineConfig = Field(default_factory=EngineConfig)
    roles: RoleModels
    allowance: HarmAllowance | None = Field(
        description="The objective's over-harm allowance when the run was played; None only for an old log whose "
        "objective this version does not know."
    )
    digests: Digests = Field(default_factory=Digests)
    fork: ForkOrigin | None = None
    human: HumanOrigin | None = None
    recorded: bool = Field(True, description="False when read from a log written before run specs existed.")

    @property
    def reseed(self) -> Reseed | None:
        """The switch of random stream a fork's replay needs (None for other runs and same-seed forks)."""
        if self.fork is None or self.fork.new_seed is None:
            return None
        return Reseed(self.fork.turn, self.fork.new_seed)


def spec_for(
    task: ScenarioTask,
    seed: int,
    roles: RoleModels,
    limits: EngineConfig | None = None,
    *,
    fork: ForkOrigin | None = None,
    human: HumanOrigin | None = None,
) -> RunSpec:
    """The spec of a run about to be played with today's code: its digests and its objective's allowance."""
    kind: RunKind = "fork" if fork is not None else "human" if human is not None else "benchmark"
    return RunSpec(
        kind=kind,
        task_id=task.id,
        objective=task.objective.id,
        seed=seed,
        limits=limits or EngineConfig(),
        roles=roles,
        allowance=task.objective.allowance,
        digests=current_digests(),
        fork=fork,
        human=human,
    )
