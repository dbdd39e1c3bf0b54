"""Turn-level checkpoints: a run's finished turns on disk, so a killed run resumes at its next turn.

Inspect's own retry restarts an unfinished sample from the beginning, re-paying every model call. Here each
finished turn's record is appended to a per-run JSON Lines file and flushed to disk before the next turn starts;
a retried sample replays those records exactly (``engine.replay.restore``: same operations, same draws, no model
calls) and plays on from the next turn. A torn last line (the process died mid-write) is ignored; a checkpoint
that no longer replays (the scenario or engine changed) is discarded with a note and the run starts over.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..engine import Game, TurnRecord
from ..engine.replay import ReplayMismatch, restore
from ..runs.spec import RunSpec
from ..runs.store import RECORD_SCHEMA_VERSION


def checkpoint_identity(spec: RunSpec) -> dict[str, str | int]:
    """What must match for recorded turns to belong to the same run: task, seed, role models, limits and the record
    schema (the checkpoint's header line)."""
    return {"task_id": spec.task_id, "seed": spec.seed, **spec.roles.model_dump(), "max_turns": spec.limits.max_turns,
            "stall_turns": spec.limits.stall_turns, "schema": RECORD_SCHEMA_VERSION}  # fmt: skip


class RunCheckpoint:
    """The checkpoint file of one run: a header line with the run's identity, then one TurnRecord per line."""

    def __init__(self, folder: Path, spec: RunSpec) -> None:
        self.spec = spec
        self.identity = checkpoint_identity(spec)
        digest = hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()).hexdigest()[:16]
        self.path = Path(folder) / f"{spec.task_id.replace('/', '__')}.seed{spec.seed}.{digest}.jsonl"

    def load(self) -> tuple[list[TurnRecord], str]:
        """The recorded turns (consecutive from turn 1) and a note on anything that was dropped."""
        if not self.path.exists():
            return [], ""
        lines = self.path.read_text(encoding="utf-8").splitlines()
        if not lines:
            return [], ""
        try:
            header = json.loads(lines[0])
        except json.JSONDecodeError:
            return [], f"{self.path.name}: unreadable header; starting over"
        if header != self.identity:
            return [], f"{self.path.name}: written for a different run; starting over"
        records: list[TurnRecord] = []
        for number, line in enumerate(lines[1:], start=2):
            try:
                record = TurnRecord.model_validate_json(line)
            except ValidationError:
                tail = len(lines) - number
                return records, f"{self.path.name}: line {number} unreadable (torn write); {tail} later line(s) dropped"
            if record.turn != len(records) + 1:
                return records, f"{self.path.name}: line {number} is turn {record.turn}, expected {len(records) + 1}"
            records.append(record)
        return records, ""

    def start(self, records: list[TurnRecord]) -> None:
        """Rewrite the file as the header plus ``records`` (dropping any torn or unusable tail)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as file:
            file.write(json.dumps(self.identity, sort_keys=True) + "\n")
            for record in records:
                file.write(record.model_dump_json() + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)

    def append(self, record_json: str) -> None:
        """Add one finished turn (its record as JSON), on disk before this returns."""
        with self.path.open("a", encoding="utf-8") as file:
            file.write(record_json + "\n")
            file.flush()
            os.fsync(file.fileno())


@dataclass
class Resumed:
    """A run brought back from its checkpoint: the game after its recorded turns (or fresh, with no turns), those
    turns, a note on anything dropped, and why the turns no longer replay when they do not (then the game is fresh
    and the caller decides: start over, or refuse)."""

    game: Game
    records: list[TurnRecord]
    note: str
    mismatch: str = ""


async def resume(checkpoint: RunCheckpoint, fresh: Game) -> Resumed:
    """The one checkpoint restore (the benchmark's solver and the web UI's games both use it): load the turns,
    rewrite the file without a torn tail, and replay the turns exactly onto ``fresh``'s initial state, seed, roles
    and limits (``engine.replay.restore``)."""
    records, note = checkpoint.load()
    if note:
        checkpoint.start(records)  # keep the whole turns, drop what a killed write left behind
    if not records:
        return Resumed(fresh, [], note)
    try:
        game = await restore(fresh.initial, fresh.roles, fresh.seed, records, fresh.config)
    except ReplayMismatch as err:
        return Resumed(fresh, [], note, mismatch=str(err))
    return Resumed(game, records, note)
