"""The server's answers and the panel's interfaces say the same keys.

Each answer of the server extension, and each record inside one, is a `TypedDict` in
`jupyter/server/answers.py`; the panel reads it through a TypeScript interface of
`labextension/src/*.ts`. `MIRRORS` pairs them, and the interface's fields (its bases' too)
must be the TypedDict's keys, optional (`?:`) exactly where the key is `NotRequired`. The
declarations themselves are checked against a real project's answers in
`test_server_answers_sent.py`: what the server sends is the truth both sides describe.
The same holds for what the kernel sets on the dashboard's widgets (`WIDGET_MIRRORS`), read
by the modules of `labextension/src/widgets/`.

Only source files are read: the module is in the unit tier.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, get_args, is_typeddict

import pytest

from lightscientist_jupyter.jupyter import layout
from lightscientist_jupyter.jupyter.dashboard import (
    budget_card,
    gate_card,
    handoff_card,
    run_controls,
    widgets,
)
from lightscientist_jupyter.jupyter.server import answers
from lightscientist_jupyter.vocab import DecisionKind

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "labextension" / "src"

MIRRORS: dict[str, str] = {
    # answers
    "ProjectsAnswer": "IProjectsAnswer",
    "ProjectSummary": "IProjectSummary",
    "ProjectDetail": "IProjectDetail",
    "EventsAnswer": "IEventsAnswer",
    "ReplyAnswer": "IReplyAnswer",
    "HandoffAnswer": "IHandoffAnswer",
    "ControlAnswer": "IControlAnswer",
    "Refusal": "IRefusal",
    # records inside them
    "PendingDecisionDict": "IPendingDecision",
    "PermissionDict": "IPermission",
    "PermissionOptionDict": "IPermissionOption",
    "PermissionChoice": "IPermissionChoice",
    "PermissionCard": "IPermissionCard",
    "BudgetDetails": "IBudgetDetails",
    "HistoryStep": "IHistoryStep",
    "AnsweredDecision": "IAnsweredDecision",
    "Runner": "IRunner",
    "RunActions": "IRunActions",
    "StageInfo": "IStageInfo",
    "StageTableDict": "IStageTable",
    "NodeLayout": "INodeLayout",
    "EdgeLayout": "IEdgeLayout",
    "BandLayout": "IBandLayout",
    "GraphLayout": "IGraphLayout",
    "GraphView": "IGraphView",
    "OutputFile": "IOutputFile",
    "ProcessFile": "IProcessFile",
    "HandoffCard": "IHandoffCard",
    "HandoffOutput": "IHandoffOutput",
    "PanelUsage": "IPanelUsage",
    "UsageFigures": "IUsageFigures",
    "UsageTotal": "IUsageTotal",
    "FileDiff": "IFileDiff",
    "DiffImages": "IDiffImages",
    "CellDiff": "ICellDiff",
    "CsvDiff": "ICsvDiff",
    "GateChecks": "IGateChecks",
    "RecalledEntry": "IRecalledEntry",
    "CellNumbers": "ICellNumbers",
    "PaperCard": "IPaperCard",
    "ReviewsCard": "IReviewsCard",
    "ReviewRow": "IReviewRow",
    "TreeBox": "ITreeBox",
    "SearchDrawing": "ISearchDrawing",
    "SearchCard": "ISearchCard",
    "NodeAnswer": "INodeAnswer",
    "NodeRecord": "INodeRecord",
    "Progress": "IProgress",
    "ProgressStage": "IProgressStage",
    "EventDict": "IEventRecord",
    # the open notebooks' changes (opennotebooks.ts)
    "OpenNotebooksAnswer": "IOpenNotebooksAnswer",
    "PageChange": "IPageChange",
    "SettledAnswer": "ISettledAnswer",
    # the Settings Editor's defaults for the kernels (index.ts)
    "DefaultsAnswer": "IDefaultsAnswer",
}
"""`answers` TypedDict -> the TypeScript interface that mirrors it."""

WIDGET_MIRRORS: dict[str, tuple[Any, str]] = {
    # the dashboard's widgets: their synced traits (labextension/src/widgets/views.ts)
    "GateCardView": (gate_card.GateCardView, "IGateCardView"),
    "BudgetCardView": (budget_card.BudgetCardView, "IBudgetCardView"),
    "RunView": (run_controls.RunView, "IRunView"),
    "EventRow": (widgets.EventRow, "IEventRow"),
    "Outcome": (widgets.Outcome, "IOutcome"),
    "TakeView": (handoff_card.TakeView, "ITakeView"),
}
"""A view-model the kernel sets on a dashboard widget -> the interface its module reads."""

NOT_READ_BY_THE_PANEL = {
    "FileAnswer": "the panel opens files in JupyterLab, not through `GET file`",
    "ControlDone": "`control.apply`'s result; the panel gets it inside `IControlAnswer`",
}
"""TypedDicts of `answers` with no interface, and why."""

LITERALS: dict[str, Any] = {
    "ControlAction": answers.ControlAction,
    "EdgeKind": layout.EdgeKind,
}
"""TypeScript type alias -> the `Literal` it mirrors."""


# ------------------------------------------------------------------------- the TS side


@dataclasses.dataclass(frozen=True)
class Interface:
    bases: tuple[str, ...]
    fields: dict[str, bool]
    """Field name -> optional (`?:`)."""


def _code(source: str) -> str:
    """`source` without its comments (string literals are kept: no field name is in one)."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def _top_level(body: str) -> str:
    """`body` with whatever is nested in (), [] or {} blanked out: only its own members
    remain, not those of an inline object type or a method's parameters."""
    out, depth = [], 0
    for char in body:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def parse_interfaces(source: str) -> dict[str, Interface]:
    """Every `interface` of a TypeScript source: its bases and its fields."""
    code = _code(source)
    found = {}
    header = re.compile(r"\binterface\s+(\w+)(?:\s+extends\s+([\w\s,.]+?))?\s*\{")
    for match in header.finditer(code):
        depth, end = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(code[end], 0)
            end += 1
        body = _top_level(code[match.end() : end - 1])
        members = re.findall(r"(?:^|[;,\n])\s*(?:readonly\s+)?(\w+)\s*(\??)\s*:", body)
        bases = tuple(b.strip() for b in (match.group(2) or "").split(",") if b.strip())
        found[match.group(1)] = Interface(bases, {name: bool(opt) for name, opt in members})
    return found


def parse_unions(source: str) -> dict[str, set[str]]:
    """Every `type X = 'a' | 'b'` of a TypeScript source: its strings."""
    return {
        name: set(re.findall(r"'([^']*)'", union))
        for name, union in re.findall(r"\btype\s+(\w+)\s*=\s*((?:\s*\|?\s*'[^']*')+)\s*;", source)
    }


def panel_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(SOURCES.rglob("*.ts")))


def flattened(name: str, interfaces: dict[str, Interface]) -> dict[str, bool]:
    """The fields of interface `name` with its bases', as TypeScript sees them."""
    interface = interfaces[name]
    fields: dict[str, bool] = {}
    for base in interface.bases:
        fields.update(flattened(base, interfaces))
    fields.update(interface.fields)  # an extending interface may narrow a field
    return fields


def declared(typed: Any) -> dict[str, bool]:
    """A TypedDict's keys -> optional (`NotRequired`, or `total=False`)."""
    return {
        **{key: False for key in typed.__required_keys__},
        **{key: True for key in typed.__optional_keys__},
    }


def differences(python: dict[str, bool], panel: dict[str, bool]) -> list[str]:
    """What is not the same between the server's keys and the panel's fields, in words."""
    problems = [f"{k}: sent by the server, not in the interface" for k in python.keys() - panel]
    problems += [f"{k}: in the interface, never sent by the server" for k in panel.keys() - python]
    for key in sorted(python.keys() & panel.keys()):
        if python[key] != panel[key]:
            server = "sometimes absent (NotRequired)" if python[key] else "always sent"
            side = "optional (?:)" if panel[key] else "required"
            problems.append(f"{key}: {server} on the server, {side} in the interface")
    return sorted(problems)


# ------------------------------------------------------------------------- keys


@pytest.mark.parametrize("typed_name, interface", sorted(MIRRORS.items()))
def test_each_answer_has_the_keys_its_interface_reads(typed_name, interface):
    interfaces = parse_interfaces(panel_sources())
    assert interface in interfaces, f"no interface {interface} in {SOURCES}"
    typed = getattr(answers, typed_name)
    problems = differences(declared(typed), flattened(interface, interfaces))
    assert not problems, f"answers.{typed_name} vs {interface}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", sorted(WIDGET_MIRRORS))
def test_each_widget_view_has_the_keys_its_module_reads(name):
    typed, interface = WIDGET_MIRRORS[name]
    interfaces = parse_interfaces(panel_sources())
    assert interface in interfaces, f"no interface {interface} in {SOURCES}"
    problems = differences(declared(typed), flattened(interface, interfaces))
    assert not problems, f"{name} vs {interface}:\n" + "\n".join(problems)


def test_every_declared_answer_is_mirrored_or_says_why_not():
    typed = {name for name, value in vars(answers).items() if is_typeddict(value)}
    assert typed == set(MIRRORS) | set(NOT_READ_BY_THE_PANEL)


@pytest.mark.parametrize("alias", sorted(LITERALS))
def test_closed_sets_have_the_same_values(alias):
    assert parse_unions(panel_sources())[alias] == set(get_args(LITERALS[alias]))


def test_decision_kinds_are_the_vocabularys():
    assert set(get_args(answers.DecisionKindName)) == {str(k) for k in DecisionKind}


SAMPLE = """
/** A doc comment with a colon: and a field: string */
export interface IBase {
  path: string;
  count?: number;
}

export interface IShape extends IBase, IOther {
  // a comment: not a field
  runner: { pid?: number; host: string } | null;
  act: (code: string, at?: number) => void;
  pair: [number, number] | null;
  readonly named?: Record<string, { deep: boolean }>;
}

interface IOther { extra: boolean }
"""


def test_the_parser_reads_fields_bases_and_optional_marks():
    interfaces = parse_interfaces(SAMPLE)
    assert interfaces["IShape"].bases == ("IBase", "IOther")
    assert flattened("IShape", interfaces) == {
        "path": False,
        "count": True,
        "extra": False,
        "runner": False,
        "act": False,
        "pair": False,
        "named": True,
    }


def test_a_key_on_one_side_only_or_optional_on_one_side_is_named():
    python = {"path": False, "count": False, "gone": True}
    panel = {"path": False, "count": True, "new": False}
    assert differences(python, panel) == [
        "count: always sent on the server, optional (?:) in the interface",
        "gone: sent by the server, not in the interface",
        "new: in the interface, never sent by the server",
    ]
