// The Sessions view's logic, kept apart from React so it can be tested: when
// the list is worth asking for again, in what order it shows, and which
// actions need a second click.

import type { RunResult, SessionInfo } from '../../../../shared/result';

export type SessionAction = 'restart' | 'close';

/**
 * A key that changes whenever a Python script the page knows of starts,
 * queues or ends: the moments a session's state, queue or count change.
 * Output does not change it, so a chatty script does not cause refreshes.
 */
export function sessionRunsKey(runs: Record<string, RunResult>, order: string[]): string {
  const parts: string[] = [];
  for (const id of order) {
    const run = runs[id];
    if (run?.kind === 'python') parts.push(`${id}:${run.state}`);
  }
  return parts.join(',');
}

/** Sessions by name, so rows keep their places between refreshes. */
export function sortSessions(sessions: SessionInfo[]): SessionInfo[] {
  return [...sessions].sort((a, b) => a.name.localeCompare(b.name));
}

/** Closing always asks first (it forgets the session); restarting asks when it would kill a running script. */
export function needsConfirm(action: SessionAction, session: Pick<SessionInfo, 'running' | 'queued'>): boolean {
  return action === 'close' || session.running !== null;
}

/** What the confirmation says will happen. */
export function confirmText(action: SessionAction, session: Pick<SessionInfo, 'name' | 'running' | 'queued'>): string {
  if (action === 'restart') {
    return `Restart session ${session.name}? Its running script is killed with the interpreter; the next script starts a fresh one.`;
  }
  const stopped: string[] = [];
  if (session.running !== null) stopped.push('its running script');
  if (session.queued > 0) stopped.push(`${session.queued} queued script${session.queued === 1 ? '' : 's'}`);
  const stops = stopped.length > 0 ? ` This stops ${stopped.join(' and ')}.` : '';
  return `Close session ${session.name}?${stops} The interpreter and everything it holds are gone.`;
}
