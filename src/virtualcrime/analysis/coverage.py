"""What a report leaves out, and why: every attacker or judge missing from a table is named with the reason and the
command that would bring it in (``summary.json`` → ``left_out``, the Markdown tables, the HTML page, the terminal).

Pure: the notes are derived from the runs and the computed tables, never from the files on disk.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .facts import HUMAN_PREFIX, RunFacts
from .judges import JudgeAgreement, judged_turns
from .table1 import AttackerRow, JudgeRow

TABLE1 = "Table 1"
PAIRWISE = "pairwise differences"
PER_TASK = "per task"
SCATTER = "over-harm vs non-failure"
MEDIAN = "median across judges (Table 1 non-failure and catastrophic)"
PER_JUDGE = "per-judge rates"
RHO_ALL = "Spearman ρ on each judge's judged turns"
COMMON = "judge agreement on common turns"
REJUDGED = "judges on the same re-judged turns"
SELF_PREFERENCE = "self-preference"


class LeftOut(BaseModel):
    """An attacker (or an attacker under one judge, or a judge) missing from some tables."""

    model_config = ConfigDict(extra="forbid")

    attacker: str = Field("", description="The attacker left out ('' for a judge left out as a whole).")
    judge: str = Field("", description="The judge concerned ('' when it is about the attacker alone).")
    sections: list[str] = Field(description="The tables and figures it is missing from.")
    reason: str
    command: str = Field("", description="What would bring it in ('' when nothing would).")


def log_folder(logs: Sequence[str]) -> str:
    """The folder holding every log read (their paths), as the commands name it (``LOGS`` when unknown)."""
    folders = [os.path.dirname(log) or "." for log in logs]
    if not folders:
        return "LOGS"
    try:
        common = os.path.commonpath(folders)
    except ValueError:  # absolute and relative paths mixed, or different drives
        return "LOGS"
    if not common:
        return "."  # every log in the working folder
    if Path(common).anchor == common:  # nothing in common but the root
        return "LOGS"
    return common


def rejudge_command(folder: str, judge: str, attacker: str = "") -> str:
    extra = " --include-human" if attacker.startswith(HUMAN_PREFIX) else ""
    return f"virtualcrime rejudge {folder} --judge {judge}{extra}"


def left_out(
    runs: Sequence[RunFacts],
    primary: str,
    attackers: Sequence[str],
    judges: Sequence[str],
    table1: Sequence[AttackerRow],
    per_judge: Sequence[JudgeRow],
    agreement: JudgeAgreement | None,
    scatter_attackers: Sequence[str],
    rejudge_judges: Sequence[str],
    rejudge_failures: dict[str, int],
    folder: str,
) -> list[LeftOut]:
    """Every omission of the report's tables, in the order a reader meets them."""
    notes: list[LeftOut] = []
    judges_of: dict[str, set[str]] = defaultdict(set)  # attacker → judges of its runs
    for run in runs:
        judges_of[run.attacker].add(run.judge)
    in_table = {r.attacker for r in table1}
    for a in attackers:
        if a in in_table:
            continue
        theirs = ", ".join(sorted(judges_of[a]))
        if a.startswith(HUMAN_PREFIX):
            command = f"virtualcrime serve --log-dir {folder}  (play it with Judge {primary} in the web UI)"
        else:
            command = f"virtualcrime run --attacker {a} --judge {primary} --log-dir {folder}"
        notes.append(
            LeftOut(
                attacker=a,
                sections=[TABLE1, PAIRWISE, PER_TASK, SCATTER],
                reason=f"no runs judged by the primary judge {primary} (its runs are judged by {theirs}); Table 1's "
                f"over-harm, team usage and Pass@1 come from the primary judge's runs. `virtualcrime report "
                f"{folder} --judge {sorted(judges_of[a])[0]}` makes another judge primary instead.",
                command=command,
            )
        )
    for row in table1:
        if row.attacker not in scatter_attackers:
            notes.append(
                LeftOut(
                    attacker=row.attacker,
                    sections=[SCATTER],
                    reason="its over-harm or non-failure rate is undefined (no runs or no judged turns)",
                )
            )
    rated = {(r.attacker, r.judge) for r in per_judge}
    if len(judges) > 1:
        for a in attackers:
            for j in judges:
                if (a, j) in rated:
                    continue
                human = a.startswith(HUMAN_PREFIX) and j in rejudge_judges
                reason = f"{j} judged none of {a}'s turns (no runs of it, no re-judged turns)" + (
                    "; rejudge leaves out games people played unless --include-human" if human else ""
                )
                notes.append(
                    LeftOut(
                        attacker=a,
                        judge=j,
                        sections=[MEDIAN, PER_JUDGE, RHO_ALL, SELF_PREFERENCE],
                        reason=reason,
                        command=rejudge_command(folder, j, a),
                    )
                )
    notes += _common_notes(runs, judges, agreement, attackers, folder)
    if rejudge_judges:
        asked = {run.attacker for run in runs if any(run.rejudged.values())}
        for a in attackers:
            if a not in asked:
                commands = "; ".join(rejudge_command(folder, j, a) for j in rejudge_judges if j not in judges_of[a])
                notes.append(
                    LeftOut(
                        attacker=a, sections=[REJUDGED], reason=f"none of {a}'s turns were re-judged", command=commands
                    )
                )
    for judge, failed in sorted(rejudge_failures.items()):
        if failed and judge not in judges:
            notes.append(
                LeftOut(
                    judge=judge,
                    sections=[MEDIAN, PER_JUDGE, COMMON, REJUDGED],
                    reason=f"gave no usable verdict on any of the {failed} turn(s) it was asked to re-judge",
                    command=rejudge_command(folder, judge),
                )
            )
    return notes


def _common_notes(
    runs: Sequence[RunFacts],
    judges: Sequence[str],
    agreement: JudgeAgreement | None,
    attackers: Sequence[str],
    folder: str,
) -> list[LeftOut]:
    if len(judges) < 2 or agreement is None:
        only = judges[0] if judges else ""
        return [
            LeftOut(
                judge=only,
                sections=[COMMON, RHO_ALL, SELF_PREFERENCE],
                reason=f"only one judge ({only}): comparing judges needs a second judge's verdicts on the same turns",
                command=f"virtualcrime rejudge {folder} --judge MODEL",
            )
        ]
    tables = judged_turns(runs)
    judged_by: dict[str, set[str]] = defaultdict(set)  # attacker → judges with any judged turn of it
    primaries: dict[str, set[str]] = defaultdict(set)
    for judge, table in tables.items():
        for who, _ in table.values():
            judged_by[who].add(judge)
    for run in runs:
        primaries[run.attacker].add(run.judge)
    every = "both" if len(judges) == 2 else f"all {len(judges)}"
    notes = []
    for a in attackers:
        if agreement.common_turns_by_attacker.get(a, 0):
            continue
        missing = [j for j in judges if j not in judged_by[a]]
        if missing:
            reason = f"no turn of {a} was judged by {every} judges: {', '.join(missing)} judged none of its turns"
            command = "; ".join(rejudge_command(folder, j, a) for j in missing)
        else:
            second = [j for j in judges if primaries[a] != {j}]  # every judge but the one that judged all its runs
            reason = (
                f"no turn of {a} was judged by {every} judges: the second judges re-judged different "
                "turns of it (a different --seed or --per-attacker); re-judging with the same seed and number "
                "for every second judge samples the same turns"
            )
            command = "; ".join(f"{rejudge_command(folder, j, a)} --per-attacker 50 --seed 0" for j in second)
        notes.append(LeftOut(attacker=a, sections=[COMMON], reason=reason, command=command))
    return notes
