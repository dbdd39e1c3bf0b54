"""Peak memory and time of the commands that read logs, on model-role logs of two sizes, printed as figures (not a
test).

    python benchmarks/big_logs.py [--turns 20] [--only replay-turn,verify,annotate,...] [--src DIR]

The logs are model-role runs (every role a language model: ``openai-api/scalefake/...`` served by
``benchmarks/_fake_openai.py`` on 127.0.0.1, through Inspect's model layer, so the samples hold every prompt and
reply in their events as a real matrix's do), played once by ``virtualcrime bench`` into
/tmp/virtualcrime-big-logs/ and re-used: a log of 40 runs (40 tasks x 1 seed) and one of 120 (40 tasks x 3 seeds),
``--turns`` turns each. A folder of 960 runs is made of 8 copies of the 120-run log (each under its own attacker
name, so the report counts 960 distinct runs).

Each command runs in a fresh process; printed per command and log: seconds and the peak resident memory of its
largest process (``wait4``). Memory that does not grow with the log is the goal (issue 20: <= 300 MiB on 960
model-role runs), as is a ``replay --turn`` whose time does not grow with the number of runs in the log.
``--src`` runs the commands from another checkout's ``src`` (e.g. a worktree of an earlier commit) for a before /
after comparison; the logs are the same. The annotators and the questioned model are ``mockllm`` stand-ins that
report no usage, so their calls fail as provider errors at once: what is measured is reading, scoring and
writing the logs, not the models.

Measured here (20 turns; 2 cores shared with other work), before (8132fb6) -> after:
  120-run log (5.6 MB): annotate 64.2 s 1121 MiB -> 16.5 s 190 MiB; interrogate 44.0 s 1113 MiB -> 18.5 s
  189 MiB; replay --turn 1.3 s 100 MiB -> 1.6 s 100 MiB (40 runs: 1.3-1.7 s); replay --verify 18.8 s 106 MiB
  -> 20.4 s 106 MiB; report: crashed drawing a figure -> 4.0 s 189 MiB
  120-run log: rejudge (100 turns) 31.6 s 1000 MiB -> 17.0 s 191 MiB (40 runs: 12.4 s 432 MiB -> 9.5 s 186 MiB)
  40-run log: annotate 472 -> 184 MiB, interrogate 471 -> 186 MiB, rejudge 432 -> 187 MiB (memory no longer
  grows with the log)
  960 runs (8 logs): report 8.5 s, 266 MiB -> 5.96 s, 197 MiB (these logs predate stored run facts)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import ATTACKER, REFEREE, SERVICE, FakeServer  # the fake server and its model names

CACHE = Path(tempfile.gettempdir()) / "virtualcrime-big-logs"
SIZES = {"40 runs": 1, "120 runs": 3}  # seeds per task over the 40 tasks
COPIES = 8
TARGET_MIB = 300
COMMANDS = ("replay-turn", "verify", "annotate", "interrogate", "rejudge", "report")


def generated(turns: int) -> dict[str, Path]:
    """The cached logs (played first if they are not there yet), by size."""
    logs: dict[str, Path] = {}
    server: FakeServer | None = None
    try:
        for size, seeds in SIZES.items():
            folder = CACHE / f"turns{turns}-seeds{seeds}"
            if not (folder / "complete").exists():
                shutil.rmtree(folder, ignore_errors=True)
                server = server or FakeServer()
                env = {**os.environ, f"{SERVICE.upper()}_API_KEY": "dummy",
                       f"{SERVICE.upper()}_BASE_URL": f"{server.base}/v1"}  # fmt: skip
                start = time.perf_counter()
                command = [sys.executable, "-m", "virtualcrime", "bench", "--attackers", ATTACKER, "--judge", REFEREE,
                           "--world-manager", REFEREE, "--seeds", str(seeds), "--max-turns", str(turns),
                           "--log-dir", str(folder / "logs")]  # fmt: skip
                subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
                (folder / "complete").write_text("played by benchmarks/big_logs.py\n")
                print(f"played {size} of {turns} turns in {time.perf_counter() - start:.0f} s")
            [log] = sorted((folder / "logs").glob("*.eval"))
            logs[size] = log
    finally:
        if server is not None:
            server.close()
    return logs


def folder_of_copies(log: Path, copies: int) -> Path:
    """``copies`` copies of ``log``, each with its own eval id and attacker name (the header and every sample's
    usage keyed by it), in one folder."""
    folder = CACHE / f"{log.parent.parent.name}-x{copies}"
    if (folder / "complete").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    import inspect_ai._util.zipfile  # noqa: F401  # zstd members (Inspect's own patch of zipfile)

    for n in range(copies):
        with zipfile.ZipFile(log) as source, zipfile.ZipFile(folder / f"copy{n}.eval", "w") as target:
            for info in source.infolist():
                data = source.read(info)
                if info.filename in ("header.json", "_journal/start.json"):
                    data = _renamed(data, n)
                target.writestr(info, data)
    (folder / "complete").write_text("copies\n")
    return folder


def _renamed(raw: bytes, n: int) -> bytes:
    doc = json.loads(raw)
    doc["eval"]["eval_id"] = f"{doc['eval']['eval_id']}-copy{n}"
    doc["eval"]["model"] = f"{doc['eval']['model']}-copy{n}"
    return json.dumps(doc).encode()


def measure(argv: list[str], src: Path | None, env: dict[str, str]) -> tuple[float, float, int]:
    """Seconds, peak MiB of the largest process, exit status of ``virtualcrime ARGV`` in a fresh process."""
    env = dict(env)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "virtualcrime", *argv], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def commands(log: Path, scratch: Path) -> dict[str, list[str]]:
    """Each command's arguments on a copy of ``log`` in ``scratch`` (annotate and interrogate write into it)."""
    copy = Path(shutil.copy(log, scratch / log.name))
    out = scratch / "report"
    return {
        "replay-turn": ["replay", str(copy), "--task", "restaurant/robbery", "--seed", "0", "--turn", "12"],
        "verify": ["replay", str(copy), "--verify"],
        "annotate": ["annotate", str(copy), "--annotator-a", "mockllm/a", "--annotator-b", "mockllm/b"],
        "interrogate": [
            "interrogate",
            str(copy),
            "--conditions",
            "CTRL",
            "--min-turns",
            "1",
            "--questioned-model",
            "mockllm/model",
        ],
        "rejudge": ["rejudge", str(copy), "--judge", "virtualcrime/rules-strict", "--per-attacker", "100"],
        "report": ["report", str(copy), "--out", str(out)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands to measure, comma separated")
    parser.add_argument("--src", type=Path, help="run the commands from this src folder (before / after)")
    parser.add_argument("--no-copies", action="store_true", help="skip the 960-run folder")
    args = parser.parse_args()
    wanted = [c for c in args.only.split(",") if c]
    logs = generated(args.turns)
    # annotate and interrogate rebuild the log's own models (never called): their client needs a key and an address
    env = {**os.environ, "INSPECT_LOG_LEVEL": "warning", f"{SERVICE.upper()}_API_KEY": "dummy",
           f"{SERVICE.upper()}_BASE_URL": "http://127.0.0.1:9/v1"}  # fmt: skip
    peak_all = 0.0
    for size, log in logs.items():
        print(f"\n{size}: {log.name}, {log.stat().st_size / 1e6:.1f} MB")
        for name in wanted:
            with tempfile.TemporaryDirectory() as scratch:
                seconds, mib, status = measure(commands(log, Path(scratch))[name], args.src, env)
            peak_all = max(peak_all, mib)
            print(f"  {name:12} {seconds:6.2f} s  {mib:6.0f} MiB{'' if status == 0 else f'  (exit {status})'}")
    if not args.no_copies:
        folder = folder_of_copies(logs["120 runs"], COPIES)
        if "report" in wanted:  # the one command here that reads a whole folder at once
            with tempfile.TemporaryDirectory() as scratch:
                argv = ["report", str(folder), "--out", str(Path(scratch) / "report")]
                seconds, mib, status = measure(argv, args.src, env)
            peak_all = max(peak_all, mib)
            print(f"\n{COPIES * 120} runs ({COPIES} logs), report: {seconds:.2f} s, {mib:.0f} MiB"
                  f"{'' if status == 0 else f'  (exit {status})'}")  # fmt: skip
    print(f"\npeak {peak_all:.0f} MiB; target <= {TARGET_MIB} MiB: {'met' if peak_all <= TARGET_MIB else 'NOT met'}")


if __name__ == "__main__":
    main()
