// Python scripts covered without cgroups (WARDEN_CGROUPS=0): the session's
// interpreter runs under the subreaper, so what a script starts and lets go
// (a setsid child without the marker, an orphan of a double fork) is found
// by parentage at the script's end, and dies with a host that is SIGKILLed.

import { execa } from 'execa';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDead, waitDead } from '../proc-testkit';
import { startHost } from '../../host/host';
import { LOST_UNSEEN } from '../../store/recovery';
import { reaperOnce } from '../reaper';
import { pythonHarness } from './testkit';
import { until } from '../../../../test/kit/until';

// Read as each interpreter starts: this file's sessions get no cgroup.
const before = process.env.WARDEN_CGROUPS;
beforeAll(() => {
  process.env.WARDEN_CGROUPS = '0';
});
afterAll(() => {
  if (before === undefined) delete process.env.WARDEN_CGROUPS;
  else process.env.WARDEN_CGROUPS = before;
});

const t = pythonHarness();

// A child in a session of its own without the marker, and an orphan (a double fork) without it either.
const ESCAPES = [
  'import os, subprocess',
  'bare = {"PATH": os.environ["PATH"]}',
  'p = subprocess.Popen(["setsid", "sleep", "320"], env=bare, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)',
  'q = subprocess.run("setsid sleep 321 </dev/null >/dev/null 2>&1 & echo $!", shell=True, env=bare, stdout=subprocess.PIPE, text=True)',
  'print("esc", p.pid, "orphan", q.stdout.strip(), "interp", os.getpid(), flush=True)',
].join('\n');

const pidsOf = (out: string) => [...out.matchAll(/(esc|orphan|interp) (\d+)/g)].map((m) => ({ what: m[1]!, pid: Number(m[2]) }));

describe.skipIf(reaperOnce() === null)('a session without a cgroup', () => {
  it("ends a script's escapees at its end, marker or not, and keeps the interpreter", async () => {
    const r = await t.py({ code: ESCAPES, session: 'bare' });
    expect(r.verdict).toBe('completed');
    const pids = pidsOf(r.stdout);
    expect(pids.map((p) => p.what)).toEqual(['esc', 'orphan', 'interp']);
    const [esc, orphan, interp] = pids.map((p) => p.pid);
    expect(await waitDead([esc!, orphan!])).toEqual([]);
    expect(r.teardown?.killed.map((p) => p.pid).sort()).toEqual([esc, orphan].sort());
    expect(r.teardown?.unseen).toBeUndefined();
    expect(isDead(interp!)).toBe(false);
  });

  it("a script's escapees die with a host that is SIGKILLed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-pyreaper-'));
    const module = join(__dirname, '..', '..', 'host', 'host.ts');
    const host = execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      import { startHost } from ${JSON.stringify(module)};
      const host = await startHost({ stateDir: ${JSON.stringify(dir)}, webRoot: null });
      const run = host.supervisor.start({ code: ${JSON.stringify(`${ESCAPES}\nimport time\ntime.sleep(300)`)}, session: 'bare' });
      console.log('id: ' + run.id);
      setInterval(() => console.log('out: ' + JSON.stringify(host.supervisor.list().map((r) => r.stdout).join(''))), 100);`], {
      reject: false,
      buffer: false,
      stdin: 'ignore',
      env: { WARDEN_CGROUPS: '0' },
    });
    let printed = '';
    host.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    let pids: number[] = [];
    try {
      await until('the script to print its three escapees', () => {
        const lines = printed.split('\n').filter((l) => l.startsWith('out: '));
        pids = lines.length > 0 ? pidsOf(JSON.parse(lines[lines.length - 1]!.slice(5)) as string).map((p) => p.pid) : [];
        return pids.length >= 3;
      });
      expect(pids).toHaveLength(3);
      expect(pids.filter(isDead)).toEqual([]);
      host.kill('SIGKILL');
      await host.catch(() => undefined);
      expect(await waitDead(pids)).toEqual([]);
      // The next host records it lost, and says what its look could not see rather than "nothing left".
      const id = /id: (\w+)/.exec(printed)![1]!;
      const next = await startHost({ stateDir: dir, webRoot: null });
      try {
        const lost = next.store!.get(id)!;
        expect(lost.verdict).toBe('lost');
        expect(lost.teardown).toMatchObject({ complete: false, unseen: LOST_UNSEEN });
        expect(lost.advice).toMatch(/dropped the marker/);
      } finally {
        await next.shutdown();
      }
    } finally {
      host.kill('SIGKILL');
      for (const pid of pids) if (!isDead(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
