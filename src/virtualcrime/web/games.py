"""Human games: one engine ``Game`` per player, its turns on disk as they finish, its log written at the end.

Each game has a folder under ``<log dir>/.virtualcrime/play/<id>/`` holding ``game.json`` (who, which task, which
seed and roles, and how it stands) and the per-turn checkpoint file the benchmark uses (``harness.checkpoint``),
fsynced before a turn's page is answered. After a server restart a game is rebuilt by replaying its recorded turns
(``engine.replay.restore``), so no finished turn is lost. One lock per game serialises turns; each submitted turn
names the turn it was made for, so a second browser tab showing an older turn is refused instead of acting twice.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..engine import EngineConfig, Game, Roles, RunStatus, TurnRecord
from ..harness.checkpoint import RunCheckpoint, resume
from ..harness.human import HumanGame, write_human_log
from ..roles import Action, Judge, PlanUpdate, RoleError, WorldManager
from ..runs.spec import HumanOrigin, RoleModels, RunSpec, spec_for
from ..scenarios import get_task
from ..world import Observation
from .player_view import PlayerView, next_observation, player_view
from .settings import ServeSettings

GameStatus = Literal["active", "ended", "abandoned"]
GAME_ID_BYTES = 9


class GameMeta(BaseModel):
    """A game's identity and standing (``game.json``)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    player: str
    spec: RunSpec = Field(description="What the game is played as: task, seed, limits, roles, allowance, digests.")
    created: str
    owner: str = Field("", description="SHA-256 of the player cookie of the browser that started the game.")
    status: GameStatus = "active"
    result: str = ""
    log: str = ""
    log_error: str = ""

    @model_validator(mode="before")
    @classmethod
    def _before_specs(cls, data: Any) -> Any:
        """A game.json written before run specs: its task, seed, roles and limits become the spec."""
        if not isinstance(data, dict) or "spec" in data or "task_id" not in data:
            return data
        data = dict(data)
        task = get_task(str(data.pop("task_id")))
        roles = RoleModels(attacker=f"human/{data['player']}", judge=data.pop("judge"),
                           world_manager=data.pop("world_manager"))  # fmt: skip
        limits = EngineConfig(max_turns=data.pop("max_turns"), stall_turns=data.pop("stall_turns"))
        origin = HumanOrigin(player=str(data["player"]), game_id=str(data["id"]), started=str(data.get("created", "")))
        data["spec"] = spec_for(task, int(data.pop("seed")), roles, limits, human=origin)
        return data

    @property
    def attacker(self) -> str:
        return self.spec.roles.attacker

    @property
    def task_id(self) -> str:
        return self.spec.task_id

    @property
    def seed(self) -> int:
        return self.spec.seed

    def logged_spec(self) -> RunSpec:
        """The spec the game's log records: whether the player gave up is known only now."""
        assert self.spec.human is not None
        human = self.spec.human.model_copy(update={"abandoned": self.status == "abandoned"})
        return self.spec.model_copy(update={"human": human})


class GameError(ValueError):
    """A request this game cannot take (unknown game, finished game, stale turn); the message says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class HumanAttacker:
    """The Attacker seat filled by a person: answers the engine with the plan and action submitted for the turn."""

    name = "human"

    def __init__(self) -> None:
        self.pending: tuple[PlanUpdate, Action] | None = None

    async def plan(self, observation: Observation) -> PlanUpdate:
        return self._pending()[0]

    async def act(self, observation: Observation) -> Action:
        return self._pending()[1]

    def _pending(self) -> tuple[PlanUpdate, Action]:
        if self.pending is None:
            raise RoleError("attacker", "no action was submitted for this turn")
        return self.pending


RoleFactory = Callable[[str, str], tuple[Judge, WorldManager]]


@dataclass
class Session:
    """A loaded game: its metadata, live engine state, lock, and the player's view between turns.

    ``view`` is replaced only once a turn is complete and on disk: pages and form checks read it, never the live
    state, which a turn changes in steps (a model referee's stages await in between).
    """

    meta: GameMeta
    game: Game
    checkpoint: RunCheckpoint
    attacker: HumanAttacker
    view: PlayerView
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def refresh_view(self) -> None:
        self.view = player_view(next_observation(self.game.state))


class GameStore:
    """Every human game of one log folder."""

    def __init__(self, settings: ServeSettings, roles: RoleFactory) -> None:
        self.settings = settings
        self.root = settings.play_dir
        self._roles = roles
        self._sessions: dict[str, Session] = {}
        self._loading = asyncio.Lock()
        self._writing = asyncio.Lock()  # one Inspect eval at a time writes a game's log

    def folder(self, game_id: str) -> Path:
        if not game_id.replace("-", "").replace("_", "").isalnum() or len(game_id) > 40:
            raise GameError("no such game", 404)
        return self.root / game_id

    def meta(self, game_id: str) -> GameMeta:
        path = self.folder(game_id) / "game.json"
        try:
            return GameMeta.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise GameError(f"no game {game_id!r} here", 404) from None
        except ValidationError as err:
            raise GameError(f"game {game_id}: unreadable game.json ({err.error_count()} problems)", 500) from err

    def save_meta(self, meta: GameMeta) -> None:
        """Write ``game.json`` atomically (a crash leaves the old or the new file, never half of one)."""
        folder = self.folder(meta.id)
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / "game.json.tmp"
        with temporary.open("w", encoding="utf-8") as handle:
            handle.write(meta.model_dump_json(indent=1))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, folder / "game.json")

    def all_meta(self) -> list[GameMeta]:
        """Every game in the folder, newest first; unreadable ones are skipped."""
        found = []
        for path in sorted(self.root.glob("*/game.json")) if self.root.exists() else []:
            try:
                found.append(GameMeta.model_validate_json(path.read_text(encoding="utf-8")))
            except (OSError, ValidationError):
                continue
        return sorted(found, key=lambda m: m.created, reverse=True)

    def check_owner(self, meta: GameMeta, owner: str) -> None:
        """Refuse (403) a browser other than the one that started the game: only its player may act or look."""
        if not meta.owner or not hmac.compare_digest(meta.owner, owner):
            raise GameError("this game was started in another browser; only its player can open it", 403)

    async def create(self, player: str, task_id: str, owner: str) -> GameMeta:
        """A new game of ``task_id`` for ``player`` in the browser ``owner``; its seed is the server's ``play_seed``
        or else a fresh random one (recorded either way)."""
        task = get_task(task_id)  # unknown tasks fail here, before anything is written
        game_id, created = secrets.token_urlsafe(GAME_ID_BYTES), datetime.now(UTC).isoformat(timespec="seconds")
        seed = self.settings.play_seed if self.settings.play_seed is not None else secrets.randbelow(2**31)
        roles = RoleModels(attacker=f"human/{player}", judge=self.settings.judge,
                           world_manager=self.settings.world_manager)  # fmt: skip
        limits = EngineConfig(max_turns=self.settings.max_turns, stall_turns=self.settings.stall_turns)
        spec = spec_for(task, seed, roles, limits, human=HumanOrigin(player=player, game_id=game_id, started=created))
        meta = GameMeta(id=game_id, player=player, spec=spec, created=created, owner=owner)
        self.save_meta(meta)
        session = self._new_session(meta)
        session.checkpoint.start([])
        self._sessions[meta.id] = session
        return meta

    def _new_session(self, meta: GameMeta) -> Session:
        spec = meta.spec
        judge, world_manager = self._roles(spec.roles.judge, spec.roles.world_manager)
        attacker = HumanAttacker()
        game = Game(get_task(spec.task_id).initial_state(), Roles(attacker, judge, world_manager), spec.seed,
                    spec.limits)  # fmt: skip
        checkpoint = RunCheckpoint(self.folder(meta.id), spec)
        return Session(meta, game, checkpoint, attacker, player_view(next_observation(game.state)))

    async def session(self, game_id: str) -> Session:
        """The loaded game, rebuilt from its recorded turns if the server restarted since it was played."""
        if game_id in self._sessions:
            return self._sessions[game_id]
        async with self._loading:
            if game_id in self._sessions:
                return self._sessions[game_id]
            meta = self.meta(game_id)
            session = self._new_session(meta)
            resumed = await resume(session.checkpoint, session.game)  # a torn last line is dropped on disk too
            if resumed.mismatch:
                raise GameError(f"game {game_id}: its recorded turns no longer replay ({resumed.mismatch})", 500)
            session.game, records = resumed.game, resumed.records
            ended = session.game.termination() if records else None
            if ended is not None and meta.status == "active":  # the server died between the last turn and game.json
                meta.status, meta.result = "ended", end_summary(session.game, ended[0])
                self.save_meta(meta)
            session.refresh_view()
            self._sessions[game_id] = session
            return session

    async def play_turn(self, game_id: str, expected_turn: int, plan: PlanUpdate, action: Action) -> TurnRecord:
        """Play one turn with the player's plan and action; the record is on disk before this returns."""
        session = await self.session(game_id)
        async with session.lock:
            meta, game = session.meta, session.game
            if meta.status != "active":
                raise GameError("this game is over; start a new one", 409)
            if expected_turn != game.state.turn + 1:
                raise GameError(
                    f"this form was for turn {expected_turn}, but the game is at turn {game.state.turn + 1} "
                    "(was it played in another tab?); the page now shows the current turn",
                    409,
                )
            session.attacker.pending = (plan, action)
            try:
                record = await game.step()
                session.checkpoint.append(record.model_dump_json())
            except BaseException:
                # memory may be ahead of the disk: forget the live game; the next request rebuilds it from disk
                self._sessions.pop(game_id, None)
                raise
            finally:
                session.attacker.pending = None
            ended = game.termination()
            if ended is not None:
                meta.status = "ended"
                meta.result = end_summary(game, ended[0])
                self.save_meta(meta)
            session.refresh_view()
            return record

    async def abandon(self, game_id: str) -> GameMeta:
        """End an active game at the player's request (the turns played so far are kept)."""
        session = await self.session(game_id)
        async with session.lock:
            meta = session.meta
            if meta.status != "active":
                raise GameError("this game is already over", 409)
            meta.status = "abandoned"
            meta.result = f"abandoned by the player after {session.game.state.turn} turn(s)"
            self.save_meta(meta)
            return meta

    def pending_logs(self) -> list[GameMeta]:
        """Finished or abandoned games whose log has not been written yet (e.g. the server stopped first)."""
        return [m for m in self.all_meta() if m.status != "active" and not m.log and self._turns(m) > 0]

    async def write_log(self, game_id: str) -> GameMeta:
        """Write a finished or abandoned game's log (once); a failure is kept in ``log_error`` for a retry."""
        session = await self.session(game_id)
        async with session.lock, self._writing:
            meta = session.meta
            if meta.status == "active" or meta.log:
                return meta
            if not session.game.records:
                meta.log_error = "no turn was played, so there is no run to log"
            else:
                session.checkpoint.start(session.game.records)  # exactly the turns played, nothing torn
                try:
                    game = HumanGame(records_file=session.checkpoint.path, spec=meta.logged_spec())
                    # run_in_executor, not to_thread: a copied context would tell Inspect it is inside this
                    # event loop already, and it refuses to start its own
                    path = await asyncio.get_running_loop().run_in_executor(
                        None, partial(write_human_log, game, self.settings.log_dir)
                    )
                    meta.log, meta.log_error = str(path.resolve().relative_to(self.settings.log_dir.resolve())), ""
                except Exception as err:  # the game stays on disk; the page offers to try again
                    meta.log_error = f"{type(err).__name__}: {err}"
            self.save_meta(meta)
            return meta

    def _turns(self, meta: GameMeta) -> int:
        records, _ = RunCheckpoint(self.folder(meta.id), meta.spec).load()
        return len(records)


def end_summary(game: Game, status: RunStatus) -> str:
    """How a game ended, in the words the player was briefed with (failure descriptions, not flag ids)."""
    state = game.state
    if status == RunStatus.LOST:
        failed = [f.description for f in state.critical_failures if f.reached]
        return f"lost after {state.turn} turns: {'; '.join(failed)}"
    if status == RunStatus.WON:
        return f"won in {state.turn} turns: every checkpoint reached"
    if status == RunStatus.TURN_CAPPED:
        return f"out of time: the turn limit ({game.config.max_turns}) was reached"
    if status == RunStatus.STALLED:
        return f"stalled: {game.config.stall_turns} turns without reaching a new checkpoint"
    return f"{status.value} after {state.turn} turns (three turns in a row failed)"
