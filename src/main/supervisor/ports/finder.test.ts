// The port finder's bookkeeping against a table the test controls (which
// processes it reads, when, and what it attributes), then against the real
// /proc with real servers, checked against `ss -ltnp`.

import { execa } from 'execa';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PortFinder } from './finder';
import type { ListenEntry } from './proc-net';
import { procSocketTable, type SocketTable } from './socket-table';

/** A table whose listening sockets and descriptors the test sets; it counts the descriptor reads by pid. */
function fakeTable() {
  const state = { listening: [] as ListenEntry[] | null, fds: new Map<number, number[]>(), reads: [] as number[], counters: null as string | null, tableReads: 0 };
  const table: SocketTable = {
    counters: () => state.counters,
    listening: () => {
      state.tableReads++;
      return state.listening === null ? null : [...state.listening];
    },
    socketInodes: (pid) => {
      state.reads.push(pid);
      return state.fds.get(pid) ?? null;
    },
  };
  return { state, table };
}

const listen = (inode: number, port: number, address = '127.0.0.1'): ListenEntry => ({ inode, port, address });

describe('PortFinder bookkeeping', () => {
  it('attributes each socket to the run whose process holds it, sorted by port', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(1, 8080), listen(2, 5173), listen(3, 22, '0.0.0.0'), listen(4, 5173, '::1')];
    state.fds.set(10, [1, 2, 99]).set(11, [4]).set(20, []);
    const finder = new PortFinder(table, 0);
    const found = finder.find(new Map([['a', [10, 11]], ['b', [20]]]));
    expect(found?.get('a')).toEqual([
      { port: 5173, address: '127.0.0.1', pid: 10 },
      { port: 5173, address: '::1', pid: 11 },
      { port: 8080, address: '127.0.0.1', pid: 10 },
    ]);
    expect(found?.get('b')).toEqual([]);
  });

  it('reads no process again while nothing new listens, and only then', () => {
    const { state, table } = fakeTable();
    // An outsider's socket (sshd): unowned for good.
    state.listening = [listen(3, 22)];
    state.fds.set(10, []).set(20, []);
    const finder = new PortFinder(table, 0);
    const runs = new Map([['a', [10]], ['b', [20]]]);
    finder.find(runs, { every: true });
    expect(state.reads.sort()).toEqual([10, 20]);
    state.reads.length = 0;
    finder.find(runs, { every: true });
    finder.find(runs, { every: true });
    expect(state.reads).toEqual([]);
    expect(finder.stats.lastProcessReads).toBe(0);
    // A new process in a run is read once.
    runs.set('a', [10, 11]);
    state.fds.set(11, []);
    finder.find(runs, { every: true });
    expect(state.reads).toEqual([11]);
    state.reads.length = 0;
    // A new socket: every process not yet read since it appeared is read, until it is found.
    state.listening = [listen(3, 22), listen(5, 9000)];
    state.fds.set(20, [5]);
    const found = finder.find(runs, { every: true });
    expect(found?.get('b')).toEqual([{ port: 9000, address: '127.0.0.1', pid: 20 }]);
    expect(state.reads.sort()).toEqual([10, 11, 20]);
    state.reads.length = 0;
    // Found once, it is remembered: no read while it listens.
    expect(finder.find(runs, { every: true })?.get('b')).toHaveLength(1);
    expect(state.reads).toEqual([]);
  });

  it('stops reading once every unowned socket is found', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000)];
    state.fds.set(10, [5]).set(11, []);
    const finder = new PortFinder(table, 0);
    finder.find(new Map([['a', [10, 11]]]));
    expect(state.reads).toEqual([10]);
  });

  it('forgets a socket that stopped listening, and finds a new one on the same port', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000)];
    state.fds.set(10, [5]).set(20, [6]);
    const finder = new PortFinder(table, 0);
    const runs = new Map([['a', [10]], ['b', [20]]]);
    expect(finder.find(runs)?.get('a')).toHaveLength(1);
    state.listening = [listen(6, 9000)];
    const found = finder.find(runs);
    expect(found?.get('a')).toEqual([]);
    expect(found?.get('b')).toEqual([{ port: 9000, address: '127.0.0.1', pid: 20 }]);
  });

  it('a run forgotten leaves its socket to be found in another', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000)];
    state.fds.set(10, [5]);
    const finder = new PortFinder(table, 0);
    expect(finder.find(new Map([['a', [10]]]))?.get('a')).toHaveLength(1);
    // Asked about another run alone, a's socket stays a's (not reported for b, not read again).
    state.reads.length = 0;
    state.fds.set(30, [5]);
    expect(finder.find(new Map([['b', [30]]]))?.get('b')).toEqual([]);
    expect(state.reads).toEqual([]);
    finder.forgetRun('a');
    expect(finder.find(new Map([['b', [30]]]))?.get('b')).toEqual([{ port: 9000, address: '127.0.0.1', pid: 30 }]);
  });

  it('forgets processes in no run only when told these are all the runs', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(3, 22)];
    state.fds.set(10, []).set(20, []);
    const finder = new PortFinder(table, 0);
    finder.find(new Map([['a', [10]], ['b', [20]]]), { every: true });
    state.reads.length = 0;
    finder.find(new Map([['a', [10]]]));
    finder.find(new Map([['a', [10]], ['b', [20]]]), { every: true });
    expect(state.reads).toEqual([]);
    finder.find(new Map([['a', [10]]]), { every: true });
    finder.find(new Map([['a', [10]], ['b', [20]]]), { every: true });
    expect(state.reads).toEqual([20]);
  });

  it('reuses a table read within its age, and says null without tables', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000)];
    state.fds.set(10, [5]);
    const finder = new PortFinder(table, 60_000);
    expect(finder.find(new Map([['a', [10]]]))?.get('a')).toHaveLength(1);
    state.listening = [];
    expect(finder.find(new Map([['a', [10]]]))?.get('a')).toHaveLength(1);
    expect(finder.stats.passes).toBe(1);
    expect(finder.listenersOn(9000)).toEqual([]);
    const none = fakeTable();
    none.state.listening = null;
    expect(new PortFinder(none.table, 0).find(new Map([['a', [10]]]))).toBeNull();
  });

  it("reads the tables again only when the kernel's counters moved, or after the full-read time, or when asked fresh", async () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000)];
    state.counters = 'TCP: inuse 1';
    state.fds.set(10, [5]).set(11, [6]);
    const finder = new PortFinder(table, 0, 150);
    const runs = new Map([['a', [10]], ['b', [11]]]);
    expect(finder.find(runs)?.get('a')).toHaveLength(1);
    expect(state.tableReads).toBe(1);
    // A new listener the counters do not show (a close cancelled it out): not seen until the full read.
    state.listening = [listen(5, 9000), listen(6, 9001)];
    expect(finder.find(runs)?.get('b')).toEqual([]);
    expect(state.tableReads).toBe(1);
    expect(finder.stats.skipped).toBe(1);
    // Asked fresh (a port probe, warden ports): read at once.
    expect(finder.find(runs, { fresh: true })?.get('b')).toEqual([{ port: 9001, address: '127.0.0.1', pid: 11 }]);
    expect(state.tableReads).toBe(2);
    // The counters moved: read.
    state.listening = [listen(5, 9000)];
    state.counters = 'TCP: inuse 2';
    expect(finder.find(runs)?.get('b')).toEqual([]);
    expect(state.tableReads).toBe(3);
    // Standing still past the full-read time: read anyway.
    state.listening = [listen(5, 9000), listen(6, 9001)];
    finder.find(runs);
    expect(state.tableReads).toBe(3);
    await new Promise((r) => setTimeout(r, 200));
    expect(finder.find(runs)?.get('b')).toHaveLength(1);
    expect(state.tableReads).toBe(4);
    // No counters to read: every look reads the tables.
    state.counters = null;
    finder.find(runs);
    finder.find(runs);
    expect(state.tableReads).toBe(6);
  });

  it('names the run holding a port, and the listeners on one', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000), listen(6, 9001)];
    state.fds.set(10, [5]);
    const finder = new PortFinder(table, 0);
    finder.find(new Map([['a', [10]]]));
    expect(finder.ownerOfPort(9000)).toEqual({ runId: 'a', pid: 10 });
    expect(finder.ownerOfPort(9001)).toBeUndefined();
    expect(finder.listenersOn(9001)).toEqual([listen(6, 9001)]);
  });

  it('reports one address and port once, however many sockets listen there (SO_REUSEPORT)', () => {
    const { state, table } = fakeTable();
    state.listening = [listen(5, 9000), listen(7, 9000, '::'), listen(8, 9000)];
    state.fds.set(10, [5]).set(11, [7, 8]);
    const finder = new PortFinder(table, 0);
    expect(finder.find(new Map([['a', [10, 11]]]))?.get('a')).toEqual([
      { port: 9000, address: '127.0.0.1', pid: 10 },
      { port: 9000, address: '::', pid: 11 },
    ]);
  });
});

describe('PortFinder on the real /proc', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  /** `ss -ltnp`'s listening ports held by `pid`. */
  async function ssPorts(pid: number): Promise<number[]> {
    const { stdout } = await execa('ss', ['-Hltnp']);
    const ports = new Set<number>();
    for (const line of stdout.split('\n')) {
      if (!line.includes(`pid=${pid},`)) continue;
      const local = line.trim().split(/\s+/)[3] ?? '';
      ports.add(Number(local.slice(local.lastIndexOf(':') + 1)));
    }
    return [...ports].sort((a, b) => a - b);
  }

  it('finds what ss -ltnp finds for a process: IPv4 and IPv6 listeners', async () => {
    const listenOn = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const server = createServer();
        servers.push(server);
        server.once('error', reject);
        server.listen(0, host, () => resolve((server.address() as { port: number }).port));
      });
    const v4 = await listenOn('127.0.0.1');
    const v6 = await listenOn('::1').catch(() => null);
    const finder = new PortFinder(procSocketTable('/proc'), 0);
    const found = finder.find(new Map([['self', [process.pid]]]))!.get('self')!;
    const ports = [...new Set(found.map((p) => p.port))].sort((a, b) => a - b);
    expect(ports).toEqual(await ssPorts(process.pid));
    expect(found).toContainEqual({ port: v4, address: '127.0.0.1', pid: process.pid });
    if (v6 !== null) expect(found).toContainEqual({ port: v6, address: '::1', pid: process.pid });
  });

  it('reads a table longer than the page the kernel hands out per read: 80 listeners, every one found', async () => {
    const ports = await Promise.all(
      Array.from({ length: 80 }, () => new Promise<number>((resolve, reject) => {
        const server = createServer();
        servers.push(server);
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
      })),
    );
    const table = procSocketTable('/proc');
    expect(table.counters?.()).toMatch(/^TCP: inuse \d+/);
    const found = new PortFinder(table, 0).find(new Map([['self', [process.pid]]]), { fresh: true })!.get('self')!;
    const seen = new Set(found.map((p) => p.port));
    expect(ports.filter((port) => !seen.has(port))).toEqual([]);
  });

  it('finds a listener in a child process, and nothing once it is gone', async () => {
    const child = execa(process.execPath, ['-e', "require('net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], { buffer: false, reject: false });
    const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    const finder = new PortFinder(procSocketTable('/proc'), 0);
    const found = finder.find(new Map([['child', [child.pid!]]]))!.get('child')!;
    expect(found.map((p) => p.port)).toEqual(await ssPorts(child.pid!));
    expect(found).toEqual([{ port, address: '127.0.0.1', pid: child.pid }]);
    child.kill('SIGKILL');
    await child.catch(() => undefined);
    for (let i = 0; i < 200 && finder.find(new Map([['child', [child.pid!]]]))!.get('child')!.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(finder.find(new Map([['child', [child.pid!]]]))!.get('child')).toEqual([]);
  });
});
