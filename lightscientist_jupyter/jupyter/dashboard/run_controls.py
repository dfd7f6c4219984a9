"""The dashboard's run controls: progress, Cancel, Pause after this stage, Re-run this stage,
Resume — and the banner with Resume when the kernel behind the dashboard is gone.

Like the gate card (`gate_actions`), a click goes from the browser through the server
extension (`POST <base>/lightscientist/control`, `server.control`), so it works after a page
reload and with the kernel gone; only where no server extension answers does it go over the
comm, to the same `server.control.apply`. The kernel side only sets `run` (what the project
is doing, from the dashboard's state) and `resume` (the magic for a new kernel); the front
end (`labextension/src/widgets/controls.ts`) draws them.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

import anywidget
import traitlets

from lightscientist_jupyter.app.controls import applicable
from lightscientist_jupyter.controller import ProjectState, StageTable
from lightscientist_jupyter.jupyter import progress
from lightscientist_jupyter.jupyter.dashboard.widgets import THEME_CSS, esm
from lightscientist_jupyter.jupyter.server.answers import RunActions
from lightscientist_jupyter.jupyter.server.control import apply
from lightscientist_jupyter.jupyter.server.paths import Refused
from lightscientist_jupyter.vocab import CancelSource
from lightscientist_jupyter.workspace import Workspace


class RunView(TypedDict):
    """Where the run is, and the controls that apply (`IRunView` in
    `labextension/src/widgets/views.ts`)."""

    status: str
    stage: str
    runner: str
    """Who runs the project: `here`, `other`, `none`."""
    pause_after: str | None
    actions: RunActions
    position: list[int] | None
    """`[n, m]`: stage n of m; None off the table's main line."""
    stage_time: str
    times: list[list[Any]]
    """`[stage, time, visits]` for each stage visited."""


def run_view(state: ProjectState | None, table: StageTable, runner: str) -> RunView | None:
    """What the controls show: status, stage, who runs it (`here`, `other`, `none`), the
    stage a pause was asked after, the controls that apply (`app.controls.applicable`),
    "stage N of M", the time in this stage and per stage (`[stage, time, visits]`)."""
    if state is None:
        return None
    shown = progress.view(state, table)
    pause_after = state.settings.get("pause_after")  # a pause request (app/until.py)
    return {
        "status": str(state.status),
        "stage": state.stage,
        "runner": runner,
        "pause_after": pause_after,
        "actions": cast(
            RunActions,
            applicable(str(state.status), running=runner != "none", pause_after=pause_after),
        ),
        "position": shown["position"],
        "stage_time": progress.duration(shown["current_s"]),
        "times": [
            [row["stage"], progress.duration(row["seconds"]), row["visits"]]
            for row in shown["stages"]
        ],
    }


class RunControls(anywidget.AnyWidget):
    """One row of run controls under the status line, and the not-live banner."""

    _esm = esm("controls")
    _css = THEME_CSS

    root = traitlets.Unicode("").tag(sync=True)
    """The workspace, an absolute path (the browser makes it relative to the server root)."""
    run = traitlets.Dict().tag(sync=True)
    """`run_view(...)`; `{}` while there is no project."""
    resume = traitlets.Unicode("").tag(sync=True)
    """The magic that continues this project from a new kernel."""

    def __init__(self, workspace: Workspace, **kwargs: Any):
        super().__init__(root=str(workspace.root), **kwargs)
        self.workspace = workspace
        self.on_msg(self._message)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The comm fallback: the same operation as the server's endpoint."""
        if not isinstance(content, dict) or content.get("kind") != "control":
            return
        try:
            done = apply(
                self.workspace,
                str(content.get("action")),
                content.get("stage") or None,
                source=CancelSource.DASHBOARD,
            )
            self.send({"kind": "outcome", "ok": True, "text": done["message"]})
        except Refused as exc:
            self.send({"kind": "outcome", "ok": False, "text": exc.message})
        except Exception as exc:  # the row must hear back, whatever went wrong
            self.send({"kind": "outcome", "ok": False, "text": f"not done: {exc}"})
