"""One look for both screens: the status words and the style sheet they share."""

from __future__ import annotations

import re
from pathlib import Path

from lightscientist_jupyter.jupyter import look
from lightscientist_jupyter.jupyter.dashboard import graph
from lightscientist_jupyter.vocab import ProjectStatus

REPO = Path(__file__).resolve().parents[2]


def test_the_panel_and_the_dashboard_say_each_status_in_the_same_words():
    source = (REPO / "labextension/src/dom.ts").read_text(encoding="utf-8")
    block = re.search(r"STATUS_WORDS[^{]*\{(.*?)\};", source, re.S)
    assert block, "labextension/src/dom.ts has no STATUS_WORDS"
    panel = dict(re.findall(r"(\w+): '([^']*)'", block.group(1)))
    assert panel == look.STATUS_WORDS
    assert {str(s) for s in ProjectStatus} <= set(look.STATUS_WORDS)
    assert look.status_words("waiting_user") == "waiting for you"


def test_the_panel_imports_the_dashboards_style_sheet_and_colours_come_from_the_theme():
    index = (REPO / "labextension/style/index.css").read_text(encoding="utf-8")
    assert "lightscientist_jupyter/jupyter/dashboard/style/theme.css" in index
    css = graph.STYLE_FILE.read_text(encoding="utf-8")
    # every colour is a JupyterLab variable (a fallback may follow inside the var())
    for value in re.findall(r"(?:color|fill|stroke|background)\s*:\s*([^;]+);", css):
        # currentcolor: the text colour the theme gave the element (an icon drawn in it)
        assert value.strip().startswith(
            ("var(--jp-", "var(--ls-", "none", "transparent", "currentcolor")
        ), value


def test_a_decision_is_worded_by_its_kind_and_its_answer():
    assert look.verdict_words({"kind": "gate", "approve": True}) == "approved"
    assert look.verdict_words({"kind": "gate", "approve": False}) == "rejected"
    assert look.verdict_words({"kind": "question", "approve": True}) == "answered yes"
    assert look.reply_words(False, "gate", "idea.gate") == "Rejected idea.gate"
    assert look.reply_words(True, "question", "x.loop") == "Answered yes to x.loop"
    assert look.verdict_words({"kind": "question"}) == "answered no"
