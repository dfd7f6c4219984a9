"""The stage-table loader: the default table, and every kind of bad input, reported at once."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from support.tables import DEFAULT_STAGE_IDS

from lightscientist_jupyter.controller import (
    DONE,
    Stage,
    StageTable,
    default_table_path,
    load_table,
    shipped_stages,
)
from lightscientist_jupyter.errors import LightScientistError, StageTableError

GOOD = """\
start = "first"

[stages.first]
skill = "skills/first.md"
outputs = ["out/first.md"]
next = "second"
allowed = ["second"]

[stages.second]
skill = "skills/second.md"
outputs = ["out/second.md"]
next = "done"
allowed = ["done", "first"]
"""


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """The 1-based line number of the `occurrence`-th line containing `needle`."""
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hits[occurrence - 1]


def load_error(path: Path) -> StageTableError:
    with pytest.raises(StageTableError) as info:
        load_table(path)
    err = info.value
    assert isinstance(err, LightScientistError)
    assert str(path.resolve()) in str(err), "the message must name the file"
    assert err.path == str(path.resolve())
    return err


def only_problem(err: StageTableError) -> str:
    assert len(err.problems) == 1, err.problems
    return err.problems[0]


# ------------------------------------------------------------------ the default table


def test_default_table_loads_with_fourteen_stages(default_table: StageTable):
    assert default_table.ids() == DEFAULT_STAGE_IDS
    assert len(default_table) == 14
    assert default_table.start == "idea.survey"
    assert default_table.path == default_table_path()


def test_default_table_gates(default_table: StageTable):
    assert default_table.gates() == ["idea.gate", "experiment.gate", "paper.review"]
    assert default_table["paper.review"].next == DONE


def test_default_table_probe_branch_and_loop(default_table: StageTable):
    edges = set(default_table.edges())
    assert {
        ("idea.evaluate", "idea.probe_batch"),
        ("idea.probe_batch", "idea.probe_collect"),
        ("idea.probe_collect", "idea.gate"),
        ("idea.evaluate", "idea.gate"),
    } <= edges
    assert ("experiment.loop", "experiment.loop") in edges
    assert default_table["experiment.loop"].max_visits is not None


def test_default_table_crosses_phases_only_through_gates(default_table: StageTable):
    for src, dst in default_table.edges():
        src_phase = default_table[src].phase
        dst_phase = "end" if dst == DONE else default_table[dst].phase
        if src_phase != dst_phase:
            assert default_table[src].approval, f"{src} → {dst} crosses a phase without a gate"


def test_default_table_outputs_and_skills(default_table: StageTable):
    for stage in default_table:
        assert stage.outputs, stage.id
        assert all(o.split("/", 1)[0] == stage.phase for o in stage.outputs), stage.outputs
        assert stage.skill.is_file() and stage.skill.read_text(encoding="utf-8").strip()


def test_loaded_values_are_frozen(default_table: StageTable):
    stage = default_table["idea.survey"]
    assert isinstance(stage, Stage)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stage.next = "paper.write"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        default_table.start = "paper.write"  # type: ignore[misc]
    with pytest.raises(TypeError):
        default_table.stages["x"] = stage  # type: ignore[index]
    assert isinstance(stage.outputs, tuple) and isinstance(stage.allowed, tuple)


# ------------------------------------------------------------------ every shipped table


@pytest.mark.parametrize("name", ["research.toml", "review.toml"])
def test_every_shipped_table_validates(name):
    assert sorted(p.name for p in shipped_stages().glob("*.toml")) == [
        "research.toml",
        "review.toml",
    ]
    table = load_table(shipped_stages() / name)
    for stage in table:
        assert stage.skill.parent == shipped_stages() / "skills", stage.id
        assert stage.skill.read_text(encoding="utf-8").startswith(f"# {stage.id} — ")


def test_every_shipped_skill_belongs_to_a_shipped_table():
    tables = [load_table(shipped_stages() / name) for name in ("research.toml", "review.toml")]
    used = {stage.skill for table in tables for stage in table}
    assert set((shipped_stages() / "skills").glob("*.md")) == used


def test_the_review_table_is_the_short_flow_with_one_gate():
    review = load_table(shipped_stages() / "review.toml")
    assert review.ids() == ["review.scope", "review.read", "review.gate", "review.write"]
    assert review.gates() == ["review.gate"]
    assert ("review.read", "review.read") in set(review.edges())  # reading may repeat
    assert review["review.read"].max_visits == 3
    assert review["review.write"].next == DONE
    assert review.literature["references"] == "review/references.bib"


def test_a_good_custom_table_loads(tmp_path, write_table):
    table = load_table(write_table(tmp_path, GOOD))
    assert table.ids() == ["first", "second"]
    assert table["first"].skill == (tmp_path / "skills" / "first.md").resolve()
    assert table["second"].allowed == ("done", "first")
    assert table["first"].approval is False and table["first"].max_visits is None


# ------------------------------------------------------------------ bad input, one at a time


def test_unknown_top_level_key(tmp_path, write_table):
    text = GOOD.replace('start = "first"\n', 'start = "first"\ncolour = "blue"\n')
    err = load_error(write_table(tmp_path, text))
    problem = only_problem(err)
    assert "unknown top-level key 'colour'" in problem
    assert f"(line {line_of(text, 'colour')})" in problem


def test_unknown_stage_key(tmp_path, write_table):
    text = GOOD.replace('next = "second"', 'next = "second"\nnxet = "second"')
    err = load_error(write_table(tmp_path, text))
    problem = only_problem(err)
    assert "stage 'first'" in problem and "unknown key 'nxet'" in problem
    assert f"(line {line_of(text, 'nxet')})" in problem


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("approval", '"yes"', "must be true or false, not a string"),
        ("outputs", '"out/first.md"', "must be a list, not a string"),
        ("max_visits", "true", "must be an integer, not a boolean"),
        ("max_visits", "2.5", "must be an integer, not a number"),
        ("next", "3", "must be a string, not an integer"),
        ("allowed", '"second"', "must be a list, not a string"),
        ("skill", "[]", "must be a string, not a list"),
        ("network", '"yes"', "must be true or false, not a string"),
        ("limits", '"2G"', "must be a table, not a string"),
    ],
)
def test_wrong_types(tmp_path, write_table, key, value, expected):
    head, tail = GOOD.split("[stages.second]")
    head = "\n".join(line for line in head.splitlines() if not line.startswith(f"{key} ="))
    text = f"{head}\n{key} = {value}\n\n[stages.second]{tail}"
    err = load_error(write_table(tmp_path, text, {"skills/first.md": "x", "skills/second.md": "y"}))
    problem = only_problem(err)
    assert f"stage 'first', key '{key}'" in problem
    assert expected in problem
    assert f"(line {line_of(text, f'{key} = {value}')})" in problem


def test_network_and_limits_reach_the_stage(tmp_path, write_table):
    text = GOOD.replace(
        'allowed = ["second"]',
        'allowed = ["second"]\nnetwork = true\nlimits = { mem = "2G", cpu = 60, procs = "none" }',
    )
    files = {"skills/first.md": "x", "skills/second.md": "y"}
    table = load_table(write_table(tmp_path, text, files))
    assert table["first"].network is True
    assert dict(table["first"].limits) == {"mem": 2 << 30, "cpu": 60, "procs": None}
    assert table["second"].network is False and dict(table["second"].limits) == {}


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ('{ memory = "2G" }', "unknown limit 'memory'; expected mem, cpu, procs, fsize"),
        ('{ mem = "lots" }', "mem='lots' must be a size such as 2G or 512M (or none)"),
        ('{ cpu = "10M" }', "cpu='10M' must be a whole number (or none)"),
        ("{ procs = 0 }", "procs must be at least 1"),
    ],
)
def test_bad_limits_name_the_key(tmp_path, write_table, limits, expected):
    text = GOOD.replace('allowed = ["second"]', f'allowed = ["second"]\nlimits = {limits}')
    err = load_error(write_table(tmp_path, text, {"skills/first.md": "x", "skills/second.md": "y"}))
    problem = only_problem(err)
    assert problem.startswith(f"stage 'first', key 'limits' (line {line_of(text, 'limits =')}): ")
    assert expected in problem


def test_entries_of_lists_must_be_strings(tmp_path, write_table):
    text = GOOD.replace('outputs = ["out/first.md"]', 'outputs = ["out/first.md", 7]')
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "stage 'first', key 'outputs'" in problem and "non-empty string" in problem


def test_allowed_must_not_be_empty_or_repeat(tmp_path, write_table):
    empty = GOOD.replace('allowed = ["second"]', "allowed = []")
    problem = only_problem(load_error(write_table(tmp_path / "empty", empty)))
    assert "stage 'first', key 'allowed'" in problem and "at least one next stage" in problem
    twice = GOOD.replace('allowed = ["second"]', 'allowed = ["second", "second"]')
    problem = only_problem(load_error(write_table(tmp_path / "twice", twice)))
    assert "stage 'first', key 'allowed'" in problem and "more than once: second" in problem


def test_outputs_must_stay_inside_the_workspace(tmp_path, write_table):
    text = GOOD.replace('outputs = ["out/first.md"]', 'outputs = ["../escape.md"]')
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "stage 'first', key 'outputs'" in problem and "'../escape.md'" in problem


def test_next_not_in_allowed(tmp_path, write_table):
    text = GOOD.replace('next = "done"', 'next = "first"').replace(
        'allowed = ["done", "first"]', 'allowed = ["done"]'
    )
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "stage 'second', key 'next'" in problem
    assert "'first' is not in 'allowed'" in problem
    line = line_of(text, 'next = "first"')
    assert f"(line {line})" in problem


def test_allowed_references_a_missing_stage(tmp_path, write_table):
    text = GOOD.replace('allowed = ["second"]', 'allowed = ["second", "third"]')
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "stage 'first', key 'allowed'" in problem
    assert "'third' is not a stage of this table" in problem
    assert f"(line {line_of(text, 'third')})" in problem


def test_start_references_a_missing_stage(tmp_path, write_table):
    text = GOOD.replace('start = "first"', 'start = "zeroth"')
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "'start'" in problem and "'zeroth' is not a stage" in problem
    assert "(line 1)" in problem


def test_missing_start(tmp_path, write_table):
    text = GOOD.replace('start = "first"\n', "")
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "missing top-level key 'start'" in problem


def test_missing_required_stage_key(tmp_path, write_table):
    text = GOOD.replace('outputs = ["out/second.md"]\n', "")
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "stage 'second'" in problem and "missing required key 'outputs'" in problem
    assert f"(line {line_of(text, '[stages.second]')})" in problem


def test_missing_skill_file(tmp_path, write_table):
    path = write_table(tmp_path, GOOD, {"skills/first.md": "brief"})
    problem = only_problem(load_error(path))
    missing = (tmp_path / "skills" / "second.md").resolve()
    assert "stage 'second', key 'skill'" in problem
    assert f"{missing} does not exist" in problem
    assert f"(line {line_of(GOOD, 'second.md')})" in problem


def test_empty_skill_file(tmp_path, write_table):
    path = write_table(tmp_path, GOOD, {"skills/first.md": "brief", "skills/second.md": "  \n\n"})
    problem = only_problem(load_error(path))
    assert "stage 'second', key 'skill'" in problem and "is empty" in problem


def test_skill_file_that_is_not_utf8(tmp_path, write_table):
    path = write_table(tmp_path, GOOD, {"skills/first.md": "brief"})
    (tmp_path / "skills" / "second.md").write_bytes(b"\xff\xfe brief")
    problem = only_problem(load_error(path))
    assert "stage 'second', key 'skill'" in problem and "not UTF-8" in problem


def test_stage_not_reachable_from_start(tmp_path, write_table):
    text = (
        GOOD
        + """
[stages.orphan]
skill = "skills/orphan.md"
outputs = ["out/orphan.md"]
next = "done"
allowed = ["done"]
"""
    )
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "stage 'orphan'" in problem and "not reachable from start 'first'" in problem
    assert f"(line {line_of(text, '[stages.orphan]')})" in problem


def test_stage_with_no_path_to_done(tmp_path, write_table):
    text = """\
start = "first"

[stages.first]
skill = "skills/first.md"
outputs = ["out/first.md"]
next = "done"
allowed = ["done", "trap"]

[stages.trap]
skill = "skills/trap.md"
outputs = ["out/trap.md"]
next = "pit"
allowed = ["pit"]

[stages.pit]
skill = "skills/pit.md"
outputs = ["out/pit.md"]
next = "trap"
allowed = ["trap"]
"""
    err = load_error(write_table(tmp_path, text))
    assert len(err.problems) == 2, err.problems
    trap, pit = err.problems
    assert "stage 'trap'" in trap and "no path to 'done'" in trap
    assert f"(line {line_of(text, '[stages.trap]')})" in trap
    assert "stage 'pit'" in pit and "no path to 'done'" in pit


def test_no_stage_reaches_done_at_all(tmp_path, write_table):
    text = GOOD.replace('next = "done"', 'next = "first"').replace(
        'allowed = ["done", "first"]', 'allowed = ["first"]'
    )
    err = load_error(write_table(tmp_path, text))
    assert any("no path from start 'first' to 'done'" in p for p in err.problems), err.problems


def test_done_is_reserved(tmp_path, write_table):
    text = (
        GOOD
        + """
[stages.done]
skill = "skills/first.md"
outputs = ["out/x.md"]
next = "first"
allowed = ["first"]
"""
    )
    err = load_error(write_table(tmp_path, text))
    assert any("stage 'done'" in p and "reserved" in p for p in err.problems), err.problems


def test_duplicate_key_is_a_toml_error_with_its_line(tmp_path, write_table):
    text = GOOD.replace('next = "second"', 'next = "second"\nnext = "second"')
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "not valid TOML" in problem
    second = line_of(text, 'next = "second"', 2)
    assert f"line {second}" in problem


def test_duplicate_stage_table_is_a_toml_error_with_its_line(tmp_path, write_table):
    text = GOOD + '\n[stages.first]\nskill = "skills/first.md"\n'
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "not valid TOML" in problem
    assert f"line {line_of(text, '[stages.first]', 2)}" in problem


def test_not_utf8(tmp_path, write_table):
    raw = GOOD.encode("utf-8").replace(b'"out/second.md"', b'"out/s\xe9cond.md"')
    problem = only_problem(load_error(write_table(tmp_path, raw)))
    assert "not UTF-8" in problem
    assert f"line {line_of(GOOD, 'out/second.md')}" in problem


def test_not_toml(tmp_path, write_table):
    text = GOOD.replace('next = "second"', "next = second stage")
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert "not valid TOML" in problem
    assert f"line {line_of(text, 'next = second stage')}" in problem


def test_missing_file(tmp_path):
    problem = only_problem(load_error(tmp_path / "nope.toml"))
    assert "file not found" in problem


def test_unquoted_dotted_stage_id_gets_a_hint(tmp_path, write_table):
    text = """\
start = "idea.survey"

[stages.idea.survey]
skill = "skills/s.md"
outputs = ["idea/survey.md"]
next = "done"
allowed = ["done"]
"""
    err = load_error(write_table(tmp_path, text))
    hint = [p for p in err.problems if "must be quoted" in p]
    assert len(hint) == 1, err.problems
    assert "stage 'idea'" in hint[0] and "unknown key 'survey'" in hint[0]
    assert '[stages."idea.survey"]' in hint[0]


def test_several_problems_are_reported_at_once(tmp_path, write_table):
    text = """\
start = "first"
colour = "blue"

[stages.first]
skill = "skills/first.md"
outputs = "out/first.md"
next = "second"
allowed = ["second"]

[stages.second]
skill = "skills/second.md"
outputs = ["out/second.md"]
next = "done"
allowed = ["done", "third"]
approval = "yes"

[stages.third]
skill = "skills/missing.md"
outputs = ["out/third.md"]
next = "elsewhere"
allowed = ["done"]
"""
    err = load_error(write_table(tmp_path, text, {"skills/first.md": "a", "skills/second.md": "b"}))
    message = str(err)
    expected = [
        ("unknown top-level key 'colour'", line_of(text, "colour")),
        ("stage 'first', key 'outputs'", line_of(text, 'outputs = "out/first.md"')),
        ("stage 'second', key 'approval'", line_of(text, "approval")),
        ("stage 'third', key 'skill'", line_of(text, "missing.md")),
        ("stage 'third', key 'next'", line_of(text, '"elsewhere"')),
    ]
    assert len(err.problems) == len(expected), err.problems
    for fragment, line in expected:
        hits = [p for p in err.problems if fragment in p]
        assert len(hits) == 1, (fragment, err.problems)
        assert f"(line {line})" in hits[0]
        assert hits[0] in message
    assert f"({len(expected)} problem(s))" in message


def test_problems_of_one_stage_do_not_hide_each_other(tmp_path, write_table):
    """A wrong type in one key does not stop the checks of the other keys of that stage."""
    text = """\
start = "first"

[stages.first]
skill = "skills/missing.md"
outputs = ["out/first.md", 3]
next = "second"
allowed = ["done", "ghost"]
approval = "yes"
max_visits = 0
"""
    err = load_error(write_table(tmp_path, text, {}))
    expected = [
        ("key 'approval'", "approval", "must be true or false"),
        ("key 'outputs'", "outputs", "non-empty string (found 3)"),
        ("key 'allowed'", "allowed", "'ghost' is not a stage of this table"),
        ("key 'next'", "next", "'second' is not in 'allowed'"),
        ("key 'max_visits'", "max_visits", "at least 1"),
        ("key 'skill'", "skill", "does not exist"),
    ]
    assert len(err.problems) == len(expected), err.problems
    for key, needle, fragment in expected:
        hits = [p for p in err.problems if key in p and fragment in p]
        assert len(hits) == 1, (key, err.problems)
        assert hits[0].startswith("stage 'first'")
        assert f"(line {line_of(text, needle + ' =')})" in hits[0]


def test_nothing_is_half_loaded(tmp_path, write_table):
    """A table with one bad stage among good ones raises; no partial table comes back."""
    text = GOOD.replace('allowed = ["done", "first"]', 'allowed = ["done", "first", "ghost"]')
    with pytest.raises(StageTableError):
        load_table(write_table(tmp_path, text))


def test_every_problem_names_the_stage_or_the_top_level_key(tmp_path, write_table):
    text = GOOD.replace("[stages.second]", "[stages.second]\nbogus = 1").replace(
        'next = "second"', 'next = "nowhere"'
    )
    err = load_error(write_table(tmp_path, text))
    assert err.problems
    for problem in err.problems:
        assert re.search(r"stage '[^']+'|top-level key", problem), problem


# ------------------------------------------------------------------ coding agents

AGENTS = """
[agents.codex]
command = ["codex-acp", "--quiet"]
env = ["OPENAI_API_KEY"]
permissions = "allow"
network = true

[agents.fake]
command = ["python", "fake_acp_agent.py"]
"""


def with_agents(agents: str = AGENTS, agent_line: str = 'agent = "codex"') -> str:
    """GOOD with `agents` appended and stage `second` worked by the agent `agent_line` names."""
    return GOOD.replace('next = "done"', f'next = "done"\n{agent_line}') + agents


def test_agents_and_the_stages_they_work_load(tmp_path, write_table):
    table = load_table(write_table(tmp_path, with_agents()))
    codex = table.agents["codex"]
    assert codex.command == ("codex-acp", "--quiet") and codex.env == ("OPENAI_API_KEY",)
    assert (codex.permissions, codex.network) == ("allow", True)
    fake = table.agents["fake"]  # the defaults: nothing passed through, ask, no network
    assert (fake.env, fake.permissions, fake.network) == ((), "ask", False)
    assert table["second"].agent == "codex" and table["first"].agent is None
    assert table.agent_of("second") is codex and table.agent_of("first") is None
    assert table.works("codex") == ["second"] and table.works("fake") == []


def test_a_table_without_agents_has_none(tmp_path, write_table):
    table = load_table(write_table(tmp_path, GOOD))
    assert dict(table.agents) == {} and table.agent_of("second") is None


def test_a_stage_naming_an_unknown_agent(tmp_path, write_table):
    text = with_agents(agent_line='agent = "codx"')
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert problem == (
        f"stage 'second', key 'agent' (line {line_of(text, 'agent = ')}): 'codx' is not an "
        "agent of this table (its agents: codex, fake)"
    )


def test_a_stage_naming_an_agent_in_a_table_with_none(tmp_path, write_table):
    text = with_agents(agents="")
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert problem == (
        f"stage 'second', key 'agent' (line {line_of(text, 'agent = ')}): 'codex' is not an "
        "agent of this table (it has no [agents.NAME])"
    )


@pytest.mark.parametrize(
    ("line", "replacement", "key", "expected"),
    [
        (
            'command = ["codex-acp", "--quiet"]',
            "command = []",
            "command",
            "must be a non-empty list of strings, the program and its arguments "
            '(e.g. command = ["codex-acp"])',
        ),
        (
            'command = ["codex-acp", "--quiet"]',
            'command = "codex-acp"',
            "command",
            "must be a non-empty list of strings",
        ),
        (
            'command = ["codex-acp", "--quiet"]',
            'command = ["", "x"]',
            "command",
            "every entry must be a string, the first the program",
        ),
        (
            'permissions = "allow"',
            'permissions = "sometimes"',
            "permissions",
            'must be one of "ask", "allow", "deny", not "sometimes"',
        ),
        ("network = true", 'network = "yes"', "network", "must be true or false, not 'yes'"),
        ('env = ["OPENAI_API_KEY"]', 'env = "OPENAI_API_KEY"', "env", "must be a list of"),
        ('env = ["OPENAI_API_KEY"]', 'env = ["OPENAI API KEY"]', "env", "not a variable name"),
    ],
)
def test_a_bad_agent_key(tmp_path, write_table, line, replacement, key, expected):
    text = with_agents().replace(line, replacement)
    problem = only_problem(load_error(write_table(tmp_path, text)))
    at = line_of(text, replacement)
    assert problem.startswith(f"agent 'codex', key '{key}' (line {at}): "), problem
    assert expected in problem


def test_an_agent_without_a_command_and_with_an_unknown_key(tmp_path, write_table):
    text = with_agents().replace('command = ["codex-acp", "--quiet"]', 'cmd = ["codex-acp"]')
    err = load_error(write_table(tmp_path, text))
    assert err.problems == [
        f"agent 'codex', unknown key 'cmd' (line {line_of(text, 'cmd = ')}); "
        "expected command, env, permissions, network",
        f"agent 'codex' (line {line_of(text, '[agents.codex]')}): missing required key "
        "'command', the program and its arguments (e.g. command = [\"codex-acp\"])",
    ]


def test_agent_problems_come_with_the_stages_problems(tmp_path, write_table):
    """A bad agent and a bad stage key are reported together, each with its own line."""
    text = with_agents().replace('permissions = "allow"', "permissions = 1")
    text = text.replace('next = "second"', 'next = "second"\nnxet = 1')
    err = load_error(write_table(tmp_path, text))
    assert len(err.problems) == 2, err.problems
    assert f"unknown key 'nxet' (line {line_of(text, 'nxet')})" in err.problems[0]
    assert err.problems[1] == (
        f"agent 'codex', key 'permissions' (line {line_of(text, 'permissions = 1')}): "
        'must be one of "ask", "allow", "deny", not 1'
    )


def test_agents_must_be_tables(tmp_path, write_table):
    text = 'agents = "codex"\n' + GOOD
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert problem == "top-level key 'agents' must be a table of [agents.NAME] tables (line 1)"
    text = GOOD + '\n[agents]\ncodex = "codex-acp"\n'
    problem = only_problem(load_error(write_table(tmp_path, text)))
    assert problem == "agent 'codex': must be a table"
