// `warden remote add NAME --k8s-pod NS/POD[/CONTAINER]`: the kubectl exec
// transport without writing it by hand. A fake `kubectl` first on PATH
// records its argv and runs `warden dial-stdio` here in the "pod's" state
// dir, as `kubectl exec -i` runs it in the container: a run through the
// remote lands in that host, and the argv is exactly kubectl's form.

import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { splitCommand } from '../../client/remotes';
import type { RunResult } from '../../shared/result';
import { stopBackgroundHosts, WARDEN_BIN } from '../testkit';
import { podCommand, podDialArgv, quoteWord } from './pod-remote';

const dir = mkdtempSync(join(tmpdir(), 'wk8spod-remote-'));
const here = join(dir, 'here');
const pod = join(dir, 'pod');
const bin = join(dir, 'bin');
const argvLog = join(dir, 'kubectl-argv');

afterAll(async () => {
  await stopBackgroundHosts([here, pod]);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

function warden(args: string[]) {
  return execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: here, WARDEN_HOST_IDLE: '60s', PATH: `${bin}:${process.env.PATH}` }, stdin: 'ignore', timeout: 60_000 });
}

describe('warden remote add --k8s-pod', () => {
  it('runs through `kubectl exec -i -n NS POD -c CONTAINER -- warden dial-stdio` in the pod', async () => {
    mkdirSync(bin, { recursive: true });
    // The fake kubectl: its argv, one word a line, then the pod's warden dial-stdio.
    writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${argvLog}\nWARDEN_STATE_DIR=${pod} WARDEN_HOST_IDLE=60s exec ${process.execPath} ${WARDEN_BIN} dial-stdio\n`);
    chmodSync(join(bin, 'kubectl'), 0o755);
    const added = await warden(['remote', 'add', 'train', '--k8s-pod', 'ml/train-step-abcde/task']);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(added.stderr).toBe('warden: added remote train: command: kubectl exec -i -n ml train-step-abcde -c task -- warden dial-stdio');
    const done = await warden(['--remote', 'train', 'run', '--', 'bash', '-c', 'echo "in $WARDEN_STATE_DIR"; exit 6']);
    expect(done.exitCode, done.stderr).toBe(6);
    expect(done.stdout).toBe(`in ${pod}`);
    expect(readFileSync(argvLog, 'utf8').split('\n').slice(0, -1)).toEqual(['exec', '-i', '-n', 'ml', 'train-step-abcde', '-c', 'task', '--', 'warden', 'dial-stdio']);
    const id = /\[run ([0-9a-f]+)\]/.exec(done.stderr)![1]!;
    const there = await execa(process.execPath, [WARDEN_BIN, 'show', id, '--json'], { reject: false, env: { WARDEN_STATE_DIR: pod } });
    expect((JSON.parse(there.stdout) as RunResult).exitCode).toBe(6);

    // --warden names how the pod runs warden; no container: kubectl's default.
    expect((await warden(['remote', 'add', 'other', '--k8s-pod', 'ml/p', '--warden', '/opt/warden/bin/warden'])).stderr).toBe('warden: added remote other: command: kubectl exec -i -n ml p -- /opt/warden/bin/warden dial-stdio');
  }, 60_000);

  it('refuses a pod it cannot name, and --k8s-pod with a destination or --command', async () => {
    const cases: [string[], RegExp][] = [
      [['remote', 'add', 'x', '--k8s-pod', 'ml'], /^warden: Name a pod as NAMESPACE\/POD/],
      [['remote', 'add', 'x', '--k8s-pod', 'ml/-bad'], /^warden: A pod's name is/],
      [['remote', 'add', 'x', '--k8s-pod', 'ml/p;rm'], /^warden: A pod's name is/],
      [['remote', 'add', 'x', '--k8s-pod', 'ml/p/C'], /^warden: A container's name is/],
      [['remote', 'add', 'x', 'ssh://h', '--k8s-pod', 'ml/p'], /^warden: --k8s-pod replaces the destination and --command/],
      [['remote', 'add', 'x', '--command', 'kubectl', '--k8s-pod', 'ml/p'], /^warden: --k8s-pod replaces the destination and --command/],
    ];
    for (const [args, error] of cases) {
      const r = await warden(args);
      expect(r.exitCode, args.join(' ')).toBe(125);
      expect(r.stderr, args.join(' ')).toMatch(error);
    }
  }, 60_000);
});

describe('podCommand', () => {
  it('reads back, through the remote splitter, as kubectl argv', () => {
    const rows: [string, string | undefined, string[]][] = [
      ['n/p', undefined, ['kubectl', 'exec', '-i', '-n', 'n', 'p', '--', 'warden', 'dial-stdio']],
      ['n/p/c', undefined, ['kubectl', 'exec', '-i', '-n', 'n', 'p', '-c', 'c', '--', 'warden', 'dial-stdio']],
      ['n/p', 'node /w/bin/warden.mjs', ['kubectl', 'exec', '-i', '-n', 'n', 'p', '--', 'node', '/w/bin/warden.mjs', 'dial-stdio']],
      ['n/p', '  ', ['kubectl', 'exec', '-i', '-n', 'n', 'p', '--', 'warden', 'dial-stdio']],
      ['n/p', '/opt/my warden$(x)/"w"\\', ['kubectl', 'exec', '-i', '-n', 'n', 'p', '--', '/opt/my', 'warden$(x)/"w"\\', 'dial-stdio']],
    ];
    for (const [ref, warden, argv] of rows) expect(splitCommand(podCommand(ref, warden)), `${ref} ${warden}`).toEqual(argv);
    expect(podDialArgv({ namespace: 'a', pod: 'b' })).toEqual(['kubectl', 'exec', '-i', '-n', 'a', 'b', '--', 'warden', 'dial-stdio']);
    expect(quoteWord('plain-word_1.2/x:y=z')).toBe('plain-word_1.2/x:y=z');
    expect(quoteWord('a b')).toBe('"a b"');
    expect(quoteWord('q"\\')).toBe('"q\\"\\\\"');
  });
});
