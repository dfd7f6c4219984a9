"""Layer 1's record of a rewind: the `PROCESS.md` line and the `stage.rewound` event.

The files and the state are put back by `app.history.rewind` (under the workspace lock, with
no run alive); what the project says about it afterwards is layer 1's, like every other move
of the stage machine.
"""

from __future__ import annotations

import time
from typing import Any

from lightscientist_jupyter.controller import process_log
from lightscientist_jupyter.controller.process_log import ProcessEntry
from lightscientist_jupyter.events import EventLog
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace


def record_rewind(
    ws: Workspace, stage: str, ref: str, note: str, message: str, data: dict[str, Any]
) -> None:
    """Append the rewind's `PROCESS.md` entry (`note`) and emit `stage.rewound`."""
    now = time.time()
    process_log.append_entry(ws, ProcessEntry(f"rewind:{now:.6f}", stage, now, note, (), None))
    with EventLog(ws.events_file) as bus:
        bus.emit(EventType.STAGE_REWOUND, message, stage=stage, task_id=ref, data=data)
