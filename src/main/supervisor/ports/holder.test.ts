import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdersOf } from './holder';
import type { SocketTable } from './socket-table';

// A /proc of the test's own, with pids above the kernel's PID_MAX_LIMIT (2^22), so nothing here names a real process.
const BASE = 4_194_400;
let root: string;
const held: number[] = [];
afterEach(() => {
  for (const fd of held.splice(0)) closeSync(fd);
  if (root) rmSync(root, { recursive: true, force: true });
});

function proc(processes: { pid: number; cmdline?: string | 'hangs'; comm?: string }[]): string {
  root = mkdtempSync(join(tmpdir(), 'wholder-'));
  for (const p of processes) {
    mkdirSync(join(root, String(p.pid)));
    if (p.comm !== undefined) writeFileSync(join(root, String(p.pid), 'comm'), `${p.comm}\n`);
    const cmdline = join(root, String(p.pid), 'cmdline');
    if (p.cmdline === 'hangs') {
      execFileSync('mkfifo', [cmdline]);
      // O_RDWR holds the write end open without blocking: a read waits for bytes that never come.
      held.push(openSync(cmdline, constants.O_RDWR));
    } else if (p.cmdline !== undefined) writeFileSync(cmdline, p.cmdline);
  }
  mkdirSync(join(root, 'self'));
  return root;
}

function table(sockets: Record<number, number[]>): SocketTable {
  return { listening: () => [], socketInodes: (pid: number) => sockets[pid] ?? null, counters: () => null } as unknown as SocketTable;
}

describe('who holds a port', () => {
  it('names each holder by its command line, its [comm] when that read hangs, and pid N when it is gone', async () => {
    const at = proc([
      { pid: BASE + 1, cmdline: 'node\0server.js\0--port\x003000\0', comm: 'node' },
      { pid: BASE + 2, cmdline: 'hangs', comm: 'stuck' },
      { pid: BASE + 3, cmdline: 'other\0', comm: 'other' },
      { pid: BASE + 4 },
    ]);
    const holders = await holdersOf(at, table({ [BASE + 1]: [11, 12], [BASE + 2]: [13], [BASE + 3]: [99], [BASE + 4]: [11] }), new Set([12, 13, 11]));
    expect(holders).toEqual([
      { pid: BASE + 1, command: 'node server.js --port 3000' },
      { pid: BASE + 2, command: '[stuck]' },
      { pid: BASE + 4, command: `pid ${BASE + 4}` },
    ]);
  });

  it('stops at three holders, cuts a long command line, and looks for nothing when no socket is asked', async () => {
    const long = `python3 ${'x'.repeat(100)}`;
    const at = proc([1, 2, 3, 4].map((i) => ({ pid: BASE + i, cmdline: i === 2 ? `${long}\0` : `p${i}\0`, comm: `p${i}` })));
    const sockets = { [BASE + 1]: [7], [BASE + 2]: [7], [BASE + 3]: [7], [BASE + 4]: [7] };
    const holders = await holdersOf(at, table(sockets), new Set([7]));
    expect(holders.map((h) => h.pid)).toEqual([BASE + 1, BASE + 2, BASE + 3]);
    expect(holders[1]!.command).toBe(`${long.slice(0, 79)}…`);
    expect(holders[1]!.command).toHaveLength(80);
    expect(holders[0]!.command).toBe('p1');
    expect(await holdersOf(at, table(sockets), new Set())).toEqual([]);
    expect(await holdersOf(join(at, 'none'), table(sockets), new Set([7]))).toEqual([]);
  });

  it('keeps an 80-character command line whole', async () => {
    const exact = 'y'.repeat(80);
    const at = proc([{ pid: BASE + 1, cmdline: `${exact}\0`, comm: 'y' }]);
    expect((await holdersOf(at, table({ [BASE + 1]: [5] }), new Set([5])))[0]!.command).toBe(exact);
  });
});
