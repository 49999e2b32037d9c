// What the app asks before it quits while it hosts live runs: plain data for
// dialog.showMessageBox, so it is tested without Electron (index.ts shows it).
// An app attached to another host never asks: those runs are that host's and
// go on after the app quits.

import type { RunResult } from '../../shared/result';

export const STOP_AND_QUIT = 'Stop runs and quit';
export const CANCEL_QUIT = 'Cancel';

export interface QuitPrompt {
  type: 'warning';
  title: string;
  message: string;
  detail: string;
  buttons: string[];
  /** The button index that confirms (stops the runs and quits). */
  confirmId: number;
  defaultId: number;
  cancelId: number;
  noLink: true;
}

/** Elapsed time as the Runs view reads it: 850 ms, 4.2 s, 3 min 07 s, 2 h 05 min. */
export function formatElapsed(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(seconds / 3600)} h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')} min`;
}

/** The command, or the first line of a Python script that is not blank. */
export function runLabel(run: RunResult, max = 72): string {
  const text = run.argv ? run.argv.join(' ') : ((run.code ?? '').split('\n').find((line) => line.trim() !== '')?.trim() ?? 'a Python script');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The runs listed by name; past `shown`, how many more. */
const SHOWN = 10;

/** The question for quitting with `runs` live in this app's host (null when none: quit without asking). */
export function quitPrompt(runs: RunResult[]): QuitPrompt | null {
  if (runs.length === 0) return null;
  const lines = runs.slice(0, SHOWN).map((run) => {
    const where = run.kind === 'python' && run.session ? ` (session ${run.session})` : '';
    const state = run.state === 'queued' ? 'queued' : formatElapsed(run.elapsedMs);
    return `• ${run.id}  ${runLabel(run)}${where} — ${state}`;
  });
  if (runs.length > SHOWN) lines.push(`• and ${runs.length - SHOWN} more`);
  const count = runs.length === 1 ? 'A run is live' : `${runs.length} runs are live`;
  return {
    type: 'warning',
    title: 'Quit Warden',
    message: `${count} in this Warden. Stop ${runs.length === 1 ? 'it' : 'them'} and quit?`,
    detail: `${lines.join('\n')}\n\n${runs.length === 1 ? 'It' : 'They'} will be stopped with the stop sequence (an interrupt first; killed only if still running at the grace) and recorded in the history.`,
    buttons: [STOP_AND_QUIT, CANCEL_QUIT],
    confirmId: 0,
    defaultId: 1,
    cancelId: 1,
    noLink: true,
  };
}
