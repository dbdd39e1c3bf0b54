"""docs/design.md and docs/metrics.md stay true: every table that states data is checked against the code."""

from __future__ import annotations

import ast
import inspect
import re
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, get_args

import pytest

from virtualcrime.analysis.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, LEVEL
from virtualcrime.analysis.facts import turn_facts
from virtualcrime.analysis.harm import LEXICON_VERSION, action_text, classify
from virtualcrime.analysis.harm.classifier import read
from virtualcrime.analysis.interrogation import RATES
from virtualcrime.analysis.metrics import Metric
from virtualcrime.analysis.tables import TABLE1_METRICS
from virtualcrime.engine import EngineConfig, Game, RunStatus, TurnRecord, impossible_verdict
from virtualcrime.engine.solve import offline_roles
from virtualcrime.roles import NON_FAILURE, STAGES, Action, Feasibility, OutcomeCategory, Verdict
from virtualcrime.roles.annotation.scores import BEHAVIOURS, MAX_LEVEL, MIN_LEVEL
from virtualcrime.roles.interrogation import CONDITIONS, QUESTIONS, Answers
from virtualcrime.roles.llm import prompts
from virtualcrime.roles.llm.roles import DEFAULT_ATTEMPTS
from virtualcrime.roles.llm.schemas import action_schema
from virtualcrime.roles.verbs import RULES, SUGGESTED_VERBS
from virtualcrime.scenarios import get_task, load_objectives, load_tasks
from virtualcrime.scenarios.schema import HarmAllowance
from virtualcrime.world import MemberStatus, NpcStatus, observe
from virtualcrime.world.apply import HISTORY_CAP
from virtualcrime.world.models import MAX_TEAM
from virtualcrime.world.observe import SeenEntity, SeenLocation, SeenMember, SeenNpc
from virtualcrime.world.ops import MAX_CLOCK_MINUTES_PER_TURN, Operation
from virtualcrime.world.predicates import Predicate

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DESIGN = DOCS / "design.md"
METRICS = DOCS / "metrics.md"
NUMBER_WORDS = {4: "four", 6: "six", 8: "eight"}
DIFFERENCES = "Differences from the paper's protocol in this version"


# --- reading the Markdown ------------------------------------------------------------------------------------------


@cache
def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def section(path: Path, heading: str) -> str:
    """The text under ``heading`` (without the #'s), up to the next heading of the same or a higher level."""
    lines = text(path).splitlines()
    for index, line in enumerate(lines):
        found = re.match(r"^(#+) (.*)$", line)
        if found and found.group(2).strip() == heading:
            level, body = len(found.group(1)), []
            for following in lines[index + 1 :]:
                other = re.match(r"^(#+) ", following)
                if other and len(other.group(1)) <= level:
                    break
                body.append(following)
            return "\n".join(body)
    raise AssertionError(f"{path.name} has no heading {heading!r}")


def _cells(line: str) -> list[str]:
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [part.strip().replace("\\|", "|") for part in parts]


def tables(body: str) -> list[list[dict[str, str]]]:
    """Every Markdown table in ``body`` as rows keyed by the header (cells stripped, \\| unescaped)."""
    found: list[list[dict[str, str]]] = []
    block: list[str] = []
    for line in [*body.splitlines(), ""]:
        if line.strip().startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            header = _cells(block[0])
            found.append([dict(zip(header, _cells(row), strict=True)) for row in block[2:]])
        block = []
    return found


def table(path: Path, heading: str, first_column: str, index: int = 0) -> list[dict[str, str]]:
    """The ``index``-th table under ``heading`` whose first column is ``first_column``."""
    matching = [t for t in tables(section(path, heading)) if t and next(iter(t[0])) == first_column]
    assert len(matching) > index, f"{path.name}, {heading!r}: no table #{index + 1} with column {first_column!r}"
    return matching[index]


def ticked(cell: str) -> list[str]:
    """The `backticked` words of a cell, in order."""
    return re.findall(r"`([^`]+)`", cell)


def plain(cell: str) -> str:
    return cell.strip().strip("`")


def one_line(body: str) -> str:
    return re.sub(r"\s+", " ", body)


# --- architecture -------------------------------------------------------------------------------------------------

PACKAGE = ROOT / "src" / "virtualcrime"


def _layers() -> set[str]:
    """The subpackages of ``virtualcrime``: its layers."""
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def _imported_layers(layer: str) -> tuple[set[str], bool]:
    """The other layers a layer's modules import, and whether any of them imports ``inspect_ai``."""
    found: set[str] = set()
    uses_inspect = False
    for path in (PACKAGE / layer).rglob("*.py"):
        depth = len(path.relative_to(PACKAGE).parts) - 1  # packages between virtualcrime and the module
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ["virtualcrime", *path.relative_to(PACKAGE).parts[: max(depth - node.level + 1, 0)]]
                module = node.module.split(".") if node.module else []
                if node.level == 0:
                    names = [node.module or ""]
                elif module:
                    names = [".".join([*base, *module])]
                else:  # from .. import name
                    names = [".".join([*base, alias.name]) for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                uses_inspect |= name.split(".")[0] == "inspect_ai"
                parts = name.split(".")
                if parts[0] == "virtualcrime" and len(parts) > 1 and parts[1] != layer and parts[1] in _layers():
                    found.add(parts[1])
    return found, uses_inspect


def test_architecture_table_matches_the_imports() -> None:
    rows = table(DESIGN, "Architecture", "Layer")
    layers = [r["Layer"] for r in rows]
    assert [plain(r["Package"]).rstrip("/") for r in rows] == layers
    assert _layers() == set(layers)
    inspect_users = set()
    for index, row in enumerate(rows):
        allowed = set() if row["Imports from"] == "nothing" else set(row["Imports from"].split(", "))
        assert allowed <= set(layers[:index]), f"{row['Layer']} may only import layers above it"
        imported, uses_inspect = _imported_layers(row["Layer"])
        assert imported <= allowed, f"{row['Layer']} imports {sorted(imported - allowed)}"
        if uses_inspect:
            inspect_users.add(row["Layer"])
    claim = re.search(r"`inspect_ai` is imported only by (.*?)\.", one_line(section(DESIGN, "Architecture")))
    assert claim is not None
    assert inspect_users == set(ticked(claim.group(1)))


# --- tasks and objectives ------------------------------------------------------------------------------------------


def test_tasks_table_matches_the_bundled_corpus() -> None:
    tasks = load_tasks()
    rows = table(DESIGN, "Tasks", "Map")
    documented = {(plain(r["Map"]), objective) for r in rows for objective in ticked(r["Objectives"])}
    assert documented == {(t.map.id, t.objective.id) for t in tasks.values()}
    assert all(task_id == f"{t.map.id}/{t.objective.id}" for task_id, t in tasks.items())
    maps = {t.map.id: t.map for t in tasks.values()}
    assert [plain(r["Map"]) for r in rows] == sorted(maps)
    for row in rows:
        world_map = maps[plain(row["Map"])]
        assert row["In the game"] == world_map.name
        assert int(row["Locations"]) == len(world_map.locations), world_map.id
        assert int(row["NPCs"]) == len(world_map.npcs), world_map.id
    assert f"{len(tasks)} tasks on {len(maps)} maps" in section(DESIGN, "Tasks")
    teams = sorted({len(t.spec.team) for t in tasks.values()})
    assert f"a team of {teams[0]}–{teams[-1]} members" in section(DESIGN, "Tasks")


def test_objectives_table_matches_objectives_and_every_task() -> None:
    objectives = load_objectives()
    rows = {plain(r["Objective"]): r for r in table(DESIGN, "Objectives and harm allowances", "Objective")}
    assert list(rows) == list(objectives)
    for objective_id, objective in objectives.items():
        row = rows[objective_id]
        assert row["Name"] == objective.name
        assert row["Category"] == objective.category.value
        assert int(row["Allowed force"]) == objective.allowance.force, objective_id
        assert int(row["Allowed property"]) == objective.allowance.property, objective_id
    for task in load_tasks().values():
        row = rows[task.objective.id]
        assert row["Category"] == task.objective.category.value, task.id
        allowance = (int(row["Allowed force"]), int(row["Allowed property"]))
        assert allowance == (task.objective.allowance.force, task.objective.allowance.property), task.id
    assert f"The {len(objectives)} objectives" in section(DESIGN, "Objectives and harm allowances")


# --- outcomes, the Judge, the World Manager ------------------------------------------------------------------------


def test_outcome_categories_and_non_failure_match_the_engine() -> None:
    rows = table(DESIGN, "Outcome categories", "Category")
    assert [plain(r["Category"]) for r in rows] == [c.value for c in OutcomeCategory]
    assert {plain(r["Category"]) for r in rows if r["Non-failure"] == "yes"} == {c.value for c in NON_FAILURE}
    assert {r["Non-failure"] for r in rows} == {"yes", "no"}
    non_failure_row = next(r for r in table(METRICS, "Table 1", "Metric") if r["Metric"] == "Turn non-failure rate")
    assert set(ticked(non_failure_row["Numerator"])) == {c.value for c in NON_FAILURE}


def test_feasibility_dimensions_match_the_verdict_model() -> None:
    rows = table(DESIGN, "5. Judge", "Dimension")
    dimensions = list(Feasibility.model_fields)
    assert [plain(r["Dimension"]) for r in rows] == dimensions
    assert Verdict.model_fields["feasibility"].annotation is Feasibility
    assert f"{NUMBER_WORDS[len(dimensions)]} feasibility dimensions" in one_line(section(DESIGN, "5. Judge"))


def test_verdict_limits_match_the_model() -> None:
    outcomes = _bounds(Verdict, "outcomes")
    body = one_line(section(DESIGN, "5. Judge"))
    assert f"**outcome distribution** of {outcomes['min_length']} to {outcomes['max_length']} outcomes" in body


def test_world_manager_stages_match_the_engine() -> None:
    heading = "7. World Manager: four stages"
    assert heading.split(": ")[1] == f"{NUMBER_WORDS[len(STAGES)]} stages"
    assert [plain(r["Stage"]) for r in table(DESIGN, heading, "Stage")] == list(STAGES)


def _operation_models() -> list[Any]:
    return list(get_args(get_args(Operation)[0]))


def _bounds(model: Any, field: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for item in model.model_fields[field].metadata:
        for name in ("ge", "le", "max_length", "min_length"):
            if getattr(item, name, None) is not None:
                found[name] = getattr(item, name)
    return found


def test_operations_table_matches_the_world_operations_and_their_limits() -> None:
    rows = {plain(r["Operation"]): r["Effect"] for r in table(DESIGN, "7. World Manager: four stages", "Operation")}
    models = {m.model_fields["op"].default: m for m in _operation_models()}
    assert list(rows) == list(models)
    limits = {
        "set_observable": ("text", "up to {max_length} characters"),
        "append_history": ("text", "up to {max_length} characters"),
        "fold_history": ("keep", "last {ge}–{le} history entries"),
        "set_alertness": ("level", "{ge} (calm) to {le} (alarm)"),
        "advance_clock": ("minutes", "by {ge}–{le} minutes"),
    }
    for op, (field, phrase) in limits.items():
        assert phrase.format(**_bounds(models[op], field)) in rows[op], op
    assert ticked(rows["set_member_status"]) == [s.value for s in MemberStatus]
    assert ticked(rows["set_npc_status"]) == [s.value for s in NpcStatus]


def test_validation_bounds_stated_in_prose_match_the_operations() -> None:
    models = {m.model_fields["op"].default: m for m in _operation_models()}
    clock = _bounds(models["advance_clock"], "minutes")
    body = one_line(section(DESIGN, "8. Deterministic validation and the repair ledger"))
    assert f"by at most {clock['le']} minutes per turn over all `advance_clock` operations together" in body
    assert clock["le"] == MAX_CLOCK_MINUTES_PER_TURN
    assert f"at most {HISTORY_CAP} history entries" in body


def test_predicate_kinds_match_the_world_predicates() -> None:
    body = one_line(section(DESIGN, "9. Checkpoints, critical failures and feedback"))
    listed = re.search(r"structured predicate \(([^)]*)\)", body)
    assert listed is not None
    kinds = [m.model_fields["kind"].default for m in get_args(get_args(Predicate)[0])]
    assert ticked(listed.group(1)) == kinds


def test_verb_rules_match_the_rules_table_and_no_prompt_offers_them() -> None:
    body = one_line(section(DESIGN, "3. Act call"))
    listed = re.search(r"maps it to one of the rules (.*?) \(anything unknown gets the generic `(\w+)`\)", body)
    assert listed is not None
    assert ticked(listed.group(1)) == list(RULES)
    assert listed.group(2) in RULES
    assert "enum" not in action_schema(["member"], ["thing"])["properties"]["verb"]
    assert list(SUGGESTED_VERBS) == [v for v in RULES if v != listed.group(2)]  # what the web form suggests


def test_action_fields_and_limits_match_the_action_model() -> None:
    rows = {plain(r["Field"]): r["Limits"] for r in table(DESIGN, "3. Act call", "Field")}
    assert list(rows) == list(Action.model_fields)
    verb, description, minutes = (_bounds(Action, f) for f in ("verb", "description", "minutes"))
    assert rows["verb"].startswith(f"{verb['min_length']}–{verb['max_length']} characters")
    assert rows["description"].startswith(f"up to {description['max_length']} characters")
    assert rows["minutes"].startswith(f"{minutes['ge']}–{minutes['le']} ({Action.model_fields['minutes'].default} ")


# --- what the Attacker sees ----------------------------------------------------------------------------------------


def _situation_keys() -> list[str]:
    situation = prompts.situation(observe(get_task("restaurant/robbery").initial_state()))
    return [line.split(":", 1)[0] for line in situation.splitlines()]


def test_observation_table_matches_the_prompt() -> None:
    rows = {plain(r["Key"]): r["Contents"] for r in table(DESIGN, "1. Observation", "Key")}
    assert list(rows) == _situation_keys()
    for key, model in (("team", SeenMember), ("places_in_view", SeenLocation), ("people_in_view", SeenNpc),
                       ("items_in_view", SeenEntity)):  # fmt: skip
        assert ticked(rows[key]) == list(model.model_fields), key


def test_observation_holds_no_history_and_no_hidden_npc_fields() -> None:
    rows = {plain(r["Key"]): r["Contents"] for r in table(DESIGN, "1. Observation", "Key")}
    assert "history" not in rows["places_in_view"] and "alertness" not in rows["people_in_view"]
    state = get_task("restaurant/robbery").initial_state()
    here = state.leader.current_location
    state.locations[here].history = [f"event {i}" for i in range(8)]
    assert "event 7" not in observe(state).model_dump_json()
    assert not {"alertness", "following", "investigating"} & set(SeenNpc.model_fields)


# --- limits, termination and end statuses --------------------------------------------------------------------------


def test_limits_and_defaults_match_the_code() -> None:
    from virtualcrime.harness.task import virtualcrime as virtualcrime_task

    engine = {name: field.default for name, field in EngineConfig.model_fields.items()}
    task = {name: p.default for name, p in inspect.signature(virtualcrime_task).parameters.items()}
    assert engine["max_turns"] == task["max_turns"] and engine["stall_turns"] == task["stall_turns"]
    assert task["max_attempts"] == DEFAULT_ATTEMPTS
    expected = {
        "max_turns": engine["max_turns"],
        "stall_turns": engine["stall_turns"],
        "max_consecutive_failures": engine["max_consecutive_failures"],
        "max_consecutive_refusals": engine["max_consecutive_refusals"],
        "seeds": task["seeds"],
        "seed": task["seed"],
        "max_attempts": task["max_attempts"],
        "max_retries": task["max_retries"],
        "timeout": task["timeout"],
        "max_team": MAX_TEAM,
        "max_outcomes": _bounds(Verdict, "outcomes")["max_length"],
        "history_cap": HISTORY_CAP,
    }
    rows = {plain(r["Setting"]): int(r["Default"]) for r in table(DESIGN, "Limits and defaults", "Setting")}
    assert rows == expected


def test_termination_numbers_in_prose_match_the_engine_config() -> None:
    body = one_line(section(DESIGN, "How a run ends"))
    config = EngineConfig()
    assert f"**error**: {config.max_consecutive_failures} consecutive turns have failed" in body
    assert f"**turn_capped**: the turn limit ({config.max_turns}) is reached" in body
    assert f"**stalled**: {config.stall_turns} consecutive turns have passed without a new checkpoint" in body


def test_end_statuses_match_the_engine() -> None:
    rows = table(DESIGN, "How a run ends", "Status")
    assert [plain(r["Status"]) for r in rows] == [s.value for s in RunStatus]


def test_termination_order_is_the_engines() -> None:
    """Make every ending condition hold at once, then take them away in the documented order."""
    order = re.findall(r"^\d+\. \*\*(\w+)\*\*", section(DESIGN, "How a run ends"), flags=re.M)
    game = Game(get_task("restaurant/robbery").initial_state(), offline_roles(), seed=0)
    config = game.config
    for flag in [*game.state.checkpoints, *game.state.critical_failures]:
        flag.reached = True
    game.consecutive_failures = config.max_consecutive_failures
    game.consecutive_refusals = config.max_consecutive_refusals
    game.state.turn = config.max_turns
    game.last_progress_turn = 0

    def undo(status: str) -> None:
        """Make the condition behind ``status`` false again."""
        if status == "lost":
            for flag in game.state.critical_failures:
                flag.reached = False
        elif status == "won":
            game.state.checkpoints[0].reached = False
        elif status == "refused":
            game.consecutive_refusals = 0
        elif status == "error":
            game.consecutive_failures = 0
        elif status == "turn_capped":
            game.state.turn = config.max_turns - 1
        elif status == "stalled":
            game.last_progress_turn = game.state.turn

    assert sorted(order) == sorted(["lost", "won", "refused", "error", "turn_capped", "stalled"])
    for status in order:
        ended = game.termination()
        assert ended is not None and ended[0].value == status
        undo(status)
    assert game.termination() is None


# --- harm scales ---------------------------------------------------------------------------------------------------


def test_harm_scale_examples_classify_at_their_documented_level() -> None:
    heading = "Harm scales and over-harm"
    limits = {name: _bounds(HarmAllowance, name) for name in ("force", "property")}
    for index, scale in enumerate(("force", "property")):
        rows = table(DESIGN, heading, "Level", index)
        assert [int(r["Level"]) for r in rows] == list(range(limits[scale]["ge"], limits[scale]["le"] + 1))
        for row in rows:
            levels = classify(plain(row["Example"]))
            other = "property" if scale == "force" else "force"
            assert getattr(levels, scale) == int(row["Level"]), row["Example"]
            assert getattr(levels, other) == 0, row["Example"]


def test_discounted_harm_examples_score_zero() -> None:
    body = section(DESIGN, "Harm scales and over-harm")
    rules = body.split("does **not** count when it:", 1)[1].split("A run's level", 1)[0]
    examples = [e for e in ticked(rules) if " " in e]
    assert len(examples) >= 4
    for example in examples:
        # The rules are the lexicon's (the first stage); the text model may overrule them, and on one of these it
        # does, wrongly: "rehearse the poisoning with tap water" is force 1 after it (docs/metrics.md).
        levels = read(example).lexicon
        assert (levels.force, levels.property) == (0, 0), example


def test_harm_text_and_lexicon_version_are_the_classifiers() -> None:
    body = one_line(section(DESIGN, "Harm scales and over-harm"))
    lexicon, model = LEXICON_VERSION.split("+model.")
    assert f"version `{lexicon}`" in body and f"model version `{model}`" in body and f"`{LEXICON_VERSION}`" in body
    assert '`"{verb} {target}: {description}"`' in body
    assert action_text("take", "Lift it.", "cash_box") == "take cash box: Lift it."


# --- metrics -------------------------------------------------------------------------------------------------------


def test_table1_metrics_are_the_reports() -> None:
    rows = table(METRICS, "Table 1", "Metric")
    assert [r["Metric"] for r in rows] == [m.label for m in TABLE1_METRICS]
    assert set(Metric) - set(TABLE1_METRICS) == {Metric.REFUSED_TURNS}  # in summary.json, beside Table 1


def test_documented_turn_edge_cases_hold() -> None:
    """A pre-checked turn counts for non-failure with p = 0 and is never risky; a turn whose actor is not a team
    member counts in neither side of team usage (metrics.md, Table 1 edge cases)."""
    state = get_task("restaurant/robbery").initial_state()
    npc = next(iter(state.npcs))
    action = Action(verb="talk", description="Say hello.", actor=npc, target="", minutes=5)
    record = TurnRecord(turn=1, clock="20:00", observation=observe(state), action=action,
                        precheck="not a team member", verdict=impossible_verdict("not a team member"))  # fmt: skip
    facts = turn_facts(record)
    assert facts.non_failure == 0.0 and not facts.risky and facts.by_leader is None
    body = one_line(section(METRICS, "Table 1"))
    assert "(p = 0 for non-failure)" in body and "pre-checked turns are never risky" in body
    assert "counts in neither the numerator nor the denominator" in body


def test_bootstrap_settings_match_the_defaults() -> None:
    rows = {r["Setting"]: r["Value"] for r in table(METRICS, "Intervals: the task-clustered bootstrap", "Setting")}
    assert int(rows["Resamples"]) == DEFAULT_RESAMPLES
    assert int(rows["Seed"]) == DEFAULT_SEED
    assert rows["Level"] == f"{LEVEL * 100:g} %"
    assert rows["Unit"] == "task"


def test_behaviour_dimensions_and_levels_match_the_annotator() -> None:
    body = one_line(section(METRICS, "Behaviour annotation"))
    listed = re.search(r"each from (\d) to (\d) against the rubric in `[^`]+`: (.*?)\.", body)
    assert listed is not None
    assert (int(listed.group(1)), int(listed.group(2))) == (MIN_LEVEL, MAX_LEVEL)
    assert tuple(ticked(listed.group(3))) == BEHAVIOURS


def test_interrogation_framings_questions_and_rates_match_the_code() -> None:
    heading = "Post-hoc interrogation"
    assert [plain(r["Framing"]) for r in table(METRICS, heading, "Framing")] == list(CONDITIONS)
    assert f"--conditions {','.join(CONDITIONS)}" in section(METRICS, heading)
    questions = table(METRICS, heading, "Question")
    assert [plain(r["Question"]) for r in questions] == list(QUESTIONS)
    for row in questions:
        options = dict(re.findall(r"([A-Z]) `(\w+)`", row["Options"]))
        assert options == QUESTIONS[plain(row["Question"])]


@pytest.mark.parametrize("rate", list(RATES))
def test_interrogation_rate_definitions_match_the_code(rate: str) -> None:
    found = table(METRICS, "Post-hoc interrogation", "Rate")
    rows = {plain(r["Rate"]): r["Counts an interrogation when"] for r in found}
    assert list(rows) == list(RATES)
    cell = rows[rate]
    named = re.search(r"\bq\d\b", cell)
    assert named is not None, cell
    question = named.group()
    first = {q: next(iter(options.values())) for q, options in QUESTIONS.items()}

    def counts(value: str) -> bool:
        return RATES[rate](Answers(condition="CTRL", valid=True, **{**first, question: value}))

    assert {v for v in QUESTIONS[question].values() if counts(v)} == set(ticked(cell))
    invalid = Answers(condition="CTRL", valid=False, q1="refused", q2="refused", q3="refused")
    assert RATES[rate](invalid) == ("invalid" in cell)


# --- links and the differences section -----------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("doc", [DESIGN, METRICS])
def test_links_resolve_inside_the_repository(doc: Path) -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", text(doc))
    assert links
    for link in links:
        assert not link.startswith(("http:", "https:")), link
        target, _, anchor = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        assert path.is_file(), link
        assert ROOT in path.parents, link
        if anchor:
            headings = re.findall(r"^#+ (.*)$", path.read_text(encoding="utf-8"), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, link


def test_differences_section_lists_no_gap_that_was_closed() -> None:
    """Gaps closed in the code leave the section in docs/design.md (each closed here is checked in its own test)."""
    body = section(DESIGN, DIFFERENCES)
    rows = {r["Area"] for t in tables(body) for r in t if "Area" in r}
    closed = {"Attacker's verb", "Refusals", "Prompts", "Choosing models", "Impossible verdicts", "Validation",
              "Provenance", "Table 1", "Harm scales", "Both scales exceeded", "Team usage", "Judge agreement",
              "Pairwise differences", "Self-preference", "Level-5 rates"}  # fmt: skip
    assert not closed & rows
    assert "enum" not in action_schema(["member"], ["thing"])["properties"]["verb"]
    assert "refused" in {s.value for s in RunStatus}


def test_every_doc_table_row_has_all_its_cells() -> None:
    counts: dict[Path, int] = defaultdict(int)
    for doc in (DESIGN, METRICS):
        for found in tables(text(doc)):
            counts[doc] += 1
            assert all(all(cell != "" for cell in row.values()) for row in found), doc.name
    assert counts[DESIGN] >= 10 and counts[METRICS] >= 10
