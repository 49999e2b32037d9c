// `warden run --embedded` (or WARDEN_EMBEDDED=1): the engine in this process,
// as before there was a host to go through. The run is still recorded in the
// shared history, so `warden list` and the app see it. Loaded only for this.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sentinelWanted, startSentinel } from '../main/host/sentinel';
import { resolveStateDir } from '../client/state-dir';
import { ensureStateDir } from '../main/store/state-dir';
import { deathNoteName } from '../main/store/recovery';
import { newId, Supervisor } from '../main/supervisor/supervisor';
import type { RunRequest } from '../shared/request';
import type { RunResult } from '../shared/result';
import type { OutputFormat } from './args';
import type { CliIo } from './io';
import { exitStatusFor, humanSummary } from './render';
import { renderResult } from './host-verbs';
import { SignalStop, stopNoteFor } from './signals';
import { recordHistory } from './store-access';

/** Where the sentinel notes this process's death for the next Warden; none when the state dir cannot be made. */
function deathNotePath(hostId: string): string | undefined {
  try {
    const dir = join(ensureStateDir(resolveStateDir()), 'run');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return join(dir, deathNoteName(hostId));
  } catch {
    return undefined; // the history says why, in its own line
  }
}

/** `history: false`: the caller has already said why no history is written. */
export async function runEmbedded(request: RunRequest, format: OutputFormat, io: CliIo, options: { history?: boolean; onResult?: (result: RunResult) => void; exitStatus?: (result: RunResult) => number } = {}): Promise<number> {
  // Ends the run if this process dies, SIGKILL included (sentinel.ts).
  const hostId = newId();
  const sentinel = sentinelWanted() ? startSentinel(hostId, { onError: (line) => io.err(`warden: ${line}\n`), deathNote: deathNotePath(hostId) }) : undefined;
  const supervisor = new Supervisor({ hostId, ...(sentinel ? { watch: sentinel } : {}) });
  const history = options.history === false ? null : await recordHistory(supervisor, (line) => io.err(`${line}\n`));
  // Caught before the spawn: a signal at any moment stops the run rather than orphaning it.
  const signals = new SignalStop(io);
  let snapshot: RunResult;
  try {
    snapshot = supervisor.start(request);
  } catch (error) {
    signals.dispose();
    await history?.close();
    throw error;
  }
  const id = snapshot.id;
  const unsubscribe = format === 'human'
    ? supervisor.subscribe((event) => {
        if (event.type === 'output' && event.runId === id) (event.stream === 'stdout' ? io.out : io.err)(event.text);
      })
    : () => undefined;
  // The first signal runs the stop sequence; a second one kills at once.
  signals.attach((signal, nth) => {
    if (nth === 1) io.err(`\nwarden: ${signal}: stopping the run (again to kill it now)\n`);
    const note = stopNoteFor(signal);
    supervisor.stop(id, { reason: signal === 'SIGINT' ? 'user' : 'shutdown', force: nth > 1, ...(note ? { note } : {}) });
  });
  try {
    const result = await supervisor.wait(id);
    options.onResult?.(result);
    if (format === 'human') io.err(`${humanSummary(result)}\n`);
    else io.out(renderResult(result, format));
    return signals.exitStatus((options.exitStatus ?? exitStatusFor)(result));
  } finally {
    signals.dispose();
    unsubscribe();
    // Closes a Python session's interpreter, so nothing outlives the command.
    await supervisor.shutdown();
    sentinel?.close();
    await history?.close();
  }
}
