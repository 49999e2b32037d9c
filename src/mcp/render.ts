// What the model reads: the MCP tools' answers. A run is a <shell_results>
// block and a compact structuredContent, both cut for a model by
// src/shared/model-answer.ts (with a <next> line / next field when the run goes
// on); lists are compact tables.

import type { RunSummary } from '../shared/history';
import type { RunResult, SessionInfo } from '../shared/result';
import { count, seconds } from '../shared/format';
import { answerJson, answerText, escapeText, modelAnswer, modelAnswerWithin, type ModelAnswer, type ModelAnswerOptions, type Pager, type Stream } from '../shared/model-answer';

/** The calls an MCP answer names: tool calls with their JSON arguments. */
export const MCP_PAGER: Pager = {
  page: (id, stream, offset) => `show {"id": "${id}", "stream": "${stream}", "offset": ${offset}}`,
  next: (id, until) => (until !== undefined ? `wait {"id": "${id}", "until": "${until}"}` : `wait {"id": "${id}"}`),
  stop: (id) => `stop {"id": "${id}"}`,
  waitFor: (id) => `wait {"id": "${id}", "until": "log:/PATTERN/"}`,
  send: (id) => `input {"id": "${id}", "text": "..."}`,
};

/**
 * What each client kind shows its model, measured with the real harnesses:
 * Claude Code (clientInfo "claude-code") and Codex ("codex-mcp-client") show
 * the structuredContent JSON and drop the text block; Gemini CLI
 * ("gemini-cli-mcp-client") shows the text. Both forms are sent to every
 * client, each model-sized; the budget is the most characters of JSON an
 * answer may take: Codex cuts a tool's output at about 12,000 characters.
 */
export function budgetFor(clientName: string | undefined): number {
  if (clientName === 'codex-mcp-client') return 10_000;
  return 24_000;
}

/** A run answer: the shell_results block and the compact structuredContent, both cut for a model. */
export function runAnswerParts(result: RunResult, options: Omit<ModelAnswerOptions, 'pager'> & { budget: number | null; extra?: string[] }) {
  const answer = modelAnswerWithin(result, { ...options, pager: MCP_PAGER }, options.budget);
  return { answer, text: answerText(answer, options.extra ?? []), json: answerJson(answer) };
}

export type { Stream };

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
    const service = run.state === 'ended' ? '' : `${run.ready ? ', ready' : run.ready === false ? ', not ready' : ''}${run.ports && run.ports.length > 0 ? `, listening on ${[...new Set(run.ports.map((p) => p.port))].join(', ')}` : ''}`;
    const status = `${run.verdict ?? run.state}${service}`;
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
export const DEFAULT_MAX_CHARS = 8000;

export interface StreamPage {
  from: number;
  to: number;
  total: number;
}

/** The exact show call for the page of `stream` after this one. */
export function nextPageCall(id: string, stream: Stream, offset: number, maxChars: number): string {
  return `show {"id": "${id}", "stream": "${stream}", "offset": ${offset}${maxChars !== DEFAULT_MAX_CHARS ? `, "maxChars": ${maxChars}` : ''}}`;
}

/** One stream's part of a page in words: where it lies, and the call for the next page when there is more. */
function pageWords(id: string, stream: Stream, page: StreamPage, maxChars: number): string {
  if (page.total === 0) return `${stream}: empty`;
  if (page.from === 0 && page.to === page.total) return `${stream}: all ${count(page.total)} characters`;
  const rest = page.total - page.to;
  const where = `${stream}: characters ${count(page.from)} to ${count(page.to)} of ${count(page.total)}`;
  return rest > 0 ? `${where}, ${count(rest)} more; next page: ${nextPageCall(id, stream, page.to, maxChars)}` : `${where}, its end`;
}

/**
 * show's answer: a page of one stream or both, saying first that it is a
 * page (which characters of which stream, and the exact call for each next
 * page, stream named), then the run's own verdict, exit, advice and notes
 * (advice fitted to the whole run, never to the page: a page of stdout does
 * not mean the run wrote nothing on stderr), then the streams asked for only.
 */
export function pageAnswerParts(result: RunResult, pages: Partial<Record<Stream, StreamPage>>, maxChars: number) {
  const streams = (['stdout', 'stderr'] as const).filter((s) => pages[s] !== undefined);
  // The whole run decides the advice: its streams as kept, nothing cut.
  const whole = modelAnswer(result, { streamChars: Number.POSITIVE_INFINITY, pager: MCP_PAGER, base: { stdout: 0, stderr: 0 } });
  const text = (s: Stream) => result[s].slice(pages[s]!.from, pages[s]!.to);
  const answer: ModelAnswer = { ...whole, stdout: { text: streams.includes('stdout') ? text('stdout') : '', cut: 0, chars: 0 }, stderr: { text: streams.includes('stderr') ? text('stderr') : '', cut: 0, chars: 0 } };
  const words = streams.map((s) => pageWords(result.id, s, pages[s]!, maxChars));
  const next = streams.filter((s) => pages[s]!.to < pages[s]!.total).map((s) => nextPageCall(result.id, s, pages[s]!.to, maxChars));
  const lead = `<page>${escapeText(`A page of run ${result.id}'s output, not all of it: ${words.join('; ')}`)}</page>`;
  const json = answerJson(answer);
  for (const key of ['stdout', 'stderr', 'stdoutCut', 'stderrCut', 'stdoutChars', 'stderrChars'] as const) delete json[key];
  const page = {
    stream: streams.length === 2 ? 'both' : streams[0],
    ...Object.fromEntries(streams.map((s) => [s, pages[s]])),
    ...(next.length > 0 ? { next } : {}),
  };
  return {
    text: answerText(answer, [], { lead: [lead], streams }),
    json: { page, ...json, ...Object.fromEntries(streams.map((s) => [s, answer[s].text])) },
  };
}
