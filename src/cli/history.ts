// `warden list` and `warden show`: from the running host's API, or from the
// store directly (store-access.ts, loaded only then) when no host runs.

import type { HistoryQuery } from '../shared/api';
import type { RunPage } from '../shared/history';
import type { RunResult, Verdict } from '../shared/result';
import { parseDuration } from '../shared/duration';
import { count, seconds } from '../shared/format';
import { tokensOf, UsageError, type OptionSpec } from './parse';
import { humanSummary, wardenCommand } from './render';

/**
 * Text from a run (its command, output, notes) for a person's terminal: every
 * control character but tab and newline (and a CR before a newline) written
 * visibly as \xNN, C1 controls and DEL too, as the shell-results block does;
 * so an escape sequence in a command or its output (a screen clear, a title
 * or clipboard write, a line overwritten with CR) cannot reach the terminal.
 * `oneLine`: newlines and tabs too, for a list row.
 */
export function forTerminal(text: string, oneLine = false): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const pattern = oneLine ? /[\x00-\x1f\x7f-\x9f]/g : /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/g;
  return text.replace(pattern, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

const VERDICTS: Verdict[] = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'];

interface Flags {
  values: Map<string, string>;
  switches: Set<string>;
  words: string[];
}

export function flags(args: string[], command: string, withValue: string[], switches: string[]): Flags {
  const spec: Record<string, OptionSpec> = {};
  for (const name of withValue) spec[name] = { type: 'string' };
  for (const name of switches) spec[name] = { type: 'boolean' };
  const out: Flags = { values: new Map(), switches: new Set(), words: [] };
  for (const token of tokensOf(args, spec, command)) {
    if (token.kind === 'positional') out.words.push(token.value);
    else if (token.kind === 'option' && token.value !== undefined) out.values.set(`--${token.name}`, token.value);
    else if (token.kind === 'option') out.switches.add(`--${token.name}`);
  }
  return out;
}

export const LIST_HELP = `Usage: warden list [--live] [--verdict V] [--since 1h] [--search TEXT] [--limit N] [--json] [--all-hosts]

Past and live runs from the history, newest first. --live: only the runs live
in the host (one is started in the background when none runs). --all-hosts:
this machine's runs and every remote's (warden remote list), each with its
host's name ("local" for this one); a host that cannot be reached is named on
stderr.`;

/** Where list and show read: a live host's API, or the store directly. */
export interface HistorySource {
  page(query: HistoryQuery): Promise<RunPage>;
  get(id: string): Promise<RunResult | null>;
}

export async function list(args: string[], out: (text: string) => void, source: (live: boolean) => Promise<HistorySource>): Promise<number> {
  const f = flags(args, 'list', ['verdict', 'since', 'search', 'limit'], ['json', 'live']);
  if (f.words.length > 0) throw new UsageError(`warden list takes no words (${JSON.stringify(f.words[0])}); see warden list --help.`);
  const verdict = f.values.get('--verdict');
  if (verdict !== undefined && !VERDICTS.includes(verdict as Verdict)) throw new UsageError(`--verdict takes one of ${VERDICTS.join(', ')}, not ${JSON.stringify(verdict)}.`);
  const sinceText = f.values.get('--since');
  const sinceMs = sinceText === undefined ? undefined : parseDuration(sinceText);
  if (sinceText !== undefined && sinceMs === undefined) throw new UsageError(`--since takes a duration such as 30m, 1h or 7d... (ms, s, m, h), not ${JSON.stringify(sinceText)}.`);
  const limitText = f.values.get('--limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit takes a number from 1 to 1000, not ${JSON.stringify(limitText)}.`);
  {
    const live = f.switches.has('--live');
    const page = await (await source(live)).page({
      ...(live ? { state: 'live' as const } : {}),
      ...(verdict !== undefined ? { verdict: verdict as Verdict } : {}),
      ...(sinceMs !== undefined ? { since: Date.now() - sinceMs } : {}),
      ...(f.values.has('--search') ? { text: f.values.get('--search')! } : {}),
      limit,
    });
    if (f.switches.has('--json')) {
      out(`${JSON.stringify(page.runs, null, 2)}\n`);
      return 0;
    }
    if (page.runs.length === 0) {
      out('No runs match. Start one with: warden run --limit 30s -- COMMAND\n');
      return 0;
    }
    for (const run of page.runs) {
      const what = run.command ?? (run.code ?? '').split('\n')[0] ?? '';
      // A live service says whether it is ready and where it listens.
      const service = run.state === 'ended' ? '' : `${run.ready ? '  [ready]' : run.ready === false ? '  [not ready]' : ''}${run.ports && run.ports.length > 0 ? `  [listening on ${[...new Set(run.ports.map((p) => p.port))].join(', ')}]` : ''}`;
      out(`${run.id}  ${run.startedAt.replace('T', ' ').slice(0, 19)}  ${(run.verdict ?? run.state).padEnd(12)} ${seconds(run.elapsedMs).padStart(8)}  ${forTerminal(what.slice(0, 80), true)}${service}\n`);
    }
    if (page.nextCursor) out(`(more: narrow with --since, --verdict or --search, or raise --limit)\n`);
    return 0;
  }
}

export const SHOW_HELP = `Usage: warden show ID [--json]
       warden show ID --stream stdout|stderr [--offset N] [--max-chars N]

One run from the history, whole: the result contract with --json. With
--stream: that stream's characters from N (default 0), at most --max-chars
(default 8000), as they are on stdout (to a terminal, control characters
are written as \\xNN, as the other views do), and on stderr one line saying
which part it was and the command for the next page: the call a cut
answer's [warden: ... cut here ...] marker names.`;

/**
 * `toTerminal`: stdout is a terminal, where a page of --stream is written as
 * forTerminal writes it (offsets still count the stored characters); to a
 * pipe or a file it is the exact text.
 */
export async function show(args: string[], out: (text: string) => void, source: () => Promise<HistorySource>, err?: (text: string) => void, toTerminal = false): Promise<number> {
  const f = flags(args, 'show', ['stream', 'offset', 'max-chars'], ['json']);
  if (f.words.length !== 1) throw new UsageError('warden show takes one run id (see warden list).');
  const id = f.words[0]!;
  const stream = f.values.get('--stream');
  if (stream !== undefined && stream !== 'stdout' && stream !== 'stderr') throw new UsageError(`--stream takes stdout or stderr, not ${JSON.stringify(stream)}.`);
  if (stream === undefined && (f.values.has('--offset') || f.values.has('--max-chars'))) throw new UsageError('--offset and --max-chars go with --stream stdout or --stream stderr.');
  const whole = (flag: string, fallback: number, min: number): number => {
    const text = f.values.get(flag);
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} takes a whole number${min > 0 ? ` from ${min}` : ''}, not ${JSON.stringify(text)}.`);
    return n;
  };
  const offset = whole('--offset', 0, 0);
  const maxChars = whole('--max-chars', 8000, 1);
  const result = await (await source()).get(id);
  if (!result) throw new UsageError(`No run with id ${JSON.stringify(id)} in the history.`);
  if (stream !== undefined) {
    const all = result[stream];
    const from = Math.min(offset, all.length);
    const to = Math.min(from + maxChars, all.length);
    out(toTerminal ? forTerminal(all.slice(from, to)) : all.slice(from, to));
    const rest = all.length - to;
    const next = rest > 0 ? `; next page: ${wardenCommand()} show ${id} --stream ${stream} --offset ${to}${maxChars !== 8000 ? ` --max-chars ${maxChars}` : ''}` : '';
    const page = all.slice(from, to);
    (err ?? out)(`${page !== '' && !page.endsWith('\n') ? '\n' : ''}[warden: ${stream} of run ${id}, characters ${count(from)} to ${count(to)} of ${count(all.length)}, ${count(rest)} more${next}]\n`);
    return 0;
  }
  if (f.switches.has('--json')) {
    out(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  out(`${forTerminal(humanSummary(result))}\n`);
  if (result.stdout) out(`--- stdout ---\n${forTerminal(result.stdout)}${result.stdout.endsWith('\n') ? '' : '\n'}`);
  if (result.stderr) out(`--- stderr ---\n${forTerminal(result.stderr)}${result.stderr.endsWith('\n') ? '' : '\n'}`);
  return 0;
}

export const PRUNE_HELP = `Usage: warden history prune [--max-runs N] [--max-bytes SIZE]

Deletes the oldest ended runs beyond the limits (default 50,000 runs, 2 GiB of output). Live runs are never deleted.
SIZE as for warden run --memory: 512M, 2G, 1.5Gi (powers of 1024, with or without i), or bytes.`;

