// `warden list --all-hosts`: this machine's runs and every configured
// remote's, newest first, each with its host's name ("local" for this one).
// The hosts are asked at once; one that cannot be reached is named on stderr
// with the reason, and the others are listed.

import { LOCAL_HOST_NAME, loadRemotes, remoteLink } from '../client/remotes';
import type { RunSummary } from '../shared/history';
import { seconds } from '../shared/format';
import { list, type HistorySource } from './history';
import type { CliIo } from './io';
import { UsageError } from './parse';

interface HostRuns {
  name: string;
  runs?: RunSummary[];
  error?: string;
}

export async function listAllHosts(args: string[], io: CliIo, stateDir: string, local: (live: boolean) => Promise<HistorySource>): Promise<number> {
  const rest = args.filter((a) => a !== '--all-hosts');
  const json = rest.includes('--json');
  const query = json ? rest : [...rest, '--json'];
  // Each host answers the same `list --json`: one parser, one set of checks (a bad flag fails here, for this machine, first).
  const ask = async (source: (live: boolean) => Promise<HistorySource>): Promise<RunSummary[]> => {
    let text = '';
    await list(query, (t) => void (text += t), source);
    return JSON.parse(text) as RunSummary[];
  };
  const localRuns = await ask(local);
  const links = loadRemotes(stateDir).map((r) => remoteLink(stateDir, r.name));
  const hosts: HostRuns[] = [{ name: LOCAL_HOST_NAME, runs: localRuns }];
  try {
    hosts.push(
      ...(await Promise.all(
        links.map(async (link): Promise<HostRuns> => {
          try {
            return { name: link.name, runs: await ask(async () => ({ page: (q) => link.api.history(q), get: (id) => link.api.get(id) })) };
          } catch (error) {
            if (error instanceof UsageError) throw error;
            return { name: link.name, error: error instanceof Error ? error.message : String(error) };
          }
        }),
      )),
    );
  } finally {
    for (const link of links) link.transport.close();
  }
  const limitAt = rest.findIndex((a) => a === '--limit' || a.startsWith('--limit='));
  const limitText = limitAt < 0 ? undefined : rest[limitAt]!.includes('=') ? rest[limitAt]!.split('=')[1] : rest[limitAt + 1];
  const limit = limitText === undefined ? 50 : Number(limitText);
  const runs = hosts
    .flatMap((h) => (h.runs ?? []).map((run) => ({ host: h.name, ...run })))
    .sort((a, b) => b.startedAt.localeCompare(a.startedAt))
    .slice(0, limit);
  for (const h of hosts) if (h.error !== undefined) io.err(`warden: host ${h.name} is unreachable (${h.error}); its runs are not listed.\n`);
  if (json) {
    io.out(`${JSON.stringify(runs, null, 2)}\n`);
    return 0;
  }
  if (runs.length === 0) {
    io.out('No runs match on any host.\n');
    return 0;
  }
  const width = Math.max(...hosts.map((h) => h.name.length));
  for (const run of runs) {
    const what = run.command ?? (run.code ?? '').split('\n')[0] ?? '';
    io.out(`${run.host.padEnd(width)}  ${run.id}  ${run.startedAt.replace('T', ' ').slice(0, 19)}  ${(run.verdict ?? run.state).padEnd(12)} ${seconds(run.elapsedMs).padStart(8)}  ${what.slice(0, 80)}\n`);
  }
  return 0;
}
