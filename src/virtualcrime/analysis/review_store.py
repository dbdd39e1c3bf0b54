"""Durable human ratings of the Judge and the World Manager on key turns, in one SQLite file per log folder.

The web UI's review pages save a ``Rating`` per rater and turn; ``virtualcrime report`` reads them back. Every call
opens its own short-lived connection (WAL journal, busy timeout, full sync), so several threads or processes can
save side by side and a rating is on disk before ``save`` returns. Only the standard library's ``sqlite3`` is used.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

REVIEW_DB_NAME = "virtualcrime-reviews.sqlite"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 10.0
MAX_COMMENT = 2000

_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE ratings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    eval_id TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    rater TEXT NOT NULL,
    log TEXT NOT NULL,
    judge_rating INTEGER CHECK (judge_rating IS NULL OR judge_rating BETWEEN 1 AND 5),
    world_manager_rating INTEGER NOT NULL CHECK (world_manager_rating BETWEEN 1 AND 5),
    comment TEXT NOT NULL,
    judge TEXT NOT NULL,
    world_manager TEXT NOT NULL,
    created TEXT NOT NULL,
    UNIQUE (eval_id, sample_id, epoch, turn, rater)
);
"""
_COLUMNS = (
    "eval_id, sample_id, epoch, turn, rater, log, judge_rating, world_manager_rating, comment, judge, "
    "world_manager, created"
)
_UPSERT = f"""
INSERT INTO ratings ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (eval_id, sample_id, epoch, turn, rater) DO UPDATE SET
    log = excluded.log,
    judge_rating = excluded.judge_rating,
    world_manager_rating = excluded.world_manager_rating,
    comment = excluded.comment,
    judge = excluded.judge,
    world_manager = excluded.world_manager,
    created = excluded.created
"""
_SELECT = f"SELECT {_COLUMNS} FROM ratings"


class ReviewStoreError(Exception):
    """The review file cannot be used: not an SQLite database, a newer schema, or a database error."""


class TurnRef(BaseModel):
    """One turn of one logged run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    eval_id: str
    sample_id: str
    epoch: int = Field(ge=0)
    turn: int = Field(ge=0)


class Rating(BaseModel):
    """One rater's 1–5 ratings of the Judge's outcome distribution and the World Manager's update of one turn."""

    model_config = ConfigDict(extra="forbid")

    ref: TurnRef
    log: str = Field(description="The log file, relative to the log folder (for display).")
    rater: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")
    judge_rating: int | None = Field(
        ge=1,
        le=5,
        description="None when the Judge was not asked (the engine's pre-check ruled the action impossible).",
    )
    world_manager_rating: int = Field(ge=1, le=5)
    comment: str = Field("", max_length=MAX_COMMENT)
    judge: str = Field(description="The Judge model of that log, e.g. virtualcrime/rules.")
    world_manager: str = Field(description="The World Manager model of that log.")
    created: str = Field(description="ISO-8601 UTC timestamp.")

    @field_validator("created")
    @classmethod
    def _utc_timestamp(cls, value: str) -> str:
        try:
            when = datetime.fromisoformat(value)
        except ValueError as err:
            raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from err
        if when.utcoffset() not in (None, timedelta(0)):
            raise ValueError(f"not a UTC timestamp: {value!r}")
        return value


class ReviewStore:
    """The review ratings of one log folder, in ``folder/REVIEW_DB_NAME`` (created with its schema if missing)."""

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / REVIEW_DB_NAME
        if not self.path.parent.is_dir():
            raise ReviewStoreError(f"{self.path.parent}: no such folder")
        new = not self.path.is_file() or self.path.stat().st_size == 0
        with self._transaction(write=new) as conn:  # only a new file is written to: a reader (the report) reads
            missing = _ensure_schema(conn, self.path, create=new)
        if missing:
            # Another process created the file and has not committed its schema yet. Creating it in this read
            # transaction would be refused at once ("database is locked": SQLite does not wait to upgrade a read
            # to a write); a write transaction waits for that process, then finds its schema or writes one.
            with self._transaction(write=True) as conn:
                _ensure_schema(conn, self.path, create=True)

    def save(self, rating: Rating) -> None:
        """Insert the rating, or replace this rater's earlier rating of the same turn; committed on return."""
        ref = rating.ref
        with self._transaction() as conn:
            conn.execute(
                _UPSERT,
                (ref.eval_id, ref.sample_id, ref.epoch, ref.turn, rating.rater, rating.log, rating.judge_rating,
                 rating.world_manager_rating, rating.comment, rating.judge, rating.world_manager, rating.created),
            )  # fmt: skip

    def ratings(self) -> list[Rating]:
        """Every rating, in the order first saved (a re-rating keeps the place of the rating it replaces)."""
        return self._select(f"{_SELECT} ORDER BY id")

    def rated_by(self, rater: str) -> set[TurnRef]:
        """The turns ``rater`` has rated."""
        return {r.ref for r in self._select(f"{_SELECT} WHERE rater = ?", rater)}

    def rating(self, ref: TurnRef, rater: str) -> Rating | None:
        """``rater``'s rating of the turn, if any."""
        found = self._select(
            f"{_SELECT} WHERE eval_id = ? AND sample_id = ? AND epoch = ? AND turn = ? AND rater = ?",
            ref.eval_id, ref.sample_id, ref.epoch, ref.turn, rater,
        )  # fmt: skip
        return found[0] if found else None

    def _select(self, sql: str, *params: Any) -> list[Rating]:
        with self._transaction(write=False) as conn:
            rows = conn.execute(sql, params).fetchall()
        try:
            return [_rating(row) for row in rows]
        except ValidationError as err:
            raise ReviewStoreError(f"{self.path}: a stored rating is invalid: {err}") from err

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        """A fresh connection in one transaction (IMMEDIATE for writes, so writers queue instead of deadlocking);
        committed on success, rolled back on error, always closed. sqlite3 errors become ReviewStoreError."""
        try:
            with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)) as conn:
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
                if write and conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    _enable_wal(conn)
                conn.execute("PRAGMA synchronous = FULL")
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.Error as err:
            raise ReviewStoreError(f"{self.path}: {err}") from err


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL. SQLite answers "database is locked" at once, without its busy handler, while another
    process creates the same file, so wait for that here."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _ensure_schema(conn: sqlite3.Connection, path: Path, create: bool) -> bool:
    """Check the file's schema; an empty file gets the schema when ``create`` (a write transaction) and is
    reported missing (True) otherwise."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables - {"sqlite_sequence"}:
        if not create:
            return True
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        return False
    if "schema_version" not in tables or "ratings" not in tables:
        raise ReviewStoreError(f"{path}: an SQLite database, but not a VirtualCrime review database")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    version = row[0] if row else None
    if not isinstance(version, int):
        raise ReviewStoreError(f"{path}: the review database has no schema version")
    if version > SCHEMA_VERSION:
        raise ReviewStoreError(
            f"{path}: review database schema {version} is newer than this VirtualCrime understands "
            f"({SCHEMA_VERSION}); upgrade VirtualCrime to read it"
        )
    return False


def _rating(row: tuple[Any, ...]) -> Rating:
    eval_id, sample_id, epoch, turn, rater, log, judge_rating, wm_rating, comment, judge, wm, created = row
    return Rating(
        ref=TurnRef(eval_id=eval_id, sample_id=sample_id, epoch=epoch, turn=turn),
        log=log,
        rater=rater,
        judge_rating=judge_rating,
        world_manager_rating=wm_rating,
        comment=comment,
        judge=judge,
        world_manager=wm,
        created=created,
    )


def review_stores(paths: Sequence[str | Path]) -> list[Path]:
    """The review database files that exist for the paths given to ``report``: in a folder (and its subfolders),
    or beside a log file. Deduplicated, in the order found."""
    found: dict[Path, Path] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            candidates = [path / REVIEW_DB_NAME, *sorted(path.rglob(REVIEW_DB_NAME))]
        else:
            candidates = [path.parent / REVIEW_DB_NAME]
        for candidate in candidates:
            if candidate.is_file():
                found.setdefault(candidate.resolve(), candidate)
    return list(found.values())
