// `warden run --embedded` (or WARDEN_EMBEDDED=1): the engine in this process,
// as before there was a host to go through. The run is still recorded in the
// shared history, so `warden list` and the app see it. Loaded only for this.

import { Supervisor } from '../main/supervisor/registry';
import type { RunRequest } from '../shared/request';
import type { RunResult } from '../shared/result';
import type { OutputFormat } from './args';
import type { CliIo } from './io';
import { exitStatusFor, humanSummary } from './render';
import { renderResult } from './remote';
import { SignalStop, stopNoteFor } from './signals';
import { recordHistory } from './store-access';

/** `history: false`: the caller has already said why no history is written. */
export async function runEmbedded(request: RunRequest, format: OutputFormat, io: CliIo, options: { history?: boolean } = {}): Promise<number> {
  const supervisor = new Supervisor();
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
    if (format === 'human') io.err(`${humanSummary(result)}\n`);
    else io.out(renderResult(result, format));
    return signals.exitStatus(exitStatusFor(result));
  } finally {
    signals.dispose();
    unsubscribe();
    // Closes a Python session's interpreter, so nothing outlives the command.
    await supervisor.shutdown();
    await history?.close();
  }
}
