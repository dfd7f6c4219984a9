"""What the stage graph shows, computed once for every screen that draws it.

A `GraphView` holds the layouts (`jupyter.layout`: the wide one and the same graph wrapped
narrower), the state each stage is drawn in (`look.stage_states`), the transitions the project
has taken, the visit counts, each stage's hover title and the graph in words for a screen
reader. The dashboard's graph widget and the side panel both draw it with one function
(`labextension/src/graph.ts`), showing the widest layout that fits their width; the static
SVG a saved notebook keeps (`dashboard/graph.py`) draws the widest of the same view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from lightscientist_jupyter.controller import budget as budgets
from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.jupyter.layout import MAX_COLUMNS, GraphLayout, graph_layout
from lightscientist_jupyter.jupyter.look import StageState, stage_states
from lightscientist_jupyter.values.usage import Usage, dollars

COLUMNS = (MAX_COLUMNS, 3, 2, 1)
"""The bands' columns of each drawing (about 970, 480, 320 and 160 px wide): a screen shows
the widest that fits, so a side panel of the usual 250 px neither scrolls the graph nor
shrinks its text."""


class GraphView(TypedDict):
    """The stage graph of a project (`IGraphView` in `labextension/src/answers.ts`)."""

    layouts: list[GraphLayout]
    """The same graph wrapped after each of `COLUMNS` columns, widest first."""
    states: dict[str, StageState]
    """How each stage is drawn (`look.stage_states`)."""
    taken: list[list[str]]
    """Transitions the project has made, `[from, to]`."""
    visits: dict[str, int]
    titles: dict[str, str]
    """Each stage's hover title: its state, outputs and next stages, visits, what it spent."""
    title: str
    """`stage graph: STAGE (STATUS)`, or `stage graph` for a bare table."""
    label: str
    """The graph in words, for a screen reader: where the project is, what it visited."""


def graph_view(table: StageTable, state: Any | None, columns: Sequence[int] = COLUMNS) -> GraphView:
    """The graph of `table` for a project state (a `ProjectState`, or None: the bare table)."""
    states = stage_states(table, state)
    visits: dict[str, int] = dict(getattr(state, "visits", None) or {})
    title = "stage graph" if state is None else f"stage graph: {state.stage} ({state.status})"
    return {
        "layouts": [graph_layout(table, c) for c in columns],
        "states": states,
        "taken": [list(edge) for edge in sorted(taken_edges(state))],
        "visits": visits,
        "titles": {
            s: stage_title(table, s, states[s], visits.get(s, 0), stage_words(state, s))
            for s in [*table.ids(), DONE]
        },
        "title": title,
        "label": describe(table, states, visits, title),
    }


def taken_edges(state: Any | None) -> set[tuple[str, str]]:
    """Transitions the project has made, `(from, to)`."""
    if state is None:
        return set()
    return {(h["from"], h["to"]) for h in state.history if h.get("from")}


def stage_title(table: StageTable, stage_id: str, state: str, visits: int, spent: str) -> str:
    """A stage's hover title: what it is and does, how often it was visited, what it spent."""
    lines = [stage_id]
    if stage_id != DONE:
        s = table[stage_id]
        gate = ", a gate: waits for approval in manual mode" if s.approval else ""
        lines = [
            f"{stage_id} ({state}{gate})",
            f"outputs: {', '.join(s.outputs) or 'none'}",
            f"next: {s.next}",
            f"allowed: {', '.join(s.allowed)}",
        ]
        if s.max_visits:
            lines.append(f"max visits: {s.max_visits}")
        if s.agent is not None:
            program = table.agents[s.agent].command[0]
            lines.append(f"worked by the coding agent '{s.agent}' ({program})")
    if visits > 1:
        lines.append(f"visited {visits} times")
    if spent:
        lines.append(spent)
    return "\n".join(lines)


def describe(
    table: StageTable, states: dict[str, StageState], visits: dict[str, int], title: str
) -> str:
    """The graph in words, for a screen reader: the current stage, what was visited."""
    ids = [*table.ids(), DONE]
    current = [s for s in ids if states.get(s) in ("current", "waiting", "failed", "done")]
    seen = [
        s + (f" ({visits[s]} visits)" if visits.get(s, 0) > 1 else "")
        for s in ids
        if states.get(s) == "visited"
    ]
    words = [f"{title}: {len(ids)} stages"]
    if current:
        words.append(f"now at {current[0]} ({states[current[0]]})")
    if seen:
        words.append("visited " + ", ".join(seen))
    agents = [f"{s} by {table[s].agent}" for s in table.ids() if table[s].agent is not None]
    if agents:
        words.append("worked by coding agents: " + ", ".join(agents))
    return "; ".join(words)


def stage_words(state: Any | None, stage: str) -> str:
    """A stage's tokens and cost over its visits, or '' (nothing spent, or no project)."""
    if state is None or stage == DONE:
        return ""
    used = budgets.stage_usage(state, stage)
    return spend_words(used) if used.model_calls else ""


def spend_words(used: Usage) -> str:
    """`12,345 tok · $0.0123`, marked `(est.)` when the tokens were estimated."""
    if used.unreported and used.unreported == used.model_calls:
        return "usage not reported"  # a coding agent's turns: never shown as zero
    untold = f" ({used.unreported} not reported)" if used.unreported else ""
    est = " (est.)" if used.estimated else ""
    return f"{used.tokens:,} tok{est}{untold} · {dollars(used.cost)}"
