"""The doors name themselves and their inbox commands from the closed vocabularies
(`vocab.ReplySource`, `vocab.InboxCommand`), never by a string of their own: a door spelled
differently (the magic's rewind once said "notebook") is then a name the checker catches. So
does whoever files a memory entry (`vocab.MemorySource`: the researcher through a door)."""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import lightscientist_jupyter
from lightscientist_jupyter.app import controls
from lightscientist_jupyter.controller.inbox import take_commands, write_command
from lightscientist_jupyter.controller.inbox_files import Refused, read_command
from lightscientist_jupyter.jupyter.magic import history as magic_history
from lightscientist_jupyter.vocab import CancelSource, InboxCommand, MemorySource, ReplySource
from lightscientist_jupyter.workspace import Workspace

PACKAGE = Path(lightscientist_jupyter.__file__).parent
DOOR_NAMES = {str(s) for s in ReplySource} | {str(s) for s in MemorySource} | {"notebook", "inbox"}
"""The doors' names, who files memory entries, and the names the magic's rewind and the
inbox's poll used before."""


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def literal_names(tree: ast.AST) -> list[tuple[int, str]]:
    """`(line, what)` for each door or inbox command written as a string literal in `tree`:
    a `source=` argument or a `source` parameter's default naming a door, a
    `write_command` given its command as a string."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "source" and _text(kw.value) in DOOR_NAMES:
                    found.append((node.lineno, f'source="{_text(kw.value)}"'))
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name == "write_command" and any(_text(a) is not None for a in node.args):
                found.append((node.lineno, "write_command with a string command"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args]
            pairs = [
                *zip(params[len(params) - len(a.defaults) :], a.defaults, strict=True),
                *zip(a.kwonlyargs, a.kw_defaults, strict=True),
            ]
            for arg, default in pairs:
                if arg.arg == "source" and _text(default) in DOOR_NAMES:
                    found.append((node.lineno, f'{node.name}(source="{_text(default)}")'))
    return found


@pytest.mark.unit
def test_no_door_and_no_inbox_command_is_a_string_literal_in_the_package():
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {what}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, what in literal_names(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


@pytest.mark.unit
def test_the_check_finds_each_kind_of_literal():
    code = """
def rewind(ws, *, source: str = "cli"): ...
def take(ws, source="magic", /): ...
rewind(ws, source="notebook")
write_command(ws, "stop")
paper_of_fields(fields, source="references")  # a bibliography's source: another idea
NewEntry(MemoryKind.LESSON, text, "", key, source="researcher")
"""
    assert sorted(line for line, _ in literal_names(ast.parse(code))) == [2, 3, 4, 5, 7]


@pytest.mark.unit
def test_a_source_read_back_is_a_member_or_the_apis():
    assert [ReplySource.read(str(s)) for s in ReplySource] == list(ReplySource)
    assert ReplySource.read("panel") is ReplySource.PANEL
    for other in ("slack-bot", "notebook", "", None, 42, ["cli"]):
        assert ReplySource.read(other) is ReplySource.API


@pytest.mark.unit
def test_the_magics_rewind_is_recorded_as_the_magics(monkeypatch):
    asked: dict[str, Any] = {}
    monkeypatch.setattr(
        magic_history.api, "rewind", lambda ws, ref, *, source: asked.update(source=source)
    )
    session: Any = SimpleNamespace(workspace_of=lambda args: "ws")
    magic_history.rewind(session, argparse.Namespace(ref="idea.gate"))
    assert asked["source"] is ReplySource.MAGIC


@pytest.mark.unit
def test_an_inbox_command_is_written_as_its_plain_name(tmp_path):
    ws = Workspace.at(tmp_path)
    path = write_command(ws, InboxCommand.UNTIL, stage="b")
    assert json.loads(path.read_text(encoding="utf-8"))["command"] == "until"
    assert [c["command"] for c in take_commands(ws)] == [InboxCommand.UNTIL]


class Running:
    """A `controls.RunningProject` that notes what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.until = None

    def stop(self) -> None:
        self.asked.append("stop")

    def cancel_soon(self, reason: str) -> None:
        self.asked.append(reason)


@pytest.mark.unit
def test_a_command_read_from_the_inbox_is_matched_by_its_member_an_unknown_one_left(tmp_path):
    project: Any = Running()
    path = tmp_path / "0001.cmd"
    for raw in ({"command": "stop"}, {"command": "cancel", "args": {"source": "panel"}}):
        command = read_command(path, raw)
        assert command is not None and not isinstance(command, Refused)
        assert controls.apply_command(project, command)
    assert project.asked == ["stop", "cancelled from the panel"]
    cancel = read_command(path, {"command": "cancel", "args": {"source": "panel"}})
    assert cancel == {"command": "cancel", "args": {"worker_id": None, "source": "panel"}}
    assert cancel["args"]["source"] is CancelSource.PANEL
    # one this version does not know (say from a newer one), or none: left alone
    assert read_command(path, {"command": "reboot"}) is None
    assert read_command(path, {"args": {}}) is None
    assert not controls.apply_command(project, {"command": "reboot"})  # a dict nobody read
    assert project.asked == ["stop", "cancelled from the panel"]
