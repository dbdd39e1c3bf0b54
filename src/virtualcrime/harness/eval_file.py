"""An Inspect ``.eval`` file's header and samples read straight from its zip (stdlib ``zipfile``, and ``zstandard``
for the members Inspect compresses with it), without importing Inspect: importing it costs a process 1-1.5 s, most
of a report's reading of a small log folder. Only what the report reads: the header's JSON and a sample's raw JSON.
Anything this reader does not know — a log still being written (no ``header.json``), another compression, a
damaged zip — gives None, and the caller reads the file with Inspect instead."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path
from typing import Any

HEADER = "header.json"
SAMPLES_DIR = "samples"
_ZSTD = 93  # the zip compression method id of Zstandard
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip local file header (30 bytes)
_LOCAL_SIGNATURE = b"PK\x03\x04"


class EvalFile:
    """One ``.eval`` file, open for reading members (close it, or use it as a context manager)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._zip = zipfile.ZipFile(self.path)
        self._file = self._zip.fp
        self._header: dict[str, Any] | None = None

    def __enter__(self) -> EvalFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file."""
        self._zip.close()

    def member(self, name: str) -> bytes | None:
        """The bytes of one member, None when the file has no such member; raises ValueError for a compression
        this reader does not know."""
        try:
            info = self._zip.getinfo(name)
        except KeyError:
            return None
        if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            return self._zip.read(info)
        if info.compress_type != _ZSTD:
            raise ValueError(f"{self.path}: member {name} uses compression {info.compress_type}")
        import zstandard

        assert self._file is not None
        self._file.seek(info.header_offset)
        fields = _LOCAL_HEADER.unpack(self._file.read(_LOCAL_HEADER.size))
        if fields[0] != _LOCAL_SIGNATURE:
            raise ValueError(f"{self.path}: member {name} has no local header")
        name_length, extra_length = fields[-2], fields[-1]
        self._file.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        data = self._file.read(info.compress_size)
        try:
            return zstandard.ZstdDecompressor().decompress(data, max_output_size=info.file_size)
        except zstandard.ZstdError as err:
            raise ValueError(f"{self.path}: member {name} does not decompress: {err}") from err

    def header(self) -> dict[str, Any] | None:
        """The eval's header (``header.json``: spec, status, results), or None for a log still being written."""
        if self._header is None:
            raw = self.member(HEADER)
            found = json.loads(raw) if raw is not None else None
            self._header = found if isinstance(found, dict) else None
        return self._header

    def sample(self, sample_id: str | int, epoch: int) -> bytes | None:
        """One sample's JSON as stored, or None when the file does not have it (a run that did not finish)."""
        return self.member(f"{SAMPLES_DIR}/{sample_id}_epoch_{epoch}.json")


def open_eval_file(path: str | Path) -> EvalFile | None:
    """The ``.eval`` file at ``path`` open for direct reading, or None when it is not one this reader can read
    (another suffix, not a zip, no header yet)."""
    if Path(path).suffix != ".eval":
        return None
    try:
        found = EvalFile(path)
        if found.header() is None:
            found.close()
            return None
    except (OSError, ValueError, zipfile.BadZipFile, json.JSONDecodeError):
        return None
    return found
