// Attention in web mode (a browser tab, where the desktop app's notifications
// do not reach): the tab's title carries the live and failed counts, its
// favicon the state (failed, live, idle), and, when a person turned them on
// (asked once, off by default), a browser notification for each run that
// ends badly while the tab is hidden. "Failed" counts the runs that ended
// badly since the person last looked at the Runs or History view.

import type { RunResult } from '../../../shared/result';

/** Verdicts that call for attention: every ending but a completion and a stop a person asked for. */
export function endedBadly(run: Pick<RunResult, 'state' | 'verdict'>): boolean {
  return run.state === 'ended' && run.verdict !== undefined && run.verdict !== 'completed' && run.verdict !== 'stopped';
}

export type TabState = 'failed' | 'live' | 'idle';

export interface Attention {
  live: number;
  /** Runs that ended badly since the person last looked at the list. */
  failed: number;
  state: TabState;
}

/** What the tab says of these runs, given which failures the person has seen. */
export function attentionOf(runs: Iterable<Pick<RunResult, 'id' | 'state' | 'verdict' | 'endedAt'>>, seenUntil: string): Attention {
  let live = 0;
  let failed = 0;
  for (const run of runs) {
    if (run.state !== 'ended') live++;
    else if (endedBadly(run) && (run.endedAt ?? '') > seenUntil) failed++;
  }
  return { live, failed, state: failed > 0 ? 'failed' : live > 0 ? 'live' : 'idle' };
}

/** The title with the counts in front: "(2 live · 1 failed) Runs — Warden"; nothing in front when there is nothing to say. */
export function titleWith(title: string, attention: Attention): string {
  const parts = [...(attention.live > 0 ? [`${attention.live} live`] : []), ...(attention.failed > 0 ? [`${attention.failed} failed`] : [])];
  const bare = title.replace(/^\([^)]*\) /, '');
  return parts.length > 0 ? `(${parts.join(' · ')}) ${bare}` : bare;
}

const ICON_COLOUR: Record<TabState, string> = { failed: '#d93f2e', live: '#2f6fd6', idle: '#8a929e' };

/** A favicon for the state, as a data: URL (the page's policy allows data: images): a disc, with a ring while live. */
export function faviconOf(state: TabState): string {
  const colour = ICON_COLOUR[state];
  const mark =
    state === 'failed'
      ? `<circle cx="16" cy="16" r="14" fill="${colour}"/><rect x="14" y="7" width="4" height="12" rx="2" fill="#fff"/><circle cx="16" cy="24" r="2.4" fill="#fff"/>`
      : state === 'live'
        ? `<circle cx="16" cy="16" r="13" fill="none" stroke="${colour}" stroke-width="4"/><circle cx="16" cy="16" r="6" fill="${colour}"/>`
        : `<circle cx="16" cy="16" r="12" fill="${colour}"/>`;
  return `data:image/svg+xml,${encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${mark}</svg>`)}`;
}

/** The words of a notification for a run that ended badly. */
export function notificationOf(run: Pick<RunResult, 'id' | 'verdict' | 'exitCode' | 'signal'>, command: string): { title: string; body: string; tag: string } {
  const how = run.signal ? ` (${run.signal})` : run.exitCode !== null ? ` (exit ${run.exitCode})` : '';
  return { title: `Run ${run.verdict}${how}`, body: command.length > 120 ? `${command.slice(0, 119)}…` : command, tag: `warden-${run.id}` };
}

/** Whether notifications are on for this browser (localStorage; off unless a person turned them on). */
export const NOTIFY_KEY = 'warden.notifyFailed';
