"""`ProjectView`: a project read from its workspace on disk, whoever runs it.

A view works when this kernel runs the project, when `lightscientist` runs it in a terminal,
and when nobody does; its replies go to the inbox exactly as `lightscientist reply` writes
them (see `app.commands`). Nothing here displays anything: the notebook's dashboard for a view
is made by `lightscientist_jupyter.jupyter.dashboard.display`. Nothing here starts a run
either: a view that may resume an idle project is handed a `Resumer` by whoever made it
(`api.running`).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lightscientist_jupyter._fs import NO_LINKS
from lightscientist_jupyter.api.frames import events_frame, workers_frame
from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app.commands import Route, Sent
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import (
    ProjectState,
    ResearchController,
    StageTable,
    load_table,
)
from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.events import make_filter, read_tail
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:
    import pandas as pd


class Resumer(Protocol):
    """Runs a project nobody runs in this kernel (with the session's defaults) and hands back
    its controller."""

    def __call__(self, root: Path) -> ResearchController: ...


class ProjectView:
    """A project read from its workspace; replies go to its inbox.

    Args:
        workspace: the project's workspace.
        resumer: how a reply with `resume_if_idle` runs a project nobody runs (`api.open_project`
            gives `api.resume`); without one such a reply is queued for the next run.
    """

    @property
    def live(self) -> bool:
        """True for a live run of this process (its events come from a buffer, not the log)."""
        return False

    def __init__(self, workspace: Workspace, *, resumer: Resumer | None = None):
        self.workspace = workspace
        self._resumer = resumer
        self._cached: tuple[int, ProjectState] | None = None
        self._table: StageTable | None = None

    # ---------------------------------------------------------------- state

    def state(self) -> ProjectState:
        """The project's state (re-read only when `state.json` changed)."""
        found = NO_LINKS.lstat(self.workspace.state_file)
        mtime = -1 if found is None else found.st_mtime_ns
        cached = self._cached
        if cached is None or cached[0] != mtime:
            cached = self._cached = (mtime, load_state(self.workspace.state_file))
        return cached[1]

    def table(self) -> StageTable:
        if self._table is None:
            self._table = load_table(self.state().stages_file)
        return self._table

    def model_spec(self) -> str:
        return str(self.state().settings.get("model") or "offline")

    def started_at(self) -> float | None:
        return None

    def running(self) -> bool:
        """Whether some process holds the workspace's run lock."""
        return read_holder(self.workspace) is not None

    def status(self) -> dict[str, Any]:
        info = commands.status(self.workspace)
        info["running_here"] = False
        return info

    def events(
        self,
        tail: int = 20,
        layer: int | None = None,
        type: str | None = None,
        worker: str | None = None,
    ) -> pd.DataFrame:
        """The last `tail` events (oldest first), optionally only one layer, type (or prefix
        ending in '.'), or worker."""
        if tail < 0:
            raise BadInput("tail must be 0 or more")
        if layer is not None and layer not in (1, 2, 3):
            raise BadInput(f"layer must be 1, 2 or 3, not {layer}")
        keep = make_filter(layer=layer, type=type, worker_id=worker)
        return events_frame(read_tail(self.workspace.events_file, tail, keep))

    def workers(self) -> pd.DataFrame:
        return workers_frame(commands.worker_records(self.workspace))

    @property
    def files(self) -> Beneath:
        """The workspace's files, read and written beneath its root through no link (a
        path a person or a model gives is checked here, see `beneath`)."""
        return Beneath(self.workspace.root)

    def path(self, rel: str | os.PathLike[str]) -> Path:
        """A path of the workspace (`rel` is relative to its root, `/x` is its `x`; a path
        that leaves it is refused: `beneath.PathRefused`)."""
        return self.files.path(rel)

    # ---------------------------------------------------------------- replying

    def controller_here(self) -> ResearchController | None:
        """The controller of a live run of this process (None: the project is on disk)."""
        return None

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
        """Answer the pending decision: at once when this kernel runs the project (exactly
        one transition per decision; a second reply to the same `decision_id` changes
        nothing), through the inbox when another process runs it, else queued for the next
        run (a later reply to the decision replaces it). At a budget decision, `budget`
        holds the raised limits (`{"tokens": 2_000_000}`).

        With `resume_if_idle`, a project nobody runs is resumed in this kernel (`api.resume`,
        with the session's defaults) and the reply takes effect in that run once the project
        is open; a project that cannot be opened raises, and nothing is queued.
        """
        resumer = self._resumer
        resumed: list[ResearchController] = []

        def take() -> ResearchController:
            assert resumer is not None
            resumed.append(resumer(self.workspace.root))
            return resumed[-1]

        sent = commands.submit_reply(
            self.workspace,
            approve,
            comment,
            to,
            decision_id=decision_id,
            source=source,
            live=self.controller_here(),
            take=take if resume_if_idle and resumer is not None else None,
            budget=budget,
        )
        if sent.route is Route.QUEUED:
            message = (
                "reply queued; it is applied when the project is resumed (`%lightscientist resume`)"
            )
            return dataclasses.replace(sent, message=message)
        if resumed:
            return dataclasses.replace(
                sent, message=f"{sent.message}; the project resumes in this kernel"
            )
        return sent

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.workspace.root}>"
