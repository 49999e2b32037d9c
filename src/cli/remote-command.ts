// `warden remote add|list|remove`: the remote hosts this machine's commands
// can reach (src/client/remotes.ts keeps them and builds the ssh call).

import { describeRemote, loadRemotes, makeCommandRemote, makeSshRemote, remotesPath, saveRemotes, withRemotesLock } from '../client/remotes';
import { resolveStateDir } from '../client/state-dir';
import type { CliIo } from './io';
import { tokensOf, UsageError } from './parse';

export async function remoteCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  const stateDir = resolveStateDir();
  // A RemoteError is said with its own kind (bad-input, or not-found for a name no remote has).
  if (sub === 'add') return add(rest, stateDir, io);
  if (sub === 'list') return list(rest, stateDir, io);
  if (sub === 'remove' || sub === 'rm') return remove(rest, stateDir, io);
  throw new UsageError(`warden remote takes add, list or remove${sub === undefined ? '' : `, not ${JSON.stringify(sub)}`} (see warden remote --help).`);
}

async function add(args: string[], stateDir: string, io: CliIo): Promise<number> {
  const words: string[] = [];
  let warden: string | undefined;
  let command: string | undefined;
  let pod: string | undefined;
  for (const token of tokensOf(args, { warden: { type: 'string' }, command: { type: 'string' }, 'k8s-pod': { type: 'string' } }, 'remote add')) {
    if (token.kind === 'positional') words.push(token.value);
    else if (token.kind === 'option' && token.name === 'warden') warden = token.value;
    else if (token.kind === 'option' && token.name === 'command') command = token.value;
    else if (token.kind === 'option' && token.name === 'k8s-pod') pod = token.value;
  }
  if (pod !== undefined) {
    // The kubectl exec line written for the user (src/cli/k8s/pod-remote.ts), kept as a --command remote.
    if (command !== undefined || words.length > 1) throw new UsageError('--k8s-pod replaces the destination and --command: give one of them.');
    command = (await import('./k8s/pod-remote')).podCommand(pod, warden);
    warden = undefined;
  }
  const [name, destination, ...extra] = words;
  if (name === undefined) throw new UsageError('warden remote add needs a name: warden remote add NAME ssh://HOST (see warden remote --help).');
  if (extra.length > 0) throw new UsageError(`warden remote add takes a name and one destination, not ${JSON.stringify(extra[0])} too.`);
  let remote;
  if (command !== undefined) {
    if (destination !== undefined || warden !== undefined) throw new UsageError('--command replaces the destination and --warden: give one or the other.');
    remote = makeCommandRemote(name, command);
  } else {
    if (destination === undefined) throw new UsageError('warden remote add needs a destination: ssh://[USER@]HOST[:PORT], or --command CMD.');
    remote = makeSshRemote(name, destination, warden);
  }
  // Read, changed and written under the lock: commands at once each keep their remote.
  await withRemotesLock(stateDir, () => {
    const remotes = loadRemotes(stateDir);
    if (remotes.some((r) => r.name === remote.name)) throw new UsageError(`A remote named ${remote.name} exists: warden remote remove ${remote.name} first.`);
    saveRemotes(stateDir, [...remotes, remote]);
  });
  io.err(`warden: added remote ${remote.name}: ${describeRemote(remote)}\n`);
  return 0;
}

function list(args: string[], stateDir: string, io: CliIo): number {
  let json = false;
  for (const token of tokensOf(args, { json: { type: 'boolean' } }, 'remote list')) {
    if (token.kind === 'positional') throw new UsageError(`warden remote list takes no words (${JSON.stringify(token.value)}).`);
    if (token.kind === 'option') json = true;
  }
  const remotes = loadRemotes(stateDir);
  if (json) {
    io.out(`${JSON.stringify(remotes, null, 2)}\n`);
    return 0;
  }
  if (remotes.length === 0) {
    io.out(`No remotes (${remotesPath(stateDir)}). Add one with: warden remote add NAME ssh://HOST\n`);
    return 0;
  }
  for (const r of remotes) io.out(`${r.name.padEnd(16)} ${describeRemote(r)}\n`);
  return 0;
}

async function remove(args: string[], stateDir: string, io: CliIo): Promise<number> {
  const words = tokensOf(args, {}, 'remote remove').flatMap((t) => (t.kind === 'positional' ? [t.value] : []));
  if (words.length !== 1) throw new UsageError('warden remote remove takes one name.');
  await withRemotesLock(stateDir, () => {
    const remotes = loadRemotes(stateDir);
    const kept = remotes.filter((r) => r.name !== words[0]);
    if (kept.length === remotes.length) throw new UsageError(`No remote named ${JSON.stringify(words[0])} (see warden remote list).`);
    saveRemotes(stateDir, kept);
  });
  io.err(`warden: removed remote ${words[0]}\n`);
  return 0;
}
