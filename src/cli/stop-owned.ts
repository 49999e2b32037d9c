// `warden stop --owner PID|agent`: every live run of a process and of the
// processes under it, stopped with the stop sequence (a Claude Code plugin's
// SessionEnd hook stops its session's runs so). Each stop is sent first, then
// every end awaited, so they stop together; a line per run says how it ended.

import type { HttpWardenApi } from '../shared/http-api';
import type { RunResult } from '../shared/result';
import { kindOf } from '../shared/errors';
import type { CliIo } from './io';
import { commandOf } from './events';
import { OwnerFilter, ownerPidFrom } from './owners';
import { tokensOf, UsageError } from './parse';
import { clientError } from './host-verbs';
import { humanSummary } from './render';

export async function stopOwned(args: string[], io: CliIo, host: () => Promise<HttpWardenApi>): Promise<number> {
  let owner: number | null = null;
  let force = false;
  let json = false;
  let quiet = false;
  let why: string | null = null;
  for (const token of tokensOf(args, { owner: { type: 'string' }, force: { type: 'boolean' }, json: { type: 'boolean' }, quiet: { type: 'boolean' }, why: { type: 'string' } }, 'stop')) {
    if (token.kind === 'positional') throw new UsageError(`warden stop --owner stops the runs of a process: give it no run id (${JSON.stringify(token.value)}).`);
    if (token.kind !== 'option') continue;
    if (token.name === 'owner') owner = ownerPidFrom(token.value ?? '');
    else if (token.name === 'force') force = true;
    else if (token.name === 'json') json = true;
    else if (token.name === 'why') {
      const text = (token.value ?? '').trim();
      // Kept in each run's notes: one short line.
      if (text === '' || text.length > 200 || /\p{Cc}/u.test(text)) throw new UsageError('--why takes one line of up to 200 characters: why the runs are stopped.');
      why = text;
    } else quiet = true;
  }
  const filter = new OwnerFilter(owner!);
  const api = await host();
  let live: RunResult[];
  try {
    live = (await api.list({ output: 'none' })).filter((run) => run.state !== 'ended' && filter.owns(run.owner));
  } catch (error) {
    clientError(error);
  }
  const note = `Stopped with the other live runs of process ${owner} and of those under it (warden stop --owner)${why !== null ? `: ${why.replace(/\.$/, '')}` : ''}.`;
  const stopped = await Promise.all(
    live.map(async (run) => {
      try {
        await api.stop(run.id, { force, note });
        return await api.wait(run.id, { output: 'all' });
      } catch (error) {
        // Ended meanwhile: its end is the answer.
        if (kindOf(error) !== 'not-found') throw error;
        return (await api.get(run.id)) ?? run;
      }
    }),
  );
  if (json) io.out(`${JSON.stringify(stopped.map((run) => ({ ...run, stdout: '', stderr: '' })), null, 2)}\n`);
  else if (!quiet) {
    if (stopped.length === 0) io.err(`warden: no live run belongs to process ${owner} or a process under it.\n`);
    for (const run of stopped) io.err(`${humanSummary(run).split('\n')[0]}: ${commandOf(run)}\n`);
  }
  return 0;
}
