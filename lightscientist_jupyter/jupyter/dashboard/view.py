"""The live dashboard of one project: status line, stage graph, gate panel, workers, events.

Threads, and who touches what:

- Worker threads only reach `EventBuffer.push` (through the `EventBus`): an append under a
  lock. Nothing else of the dashboard runs on them, and nothing prints.
- One flusher thread per dashboard calls `tick` every ~100 ms: it drains the buffer (or, for
  a project run by another process, reads the new lines of `events.jsonl`), folds the
  batch into the worker rows, hands it to the event stream as one message, and redraws the
  graph, the status line and the gate panel only when what they show has changed.
- The kernel's main thread runs button callbacks (O(1): one reply) and `refresh()`.
`tick` and `refresh` hold the dashboard's lock, so the widgets see one writer at a time.

The dashboard reads its project through a small `Source` (the API's `Run` for a run in
this kernel, its `ProjectView` for one on disk), and displays as the widget plus a static
fallback (SVG and text) for saved notebooks and front ends without widgets, plus a reference
to the project from which the JupyterLab extension draws it once the widget is gone.
"""

from __future__ import annotations

import html
import threading
import time
from typing import Any, Protocol

import ipywidgets as w

from lightscientist_jupyter.app.commands import Sent
from lightscientist_jupyter.app.sandboxing import status_info
from lightscientist_jupyter.controller import ProjectState, StageTable
from lightscientist_jupyter.events import format_line, printable, read_tail
from lightscientist_jupyter.events.buffer import EventBuffer
from lightscientist_jupyter.jupyter import progress
from lightscientist_jupyter.jupyter.dashboard import (
    budget_card,
    graph,
    status_line,
    timeline,
    workers,
)
from lightscientist_jupyter.jupyter.dashboard.batching import FLUSH_INTERVAL_S, Flusher
from lightscientist_jupyter.jupyter.dashboard.gate import GatePanel
from lightscientist_jupyter.jupyter.dashboard.graph_card import StageGraph
from lightscientist_jupyter.jupyter.dashboard.handoff_card import HandoffCard
from lightscientist_jupyter.jupyter.dashboard.run_controls import RunControls, run_view
from lightscientist_jupyter.jupyter.dashboard.tree_card import TreeCard
from lightscientist_jupyter.jupyter.dashboard.widgets import EventStream
from lightscientist_jupyter.jupyter.graph_view import graph_view, stage_words
from lightscientist_jupyter.vocab import FINAL_PROJECT_STATUSES, DecisionKind, ReplySource
from lightscientist_jupyter.workspace import Workspace

PROJECT_MIME = "application/vnd.lightscientist.project+json"
"""A dashboard's reference to its project, in its output (read by the JupyterLab extension)."""

BACKFILL_MAX = 50_000
"""Events read from the log when a dashboard opens (for the worker counters and the list)."""
WORKERS_EVERY_S = 1.0
STATUS_EVERY_S = 1.0
HOLDER_EVERY_S = 1.0


class Source(Protocol):
    """What a dashboard needs from its project."""

    workspace: Workspace

    @property
    def live(self) -> bool:
        """True when events arrive through the dashboard's buffer (a run in this kernel)."""

    def state(self) -> ProjectState | None: ...

    def table(self) -> StageTable: ...

    def model_spec(self) -> str: ...

    def started_at(self) -> float | None: ...

    def running(self) -> bool:
        """Whether the project is being run now (here or by another process)."""

    def reply(
        self,
        approve: bool,
        comment: str = "",
        to: str | None = None,
        *,
        decision_id: str | None = None,
        source: ReplySource = ReplySource.API,
        resume_if_idle: bool = False,
        budget: dict[str, float] | None = None,
    ) -> Sent:
        """Answers the pending decision (`api.ProjectView.reply`)."""


class Dashboard:
    """The widgets of one project, kept up to date by one flusher thread."""

    def __init__(
        self,
        source: Source,
        buffer: EventBuffer | None = None,
        *,
        interval: float = FLUSH_INTERVAL_S,
        start: bool = True,
    ):
        self.source = source
        self.workspace = source.workspace
        self.table = source.table()
        self.buffer = buffer if buffer is not None else EventBuffer()
        self._lock = threading.RLock()
        self._rows: dict[str, workers.WorkerRow] = {}
        self._last_seq = 0
        self._shown: dict[str, Any] = {}
        self._workers_at = 0.0
        self._status_at = 0.0
        self._workers_dirty = False
        self._holder_at = 0.0
        self._running = True
        self._was_live = False
        self.state: ProjectState | None = None
        self.finished = False

        self.status_line = w.HTML()
        self.graph = StageGraph()
        self.gate = GatePanel(self._reply, self.table, self.workspace.root, self._lock)
        self.controls = RunControls(
            self.workspace, resume=status_line.resume_command(self.workspace.root)
        )
        self.timeline = w.HTML()
        self.tree = TreeCard(self.workspace, self.table)  # a search stage's tree, if any
        self.handoff = HandoffCard(self.workspace, self.table, self._lock)
        self.budget = budget_card.BudgetActions(source)  # a pending budget decision's card
        self.spend = budget_card.WorkerSpend(self.workspace.state_dir)  # the workers' costs
        self.workers = w.HTML()
        self.events = EventStream()
        self.problems = w.HTML()
        self.widget = w.VBox(
            [
                self.status_line,
                self.controls,
                self.graph,
                self.tree.widget,
                self.gate.widget,
                self.budget,
                self.handoff.widget,
                self.timeline,
                w.HTML("<b>Workers</b>"),
                self.workers,
                w.HTML("<b>Events</b>"),
                self.events,
                self.problems,
            ],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("lightscientist-dashboard")
        self._backfill()
        self.refresh()
        self.flusher = Flusher(
            self.tick,
            interval=interval,
            name=f"lightscientist-dashboard:{self.workspace.root.name}",
        )
        if start:
            self.flusher.start()

    # ---------------------------------------------------------------- updating

    def _backfill(self) -> None:
        raws = read_tail(self.workspace.events_file, BACKFILL_MAX)
        for raw in raws:
            workers.fold(self._rows, raw)
        if raws:
            self._last_seq = raws[-1]["seq"]
            self.events.load(raws[-self.events.maxlen :], total=self._last_seq)
        self._workers_dirty = True

    def _take_events(self) -> tuple[list[dict[str, Any]], int]:
        """New events: from the buffer while the run lives in this kernel, else (also) from
        the log on disk; the writer logs each event before the buffer gets it, so `seq`
        tells the two apart."""
        batch, dropped = self.buffer.drain()
        batch = [raw for raw in batch if raw["seq"] > self._last_seq]
        if not self.source.live:
            after = batch[-1]["seq"] if batch else self._last_seq
            batch += read_tail(self.workspace.events_file, 10_000, after=after)
        return batch, dropped

    def tick(self) -> bool:
        """One flush; returns False once the project has ended and everything is shown."""
        with self._lock:
            batch, dropped = self._take_events()
            if batch:
                self._last_seq = batch[-1]["seq"]
                for raw in batch:
                    self._workers_dirty |= workers.fold(self._rows, raw)
            self.events.push(batch, dropped)
            self.tree.update(batch)
            self._update(force_workers=False)
            return self._keep_going(bool(batch))

    def refresh(self) -> None:
        """Redraw from the current state now (on the calling thread)."""
        with self._lock:
            self.tree.update((), force=True)
            self._update(force_workers=True)

    def _keep_going(self, had_events: bool) -> bool:
        now = time.monotonic()
        live = self.source.live
        # asked on every tick while the run lives here, and on the first tick after it ended
        if live or self._was_live or now - self._holder_at >= HOLDER_EVERY_S:
            self._holder_at = now
            self._running = self.source.running()
        self._was_live = live
        state = self.state
        ended = state is not None and state.status in FINAL_PROJECT_STATUSES and not self._running
        if ended and not had_events and not len(self.buffer):
            self.events.sync_tail(quiet=True, force=True)
            self._update(force_workers=True)
            self.finished = True
            return False
        return True

    def _update(self, *, force_workers: bool) -> None:
        starting = getattr(self.source, "starting", False)  # a run opening its project
        state = None if starting else self.source.state()
        self.state = state
        if state is not None:
            spent = stage_words(state, state.stage)  # in the stage's hover title
            graph_key = (state.stage, state.status, len(state.history), spent)
            if self._shown.get("graph") != graph_key:
                self._shown["graph"] = graph_key
                self.graph.view = dict(graph_view(self.table, state))
            if self._shown.get("decisions") != len(state.decisions):
                self._shown["decisions"] = len(state.decisions)
                self.timeline.value = timeline.render(state.decisions)
            pending = state.pending
            self.handoff.update(state)
            self.budget.show(state)  # its own card: the gate panel stays for the others
            if pending is not None and pending.kind not in (DecisionKind.HANDOFF, "budget"):
                self.gate.show(pending, state)
            elif self.gate.pending is not None:
                self.gate.settle(state)
            ended = state.status in FINAL_PROJECT_STATUSES
            if ended != self._shown.get("ended"):
                self._shown["ended"] = ended
                if ended:  # nothing asks any more: the decisions are the timeline's
                    self.gate.close()
        elif self._shown.get("graph") is None:
            self._shown["graph"] = ()
            self.graph.view = dict(graph_view(self.table, None))
        now = time.monotonic()
        if self._workers_dirty and (force_workers or now - self._workers_at >= WORKERS_EVERY_S):
            self._workers_at = now
            self._workers_dirty = False
            self.workers.value = workers.render_html(self._rows, spend=self.spend.words())
        # the line shows a clock and a count: redrawn at most once a second, unless the
        # stage, status, pending decision or runner changed
        key = (
            (state.stage, state.status, state.pending is not None, self.source.live, self._running)
            if state
            else None
        )
        if key != self._shown.get("status") or now - self._status_at >= STATUS_EVERY_S:
            status = self.status_html()
            if self.status_line.value != status:
                self.status_line.value = status
                self._status_at = now
            runner = "here" if self.source.live else ("other" if self._running else "none")
            self.controls.run = dict(run_view(state, self.table, runner) or {})
            self._shown["status"] = key
        errors = list(self.flusher.errors) if hasattr(self, "flusher") else []
        problem = (
            "<div class='ls-err'>dashboard: " + html.escape(errors[-1]) + "</div>" if errors else ""
        )
        if self.problems.value != problem:
            self.problems.value = problem

    def _reply(self, approve: bool, comment: str, to: str | None, decision_id: str) -> str:
        sent = self.source.reply(
            approve,
            comment,
            to,
            decision_id=decision_id,
            source=ReplySource.WIDGET,
            resume_if_idle=True,
        )
        return sent.message

    def close(self) -> None:
        """Stop the flusher (the widgets stay as they are)."""
        self.flusher.stop()

    # ---------------------------------------------------------------- text

    def status_html(self) -> str:
        state = self.state
        if state is None:
            where = f"<code>{html.escape(str(self.workspace.root))}</code>"
            if getattr(self.source, "starting", False):  # until the run's first event
                goal = html.escape(str(getattr(self.source, "goal", "")))
                return f"<div><b>LightScientist</b> · {goal}</div><div>starting in {where}…</div>"
            return f"<div>no project in {where}</div>"
        start = self.source.started_at() or state.created_at
        end = state.updated_at if state.status in FINAL_PROJECT_STATUSES else time.time()
        runner = (
            "running in this kernel"
            if self.source.live and self._running
            else ("run by another process" if self._running else "not running")
        )
        said = state.reason and state.status in ("failed", "cancelled", "paused")
        return status_line.render(
            goal=state.goal,
            status=state.status,
            stage=state.stage,
            visit=state.visit,
            runner=runner,
            mode=state.mode,
            model=self.source.model_spec(),
            elapsed=progress.duration(max(0.0, end - start)),
            events=self.events.received,
            root=self.workspace.root,
            waiting=state.pending.question if state.pending is not None else "",
            reason=(state.reason or "") if said else "",
            warning=status_info(self.workspace, state.settings)["warning"] or "",
            usage=budget_card.usage_words(state),
        )

    def text(self, events: int = 12) -> str:
        """A plain-text snapshot: status, pending decision, workers, the newest events."""
        state = self.state
        if state is None and getattr(self.source, "starting", False):
            goal = printable(getattr(self.source, "goal", ""))
            return f"LightScientist · {goal}\nstarting in {self.workspace.root}"
        if state is None:
            return f"no LightScientist project in {self.workspace.root}"
        lines = [
            f"LightScientist · {printable(state.goal)}",
            f"{state.status} at {state.stage} · mode {state.mode} · "
            f"model {self.source.model_spec()} · {self.workspace.root}",
        ]
        if state.pending is not None:
            lines.append(
                f"waiting: {printable(state.pending.question)} "
                "(reply with %lightscientist reply y|n)"
            )
        if state.reason and state.status in ("failed", "cancelled", "paused"):
            lines.append(f"reason: {printable(state.reason)}")
        visited = [h["to"] for h in state.history]
        lines.append("path: " + " → ".join(visited))
        for row in sorted(self._rows.values(), key=lambda r: r.id):
            lines.append(
                f"  {row.id:<11} {row.stage:<20} {row.status:<10} "
                f"model {row.model_calls:>3} tools {row.tool_calls:>3}"
            )
        tail = list(self.events.events)[-events:]
        lines += [format_line({**e, "worker_id": e["worker"]}) for e in tail]
        return "\n".join(lines)

    def static_html(self, events: int = 15) -> str:
        """The fallback a saved notebook keeps: status, graph SVG, workers, newest events."""
        with self._lock:
            tail = list(self.events.events)[-events:]
            rows = workers.render_html(self._rows, spend=self.spend.words())
            svg = graph.render_state(self.table, self.state)
            status = self.status_html()
        log = "\n".join(format_line({**e, "worker_id": e["worker"]}) for e in tail)
        return (
            f'{graph.style_tag()}<div class="lightscientist-static">{status}'
            f"{graph.scroll_box(svg)}"
            f"<div><b>Workers</b>{rows}</div><div><b>Events</b> (newest {len(tail)})"
            f'<pre style="font-size:11px;max-height:240px;overflow:auto">'
            f"{html.escape(log)}</pre></div></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        self.refresh()  # a dashboard displayed again shows the state of now
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/html"] = self.static_html()
        data["text/plain"] = self.text()
        # the JupyterLab extension draws the project from the server when the widget cannot
        # be (a page reloaded after a kernel restart): labextension/src/reference.ts
        data[PROJECT_MIME] = {"root": str(self.workspace.root)}
        return data
