// The history side of the CLI: `warden run` records to the shared store, and
// `warden list`, `warden show` and `warden history prune` read it. A store
// that cannot be used never stops a run: the user is told in one line.

import type { HistoryQuery } from '../shared/api';
import type { RunPage } from '../shared/history';
import type { RunResult, Verdict } from '../shared/result';
import { parseDuration } from '../shared/duration';
import { attachRecorder, openStore, StoreOpenError, type HistoryStore, type Recorder } from '../main/store';
import { seconds, bytes } from '../main/supervisor/format';
import { parseMemory } from '../main/supervisor/memory';
import type { Supervisor } from '../main/supervisor/registry';
import { UsageError } from './args';
import { humanSummary } from './render';

export interface History {
  store: HistoryStore;
  recorder: Recorder;
  close(): Promise<void>;
}

/** Opens the store for a run and records it; null (with a one-line warning) when the store cannot be used. */
export async function recordHistory(supervisor: Supervisor, warn: (line: string) => void): Promise<History | null> {
  let store: HistoryStore;
  try {
    store = openStore();
  } catch (error) {
    warn(`warden: history is off for this run: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
  if (store.movedAside) warn(`warden: ${store.movedAside.message}`);
  const recorder = attachRecorder(store, supervisor, { onError: (e) => warn(`warden: history: ${e.message}`) });
  try {
    const report = await store.recoverLostRuns({ tearDown: true });
    if (report.recovered.length > 0) warn(`warden: recovered ${report.recovered.length} run(s) left live by a Warden that went away (see warden list --verdict lost).`);
  } catch (error) {
    warn(`warden: history: recovery failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    store,
    recorder,
    async close() {
      await recorder.close();
      store.close();
    },
  };
}

function openForReading(): HistoryStore {
  try {
    return openStore();
  } catch (error) {
    if (error instanceof StoreOpenError) throw new UsageError(error.message);
    throw error;
  }
}

const VERDICTS: Verdict[] = ['completed', 'failed', 'timed-out', 'stopped', 'killed', 'crashed', 'signaled', 'lost', 'spawn-failed'];

interface Flags {
  values: Map<string, string>;
  switches: Set<string>;
  words: string[];
}

function flags(args: string[], withValue: string[], switches: string[]): Flags {
  const out: Flags = { values: new Map(), switches: new Set(), words: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (withValue.includes(name)) {
      const value = eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : args[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value.`);
      out.values.set(name, value);
    } else if (switches.includes(name)) {
      out.switches.add(name);
    } else if (arg.startsWith('-')) {
      throw new UsageError(`Unknown option ${name}.`);
    } else {
      out.words.push(arg);
    }
  }
  return out;
}

export const LIST_HELP = `Usage: warden list [--verdict V] [--since 1h] [--search TEXT] [--limit N] [--json]

Past and live runs from the history, newest first.`;

/** Where list and show read: a live host's API, or the store directly. */
export interface HistorySource {
  page(query: HistoryQuery): Promise<RunPage>;
  get(id: string): Promise<RunResult | null>;
}

/** The store read directly (no host running): opened for the one call. */
export const storeSource: HistorySource = {
  page: async (query) => {
    const store = openForReading();
    try {
      return store.list(query);
    } finally {
      store.close();
    }
  },
  get: async (id) => {
    const store = openForReading();
    try {
      return store.get(id);
    } finally {
      store.close();
    }
  },
};

export async function list(args: string[], out: (text: string) => void, source: HistorySource = storeSource): Promise<number> {
  const f = flags(args, ['--verdict', '--since', '--search', '--limit'], ['--json']);
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
    const page = await source.page({
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
      out(`${run.id}  ${run.startedAt.replace('T', ' ').slice(0, 19)}  ${(run.verdict ?? run.state).padEnd(12)} ${seconds(run.elapsedMs).padStart(8)}  ${what.slice(0, 80)}\n`);
    }
    if (page.nextCursor) out(`(more: narrow with --since, --verdict or --search, or raise --limit)\n`);
    return 0;
  }
}

export const SHOW_HELP = `Usage: warden show ID [--json]

One run from the history, whole: the result contract with --json.`;

export async function show(args: string[], out: (text: string) => void, source: HistorySource = storeSource): Promise<number> {
  const f = flags(args, [], ['--json']);
  if (f.words.length !== 1) throw new UsageError('warden show takes one run id (see warden list).');
  const id = f.words[0]!;
  const result = await source.get(id);
  if (!result) throw new UsageError(`No run with id ${JSON.stringify(id)} in the history.`);
  if (f.switches.has('--json')) {
    out(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  out(`${humanSummary(result)}\n`);
  if (result.stdout) out(`--- stdout ---\n${result.stdout}${result.stdout.endsWith('\n') ? '' : '\n'}`);
  if (result.stderr) out(`--- stderr ---\n${result.stderr}${result.stderr.endsWith('\n') ? '' : '\n'}`);
  return 0;
}

export const PRUNE_HELP = `Usage: warden history prune [--max-runs N] [--max-bytes SIZE]

Deletes the oldest ended runs beyond the limits (default 50,000 runs, 2 GiB of output). Live runs are never deleted.`;

export function prune(args: string[], out: (text: string) => void): number {
  const f = flags(args, ['--max-runs', '--max-bytes'], []);
  if (f.words.length > 0) throw new UsageError(`warden history prune takes no words; see warden history prune --help.`);
  const maxRunsText = f.values.get('--max-runs');
  const maxRuns = maxRunsText === undefined ? undefined : Number(maxRunsText);
  if (maxRuns !== undefined && (!Number.isInteger(maxRuns) || maxRuns < 0)) throw new UsageError(`--max-runs takes a whole number, not ${JSON.stringify(maxRunsText)}.`);
  const maxBytesText = f.values.get('--max-bytes');
  const maxBytes = maxBytesText === undefined ? undefined : parseMemory(maxBytesText, '--max-bytes');
  const store = openForReading();
  try {
    const report = store.prune({ ...(maxRuns !== undefined ? { maxRuns } : {}), ...(maxBytes !== undefined ? { maxBytes } : {}) });
    out(`Removed ${report.removedRuns} run(s) (${bytes(report.removedBytes)} of output); kept ${report.keptRuns} (${bytes(report.keptBytes)}).\n`);
    return 0;
  } finally {
    store.close();
  }
}
