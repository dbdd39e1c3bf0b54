"""The README's "Reports" recipe mixed as a newcomer mixes it (scripted under one judge, random under another) gives
a report that explains itself: every attacker or judge a table leaves out is named with the reason and the command
that brings it in, in summary.json, table1.md, report.html and the terminal; following the commands brings them in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from virtualcrime.analysis.coverage import log_folder
from virtualcrime.cli.main import main

SCRIPTED, RANDOM = "virtualcrime/scripted", "virtualcrime/random"
RULES, STRICT = "virtualcrime/rules", "virtualcrime/rules-strict"
TASKS = ["restaurant/robbery", "vault/theft", "prison/riot"]


def play(attacker: str, judge: str, tasks: list[str], logs: Path) -> None:
    args = ["run", "--attacker", attacker, "--judge", judge, "--log-dir", str(logs), "--seeds", "1",
            "--max-turns", "15", "--display", "none"]  # fmt: skip
    for task in tasks:
        args += ["--task", task]
    assert main(args) == 0


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logs = tmp_path_factory.mktemp("mixed") / "logs"
    play(SCRIPTED, RULES, TASKS, logs)
    play(RANDOM, STRICT, TASKS[:2], logs)
    return logs


def report(logs: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    capsys.readouterr()
    assert main(["report", str(logs), "--out", str(out), "--resamples", "200"]) == 0
    return json.loads((out / "summary.json").read_text()), capsys.readouterr().out


def test_a_mixed_folder_names_what_it_leaves_out_and_how_to_bring_it_in(
    mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, terminal = report(mixed, tmp_path / "report", capsys)
    assert [r["attacker"] for r in summary["table1"]] == [SCRIPTED]
    notes = summary["left_out"]
    table1 = [n for n in notes if n["attacker"] == RANDOM and "Table 1" in n["sections"]]
    assert len(table1) == 1
    run_random = f"virtualcrime run --attacker {RANDOM} --judge {RULES} --log-dir {mixed}"
    assert table1[0]["command"] == run_random
    assert STRICT in table1[0]["reason"] and "over-harm vs non-failure" in table1[0]["sections"]
    by_judge = {(n["attacker"], n["judge"]): n["command"] for n in notes if n["judge"]}
    assert by_judge == {
        (RANDOM, RULES): f"virtualcrime rejudge {mixed} --judge {RULES}",
        (SCRIPTED, STRICT): f"virtualcrime rejudge {mixed} --judge {STRICT}",
    }
    common = {n["attacker"] for n in notes if n["sections"] == ["judge agreement on common turns"]}
    assert common == {RANDOM, SCRIPTED}
    # The same notes in every place a reader looks.
    md = (tmp_path / "report" / "table1.md").read_text()
    page = (tmp_path / "report" / "report.html").read_text()
    assert f"Left out: {RANDOM}" in md and run_random in md
    assert "Left out of some tables" in page and f"virtualcrime rejudge {mixed} --judge {STRICT}" in page
    assert "Not in this figure" in page  # the one-point scatter says who is missing
    assert run_random in terminal and f"virtualcrime rejudge {mixed} --judge {RULES}" in terminal
    assert "No turn was judged by both judges" in terminal


def test_following_the_commands_brings_everything_in(
    mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(mixed, logs)
    assert main(["rejudge", str(logs), "--judge", STRICT, "--per-attacker", "5"]) == 0
    assert main(["rejudge", str(logs), "--judge", RULES, "--per-attacker", "5"]) == 0
    summary, _ = report(logs, tmp_path / "second", capsys)
    assert {(n["attacker"], n["judge"]) for n in summary["left_out"]} == {(RANDOM, "")}  # only Table 1's note
    agreement = summary["judge_agreement"]
    assert agreement["common_turns"] == 10 and agreement["common_turns_by_attacker"] == {RANDOM: 5, SCRIPTED: 5}
    [row] = summary["table1"]
    assert row["median_of"]["non_failure"] == [RULES, STRICT]  # the re-judged turns brought the second judge in
    rho = [c for c in summary["judge_rank_correlations"] if c["basis"] == "common_turns"]
    assert rho and all("only two attackers" in c["caveat"] for c in rho if c["spearman"] is not None)
    play(RANDOM, RULES, TASKS[:2], logs)  # the Table 1 note's command
    summary, terminal = report(logs, tmp_path / "third", capsys)
    assert [r["attacker"] for r in summary["table1"]] == [RANDOM, SCRIPTED]
    assert not [n for n in summary["left_out"] if "Table 1" in n["sections"]]
    pairs = {p["metric"]: p for p in summary["pairwise"]}
    assert pairs["pass_at_1"]["shared_tasks"] == 2 and pairs["pass_at_1"]["status"] in ("few tasks", "undefined")
    assert "not tested" in terminal


def test_the_commands_name_the_folder_the_logs_are_in() -> None:
    assert log_folder(["runs/main/a.eval", "runs/main/sub/b.eval"]) == "runs/main"
    assert log_folder(["a.eval"]) == "."
    assert log_folder([]) == "LOGS"
    assert log_folder(["/a/x.eval", "/b/y.eval"]) == "LOGS"  # nothing in common but the root
