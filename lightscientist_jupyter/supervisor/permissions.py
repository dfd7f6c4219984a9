"""A coding agent's permission requests under `permissions = "ask"`, as the researcher's
decisions.

The agent's worker waits with its question (`values.agents.permission_question`: the tool
call and the agent's own options). Layer 2 does not hand that to the supervisor agent: it
asks the researcher (`request_user_decision`, with the agent's options), and when the answer
comes (a `user_answered` event of that question) it resumes the waiting worker with it — the
option the comment names, else the first that allows for a yes and the first that rejects
for a no (`runtime.acp.worker`). The stage goes on meanwhile, as for any project-level
question.
"""

from __future__ import annotations

from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.agents import options_of
from lightscientist_jupyter.values.task import StageHost
from lightscientist_jupyter.vocab import SchedulingKind, WorkerStatus


class PermissionDesk:
    """Puts agents' permission questions to the researcher, and their answers to the agents."""

    def __init__(self, host: StageHost, control: WorkerControl):
        self.host = host
        self.control = control

    def handled(self, stage: SupervisedStage, event: SchedulingEvent) -> bool:
        """Whether `event` was an agent's permission question (now the researcher's) or
        the researcher's answer to one (now the agent's), not the supervisor agent's to
        decide. Called on the loop's thread, holding no lock: asking takes layer 1's."""
        if event.kind == SchedulingKind.WORKER_WAITING:
            question = str(event.data.get("question") or "")
            options = options_of(question)
            if options is None:
                return False
            if self.host.pending_question == question.strip():
                return True  # asked before a crash cut its decision short: it is pending
            try:
                self.host.request_user_decision(question, options)
            except ControllerError:
                # another decision is pending (another agent's question): the researcher has
                # one at a time, so this one is the supervisor agent's, as any worker's
                return False
            return True
        return self._answered(stage, event)

    def _answered(self, stage: SupervisedStage, event: SchedulingEvent) -> bool:
        """Resume the worker whose permission question `event` answers; whether it did."""
        if event.kind != SchedulingKind.USER_ANSWERED:
            return False
        question = str(event.data.get("question") or "")
        options = options_of(question)
        if options is None:
            return False
        with stage.lock:
            waiting = [
                r.id
                for r in stage.state.records.values()
                if r.status == WorkerStatus.WAITING and r.question == question
            ]
        comment = str(event.data.get("comment") or "").strip()
        named = next((o for o in options if o.lower() == comment.lower()), None)
        answer = named or ("yes" if event.data.get("approve") else "no")
        for worker_id in waiting:
            self.control.resume(worker_id, answer, None)
        return True
