// What a desktop notification says when a run ends in anything but completed.
// Plain data, so it is tested without Electron; index.ts shows it.

import type { RunEvent } from '../../shared/events';
import type { RunResult } from '../../shared/result';

export interface RunNotice {
  runId: string;
  title: string;
  body: string;
}

function what(run: RunResult): string {
  if (run.argv) return run.argv.join(' ');
  return (run.code ?? '').split('\n').find((line) => line.trim() !== '')?.trim() ?? 'a Python script';
}

/** A notice for an ended run that did not complete; null otherwise. */
export function noticeFor(event: RunEvent): RunNotice | null {
  if (event.type !== 'ended' || event.result.verdict === 'completed' || event.result.verdict === undefined) return null;
  const run = event.result;
  const command = what(run);
  const body = [command.length > 80 ? `${command.slice(0, 79)}…` : command, run.advice ?? run.notes[0] ?? ''].filter(Boolean).join('\n');
  return { runId: run.id, title: `Run ${run.verdict}`, body };
}
