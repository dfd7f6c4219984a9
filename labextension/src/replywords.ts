/**
 * A reply's answer in words, the same in the panel and in the dashboard's cards: what was
 * decided, where the project went and who goes on with it. No JupyterLab import: the
 * dashboard's widgets bundle it.
 */

import type { IAnsweredDecision, IReplyAnswer } from './answers';

const DONE = 'done';

/** What the server did with a reply: applied it (and where the project is now), or handed
 * it to the run that holds the project. */
export function describeReply(answer: IReplyAnswer): string {
  const verb = answer.said; // the server's words (look.reply_words)
  if (answer.applied_by === 'runner') {
    const pid = answer.runner?.pid ?? '?';
    return `${verb}; the run (pid ${pid}) picks it up within a second.`;
  }
  const moved =
    answer.stage === DONE
      ? 'The project is done.'
      : `Now at '${answer.stage}' (${answer.status}).`;
  let idle = '';
  if (answer.resumed_by) {
    idle = ` It goes on in the background (pid ${answer.resumed_by}).`;
  } else if (answer.status === 'running') {
    idle = ` ${answer.messages[answer.messages.length - 1] ?? ''}`;
  }
  return `${verb}. ${moved}${idle}`;
}

/** A decision the run took, as its record says: `approved idea.gate → experiment.setup`. */
export function describeAnswered(decision: IAnsweredDecision): string {
  const to = decision.to ? ` → ${decision.to}` : '';
  return `${decision.verdict} ${decision.stage}${to}`;
}
