"""The project's closed vocabularies, one name for one idea, shared by every layer.

Each is a `StrEnum`: a member *is* its string (`ProjectStatus.DONE == "done"`), so values
written to `state.json`, the event log or a checkpoint stay plain JSON strings, and code that
compares against the string keeps working. Convert with `str(member)` before handing a value
to LangGraph state or a tool result (the checkpoint serializer stores plain strings only).

Names users already read (`state.json`, `status --json`, the event log; README, "Command
line" and "The workspace") are kept as they are: the project waits as `waiting_user`, a
worker as `waiting`; a project ends `done`, a worker `completed`.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ProjectStatus(StrEnum):
    """Where a project stands (layer 1, `state.json` and `status --json`)."""

    RUNNING = "running"
    WAITING_USER = "waiting_user"
    """A human decision is pending (a gate or a question)."""
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STOPPED = "stopped"
    """The run stopped on a fault outside the project (the disk was full or read-only);
    `lightscientist resume` continues it where it stopped."""
    PAUSED = "paused"
    """The run stopped after the stage named by `--until`; `lightscientist resume` goes on."""
    INTERRUPTED = "interrupted"
    """Shown (by `status`) for a project whose state says `running` while no process runs
    it (its runner was killed or stopped, or it was rewound or forked): `lightscientist
    resume` continues it. Never written to disk."""
    STARTING = "starting"
    """Shown (by `status` and the project list) for a project a kernel has started and is
    still creating on its run's thread (`.lightscientist/starting.json`, while its process
    lives): its state is not written yet. Never written to `state.json`."""


STORED_PROJECT_STATUSES: tuple[ProjectStatus, ...] = tuple(
    s for s in ProjectStatus if s not in (ProjectStatus.INTERRUPTED, ProjectStatus.STARTING)
)
"""The statuses `state.json` may hold."""

FINAL_PROJECT_STATUSES: frozenset[ProjectStatus] = frozenset(
    {ProjectStatus.DONE, ProjectStatus.FAILED, ProjectStatus.CANCELLED}
)
"""Statuses a project does not leave by running on."""


class Mode(StrEnum):
    """How gates pass: by themselves (`auto`) or by a human reply (`manual`)."""

    AUTO = "auto"
    MANUAL = "manual"


class CancelSource(StrEnum):
    """The door a cancel of the project came through; its reason names it ("cancelled from
    the panel")."""

    COMMAND_LINE = "command line"
    NOTEBOOK = "notebook"
    """The `%lightscientist` magic and the Python API."""
    PANEL = "panel"
    """JupyterLab's side panel (the server extension)."""
    DASHBOARD = "dashboard"
    """The notebook's dashboard (through the server extension or its kernel)."""


class ReplySource(StrEnum):
    """The door a human step came through: a reply to a decision, a hand-over step (take,
    deliver, give-back), a rewind or a re-run. It is recorded with the step (the decision's
    `source` in `state.json`, "via widget" in PROCESS.md, a recording's replies)."""

    CLI = "cli"
    """The command line (`lightscientist reply`, `take`, `rewind`…)."""
    MAGIC = "magic"
    """The `%lightscientist` magic."""
    API = "api"
    """The Python API (`lightscientist_jupyter.api`); also a step that names no door."""
    WIDGET = "widget"
    """A card of the notebook's dashboard, answered in its kernel (the comm)."""
    PANEL = "panel"
    """JupyterLab's side panel (the server extension)."""
    DASHBOARD = "dashboard"
    """The notebook's dashboard, through the server extension."""

    @classmethod
    def read(cls, value: object) -> ReplySource:
        """The source of a step read back from a file another process wrote (a reply or a
        hand-over step in the inbox, a recorded reply). That process may be of another
        version, or the file written by hand: a value outside the vocabulary, or none, does
        not stop the step — it is recorded as `API`, the door of a step that names none."""
        try:
            return cls(value) if isinstance(value, str) else cls.API
        except ValueError:
            return cls.API


class InboxCommand(StrEnum):
    """A command queued in the inbox for the process that runs the project
    (`controller.inbox.write_command`, applied by `app.controls.apply_command`)."""

    CANCEL = "cancel"
    """Cancel one worker (`worker_id`) or the whole run; `source` is a `CancelSource`."""
    HANDOFF = "handoff"
    """A hand-over step (take, deliver, give-back) from another process, which waits for
    its receipt."""
    UNTIL = "until"
    """Pause once `stage` finishes (the `--until` of a run, set while it runs)."""
    STOP = "stop"
    """Stop at the next step boundary, the workers resumable (before a re-run)."""


class HandoffStep(StrEnum):
    """A step of handing a stage to the researcher and back (`app.handoff`; an inbox
    `handoff` command's `step`)."""

    TAKE = "take"
    """The researcher takes the stage (`lightscientist take`)."""
    DELIVER = "deliver"
    """The researcher delivers the stage's outputs, with a summary."""
    GIVE_BACK = "give-back"
    """The researcher gives the stage back to the workers unfinished."""


class DecisionKind(StrEnum):
    """What a pending human decision is about."""

    GATE = "gate"
    """Approve or reject a gate stage's outputs."""
    QUESTION = "question"
    """A project-level question from the supervisor (`request_user_decision`)."""
    BUDGET = "budget"
    """A budget is spent: raise it (`reply y --budget …`) or end the project (`reply n`)."""
    HANDOFF = "handoff"
    """The researcher does the stage by hand (`take`); `deliver` or `give-back` ends it."""


class StageOutcome(StrEnum):
    """How layer 2 stopped working on a stage (`StageResult.status`)."""

    FINISHED = "finished"
    """Layer 1 accepted the finish and moved the project."""
    FAILED = "failed"
    WAITING_USER = "waiting_user"
    STOPPED = "stopped"
    """Stopped on request; the workers stay resumable."""


class JobStatus(StrEnum):
    """A job's state (see `runtime.jobs.manager`)."""

    RUNNING = "running"
    """Submitted and not ended (for Ray: also pending, waiting for resources)."""
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"
    """Stopped by a cancel of its worker or of the project."""
    TIMED_OUT = "timed_out"
    """Stopped at its wall-time limit."""
    LOST = "lost"
    """Its process ended with the run that started it, leaving no exit status."""


FINAL_JOB_STATUSES = frozenset(s for s in JobStatus if s != JobStatus.RUNNING)


class NodeKind(StrEnum):
    """What a node of a search stage's tree is (`experiment/tree.json`, `search.node` events)."""

    DRAFT = "draft"
    """A fresh variant written from the plan (the tree's roots)."""
    IMPROVE = "improve"
    """A change to an ok node (the best one so far), meant to better its metric."""
    DEBUG = "debug"
    """A fix of a failed node."""


class NodeStatus(StrEnum):
    """Where a node of a search tree stands."""

    RUNNING = "running"
    OK = "ok"
    """Its job succeeded and its result file gave the metric."""
    FAILED = "failed"
    """Its job failed, or its result file gave no metric."""
    CANCELLED = "cancelled"
    """Stopped by a cancel (or left running by a run that was killed); never resumed."""


class WorkerStatus(StrEnum):
    """A layer-3 worker session's state (README, "What happens in a run", step 3)."""

    RUNNING = "running"
    WAITING = "waiting"
    """Needs outside input now (a LangGraph interrupt)."""
    BACKGROUND = "background"
    """Suspended itself; resumed by a plain message on the same thread."""
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    """Shown for a record left `running` by a runner that died (a SIGKILL, a crash): no
    process runs it now; `lightscientist resume` continues its turn. Never written to disk."""


FINAL_WORKER_STATUSES: frozenset[WorkerStatus] = frozenset(
    {WorkerStatus.COMPLETED, WorkerStatus.FAILED, WorkerStatus.CANCELLED}
)
RESUMABLE_WORKER_STATUSES: frozenset[WorkerStatus] = frozenset(
    {WorkerStatus.WAITING, WorkerStatus.BACKGROUND}
)


class AgentPermissions(StrEnum):
    """How a coding agent's permission requests are answered (a stage table's
    `[agents.NAME] permissions`; the agent asks with ACP's `session/request_permission`)."""

    ASK = "ask"
    """The researcher (or, in auto mode, the supervisor) decides, as for a worker's question."""
    ALLOW = "allow"
    """Allowed at once, with the agent's own "allow once" option; logged as an event."""
    DENY = "deny"
    """Refused at once, with the agent's own "reject once" option; logged as an event."""


class Role(StrEnum):
    """What a layer-3 session is for."""

    WORKER = "worker"
    SUPERVISOR = "supervisor"


class SchedulingKind(StrEnum):
    """The meaningful changes that wake the supervisor agent (layer 2, one decision each)."""

    STAGE_STARTED = "stage_started"
    WORKER_FINISHED = "worker_finished"
    WORKER_FAILED = "worker_failed"
    WORKER_WAITING = "worker_waiting"
    WORKER_BACKGROUND = "worker_background"
    WORKER_STALLED = "worker_stalled"
    WORKER_CANCELLED = "worker_cancelled"
    RESUME_DUE = "resume_due"
    STAGE_REJECTED = "stage_rejected"
    """Layer 1 refused a finish (the `stage.rejected` event); the reason is in the data."""
    USER_ANSWERED = "user_answered"
    STAGE_IDLE = "stage_idle"
    """Nothing is running in the stage and nothing is scheduled."""
    SEARCH_OVER = "search_over"
    """A search stage's nodes have all run (or one reached the target): the stage's worker
    writes its outputs from the tree. The agent is told nothing of the nodes before."""
    REVIEW_OVER = "review_over"
    """A review stage's reviewers have all written (the round's `paper/reviews/meta.json`
    accepts the paper or leaves it below the bar): the stage's worker writes its outputs. A
    round that sends the paper back moves the project instead, and tells the agent nothing."""


class RecordingLine(StrEnum):
    """The `kind` of a line of a recording (`.lightscientist/recordings/run-NNNN.jsonl`, see
    `runtime.recording.lines`)."""

    RUN = "run"
    """The first line: the run that recorded (the model's label, its price)."""
    CALL = "call"
    """A model call: its request (hashes) and its response."""
    REPLY = "reply"
    """A human's reply to a decision."""
    UPDATE = "update"
    """A worker update layer 2 took in between the supervisor's calls."""


class MemoryKind(StrEnum):
    """What a memory entry is (`memory`): what worked or failed and why, a stage's result, a
    work read."""

    LESSON = "lesson"
    FINDING = "finding"
    PAPER = "paper"


class MemorySource(StrEnum):
    """Who filed a memory entry (`memory.NewEntry.source`)."""

    CONTROLLER = "controller"
    """Layer 1: a stage's finding, the project's lessons."""
    WORKER = "worker"
    RESEARCHER = "researcher"
    """The researcher, through a door: `lightscientist memory add`, `remember`."""


class Layer(IntEnum):
    """The layer an event comes from."""

    CONTROLLER = 1
    SUPERVISOR = 2
    RUNTIME = 3


class EventType(StrEnum):
    """Every event type of `.lightscientist/events.jsonl` (the fixed vocabulary)."""

    # layer 1: the research controller
    STAGE_START = "stage.start"
    STAGE_FINISH = "stage.finish"
    STAGE_TRANSITION = "stage.transition"
    STAGE_REJECTED = "stage.rejected"
    BUDGET_WARNING = "budget.warning"
    """80 % of a budget (the project's or a stage's) is spent."""
    BUDGET_EXCEEDED = "budget.exceeded"
    """A budget is spent: no new model call starts until the user raises it."""
    STAGE_REWOUND = "stage.rewound"
    """`lightscientist rewind` set the workspace and the state back to a stage visit's start."""
    STAGE_RETRIED = "stage.retried"
    """`resume` of a failed project starts the failed stage again, with fresh workers."""
    USER_DECISION_REQUESTED = "user.decision_requested"
    USER_DECISION = "user.decision"
    PATH_REFUSED = "path.refused"
    """The kernel refused a workspace path (a link, a pipe) a command left, and went on."""
    SEARCH_NODE = "search.node"
    """A node of a search stage's tree was created, started or finished (`experiment/tree.json`)."""
    REVIEW_META = "review.meta"
    """A review stage's round was aggregated into `paper/reviews/meta.json` (its decision)."""
    MEMORY_RECALL = "memory.recall"
    """Entries of the user's memory were recalled: for a stage's task header (layer 1) or by a
    worker's `recall` tool (layer 3); the hits, each with its project."""
    MEMORY_FILED = "memory.filed"
    """Layer 1 filed entries in the user's memory (a stage's finding, lessons)."""
    MEMORY_UNAVAILABLE = "memory.unavailable"
    """The user's memory could not be opened or written: the run goes on without it."""
    # layer 2: the stage supervisor
    WORKER_CREATED = "worker.created"
    WORKER_STATUS = "worker.status"
    SUPERVISOR_EVENT = "supervisor.event"
    SUPERVISOR_DECISION = "supervisor.decision"
    RESUME_SCHEDULED = "resume.scheduled"
    RESUME_FIRED = "resume.fired"
    WORKER_STALLED = "worker.stalled"
    # layer 3: worker sessions
    SESSION_START = "session.start"
    SESSION_END = "session.end"
    MODEL_CALL = "model.call"
    MODEL_OUTPUT = "model.output"
    TOOL_CALL = "tool.call"
    TOOL_RESULT = "tool.result"
    WORKER_WAITING = "worker.waiting"
    WORKER_BACKGROUND = "worker.background"
    WORKER_CANCELLED = "worker.cancelled"
    SANDBOX_UNAVAILABLE = "sandbox.unavailable"
    """`--sandbox auto` found no working bubblewrap: worker commands run unsandboxed."""
    REPLAY_DIVERGENCE = "replay.divergence"
    """A replayed request differs from the recorded one (lenient replay, or a command's output)."""
    JOB_SUBMITTED = "job.submitted"
    """A worker submitted a job (`submit_job`: a local background process or a Ray job)."""
    JOB_FINISHED = "job.finished"
    """A job ended (succeeded, failed, stopped, timed out or lost)."""
    AGENT_PLAN = "agent.plan"
    """A coding agent (ACP) sent its plan: every entry with its status (the whole plan each
    time; the newest replaces the one before)."""
    AGENT_PERMISSION = "agent.permission"
    """A coding agent asked permission for a tool call, and how it was answered: by the
    table's policy (`allow`, `deny`) at once, or by whoever `ask` reached."""

    @property
    def layer(self) -> Layer:
        """The layer that emits events of this type."""
        return EVENT_LAYERS[self]


EVENT_LAYERS: dict[EventType, Layer] = {
    **{
        t: Layer.CONTROLLER
        for t in EventType
        if t.value.split(".")[0] in ("stage", "budget", "user", "search", "review", "memory")
        or t is EventType.PATH_REFUSED
    },
    **{
        t: Layer.SUPERVISOR
        for t in (
            EventType.WORKER_CREATED,
            EventType.WORKER_STATUS,
            EventType.SUPERVISOR_EVENT,
            EventType.SUPERVISOR_DECISION,
            EventType.RESUME_SCHEDULED,
            EventType.RESUME_FIRED,
            EventType.WORKER_STALLED,
        )
    },
    **{
        t: Layer.RUNTIME
        for t in (
            EventType.SESSION_START,
            EventType.SESSION_END,
            EventType.MODEL_CALL,
            EventType.MODEL_OUTPUT,
            EventType.TOOL_CALL,
            EventType.TOOL_RESULT,
            EventType.WORKER_WAITING,
            EventType.WORKER_BACKGROUND,
            EventType.WORKER_CANCELLED,
            EventType.SANDBOX_UNAVAILABLE,
            EventType.REPLAY_DIVERGENCE,
            EventType.JOB_SUBMITTED,
            EventType.JOB_FINISHED,
            EventType.AGENT_PLAN,
            EventType.AGENT_PERMISSION,
        )
    },
}
"""Every event type and the layer that emits it."""
