"""The server sends what `jupyter/server/answers.py` declares: a real project's answers, as
JSON, checked key by key and type by type against the declarations.

mypy checks the answers the server builds as literals; the records that layers below build as
plain dicts (the state's history and decisions, the lock's holder, the hand-over card, the
usage, the event log's lines, the pending decision) are cast where they enter an answer, and
checked here. `test_server_answers.py` keeps the panel's interfaces equal to the declarations.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from support import waiting_project
from support.papers import write_paper, write_reviews
from support.recalls import SHOWN, log_recall
from support.tables import search_table
from support.trees import searched_project, with_node_files

from lightscientist_jupyter.app import handoff
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.controller.lock import WorkspaceLock
from lightscientist_jupyter.jupyter.server import answers
from lightscientist_jupyter.jupyter.server import data as server_data
from lightscientist_jupyter.jupyter.server import search as server_search
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace


def mismatches(value: Any, hint: Any, where: str) -> list[str]:
    """Where the JSON `value` does not fit the type `hint` of `answers` (empty: it fits)."""
    origin = get_origin(hint)
    if hint is Any:
        return []
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object ({hint.__name__})"]
        keys = get_type_hints(hint)
        problems = [f"{where}: lacks '{k}'" for k in sorted(hint.__required_keys__ - set(value))]
        problems += [f"{where}: '{k}' is not declared" for k in sorted(set(value) - set(keys))]
        for key in sorted(set(value) & set(keys)):
            problems += mismatches(value[key], keys[key], f"{where}.{key}")
        return problems
    if origin in (Union, types.UnionType):
        if any(not mismatches(value, option, where) for option in get_args(hint)):
            return []
        return [f"{where}: {value!r} is none of {hint}"]
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} is not in {hint}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        return [
            p
            for i, item in enumerate(value)
            for p in mismatches(item, *get_args(hint), f"{where}[{i}]")
        ]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        item_hint = get_args(hint)[1]
        return [p for k, item in value.items() for p in mismatches(item, item_hint, f"{where}.{k}")]
    if hint is float:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if number else [f"{where}: {value!r} is not a number"]
    if hint is int:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return [] if whole else [f"{where}: {value!r} is not a whole number"]
    if hint in (str, bool):
        return [] if isinstance(value, hint) else [f"{where}: {value!r} is not a {hint.__name__}"]
    raise AssertionError(f"{where}: no check for {hint!r}")


def test_a_missing_an_undeclared_or_a_wrong_value_is_named():
    record = {"path": "a/PROCESS.md", "size": 3, "kind": "gate"}
    assert mismatches(record, answers.ProcessFile, "p") == [
        "p: lacks 'exists'",
        "p: 'kind' is not declared",
        "p: 'size' is not declared",
    ]
    assert mismatches({"path": None, "exists": 1}, answers.ProcessFile, "p") == [
        "p.exists: 1 is not a bool",
        "p.path: None is not a str",
    ]
    assert mismatches({"resumed_by": "7"}, answers.ReplyAnswer, "r")[-1] == (
        "r.resumed_by: '7' is none of int | None"
    )


def sent(answer: Any) -> Any:
    """`answer` as the server writes it (`extension._Handler.answer`) and the panel reads it."""
    return json.loads(json.dumps(answer, ensure_ascii=False, default=str))


@pytest.fixture
def root(tmp_path: Path, write_table: Any) -> Path:
    """alpha waits at its gate, its paper built and reviewed; mine is a stage handed to the
    researcher (as `--handoff` makes one); broken has a state file that is not JSON."""
    alpha = waiting_project.make_waiting_project(str(tmp_path / "alpha"))
    log_recall(alpha, "idea.gate#1")  # what the gate's visit was given from memory
    write_paper(tmp_path / "alpha", tmp_path / "tex")
    write_reviews(tmp_path / "alpha")
    ResearchController.create(
        Workspace.at(tmp_path / "mine"),
        "Does warmup help?",
        mode="auto",
        start_stage="experiment.loop",
        handoffs=["experiment.loop"],
    )
    searched = Workspace.at(tmp_path / "searched")  # a search stage whose nodes have files
    table = load_table(write_table(tmp_path / "table", search_table()))
    searched_project(searched, table)
    with_node_files(searched)
    broken = tmp_path / "broken" / ".lightscientist"
    broken.mkdir(parents=True)
    (broken / "state.json").write_text("{not json", encoding="utf-8")
    return tmp_path


def test_the_server_sends_what_answers_declares(root):
    at_gate = server_data.project_detail(root, "alpha")
    with WorkspaceLock(Workspace.at(root / "alpha")):  # a runner: the reply goes to its inbox
        running = server_data.project_detail(root, "alpha")
        queued = server_data.project_reply(root, {"path": "alpha", "approve": True})
    held = server_data.project_detail(root, "mine")
    handoff.hand(Workspace.at(root / "mine"), "give-back", source=ReplySource.PANEL)
    given_back = server_data.project_detail(root, "mine")
    searched = server_data.project_detail(root, "searched")
    node = server_search.project_node(root, "searched", "n004")
    # each record is there to be checked
    assert searched["search"] and searched["search"]["drawing"] and node["changes"]
    assert at_gate["pending"] and at_gate["gate_diff"] and at_gate.get("progress")
    assert at_gate["recalled"] == SHOWN and given_back["recalled"] == []
    assert at_gate["paper"]["pdf"] and at_gate["reviews"] and at_gate["reviews"]["reviews"]
    assert running["runner"] and queued["runner"] and held["handoff"] and given_back["decisions"]

    checked: list[tuple[str, Any, Any]] = [
        ("projects", server_data.list_projects(root), answers.ProjectsAnswer),
        ("at_gate", at_gate, answers.ProjectDetail),
        ("running", running, answers.ProjectDetail),
        ("held", held, answers.ProjectDetail),
        ("given_back", given_back, answers.ProjectDetail),
        ("events", server_data.project_events(root, "alpha"), answers.EventsAnswer),
        ("file", server_data.project_file(root, "alpha", "PROCESS.md"), answers.FileAnswer),
        ("queued", queued, answers.ReplyAnswer),
        ("searched", searched, answers.ProjectDetail),
        ("node", node, answers.NodeAnswer),
    ]
    problems = [p for name, answer, hint in checked for p in mismatches(sent(answer), hint, name)]
    assert not problems, "\n".join(problems)
