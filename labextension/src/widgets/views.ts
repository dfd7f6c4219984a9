/**
 * What the kernel sets on the dashboard's widgets (their synced traits): the view-models the
 * Python side computes and these modules draw. Each interface mirrors a `TypedDict` of the
 * dashboard (`jupyter/dashboard/*.py`), checked key by key by `tests/jupyter/
 * test_server_answers.py`, like the server's answers.
 */

import type {
  IFileDiff,
  IGateChecks,
  IPermissionCard,
  IRecalledEntry,
  IReviewsCard,
  IRunActions
} from '../answers';

/** A pending decision as the gate card shows it (`gate_card.GateCardView`). */
export interface IGateCardView {
  id: string;
  kind: string;
  stage: string;
  next: string;
  /** What approving does, in one line. */
  heading: string;
  /** Two lines of the summary; the whole of it is `summary_full`. */
  summary: string;
  summary_full: string;
  /** `offline demo` for the offline model's note, else ''. */
  badge: string;
  /** The files under review, relative to the workspace. */
  files: string[];
  /** `[label, stage]`: where a rejection may send the project, the default first. */
  targets: [string, string][];
  reviews: IReviewsCard | null;
  recalled: IRecalledEntry[];
  /** At a gate: what changed in each file under review since the last approval. */
  diff: IFileDiff[];
  /** Why the diff cannot be shown ('' when it can). */
  diff_error: string;
  /** At a gate with `numbers:` checks: the paper's numbers and their cells. */
  checks: IGateChecks | null;
  /** For a coding agent's permission request: its card, whose buttons are the agent's
   * options (see `permission.ts`). */
  permission: IPermissionCard | null;
  /** Answered: the card folds to the line that says how. */
  settled: boolean;
}

/** A pending budget decision as its card shows it (`budget_card.BudgetCardView`). */
export interface IBudgetCardView {
  id: string;
  stage: string;
  scope: string;
  key: string;
  limit: number;
  spent_value: number;
  heading: string;
  spent: string;
  on_what: string;
  /** The new limit the field proposes. */
  suggested: number;
  settled: boolean;
}

/** What the kernel side knows of a card's action (`widgets.Outcome`). */
export interface IOutcome {
  state: string;
  text: string;
}

/** Where the run is, and the controls that apply (`run_controls.RunView`). */
export interface IRunView {
  status: string;
  stage: string;
  /** Who runs the project: `here`, `other`, `none`. */
  runner: string;
  pause_after: string | null;
  actions: IRunActions;
  /** `[n, m]`: stage n of m; null off the table's main line. */
  position: [number, number] | null;
  stage_time: string;
  /** `[stage, time, visits]` for each stage visited. */
  times: [string, string, number][];
}

/** One event as the stream shows it (`widgets.EventRow`). */
export interface IEventRow {
  seq: number;
  ts: number;
  layer: number;
  type: string;
  stage: string;
  worker: string;
  message: string;
}

/** The take button of the hand-over card (`handoff_card.TakeView`): its label, '' when no
 * stage can be taken now. */
export interface ITakeView {
  label: string;
}
