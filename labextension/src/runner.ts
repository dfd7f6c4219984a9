/**
 * Who runs a project, in words: the run lock's holder names its door (a Jupyter kernel by
 * its id, the command line, another program), and the page knows which notebook each of the
 * server's kernels belongs to — so a run of the notebook's own kernel is named by the
 * notebook, not by a pid.
 */

import type { IRunner } from './answers';

/** The notebook (or console) path of a kernel of this server, or null. */
export type KernelOwner = (kernelId: string) => string | null;

export function runnerWords(
  runner: IRunner | null | undefined,
  owner: KernelOwner
): string {
  if (!runner) {
    return '';
  }
  const where = `pid ${runner.pid ?? '?'} on ${runner.host ?? '?'}`;
  const why =
    runner.purpose && runner.purpose !== 'run' ? ` (${runner.purpose})` : '';
  if (runner.door === 'kernel') {
    const path = runner.kernel ? owner(runner.kernel) : null;
    return path
      ? `Running in the kernel of ${path}${why}.`
      : `Running in a Jupyter kernel this server does not list (${where})${why}.`;
  }
  if (runner.door === 'command line') {
    return `Running from the command line (${where})${why}.`;
  }
  return `Running in another program (${where}${runner.command ? `: ${runner.command}` : ''})${why}.`;
}
