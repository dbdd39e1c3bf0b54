"""Hypothesis strategies and run helpers for the world-layer property tests (not a test module)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from virtualcrime.scenarios import load_tasks
from virtualcrime.world import (
    LedgerEntry,
    MemberStatus,
    NpcStatus,
    WorldState,
    apply,
    apply_in_place,
)
from virtualcrime.world.ops import (
    AdvanceClock,
    AppendHistory,
    CompleteEvent,
    FoldHistory,
    Move,
    Operation,
    SetAlarm,
    SetAlertness,
    SetFlag,
    SetFollowing,
    SetHidden,
    SetInvestigating,
    SetLock,
    SetMemberStatus,
    SetNpcStatus,
    SetObservable,
    SetTag,
    SpawnNpc,
    Transfer,
    TriggerEvent,
)

T = TypeVar("T")

TASK_IDS = ("restaurant/robbery", "restaurant/kidnapping", "restaurant/assassination", "restaurant/arson")
_TASKS = load_tasks()
_INITIAL = {task_id: _TASKS[task_id].initial_state() for task_id in TASK_IDS}

BOGUS_IDS = ("ghost", "nowhere", "", "Not An Id", "officer_nobody")
TAGS = ("on_fire", "disabled", "disguised", "smoke", "wet")
WORLD_FLAGS = ("door_forced", "cameras_off", "bogus_flag")
TEXT = st.text(alphabet="abcdeXYZ .,!'", max_size=30)

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fresh(task_id: str) -> WorldState:
    return _INITIAL[task_id].model_copy(deep=True)


# --------------------------------------------------------------------------------------------------------------
# Operation strategy
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pools:
    """The ids of one state, by kind, to draw operation arguments from."""

    state: WorldState

    @property
    def locations(self) -> list[str]:
        return list(self.state.locations)

    @property
    def members(self) -> list[str]:
        return list(self.state.members)

    @property
    def npcs(self) -> list[str]:
        return list(self.state.npcs)

    @property
    def reserve(self) -> list[str]:
        return list(self.state.reserve_npcs)

    @property
    def entities(self) -> list[str]:
        return list(self.state.entities)

    @property
    def containers(self) -> list[str]:
        return [e.id for e in self.state.entities.values() if e.container]

    @property
    def edges(self) -> list[str]:
        return [e.id for e in self.state.edges]

    @property
    def events(self) -> list[str]:
        return [e.id for e in self.state.events]

    @property
    def triggered(self) -> list[str]:
        return [e.id for e in self.state.events if e.triggered_turn is not None]

    @property
    def flags(self) -> list[str]:
        return [f.id for f in [*self.state.checkpoints, *self.state.critical_failures]]

    @property
    def objects(self) -> list[str]:
        return [*self.locations, *self.members, *self.npcs, *self.entities]

    @property
    def noise(self) -> list[str]:
        """Any id of any kind (wrong kinds included) and ids that exist nowhere."""
        return [*self.objects, *self.reserve, *self.edges, *self.events, *BOGUS_IDS]

    def location_of(self, subject: str) -> str | None:
        person = self.state.members.get(subject) or self.state.npcs.get(subject)
        return person.current_location if person is not None else None


def pick(draw: st.DrawFn, real: Sequence[str], noise: Sequence[str]) -> str:
    """Mostly (4 in 5) one of ``real``, otherwise anything from ``noise``."""
    if real and draw(st.integers(0, 4)) < 4:
        return draw(st.sampled_from(list(real)))
    return draw(st.sampled_from(list(noise)))


def _move(draw: st.DrawFn, p: Pools) -> Operation:
    subject = pick(draw, [*p.members, *p.members, *p.npcs], p.noise)
    origin = p.location_of(subject)
    near = p.state.neighbours(origin) if origin is not None else []
    return Move(subject=subject, to=pick(draw, near, [*p.locations, *p.noise]))


def _transfer(draw: st.DrawFn, p: Pools) -> Operation:
    state = p.state
    item = pick(draw, p.entities, p.noise)
    place = state.place_of(item) if item in state.entities else None
    here: list[str] = []
    if place is not None:
        here = [
            place,
            *(m.id for m in state.members.values() if m.current_location == place),
            *(n.id for n in state.npcs.values() if n.current_location == place),
            *(c for c in p.containers if c != item and state.place_of(c) == place),
        ]
    return Transfer(item=item, to=pick(draw, here, p.noise))


def _set_member_status(draw: st.DrawFn, p: Pools) -> Operation:
    statuses = [MemberStatus.ACTIVE, MemberStatus.ACTIVE, MemberStatus.INJURED, *MemberStatus]
    final = [m.id for m in p.state.members.values() if m.status in (MemberStatus.DEAD, MemberStatus.ARRESTED)]
    return SetMemberStatus(member=pick(draw, [*final, *p.members], p.noise), status=draw(st.sampled_from(statuses)))


def _set_npc_status(draw: st.DrawFn, p: Pools) -> Operation:
    dead = [n.id for n in p.state.npcs.values() if n.status == NpcStatus.DEAD]
    return SetNpcStatus(npc=pick(draw, [*dead, *p.npcs], p.noise), status=draw(st.sampled_from(NpcStatus)))


def _set_lock(draw: st.DrawFn, p: Pools) -> Operation:
    """Mostly a door next to the team (so that moves meet locked doors) or a container."""
    team_at = {m.current_location for m in p.state.members.values()}
    near = [e.id for e in p.state.edges if {e.a, e.b} & team_at]
    return SetLock(subject=pick(draw, [*near, *p.edges, *p.containers], p.noise), locked=draw(st.booleans()))


def _set_following(draw: st.DrawFn, p: Pools) -> Operation:
    team_at = {m.current_location for m in p.state.members.values()}
    near_team = [n.id for n in p.state.npcs.values() if n.current_location in team_at]
    npc = pick(draw, [*near_team, *near_team, *p.npcs], p.noise)
    where = p.location_of(npc)
    beside = [m.id for m in p.state.members.values() if m.current_location == where]
    return SetFollowing(npc=npc, member=pick(draw, beside or p.members, ["", *p.members, *p.noise]))


def _fold_history(draw: st.DrawFn, p: Pools) -> Operation:
    return FoldHistory(
        subject=pick(draw, p.objects, p.noise),
        keep=draw(st.integers(0, 12)),
        summary=draw(TEXT),
    )


def _event_effect(draw: st.DrawFn, p: Pools) -> Operation:
    """A predefined event effect of the task, as the rules World Manager would emit it."""
    effects = [op for e in p.state.events for op in e.effects]
    if not effects:
        return _move(draw, p)
    chosen: Operation = draw(st.sampled_from(effects)).model_copy(deep=True)
    return chosen


Builder = Callable[[st.DrawFn, Pools], Operation]
BUILDERS: dict[type | str, tuple[int, Builder]] = {
    Move: (8, _move),
    Transfer: (6, _transfer),
    SetObservable: (1, lambda d, p: SetObservable(subject=pick(d, p.objects, p.noise), text=d(TEXT))),
    AppendHistory: (3, lambda d, p: AppendHistory(subject=pick(d, p.objects, p.noise), text=d(TEXT))),
    SetMemberStatus: (2, _set_member_status),
    SetNpcStatus: (2, _set_npc_status),
    SetAlertness: (1, lambda d, p: SetAlertness(npc=pick(d, p.npcs, p.noise), level=d(st.integers(0, 3)))),
    SetFollowing: (2, _set_following),
    SetInvestigating: (
        1,
        lambda d, p: SetInvestigating(npc=pick(d, p.npcs, p.noise), location=pick(d, p.locations, ["", *p.noise])),
    ),
    SetHidden: (1, lambda d, p: SetHidden(member=pick(d, p.members, p.noise), hidden=d(st.booleans()))),
    SetTag: (
        2,
        lambda d, p: SetTag(
            subject=pick(d, [*p.entities, *p.locations, *p.members], p.noise),
            tag=d(st.sampled_from(TAGS)),
            value=d(st.booleans()),
        ),
    ),
    FoldHistory: (2, _fold_history),
    SetLock: (3, _set_lock),
    SetFlag: (
        1,
        lambda d, p: SetFlag(flag=pick(d, [*p.flags, *WORLD_FLAGS], WORLD_FLAGS), value=d(st.booleans())),
    ),
    AdvanceClock: (1, lambda d, p: AdvanceClock(minutes=d(st.integers(0, 240)))),
    SetAlarm: (1, lambda d, p: SetAlarm(ringing=d(st.booleans()))),
    SpawnNpc: (
        2,
        lambda d, p: SpawnNpc(
            npc=pick(d, p.reserve, [*p.npcs, *p.noise]),
            at=pick(d, [loc.id for loc in p.state.locations.values() if loc.entry], [*p.locations, *p.noise]),
        ),
    ),
    TriggerEvent: (1, lambda d, p: TriggerEvent(event=pick(d, p.events, p.noise))),
    CompleteEvent: (1, lambda d, p: CompleteEvent(event=pick(d, [*p.triggered, *p.triggered, *p.events], p.noise))),
    "event_effect": (1, _event_effect),
}
WEIGHTED_KINDS = [kind for kind, (weight, _) in BUILDERS.items() for _ in range(weight)]


@st.composite
def operations(draw: st.DrawFn, state: WorldState, kinds: Sequence[type | str] = WEIGHTED_KINDS) -> Operation:
    """One operation of any type, its arguments drawn mostly from ``state``'s real ids."""
    kind = draw(st.sampled_from(kinds))
    return BUILDERS[kind][1](draw, Pools(state))


# --------------------------------------------------------------------------------------------------------------
# Runs: batches of operations, each drawn against the state it will meet
# --------------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    initial: WorldState
    batches: list[list[Operation]]


def draw_run(
    data: st.DataObject, max_batches: int = 4, max_ops: int = 10, kinds: Sequence[type | str] = WEIGHTED_KINDS
) -> Run:
    task_id = data.draw(st.sampled_from(TASK_IDS), label="task")
    initial = _INITIAL[task_id]  # never mutated: only ever read, copied or passed to ``apply``
    placement = data.draw(st.integers(0, 2**16), label="team placement")
    if placement % 3:
        # The same task with the team already spread over the map, to reach doors and rooms deep inside.
        # (A seeded shuffle rather than Hypothesis draws, which favour the first locations of the list.)
        rng = random.Random(placement)
        initial = initial.model_copy(deep=True)
        for member in initial.members.values():
            member.current_location = rng.choice(list(initial.locations))
    work = initial.model_copy(deep=True)
    batches: list[list[Operation]] = []
    for index in range(data.draw(st.integers(1, max_batches), label="batches")):
        if index:
            work.turn += 1
        ops: list[Operation] = []
        for _ in range(data.draw(st.integers(0, max_ops), label="ops")):
            op = data.draw(operations(work, kinds))
            ops.append(op)
            apply_in_place(work, [op])
        batches.append(ops)
    return Run(initial, batches)


@dataclass
class Step:
    before: WorldState
    ops: list[Operation]
    after: WorldState
    ledger: list[LedgerEntry]


def replay(run: Run) -> Iterator[Step]:
    """Apply the run's batches with ``apply``, one batch per turn."""
    state = run.initial
    for index, ops in enumerate(run.batches):
        if index:
            # Shallow: nothing here mutates a state, and ``apply`` copies deeply.
            state = state.model_copy(update={"turn": state.turn + 1})
        after, ledger = apply(state, ops, stage=f"batch{index}")
        yield Step(state, ops, after, ledger)
        state = after


def replay_one_by_one(
    run: Run, snapshot: Callable[[WorldState], T] = WorldState.model_dump
) -> Iterator[tuple[WorldState, Operation, T, LedgerEntry]]:
    """Apply the run one operation at a time on a working copy.

    Yields (the working state after the op, the op, ``snapshot`` of the state before it, its ledger entry).
    """
    work = run.initial.model_copy(deep=True)
    for index, ops in enumerate(run.batches):
        if index:
            work.turn += 1
        for op in ops:
            before = snapshot(work)
            [entry] = apply_in_place(work, [op], stage="single")
            yield work, op, before, entry


def key_items(state: WorldState) -> set[str]:
    return {e.id for e in state.entities.values() if e.key}


def npc_ids(state: WorldState) -> set[str]:
    return {*state.npcs, *state.reserve_npcs}


def people_places(state: WorldState) -> dict[str, str]:
    return {p.id: p.current_location for p in [*state.members.values(), *state.npcs.values()]}
