"""The doors name themselves from the closed vocabulary (`vocab.ReplySource`), never by a
string of their own: a door spelled differently (the magic's rewind once said "notebook") is
then a name the checker catches."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import lightscientist_jupyter
from lightscientist_jupyter.jupyter.magic import history as magic_history
from lightscientist_jupyter.vocab import ReplySource

PACKAGE = Path(lightscientist_jupyter.__file__).parent
DOOR_NAMES = {str(s) for s in ReplySource} | {"notebook", "inbox"}
"""The doors' names, and those the magic's rewind and the inbox's poll used before."""


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def literal_names(tree: ast.AST) -> list[tuple[int, str]]:
    """`(line, what)` for each door written as a string literal in `tree`: a `source=`
    argument or a `source` parameter's default naming a door."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "source" and _text(kw.value) in DOOR_NAMES:
                    found.append((node.lineno, f'source="{_text(kw.value)}"'))
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
def test_no_door_is_a_string_literal_in_the_package():
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
paper_of_fields(fields, source="references")  # a bibliography's source: another idea
"""
    assert sorted(line for line, _ in literal_names(ast.parse(code))) == [2, 3, 4]


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
