// A finished run for its reader: a model (shell-results), a program (JSON) or
// a person (a short summary). Also the exit status of `warden run`.

import type { RunResult } from '../shared/result';
import { seconds } from '../main/supervisor/format';
import { signalNumber } from '../main/supervisor/signals';

/** docs/architecture.md: the run's code; 124 timed out; 128+n signal; 126/127 cannot run / not found; 125 ours. */
export function exitStatusFor(result: RunResult): number {
  if (result.verdict === 'timed-out') return 124;
  if (result.signal !== null) return 128 + (signalNumber(result.signal) ?? 0);
  if (result.exitCode !== null) return result.exitCode;
  return 125;
}

/**
 * Text for the shell-results block: XML's five escapes, and every control
 * character XML cannot carry (all of C0 but tab, newline and carriage
 * return, and DEL) written visibly as \xNN, so an ESC of a colour code or a
 * NUL in binary output leaves a block any XML or text reader takes.
 */
export function escapeXml(text: string): string {
  return text
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export function shellResults(result: RunResult): string {
  const lines = ['<shell_results>'];
  const tag = (name: string, text: string) => lines.push(`<${name}>${escapeXml(text)}</${name}>`);
  if (result.exitCode !== null) tag('exit_code', String(result.exitCode));
  if (result.signal !== null) tag('signal', result.signal);
  tag('verdict', result.verdict ?? result.state);
  tag('elapsed', `${seconds(result.elapsedMs)}${result.limitMs !== null ? ` of a ${seconds(result.limitMs)} limit` : ''}`);
  tag('stdout', result.stdout);
  tag('stderr', result.stderr);
  if (result.advice !== null) tag('advice', result.advice);
  for (const note of result.notes) tag('note', note);
  lines.push('</shell_results>');
  return lines.join('\n');
}

export function humanSummary(result: RunResult): string {
  const how = result.signal !== null ? `signal ${result.signal}` : result.exitCode !== null ? `exit ${result.exitCode}` : 'no exit status';
  const limit = result.limitMs !== null ? ` (limit ${seconds(result.limitMs)})` : '';
  const lines = [`warden: ${result.verdict ?? result.state}, ${how}, after ${seconds(result.elapsedMs)}${limit} [run ${result.id}]`];
  if (result.advice !== null) lines.push(`warden: advice: ${result.advice}`);
  for (const note of result.notes) lines.push(`warden: note: ${note}`);
  return lines.join('\n');
}
