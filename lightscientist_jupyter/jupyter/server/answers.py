"""What the server extension answers, one `TypedDict` per answer and per record inside one.

The side panel reads these answers through the interfaces of `labextension/src/answers.ts`
(types only, in this module's order), the dashboard's browser code reads a few of them (a reply's
`applied_by`, `status`, `stage`, `resumed_by`; a control's `message`; a refusal's `message`
and `status`). `tests/jupyter/test_server_answers.py` keeps the interfaces and these
declarations with the same keys, optional where they are `NotRequired` here.

The functions of `data`, `control` and `handoff` build their answers as literals of these
types, so mypy checks every key. Records that a layer below builds as a plain dict (the
state's history and answered decisions, the run lock's holder, the hand-over card, the usage,
the event log's lines, the pending decision) are declared here too, and enter an answer
unchecked by mypy (cast, or `Any`): those layers cannot import this module (imports point one
way), so `tests/jupyter/test_server_answers_sent.py` checks them in a real project's answers.

No `from __future__ import annotations` here: Python 3.11 decides which keys are
`NotRequired` from the evaluated annotations, and the test reads `__optional_keys__`.
"""

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from lightscientist_jupyter.app.history import ChangeStatus
from lightscientist_jupyter.app.reviews import ReviewRow as ReviewRow
from lightscientist_jupyter.app.reviews import ReviewsCard as ReviewsCard
from lightscientist_jupyter.events import EventDict as EventDict
from lightscientist_jupyter.jupyter.graph_view import GraphView as GraphView
from lightscientist_jupyter.jupyter.layout import BandLayout as BandLayout
from lightscientist_jupyter.jupyter.layout import EdgeLayout as EdgeLayout
from lightscientist_jupyter.jupyter.layout import GraphLayout as GraphLayout
from lightscientist_jupyter.jupyter.layout import NodeLayout as NodeLayout
from lightscientist_jupyter.values.search import NodeRecord as NodeRecord

# ------------------------------------------------------------------------- records

DecisionKindName = Literal["gate", "question", "handoff", "budget"]
"""A `vocab.DecisionKind`, as JSON."""


class BudgetDetails(TypedDict, total=False):
    """A budget decision's `details` (`controller/budget.py`); `{}` for other decisions."""

    scope: str
    """`project` or `stage X`."""
    key: str
    """The limit reached: `usd`, `tokens` or `hours`."""
    limit: float
    spent: float


class PermissionOptionDict(TypedDict):
    """One answer a coding agent offers (`values.permission.PermissionOption`)."""

    id: str
    name: str
    """Its label, as the agent words it ("Allow once")."""
    kind: str
    """`allow_once`, `allow_always`, `reject_once` or `reject_always`."""


class PermissionDict(TypedDict):
    """A coding agent's permission request (`values.permission.PermissionRequest.to_dict`)."""

    agent: str
    title: str
    """The tool call's title ("Write analysis.py")."""
    kind: str | None
    """The tool call's kind (`edit`, `execute`, `read`…), when the agent gives one."""
    options: list[PermissionOptionDict]
    paths: list[str]
    """Its files: relative to the project folder when inside it, else absolute."""
    old_text: str | None
    new_text: str | None
    """For an edit: the file's text before (None: a new file) and after."""
    detail: str
    question: str
    """In one line: "codex asks to edit analysis.py"."""


class PendingDecisionDict(TypedDict):
    """The decision waiting for a human (`controller.PendingDecision.to_dict`)."""

    id: str
    kind: DecisionKindName
    stage: str
    question: str
    """What the human is asked, in one or two sentences."""
    summary: str
    """For a gate: the worker's summary of what is being approved."""
    outputs: list[str]
    """For a gate: the files being approved, relative to the project folder."""
    proposed_next: str | None
    """For a gate: where an approval moves the project."""
    default_reject: str | None
    """For a gate: where a rejection without a target sends the project."""
    options: list[str]
    """For a question: the answers offered."""
    requested_at: float
    details: BudgetDetails
    permission: PermissionDict | None
    """For a question that is a coding agent's permission request: the request, whose
    options answer it (the cards draw `PermissionCard`)."""


HistoryStep = TypedDict(
    "HistoryStep", {"from": str | None, "to": str, "by": str, "at": float}
)  # the functional form: `from` is a keyword
"""One transition of a project (`ProjectState.history`): `from` is None for the first stage;
`by` is start, finish, approve, reject or auto; `at` is its Unix time."""


class AnsweredDecision(TypedDict):
    """A decision a human answered (`ProjectState.decisions`)."""

    id: str
    kind: DecisionKindName
    stage: str
    approve: bool
    """Approved (a gate), yes (a question), delivered (a hand-over), raised (a budget)."""
    comment: str | None
    to: str | None
    """The stage the answer moved the project to (None for a question or a budget)."""
    at: float
    source: str
    """The door the answer came through (a `vocab.ReplySource`)."""
    verdict: str
    """How it was answered, in words (`look.verdict_words`): every screen says it alike."""
    question: NotRequired[str]
    """For a question: what was asked."""
    budget: NotRequired[dict[str, float]]
    """For a budget: the new limits (`{}` when it was declined)."""
    scope: NotRequired[str | None]
    """For a budget: the scope whose limit was reached."""


class Runner(TypedDict, total=False):
    """Who runs the project: the run lock's holder (`controller.lock.read_holder`); `{}` when
    its record cannot be read."""

    pid: int
    host: str
    since: float
    """Unix time the lock was taken."""
    purpose: str
    """Why it is held (`run`, `reply from the side panel`, …)."""
    command: str
    """The first words of the holder's command line."""
    door: str
    """How the holder came: `kernel`, `command line` or `program` (`controller.lock.door`)."""
    kernel: str
    """For a kernel: its id, which the front end matches with its sessions' kernels."""


class RunActions(TypedDict):
    """The run controls that apply to a project now (`app.controls.applicable`)."""

    cancel: bool
    pause: bool
    rerun: bool
    resume: bool
    pausing: bool
    """A pause asked for is still to come."""


class StageInfo(TypedDict):
    """One stage of the table (`StageTable.to_dict`)."""

    id: str
    skill: str
    """The skill file, relative to the table's folder."""
    outputs: list[str]
    next: str
    """The default next stage."""
    allowed: list[str]
    """Every stage the project may move to from this one (`next` among them)."""
    approval: bool
    """The stage is a gate."""
    max_visits: int | None


class StageTableDict(TypedDict):
    """The project's stage table, without the server's absolute paths."""

    file: str
    """The table file's name."""
    start: str
    stages: list[StageInfo]


class OutputFile(TypedDict):
    """A required output of a stage, and whether it is on disk."""

    stage: str
    name: str
    """As the table names it, relative to the project folder."""
    path: str
    """Relative to the server root (what the `file` endpoint and the file browser take)."""
    exists: bool


class PaperCard(TypedDict):
    """`ProjectDetail.paper`: the paper's PDF and source (`app.paper`)."""

    pdf: str | None
    """`paper/paper.pdf` relative to the server root (opened in the PDF viewer); None when
    none was built."""
    pages: int | None
    source: str | None
    """The source (`paper/paper.tex` or `.md`) relative to the server root, None when none."""
    note: str | None
    """Why there is no PDF to open, or why its pages are unknown (one line)."""


class ProcessFile(TypedDict):
    """The project's `PROCESS.md`."""

    path: str
    """Relative to the server root."""
    exists: bool


class HandoffOutput(TypedDict):
    path: str
    ready: bool
    """The file is on disk."""


class HandoffCard(TypedDict):
    """The stage the researcher holds (`app.handoff_card.card`)."""

    decision_id: str
    stage: str
    visit: int
    goal: str
    skill_path: str
    """The skill file's absolute path."""
    skill: str
    """The skill's text (cut after `app.handoff_card.SKILL_CHARS` characters)."""
    digest: str
    """What PROCESS.md says so far, digested."""
    outputs: list[HandoffOutput]
    default_next: str
    allowed_next: list[str]
    feedback: str
    """A reviewer's comment for this stage ('' when there is none)."""
    skeleton: str
    """A notebook cell to start from."""


class UsageFigures(TypedDict):
    """One stage's model calls (`values.usage.Usage.to_dict`)."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int
    """Input tokens served from the provider's cache (part of `input_tokens`)."""
    model_calls: int
    wall_s: float
    """Seconds the calls took."""
    cost_usd: float | None
    """The cost in USD, None when a call had no known price."""
    unpriced_calls: int
    estimated: int
    """Calls whose tokens were estimated from characters (the model reported none)."""
    unreported: int
    """A coding agent's turns that reported no usage (never counted as zero tokens)."""
    tokens: int
    """Input and output tokens."""
    cost_words: str
    """The cost as every view words it (`values.usage.dollars`): `$0`, `$0.0123`, `$12.34`,
    `cost unknown`."""


class UsageTotal(UsageFigures):
    """The project's model calls (`app.usage.status_usage`)."""

    cost: float | Literal["unknown"]
    """The total cost in USD, or "unknown" while a call had no known price."""
    budget: dict[str, float]
    """The project's limits (`usd`, `tokens`, `hours`)."""
    hours: float
    """Hours the project has run."""


class PanelUsage(TypedDict):
    """What the project spent (`app.usage.panel_usage`)."""

    total: UsageTotal
    stages: dict[str, UsageFigures]
    """Per stage id, the stages with a model call."""


class DiffImages(TypedDict):
    """Pictures before and after, side by side: `data:` URLs (none: there was none)."""

    before: list[str]
    after: list[str]


class CellDiff(TypedDict):
    """One changed cell of a notebook (`values.notebook.CellChange`)."""

    id: str
    type: str
    """code or markdown."""
    kind: str
    """added, removed, changed (its source), outputs (its outputs alone)."""
    how: str
    """The kind in words: "source changed"."""
    source: list[str]
    """Unified diff lines of its source."""
    outputs: list[str]
    """Unified diff lines of what its outputs print (empty: they print the same)."""
    images: NotRequired[DiffImages]
    """Its PNG images before and after, when they changed (the dashboard's)."""


class CsvDiff(TypedDict):
    """A CSV's changed rows: `rows` are `[add|del, cell, …]`."""

    header: list[str]
    rows: list[list[str]]


class FileDiff(TypedDict):
    """A file under review at a gate (`jupyter.diff_card.panel_changes`), or a search node's
    file against its parent's (`NodeAnswer`)."""

    path: str
    status: ChangeStatus
    lines: list[str]
    """Unified diff lines (at most `diff_card.MAX_LINES`); empty for images, removed and
    unchanged files."""
    summary: NotRequired[str]
    """The change in a few words for its folded line (`diff_card.file_diff`): "+54 −3", or a
    notebook's "1 cell changed, 2 added"; for a text file or a notebook."""
    rendered: NotRequired[str]
    """For a Markdown file: the new text rendered as HTML, what was inserted in `<ins>` and
    what was deleted in `<del>` (`jupyter.markdown_diff`); `lines` stay its source diff."""
    cells: NotRequired[list[CellDiff]]
    """For a notebook: each changed cell (`lines` stay the same change as text)."""
    table: NotRequired[CsvDiff]
    """For a small CSV: its changed rows."""
    images: NotRequired[DiffImages]
    """For an image: both versions (the dashboard's; the panel's answer leaves them out)."""


class PermissionChoice(PermissionOptionDict):
    """One button of a permission card."""

    approve: bool
    """Whether it allows: the reply that picks it says yes (its `name` is the comment)."""


class PermissionCard(TypedDict):
    """A coding agent's permission request as both screens draw it (`jupyter.permission_card`):
    the dashboard's decision card and the side panel."""

    agent: str
    heading: str
    """In one line: "codex asks to edit analysis.py"."""
    title: str
    """The tool call's title, as the agent words it."""
    kind: str
    """The tool call's kind ('' when the agent gives none)."""
    paths: list[str]
    choices: list[PermissionChoice]
    """The agent's own options, in its order: one button each."""
    diff: FileDiff | None
    """For an edit: what it would change in its file, drawn as a gate's diff is."""
    detail: str
    """What else it concerns (a command, its input); '' for an edit with its diff."""


class CellNumbers(TypedDict):
    """The numbers of a gate's paper one notebook cell printed (`app.literature.by_cell`)."""

    path: str
    """The notebook, relative to the server root."""
    cell: str
    """The cell's id."""
    numbers: list[str]
    """Each number with its line in the paper: `0.02128 (line 17)`."""


class GateChecks(TypedDict):
    """At a gate whose stage has `numbers:` checks: where the paper's numbers come from."""

    cells: list[CellNumbers]
    unresolved: list[str]
    """Numbers no result file holds, as `what -> why`."""


class RecalledEntry(TypedDict):
    """An entry of the user's memory the stage's visit was given (`app.recalled.Recalled`)."""

    id: int
    kind: str
    """lesson, finding or paper (`vocab.MemoryKind`)."""
    project: str
    """The name of the project folder it came from, `-` for none."""
    text: str
    """At most 200 characters."""


class TreeBox(TypedDict):
    """A search node's box in `SearchDrawing` (`jupyter.search_tree.drawing`)."""

    id: str
    parent: str | None
    kind: str
    status: str
    metric: float | None
    summary: str
    x: float
    y: float
    """The box's top left corner."""
    best: bool
    to_best: bool
    """On the way from a draft to the best node (its edge is drawn darker)."""


class SearchDrawing(TypedDict):
    """A search stage's tree as the notebook draws it: the same boxes, where they go."""

    metric: str
    goal: str
    best: str | None
    words: str
    """The tree in one line (`search_tree.summary_words`)."""
    width: float
    height: float
    box_width: float
    box_height: float
    nodes: list[TreeBox]


class SearchCard(TypedDict):
    """`ProjectDetail.search`: the stages that search, and their tree or why there is none."""

    stages: list[str]
    drawing: SearchDrawing | None
    note: str | None
    """Why there is no drawing: no node yet, or the tree file is damaged (its one line)."""


class NodeAnswer(TypedDict):
    """`GET node`: one search node (`app.search_node.detail_record`)."""

    node: NodeRecord
    against: str | None
    """The parent its files are compared with (None: a draft, its files all new)."""
    changes: list[FileDiff]
    unchanged: int
    log: str | None
    log_tail: list[str]


class ProgressStage(TypedDict):
    stage: str
    seconds: float
    """Wall time spent in the stage over all its visits."""
    visits: int


class Progress(TypedDict):
    """Where the run is (`jupyter.progress.view`)."""

    position: list[int] | None
    """`[n, m]`: stage n of the table's m; None at `done`."""
    current_s: float
    """Seconds in the current visit of the current stage."""
    stages: list[ProgressStage]
    """The stages with time spent, in table order."""


# ------------------------------------------------------------------------- answers


class ProjectSummary(TypedDict):
    """A project as `GET projects` lists it; one whose state cannot be read comes with only
    `path`, `name` and `error`."""

    path: str
    """The project folder, relative to the server root ('' for the root itself)."""
    name: str
    """The folder's name."""
    goal: NotRequired[str]
    stage: NotRequired[str]
    """The current stage's id (`done` at the end)."""
    status: NotRequired[str]
    """A `vocab.ProjectStatus`."""
    mode: NotRequired[str]
    """`auto` or `manual` (`vocab.Mode`)."""
    pending: NotRequired[PendingDecisionDict | None]
    updated_at: NotRequired[float]
    """Unix time of the state's last save."""
    runner: NotRequired[Runner | None]
    """Who runs it now (the run lock's holder), None when no process does; always in a
    project's detail."""
    actions: NotRequired[RunActions]
    """The run controls that apply now; always in a project's detail."""
    error: NotRequired[str]
    """Why the project's state cannot be read."""


class ProjectsAnswer(TypedDict):
    """`GET projects`."""

    projects: list[ProjectSummary]


class ProjectDetail(ProjectSummary):
    """`GET project`: the summary, the state's details, the stage table drawn, the outputs."""

    visits: dict[str, int]
    """Visits per stage id."""
    history: list[HistoryStep]
    """The latest transitions (at most `data.HISTORY_MAX`), oldest first."""
    decisions: list[AnsweredDecision]
    reason: str | None
    """Why the project failed or was cancelled."""
    feedback: str | None
    """A reviewer's comment waiting for the next worker of the current stage."""
    last_summary: dict[str, str]
    """The latest accepted summary of each stage."""
    pause_after: str | None
    """The stage a pause was asked after (`app/until.py`)."""
    table: StageTableDict | None
    """None when the table cannot be read (`table_error` says why)."""
    graph: GraphView | None
    """The stage graph both screens draw (`jupyter/graph_view.py`); None without a table."""
    table_error: str | None
    outputs: list[OutputFile]
    process_md: ProcessFile
    handoff: HandoffCard | None
    """The stage the researcher holds, or None."""
    handoffs: list[str]
    """Stages handed to the researcher whenever the project enters them."""
    usage: PanelUsage
    gate_diff: list[FileDiff]
    """At a gate: what changed in each file under review since the last approval."""
    gate_checks: GateChecks | None
    """At a gate with `numbers:` checks: the cells the paper's numbers trace to; else None."""
    permission: PermissionCard | None
    """While a coding agent's permission request waits for the researcher: its card."""
    recalled: list[RecalledEntry]
    """While a gate or a stage's question waits: what the stage's visit was given from the
    user's memory for its task; empty otherwise."""
    search: SearchCard | None
    """The search stages' tree; None for a table without search (or that cannot be read)."""
    paper: PaperCard
    reviews: ReviewsCard | None
    """Each reviewer's scores and the aggregate (`app.reviews`); None before any review."""
    progress: NotRequired[Progress]
    """Absent when the table cannot be read."""
    last_seq: int
    """The last event's seq (0 when there is none): where `GET events` goes on from."""


class EventsAnswer(TypedDict):
    """`GET events`."""

    path: str
    events: list[EventDict]
    """Oldest first."""
    last_seq: int
    """The last event's seq, or where the request started when there is none."""
    reset: bool
    """`after` was past the end of the log (it was replaced): the answer starts over."""
    truncated: bool
    """More events came after `after` than `limit`: the oldest of them are left out."""


class FileAnswer(TypedDict):
    """`GET file`."""

    path: str
    """Relative to the server root."""
    name: str
    size: int
    """The file's size in bytes (all of it, when `truncated`)."""
    truncated: bool
    """The content stops after `data.FILE_LIMIT` bytes."""
    binary: bool
    content: str
    """The text ('' for a binary file)."""


class ReplyAnswer(TypedDict):
    """`POST reply`: an approve/reject, applied by the server or queued for the runner."""

    path: str
    decision_id: str | None
    """The decision the reply answered."""
    queued: str | None
    """The inbox file's name, for a reply queued for the runner."""
    applied_by: Literal["server", "runner"]
    runner: Runner | None
    """The process that runs the project, when the reply went to its inbox."""
    messages: list[str]
    """What happened, one line each (none yet for a queued reply)."""
    said: str
    """The reply in words: "Approved idea.gate", "Answered yes to …" (`look.reply_words`)."""
    status: NotRequired[str]
    """Applied by the server: the project's status afterwards."""
    stage: NotRequired[str]
    """Applied by the server: the project's stage afterwards."""
    resumed_by: NotRequired[int | None]
    """Applied by the server: the pid of the background process the project goes on in, or
    None."""


class HandoffAnswer(TypedDict):
    """`POST reply` with `handoff`: a take, deliver or give-back."""

    path: str
    message: str
    status: str | None
    """The project's status afterwards, when known at once."""
    stage: str | None
    resumed_by: int | None
    """The pid of the background process the project goes on in, or None."""


ControlAction = Literal["cancel", "resume", "pause", "rerun"]


class ControlDone(TypedDict):
    """What a run control did (`control.apply`, also the dashboard's comm fallback)."""

    action: ControlAction
    message: str
    pid: int | None
    """The process a resume or a re-run started, or None."""
    status: str
    """The project's status afterwards."""
    stage: str


class ControlAnswer(ControlDone):
    """`POST control`."""

    path: str


class PageChange(TypedDict):
    """A change a kernel-side writer hands to the page that has the notebook open: the page
    applies `next` over `base` cell by cell and saves (`open_notebooks`)."""

    id: str
    project: str
    """The project folder, relative to the server root."""
    path: str
    """The notebook, relative to the server root (as JupyterLab names it)."""
    base: dict[str, Any] | None
    """The notebook the change was made from (None: the writer made it anew)."""
    next: dict[str, Any]
    by: str
    """Who made it (a worker's id)."""


class OpenNotebooksAnswer(TypedDict):
    """`POST open-notebooks`: the changes now taken by the reporting page."""

    changes: list[PageChange]


class SettledAnswer(TypedDict):
    """`POST notebook-change`: the page's report is passed to the change's writer."""

    id: str
    outcome: str


class DefaultsAnswer(TypedDict):
    """`POST defaults`: the Settings Editor's defaults the kernels now take ('' for one the
    session decides), and the file that keeps them (`app.lab_defaults`)."""

    model: str
    mode: str
    budget: str
    path: str


class Refusal(TypedDict):
    """Any endpoint's refusal, with its HTTP status."""

    message: str
    """What is wrong and what to do instead."""
    status: int
    """The HTTP status again (the dashboard tells the extension's 404 from Jupyter's by it)."""


Answer: TypeAlias = (
    ProjectsAnswer
    | ProjectDetail
    | EventsAnswer
    | FileAnswer
    | NodeAnswer
    | ReplyAnswer
    | HandoffAnswer
    | ControlAnswer
    | OpenNotebooksAnswer
    | SettledAnswer
    | DefaultsAnswer
)
"""What an endpoint answers when it does not refuse."""
