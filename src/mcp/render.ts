// What the model reads: the text blocks of the MCP tools' answers. A run is a
// <shell_results> block (src/cli/render.ts), with a <next> line inside it
// when the run goes on; lists are compact tables.

import type { RunSummary } from '../shared/history';
import type { RunResult, SessionInfo } from '../shared/result';
import { count, seconds } from '../main/supervisor/format';
import { escapeXml, shellResults } from '../cli/render';

/**
 * Characters of each stream a text block shows whole; beyond it the block
 * keeps the head and the tail (structuredContent still has all of it, and
 * the show tool pages through the run's whole output).
 */
export const TEXT_STREAM_CAP = 50_000;
const HEAD = 10_000;

function capStream(result: RunResult, stream: 'stdout' | 'stderr'): string {
  const text = result[stream];
  if (text.length <= TEXT_STREAM_CAP) return text;
  const tail = TEXT_STREAM_CAP - HEAD;
  const omitted = text.length - HEAD - tail;
  return `${text.slice(0, HEAD)}\n[warden: ${count(omitted)} characters omitted here; the show tool with id "${result.id}" and stream "${stream}" pages through the whole output]\n${text.slice(-tail)}`;
}

/** Inserts lines inside a shell_results block, before its end. */
function withinBlock(block: string, lines: string[]): string {
  if (lines.length === 0) return block;
  return block.replace(/<\/shell_results>$/, `${lines.join('\n')}\n</shell_results>`);
}

/** The next step for a run that has not ended: the wait tool, with its id. */
export function nextLine(result: RunResult): string {
  const where =
    result.state === 'queued'
      ? `queued${result.queuePosition !== undefined ? ` (position ${result.queuePosition} in session ${result.session ?? 'default'})` : ''}`
      : result.state === 'stopping'
        ? `stopping after ${seconds(result.elapsedMs)}`
        : `still running after ${seconds(result.elapsedMs)}`;
  return `<next>${escapeXml(`${where} [run ${result.id}]; call the wait tool with {"id": "${result.id}"} for more output and its end, or stop to end it`)}</next>`;
}

/** A run as a shell_results block; one not ended yet says how to go on. */
export function runText(result: RunResult, extra: string[] = []): string {
  const block = shellResults({ ...result, stdout: capStream(result, 'stdout'), stderr: capStream(result, 'stderr') });
  return withinBlock(block, [...extra, ...(result.state === 'ended' ? [] : [nextLine(result)])]);
}

function what(run: Pick<RunSummary, 'command' | 'code' | 'argv' | 'session'>): string {
  if (run.command) return run.command;
  if (run.argv) return run.argv.join(' ');
  const first = (run.code ?? '').split('\n').find((line) => line.trim() !== '') ?? '';
  return `python${run.session ? `[${run.session}]` : ''}: ${first.trim()}`;
}

function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/** Runs as a table, newest first. */
export function listText(runs: RunSummary[], more: boolean): string {
  if (runs.length === 0) return 'No runs match.';
  const rows = runs.map((run) => {
    const status = run.verdict ?? run.state;
    const elapsed = `${seconds(run.elapsedMs)}${run.limitMs !== null ? ` / ${seconds(run.limitMs)}` : ''}`;
    const code = run.verdict && run.verdict !== 'completed' && run.exitCode !== null ? ` (exit ${run.exitCode})` : run.signal ? ` (${run.signal})` : '';
    return [run.id, run.startedAt.replace('T', ' ').slice(0, 19), `${status}${code}`, elapsed, cut(what(run), 80)];
  });
  const header = ['id', 'started (UTC)', 'verdict', 'elapsed / limit', 'command'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const lines = [line(header), ...rows.map(line)];
  if (more) lines.push('(more runs match: narrow with since, verdict or search, or raise limit)');
  lines.push('Use show with an id for a run\'s output and verdict, wait for a live one.');
  return lines.join('\n');
}

export function sessionsText(sessions: SessionInfo[]): string {
  if (sessions.length === 0) return 'No Python sessions yet: the run tool with python (and optionally session) starts one.';
  const rows = sessions.map((s) => [
    s.name,
    s.state,
    s.pid !== null ? String(s.pid) : '-',
    s.pythonVersion ?? '-',
    String(s.scriptsRun),
    String(s.queued),
    s.running ?? '-',
  ]);
  const header = ['session', 'state', 'pid', 'python', 'scripts run', 'queued', 'running'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((cells) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/** show's page size when the caller gives none. */
export const DEFAULT_MAX_CHARS = 20_000;

export interface StreamPage {
  from: number;
  to: number;
  total: number;
}

/** The <page> lines of a show answer: what each stream's part is, and the offset to ask for next. */
export function pageLines(id: string, pages: Partial<Record<'stdout' | 'stderr', StreamPage>>, maxChars: number): string[] {
  const lines: string[] = [];
  const nextFrom: number[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    const page = pages[stream];
    if (!page) continue;
    const rest = page.total - page.to;
    if (page.total === 0) lines.push(`${stream}: empty`);
    else if (page.from === 0 && rest === 0) lines.push(`${stream}: all ${count(page.total)} characters`);
    else {
      lines.push(`${stream}: characters ${count(page.from)} to ${count(page.to)} of ${count(page.total)}, ${count(rest)} more`);
      if (rest > 0) nextFrom.push(page.to);
    }
  }
  const text = lines.join('; ');
  const next = nextFrom.length > 0 ? `; next page: show with {"id": "${id}", "offset": ${Math.min(...nextFrom)}${maxChars !== DEFAULT_MAX_CHARS ? `, "maxChars": ${maxChars}` : ''}}` : '';
  return [`<page>${escapeXml(text + next)}</page>`];
}
