/**
 * What the server extension's REST API (`<base_url>/lightscientist/...`) sends and accepts:
 * one interface per answer, per record inside one and per request body.
 *
 * The answers and their records mirror the `TypedDict`s of the server's
 * `jupyter/server/answers.py`, in its order (the stage graph's records, which it imports
 * from `jupyter/layout.py`, come after the stage table): keys and optional keys are kept
 * equal by `tests/jupyter/test_server_answers.py`, and `test_server_answers_sent.py` checks
 * the declarations against a real project's answers. Change both sides together.
 *
 * Types only, and no import: the requests (`api.ts`) and the views read them from here, so
 * this module is a leaf of the import graph.
 */

// ------------------------------------------------------------------------- records

/** A budget decision's `details` (`controller/budget.py`). */
export interface IBudgetDetails {
  scope?: string;
  key?: string;
  limit?: number;
  spent?: number;
}

/** One answer a coding agent offers (`values.permission.PermissionOption`). */
export interface IPermissionOption {
  id: string;
  /** Its label, as the agent words it ("Allow once"). */
  name: string;
  /** `allow_once`, `allow_always`, `reject_once` or `reject_always`. */
  kind: string;
}

/** A coding agent's permission request, as the pending decision carries it. */
export interface IPermission {
  agent: string;
  /** The tool call's title ("Write analysis.py"). */
  title: string;
  kind: string | null;
  options: IPermissionOption[];
  /** Relative to the project folder when inside it, else absolute. */
  paths: string[];
  old_text: string | null;
  new_text: string | null;
  detail: string;
  /** In one line: "codex asks to edit analysis.py". */
  question: string;
}

export interface IPendingDecision {
  id: string;
  kind: 'gate' | 'question' | 'handoff' | 'budget';
  stage: string;
  question: string;
  summary: string;
  outputs: string[];
  proposed_next: string | null;
  default_reject: string | null;
  options: string[];
  requested_at: number;
  /** For a budget: scope, key, limit, spent (see `budget.ts`); `{}` otherwise. */
  details: IBudgetDetails;
  /** For a coding agent's permission request: the request (the cards draw
   * `IPermissionCard`); null otherwise. */
  permission: IPermission | null;
}

/** One transition of a project (`from` is null for the first stage). */
export interface IHistoryStep {
  from: string | null;
  to: string;
  /** start, finish, approve, reject or auto. */
  by: string;
  /** Unix time in seconds. */
  at: number;
}

/** A decision a human answered. */
export interface IAnsweredDecision {
  id: string;
  kind: IPendingDecision['kind'];
  stage: string;
  approve: boolean;
  comment: string | null;
  to: string | null;
  at: number;
  /** The door the answer came through: cli, magic, api, widget, panel or dashboard. */
  source: string;
  /** How it was answered, in words: approved, rejected, answered yes, answered no. */
  verdict: string;
  /** For a question: what was asked. */
  question?: string;
  /** For a budget: the new limits (`{}` when it was declined). */
  budget?: Record<string, number>;
  /** For a budget: the scope whose limit was reached. */
  scope?: string | null;
}

/** Who runs a project: the run lock's holder (`{}` when its record cannot be read). */
export interface IRunner {
  pid?: number;
  host?: string;
  /** Unix time the lock was taken. */
  since?: number;
  purpose?: string;
  command?: string;
  /** How the holder came: `kernel`, `command line` or `program`. */
  door?: string;
  /** For a kernel: its id (matched with the server's sessions). */
  kernel?: string;
}

/** The run controls that apply to a project now (`app.controls.applicable`). */
export interface IRunActions {
  cancel: boolean;
  pause: boolean;
  rerun: boolean;
  resume: boolean;
  /** A pause asked for is still to come. */
  pausing: boolean;
}

export interface IStageInfo {
  id: string;
  skill: string;
  outputs: string[];
  next: string;
  allowed: string[];
  approval: boolean;
  max_visits: number | null;
}

export interface IStageTable {
  file: string;
  start: string;
  stages: IStageInfo[];
}

/** A stage's box in the stage graph (positions in SVG user units). */
export interface INodeLayout {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  band: number;
  column: number;
  row: number;
  gate: boolean;
  /** The coding agent (`[agents.NAME]`) that works the stage, shortened to fit its corner;
   * null: the built-in worker. */
  agent: string | null;
  branch: boolean;
  done: boolean;
}

/** `next`: the default next stage; `allowed`: another forward choice; `loop`: a stage to
 * itself; `back`: an edge that closes a cycle. */
export type EdgeKind = 'next' | 'allowed' | 'loop' | 'back';

export interface IEdgeLayout {
  source: string;
  target: string;
  kind: EdgeKind;
  default: boolean;
  /** SVG path data of the edge's route. */
  path: string;
}

export interface IBandLayout {
  label: string;
  x: number;
  y: number;
}

/**
 * The stage graph's layout, computed by the server (`jupyter/layout.py`): the same layout
 * the notebook dashboard draws, so the panel only draws it.
 */
export interface IGraphLayout {
  width: number;
  height: number;
  nodes: INodeLayout[];
  edges: IEdgeLayout[];
  bands: IBandLayout[];
}

/** The stage graph of a project (`jupyter/graph_view.py`): what both screens draw. */
export interface IGraphView {
  /** The same graph wrapped after 6, 3, 2 and 1 columns, widest first. */
  layouts: IGraphLayout[];
  /** How each stage is drawn (`look.stage_states`). */
  states: Record<string, string>;
  /** Transitions the project has made, `[from, to]`. */
  taken: [string, string][];
  visits: Record<string, number>;
  /** Each stage's hover title. */
  titles: Record<string, string>;
  title: string;
  /** The graph in words, for a screen reader. */
  label: string;
}

export interface IOutputFile {
  stage: string;
  name: string;
  path: string;
  exists: boolean;
}

/** The paper's PDF and source (`app/paper.py`); paths relative to the server root. */
export interface IPaperCard {
  /** `paper/paper.pdf`, opened in JupyterLab's PDF viewer; null when none was built. */
  pdf: string | null;
  pages: number | null;
  /** `paper/paper.tex` (or `.md`); null when none was written. */
  source: string | null;
  /** Why there is no PDF to open, or why its pages are unknown (one line). */
  note: string | null;
}

/** One reviewer's review (`paper/reviews/review-<n>.json`). */
export interface IReviewRow {
  reviewer: number;
  round: number;
  scores: Record<string, number>;
  decision: string;
  strengths: string[];
  weaknesses: string[];
  questions: string[];
}

/** The reviews and their aggregate (`app/reviews.py`; drawn by `reviews.ts`). */
export interface IReviewsCard {
  /** `paper/reviews/meta.json`, relative to the project. */
  file: string;
  /** The score columns, in the rubric's order. */
  columns: string[];
  reviews: IReviewRow[];
  /** The aggregated round; null while no `meta.json` was written. */
  round: number | null;
  mean: number | null;
  accept: number | null;
  decision: string | null;
  required_changes: string[];
  earlier_round: number | null;
  /** What the round before asked for (the revision this round reviewed). */
  earlier_changes: string[];
  /** Each review or aggregate that cannot be read, in one line naming its file. */
  problems: string[];
  /** `round 2: mean 6.33 against accept 6 — accept`. */
  summary: string;
}

/** The project's `PROCESS.md`. */
export interface IProcessFile {
  path: string;
  exists: boolean;
}

export interface IHandoffOutput {
  path: string;
  ready: boolean;
}

/** `detail.handoff`, built by the server (`app/handoff_card.py`). */
export interface IHandoffCard {
  decision_id: string;
  stage: string;
  visit: number;
  goal: string;
  skill_path: string;
  skill: string;
  digest: string;
  outputs: IHandoffOutput[];
  default_next: string;
  allowed_next: string[];
  feedback: string;
  skeleton: string;
}

/** One scope's counters (`values/usage.py` `Usage.to_dict`). */
export interface IUsageFigures {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  model_calls: number;
  wall_s: number;
  /** USD, null when a call had no known price. */
  cost_usd: number | null;
  unpriced_calls: number;
  /** Calls whose tokens were estimated from characters. */
  estimated: number;
  /** A coding agent's turns that reported no usage (never counted as zero tokens). */
  unreported: number;
  tokens: number;
  /** The cost as every view words it (`values.usage.dollars`): `$0`, `$0.0123`, `$12.34`,
   * `cost unknown`. */
  cost_words: string;
}

/** The project's counters (`app/usage.py` `status_usage`). */
export interface IUsageTotal extends IUsageFigures {
  /** USD, or "unknown" while a call had no known price. */
  cost: number | 'unknown';
  budget: Record<string, number>;
  hours: number;
}

/** `detail.usage`: the project's totals and each stage's. */
export interface IPanelUsage {
  total: IUsageTotal;
  stages: Record<string, IUsageFigures>;
}

/** One file under review at a gate (`diff_card.panel_changes`), or a search node's file
 * against its parent's (`INodeAnswer`), as the server sends it. */
export interface IFileDiff {
  path: string;
  status: 'new' | 'changed' | 'removed' | 'unchanged';
  /** Unified diff lines (at most `diff_card.MAX_LINES`); empty for images, removed and
   * unchanged files. */
  lines: string[];
  /** The change in a few words for its folded line: "+54 −3", a notebook's "1 cell
   * changed, 2 added". */
  summary?: string;
  /** For a Markdown file: the new text rendered, what was inserted in `<ins>` and what was
   * deleted in `<del>`; `lines` stay its source diff. */
  rendered?: string;
  /** For a notebook: each changed cell (`lines` stay the same change as text). */
  cells?: ICellDiff[];
  /** For a small CSV: its changed rows. */
  table?: ICsvDiff;
  /** For an image: both versions (the dashboard's; the panel's answer leaves them out). */
  images?: IDiffImages;
}

/** Pictures before and after, side by side: `data:` URLs (none: there was none). */
export interface IDiffImages {
  before: string[];
  after: string[];
}

/** One changed cell of a notebook. */
export interface ICellDiff {
  id: string;
  /** code or markdown. */
  type: string;
  /** added, removed, changed (its source), outputs (its outputs alone). */
  kind: string;
  /** The kind in words: "source changed". */
  how: string;
  /** Unified diff lines of its source. */
  source: string[];
  /** Unified diff lines of what its outputs print. */
  outputs: string[];
  /** Its PNG images before and after, when they changed (the dashboard's). */
  images?: IDiffImages;
}

/** A CSV's changed rows: `rows` are `[add|del, cell, …]`. */
export interface ICsvDiff {
  header: string[];
  rows: string[][];
}

/** One button of a permission card. */
export interface IPermissionChoice extends IPermissionOption {
  /** Whether it allows: the reply that picks it says yes, its `name` the comment. */
  approve: boolean;
}

/** A coding agent's permission request as both screens draw it
 * (`jupyter/permission_card.py`). */
export interface IPermissionCard {
  agent: string;
  /** In one line: "codex asks to edit analysis.py". */
  heading: string;
  /** The tool call's title, as the agent words it. */
  title: string;
  /** The tool call's kind ('' when the agent gives none). */
  kind: string;
  paths: string[];
  /** The agent's own options, in its order: one button each. */
  choices: IPermissionChoice[];
  /** For an edit: what it would change in its file (see `diff.ts`). */
  diff: IFileDiff | null;
  /** What else it concerns (a command, its input); '' for an edit with its diff. */
  detail: string;
}

/** The numbers of a gate's paper one notebook cell printed (`app.literature.by_cell`). */
export interface ICellNumbers {
  /** The notebook, relative to the server root. */
  path: string;
  /** The cell's id. */
  cell: string;
  /** Each number with its line in the paper: `0.02128 (line 17)`. */
  numbers: string[];
}

/** At a gate whose stage has `numbers:` checks: where the paper's numbers come from. */
export interface IGateChecks {
  cells: ICellNumbers[];
  /** Numbers no result file holds, as `what -> why`. */
  unresolved: string[];
}

/** An entry of the user's memory a stage's visit was given for its task. */
export interface IRecalledEntry {
  id: number;
  /** lesson, finding or paper. */
  kind: string;
  /** The name of the project folder it came from, `-` for none. */
  project: string;
  /** At most 200 characters. */
  text: string;
}

/** One node of a search tree, as `experiment/tree.json` holds it. */
export interface INodeRecord {
  id: string;
  parent: string | null;
  kind: string;
  status: string;
  metric: number | null;
  job: string | null;
  started: number | null;
  ended: number | null;
  summary: string;
  files: string[];
}

/** A search node's box, where the notebook draws it (`search_tree.drawing`). */
export interface ITreeBox {
  id: string;
  parent: string | null;
  kind: string;
  status: string;
  metric: number | null;
  summary: string;
  /** The box's top left corner. */
  x: number;
  y: number;
  best: boolean;
  /** On the way from a draft to the best node (its edge is drawn darker). */
  to_best: boolean;
}

/** A search stage's tree as the notebook draws it. */
export interface ISearchDrawing {
  metric: string;
  goal: string;
  best: string | null;
  /** The tree in one line. */
  words: string;
  width: number;
  height: number;
  box_width: number;
  box_height: number;
  nodes: ITreeBox[];
}

/** The search stages' tree, or why there is none (`note`). */
export interface ISearchCard {
  stages: string[];
  drawing: ISearchDrawing | null;
  note: string | null;
}

/** `GET node`: one search node, its files against its parent's, its job's log. */
export interface INodeAnswer {
  node: INodeRecord;
  /** The parent compared with; null for a draft (its files all new). */
  against: string | null;
  changes: IFileDiff[];
  unchanged: number;
  log: string | null;
  log_tail: string[];
}

/** One stage's time in `progress`: over all its visits. */
export interface IProgressStage {
  stage: string;
  seconds: number;
  visits: number;
}

/** What the server puts in a project's detail under `progress` (`jupyter/progress.py`). */
export interface IProgress {
  position: [number, number] | null;
  current_s: number;
  stages: IProgressStage[];
}

// ------------------------------------------------------------------------- answers

export interface IProjectSummary {
  path: string;
  name: string;
  goal?: string;
  stage?: string;
  status?: string;
  mode?: string;
  pending?: IPendingDecision | null;
  updated_at?: number;
  /** Who runs it now (the run lock's holder), or null. */
  runner?: IRunner | null;
  /** The run controls that apply now. */
  actions?: IRunActions;
  error?: string;
}

/** `GET projects`. */
export interface IProjectsAnswer {
  projects: IProjectSummary[];
}

export interface IProjectDetail extends IProjectSummary {
  visits: Record<string, number>;
  /** The latest transitions, oldest first. */
  history: IHistoryStep[];
  decisions: IAnsweredDecision[];
  reason: string | null;
  feedback: string | null;
  /** The latest accepted summary of each stage. */
  last_summary: Record<string, string>;
  /** The stage a pause was asked after (kept in the project's state), or null. */
  pause_after: string | null;
  table: IStageTable | null;
  /** The stage graph; null when the table cannot be read. */
  graph: IGraphView | null;
  table_error: string | null;
  outputs: IOutputFile[];
  process_md: IProcessFile;
  last_seq: number;
  /** The stage the researcher holds (see `handoff.ts`), or null. */
  handoff: IHandoffCard | null;
  /** Stages handed to the researcher whenever the project enters them. */
  handoffs: string[];
  /** At a gate: what changed beside each file under review (see `diff.ts`). */
  gate_diff: IFileDiff[];
  /** At a gate with `numbers:` checks: the cells the paper's numbers trace to; else null. */
  gate_checks: IGateChecks | null;
  /** While a coding agent's permission request waits: its card (see `permission.ts`). */
  permission: IPermissionCard | null;
  /** While a gate or a stage's question waits: what the stage's visit was given from the
   * user's memory; empty otherwise. */
  recalled: IRecalledEntry[];
  /** The search stages' tree; null for a table without search. */
  search: ISearchCard | null;
  /** The paper's PDF (a link to the PDF viewer) and source. */
  paper: IPaperCard;
  /** Each reviewer's scores and the aggregate; null before any review. */
  reviews: IReviewsCard | null;
  /** Tokens, cost and model calls: the project's and each stage's (see `budget.ts`). */
  usage: IPanelUsage;
  /** Stage N of M and the time per stage (`jupyter/progress.py`); absent without a table. */
  progress?: IProgress;
}

export interface IEventRecord {
  /** The event schema's version. */
  v: number;
  seq: number;
  ts: number;
  layer: number;
  type: string;
  message: string;
  task_id: string | null;
  worker_id: string | null;
  stage: string | null;
  data: Record<string, unknown>;
}

export interface IEventsAnswer {
  path: string;
  events: IEventRecord[];
  last_seq: number;
  reset: boolean;
  truncated: boolean;
}

export interface IReplyAnswer {
  path: string;
  decision_id: string | null;
  /** The inbox file's name, for a reply queued for the runner. */
  queued: string | null;
  applied_by: 'server' | 'runner';
  runner: IRunner | null;
  messages: string[];
  /** The reply in words: "Approved idea.gate", "Answered yes to …". */
  said: string;
  /** Applied by the server: the project's status and stage afterwards. */
  status?: string;
  stage?: string;
  /** The background process the project goes on in, when nobody ran it. */
  resumed_by?: number | null;
}

/** The server's answer to a take, deliver or give-back. */
export interface IHandoffAnswer {
  path: string;
  message: string;
  status: string | null;
  stage: string | null;
  /** The background process the project goes on in, when nobody ran it. */
  resumed_by: number | null;
}

export type ControlAction = 'cancel' | 'resume' | 'pause' | 'rerun';

/** A change a worker hands to the page that has the notebook open (`opennotebooks.ts`). */
export interface IPageChange {
  id: string;
  project: string;
  path: string;
  base: { [key: string]: any } | null;
  next: { [key: string]: any };
  by: string;
}

export interface IOpenNotebooksAnswer {
  changes: IPageChange[];
}

export interface ISettledAnswer {
  id: string;
  outcome: string;
}

export interface IControlAnswer {
  path: string;
  action: ControlAction;
  message: string;
  pid: number | null;
  status: string;
  stage: string;
}

/** What the server answers when it refuses a request. */
export interface IRefusal {
  message: string;
  status: number;
}

// ------------------------------------------------------------------------- requests

export interface IReply {
  path: string;
  approve: boolean;
  comment: string;
  to_stage: string | null;
  decision_id: string | null;
  /** At a budget decision, raising it: the new limit (`{"tokens": N}`, `{"usd": X}`). */
  budget?: Record<string, number> | null;
}

export interface IControl {
  path: string;
  action: ControlAction;
  stage: string | null;
}

/** `POST defaults`: the Settings Editor's defaults the kernels now take ('' for one the
 * session decides), and the file that keeps them. */
export interface IDefaultsAnswer {
  model: string;
  mode: string;
  budget: string;
  path: string;
}
