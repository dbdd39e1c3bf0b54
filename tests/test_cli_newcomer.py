"""What a newcomer types: one vocabulary for runs (the seed ``run`` prints), one plain line and a non-zero exit for
every user error, readable output in a pipe, and commands that say what they did."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from virtualcrime.cli.main import main

BIN = Path(sys.executable).parent
TASK = "restaurant/robbery"


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A log of two seeds of one task written by ``virtualcrime run``, and what the command printed."""
    folder = tmp_path_factory.mktemp("newcomer")
    done = subprocess.run([str(BIN / "virtualcrime"), "run", "--task", TASK, "--seeds", "2", "--seed", "5",
                           "--max-turns", "6", "--log-dir", str(folder), "--display", "none"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    [log] = sorted(folder.glob("*.eval"))
    return log, done.stdout


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got: {err!r}"
    assert "Traceback" not in err and "[bold]" not in err and "[blue]" not in err
    return lines[0]


def test_run_names_its_roles_and_the_seeds_replay_takes(run_log: tuple[Path, str]) -> None:
    log, out = run_log
    assert "attacker virtualcrime/scripted · judge virtualcrime/rules · world manager virtualcrime/rules" in out
    seeds = re.findall(rf"^{re.escape(TASK)}\s+(\d+)\s", out, flags=re.MULTILINE)
    assert seeds == ["5", "6"]
    assert f"virtualcrime replay {log.resolve()} --task {TASK} --seed 5" in out


def test_replay_takes_the_seed_run_printed(run_log: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    log, _ = run_log
    assert main(["replay", str(log), "--task", TASK, "--seed", "6", "--turn", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{TASK} · seed 6" in out and "Turn 2 · " in out and "seed 5" not in out


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--seed", "2"], "has no run with seed 2; seeds: 5, 6"),
        (["--task", "vault/theft"], "has no run of task 'vault/theft'; its 1 task(s): restaurant/robbery"),
        (["--task", TASK, "--seed", "5", "--turn", "99"], "has turns 1–6; no turn 99"),
        (["--turn", "0"], "argument --turn: must be at least 1, not 0"),
        (["--seed", "x"], "argument --seed: 'x' is not a whole number"),
    ],
)
def test_replay_answers_a_bad_choice_with_one_line_naming_the_valid_range(
    run_log: tuple[Path, str], capsys: pytest.CaptureFixture[str], extra: list[str], expected: str
) -> None:
    log, _ = run_log
    assert main(["replay", str(log), *extra]) == 2
    captured = capsys.readouterr()
    assert expected in one_error_line(captured.err)
    assert captured.out == ""  # no listing of every run


def test_replay_and_fork_print_plain_text_into_a_pipe(run_log: tuple[Path, str], tmp_path: Path) -> None:
    log, _ = run_log
    replay = subprocess.run([str(BIN / "virtualcrime"), "replay", str(log), "--seed", "5"], capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert replay.returncode == 0 and "Verdict (judge" in replay.stdout
    fork = subprocess.run([str(BIN / "virtualcrime"), "fork", str(log), "--task", TASK, "--seed", "5", "--turn",
                           "3", "--log-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert fork.returncode == 0, fork.stderr
    assert f"Run {TASK} seed 5:" in fork.stdout
    for out in (replay.stdout, fork.stdout):
        assert "**" not in out and "`" not in out and "###" not in out


def test_fork_takes_the_seed_and_refuses_a_missing_one(run_log: tuple[Path, str], capsys) -> None:  # type: ignore[no-untyped-def]
    log, _ = run_log
    assert main(["fork", str(log), "--task", TASK, "--turn", "2"]) == 2
    assert "holds 2 runs of restaurant/robbery (seeds 5, 6); choose one with --seed" in capsys.readouterr().err
    assert main(["fork", str(log), "--task", TASK, "--seed", "1", "--turn", "2"]) == 2
    assert "seeds: 5, 6" in one_error_line(capsys.readouterr().err)


def test_a_missing_api_key_is_one_plain_line(
    run_log: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key in ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    log, _ = run_log
    assert main(["rejudge", str(log), "--judge", "openai/gpt-4.1"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert (
        line.startswith("virtualcrime rejudge: error: cannot use openai/gpt-4.1 as the Judge:")
        and "OPENAI_API_KEY" in line
    )
    assert main(["run", "--attacker", "openai/gpt-4.1", "--task", TASK, "--display", "none"]) == 2
    captured = capsys.readouterr()
    assert "OPENAI_API_KEY" in one_error_line(captured.err)


def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(f'{{"text": "walk to door {i} and wait there for the others"}}\n' for i in range(3000)))
    done = subprocess.run(f"{BIN / 'virtualcrime'} harm classify {texts} | head -c 1", shell=True,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.stdout == "{"
    assert done.stderr == "", done.stderr  # no BrokenPipeError, no traceback


def test_check_solve_says_what_failed_and_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--solve", "--seeds", "1", "--task", "vault/robbery"]) == 1
    err = capsys.readouterr().err
    assert "check failed: 1 of 1 task(s) never won in 1 seed(s); the default, 10 seeds" in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "--solve", "--seeds", "0"], "virtualcrime check: error: argument --seeds: must be at least 1"),
        (["run", "--seeds", "0"], "virtualcrime run: error: argument --seeds: must be at least 1"),
        (["bench", "--attackers", "virtualcrime/scripted", "--log-dir", "x", "--max-cost", "nan"],
         "argument --max-cost: must be a finite number above 0, not nan"),
        (["bench", "--attackers", "virtualcrime/scripted", "--log-dir", "x", "--max-tokens", "-5"],
         "argument --max-tokens: must be at least 1"),
        (["report", "/nowhere/at/all"], "no such log file or folder: /nowhere/at/all"),
        (["replay", "/nowhere/at/all.eval"], "no such log: /nowhere/at/all.eval"),
        (["harm", "validate", "/nowhere.jsonl"], "cannot read /nowhere.jsonl"),
        (["map", "atlantis"], "unknown map or task 'atlantis'"),
        (["run", "--task", "restaurant/heist"], "unknown task 'restaurant/heist'"),
        (["rejudge", "/nowhere"], "the following arguments are required: --judge"),
    ],
)  # fmt: skip
def test_every_user_error_is_one_line_and_exit_2(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert expected in one_error_line(capsys.readouterr().err)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from virtualcrime import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"virtualcrime {__version__}"


def test_bench_counts_reused_runs_and_shows_spend_against_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "--attackers", "virtualcrime/scripted", "--task", TASK, "--seeds", "2", "--max-turns", "3",
            "--log-dir", str(tmp_path), "--max-tokens", "1000000"]  # fmt: skip
    assert main(args) == 0
    first = capsys.readouterr()
    assert "runs 2/2 done" in first.err and "All 2 runs finished" in first.out
    assert main(args) == 0  # a rerun reuses both runs from the logs
    again = capsys.readouterr()
    assert "2 finished earlier" in again.out
    assert "runs 2/2 done (2 earlier)" in again.err and "runs 0/2" not in again.err
    assert "spent 0 of 1,000,000 tokens" in again.err
