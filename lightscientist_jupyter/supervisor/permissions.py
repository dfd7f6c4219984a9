"""A coding agent's permission requests under `permissions = "ask"`: the researcher's
decisions in manual mode, the supervisor agent's in auto mode.

The agent's worker waits with the request on its record (`values.permission`: the tool
call, an edit's texts, the agent's own options), and its `worker_waiting` event carries it.
In manual mode layer 2 does not hand that event to the supervisor agent: it asks the
researcher (`request_user_decision` with the request, which every screen draws as a card
with the agent's options), and when the answer comes (a `user_answered` event carrying the
request) it resumes the waiting worker with it — the option the comment names, else yes or
no (`PermissionRequest.pick`). The stage goes on meanwhile, as for any project-level
question. In auto mode the event is the supervisor agent's, as any waiting worker's: it
answers with one of the options (`WorkerControl.resume_worker` logs which).
"""

from __future__ import annotations

from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.permission import permission_of
from lightscientist_jupyter.values.task import StageHost
from lightscientist_jupyter.vocab import Mode, SchedulingKind, WorkerStatus


class PermissionDesk:
    """Puts agents' permission requests to the researcher, and their answers to the agents."""

    def __init__(self, host: StageHost, control: WorkerControl):
        self.host = host
        self.control = control

    def handled(self, stage: SupervisedStage, event: SchedulingEvent) -> bool:
        """Whether `event` was an agent's permission request (now the researcher's) or
        the researcher's answer to one (now the agent's), not the supervisor agent's to
        decide. Called on the loop's thread, holding no lock: asking takes layer 1's."""
        if event.kind == SchedulingKind.WORKER_WAITING:
            permission = permission_of(event.data.get("permission"))
            if permission is None or self.host.mode == Mode.AUTO:
                return False
            if self.host.pending_question == permission.question:
                return True  # asked before a crash cut its decision short: it is pending
            try:
                self.host.request_user_decision(
                    permission.question, [o.name for o in permission.options], permission
                )
            except ControllerError:
                # another decision is pending (another agent's request): the researcher has
                # one at a time, so this one is the supervisor agent's, as any worker's
                return False
            return True
        return self._answered(stage, event)

    def _answered(self, stage: SupervisedStage, event: SchedulingEvent) -> bool:
        """Resume the worker whose permission request `event` answers; whether it did."""
        if event.kind != SchedulingKind.USER_ANSWERED:
            return False
        permission = permission_of(event.data.get("permission"))
        if permission is None:
            return False
        with stage.lock:
            waiting = [
                r.id
                for r in stage.state.records.values()
                if r.status == WorkerStatus.WAITING and r.permission == permission
            ]
        comment = str(event.data.get("comment") or "").strip()
        named = next((o for o in permission.options if o.name.lower() == comment.lower()), None)
        answer = named.name if named else ("yes" if event.data.get("approve") else "no")
        for worker_id in waiting:
            self.control.resume(worker_id, answer, None)
        return True
