// Issue 18, item 3: a history never vanishes without a word. Real `warden`
// processes (bin/warden.mjs) on real files: history.db deleted under a
// running host, and a 300-run history with four pages overwritten with
// garbage (two leaves of the runs table, one of its start index, one of the
// output), read by a bare `warden list` and through a host.

import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/result';
import type { RunSummary } from '../../shared/history';
import { serveFor, stopBackgroundHosts, WARDEN_BIN } from '../../cli/testkit';
import { NodeTransport, socketPathFor } from '../../client/transport';
import { openDatabase } from './sql';
import { fakeResult, removeTempDirs, tempStateDir } from './store-testkit';
import { openStore } from './store';

const servers: ResultPromise[] = [];
const dirs: string[] = [];

// Built now if the sources changed: no "building the CLI" line in the stderr the tests read.
beforeAll(() => void execFileSync(process.execPath, [WARDEN_BIN, '--version'], { stdio: 'pipe' }), 120_000);

afterEach(async () => {
  for (const child of servers.splice(0)) {
    child.kill('SIGKILL');
    await child;
  }
  await stopBackgroundHosts(dirs.splice(0));
  removeTempDirs();
});

function warden(dir: string, args: string[]) {
  dirs.push(dir);
  return execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '30s' }, stdin: 'ignore', timeout: 60_000 });
}

const PAGE = 16_384;

/** A history of `count` ended runs, each with some output, written by the store itself. */
function history(dir: string, count: number): string[] {
  const store = openStore({ dir });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const result = fakeResult({ id: (0xa0000000 + i).toString(16), stdout: `run ${i} says ${'x'.repeat(600 + (i % 7) * 100)}\n`, notes: [`note of run ${i}`] });
    store.recordResult(result);
    ids.push(result.id);
  }
  store.close();
  return ids;
}

/** Pages of the file by what holds them (dbstat), and the page count. */
function pagesOf(path: string): { byName: Map<string, { pageno: number; pagetype: string }[]>; pages: number } {
  const db = openDatabase(path);
  const rows = db.prepare('SELECT name, pageno, pagetype FROM dbstat').all() as { name: string; pageno: number; pagetype: string }[];
  db.close();
  const byName = new Map<string, { pageno: number; pagetype: string }[]>();
  for (const row of rows) byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
  return { byName, pages: statSync(path).size / PAGE };
}

/** Overwrites whole pages (1-based) with garbage. */
function damage(path: string, pages: number[]): void {
  const fd = openSync(path, 'r+');
  try {
    for (const page of pages) {
      const garbage = Buffer.alloc(PAGE);
      for (let i = 0; i < PAGE; i++) garbage[i] = (i * 131 + page * 17) & 0xff;
      writeSync(fd, garbage, 0, PAGE, (page - 1) * PAGE);
    }
  } finally {
    closeSync(fd);
  }
}

/** Four pages: two leaves of `runs` (not its last, which every open reads), one of runs_by_start, one of run_output. */
function fourPages(path: string): number[] {
  const { byName } = pagesOf(path);
  const leaves = (name: string) => (byName.get(name) ?? []).filter((p) => p.pagetype === 'leaf').map((p) => p.pageno);
  const runs = leaves('runs');
  const start = leaves('runs_by_start');
  const output = [...leaves('run_output'), ...(byName.get('run_output') ?? []).filter((p) => p.pagetype === 'overflow').map((p) => p.pageno)];
  expect(runs.length).toBeGreaterThanOrEqual(4);
  expect(start.length).toBeGreaterThanOrEqual(1);
  expect(output.length).toBeGreaterThanOrEqual(2);
  return [runs[1]!, runs[Math.floor(runs.length / 2)]!, start[0]!, output[Math.floor(output.length / 2)]!];
}

describe('history.db deleted under a running host', () => {
  it('is recreated from the open copy, said on stderr, and every run is found after a restart', async () => {
    const dir = tempStateDir();
    const { child } = await serveFor(dir, servers);
    dirs.push(dir);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((JSON.parse((await warden(dir, ['run', '--json', '--', 'echo', `before ${i}`])).stdout) as RunResult).id);
    rmSync(join(dir, 'history.db'));
    for (let i = 0; i < 3; i++) ids.push((JSON.parse((await warden(dir, ['run', '--json', '--', 'echo', `after ${i}`])).stdout) as RunResult).id);
    child.kill('SIGTERM');
    const done = await child;
    expect(done.stderr).toMatch(/history\.db was deleted while in use; it was recreated from the copy this process had open/);
    expect(existsSync(join(dir, 'history.db'))).toBe(true);
    // No host now: list reads the file itself.
    const listed = await warden(dir, ['list', '--json']);
    expect(listed.exitCode).toBe(0);
    expect((JSON.parse(listed.stdout) as RunSummary[]).map((r) => r.id).sort()).toEqual([...ids].sort());
    const shown = await warden(dir, ['show', ids[5]!, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: ids[5], stdout: 'after 2\n', verdict: 'completed' });
  }, 120_000);
});

describe('history.db replaced under an open store (another file moved to its name)', () => {
  it('the new file is used from then on, the runs it lacked are re-recorded into it, and a notice says so', () => {
    const dir = tempStateDir();
    const other = tempStateDir();
    const notices: string[] = [];
    const store = openStore({ dir, notice: (line) => notices.push(line) });
    const mine = [fakeResult(), fakeResult(), fakeResult()];
    for (const r of mine) store.recordResult(r);
    // Another history, with one run of its own, takes the name (its WAL folded in, as a closed store leaves it).
    const theirs = openStore({ dir: other });
    const their = fakeResult();
    theirs.recordResult(their);
    theirs.close();
    renameSync(join(other, 'history.db'), join(dir, 'history.db'));
    const line = store.checkFile();
    expect(line).toMatch(/history\.db was replaced by another file while in use; that file is used from now on, and the runs it lacked were re-recorded into it: 3 run\(s\) saved/);
    expect(notices).toEqual([line]);
    const after = fakeResult();
    store.recordResult(after);
    store.close();
    const reopened = openStore({ dir });
    expect(reopened.list({ limit: 100 }).runs.map((r) => r.id).sort()).toEqual([...mine, their, after].map((r) => r.id).sort());
    reopened.close();
  });
});

describe('a 300-run history with four damaged pages', () => {
  it('a bare `warden list` salvages at least 298 of 300 runs, says what it saved and what not, and moves the damaged file aside', async () => {
    const dir = tempStateDir();
    const ids = history(dir, 300);
    const path = join(dir, 'history.db');
    damage(path, fourPages(path));

    const listed = await warden(dir, ['list', '--json', '--limit', '1000']);
    expect(listed.exitCode).toBe(0);
    const runs = JSON.parse(listed.stdout) as RunSummary[];
    const found = new Set(runs.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    expect(missing.length).toBeLessThanOrEqual(2);
    expect(runs.length).toBeGreaterThanOrEqual(298);
    // One line on stderr: damaged, how many saved, what was not, where the file went.
    const lines = listed.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warden: Warden's history database .* was (found damaged while in use|damaged) \(.*\); \d+ run\(s\) saved into the fresh history, \d+ of them in part: .*; (none lost|NOT saved: .*)\. The damaged file was moved aside to .*\.corrupt-/);
    expect(readdirSync(dir).some((f) => f.startsWith('history.db.corrupt-'))).toBe(true);
    for (const id of missing) expect(lines[0]).toContain(id);

    // A run saved in part answers with what was read, and a note; never an internal error.
    const partialId = /in part: ([0-9a-f]+) \(without/.exec(lines[0]!)![1]!;
    const shown = await warden(dir, ['show', partialId]);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(/note: Warden's history database was damaged: .* could not be read/);
  }, 120_000);

  it('through a host that finds the damage in use: a damaged run answers 200 with a note, and the list then holds at least 298 runs', async () => {
    const dir = tempStateDir();
    const ids = history(dir, 300);
    const path = join(dir, 'history.db');
    const pages = fourPages(path);
    damage(path, pages);
    const { child } = await serveFor(dir, servers);
    dirs.push(dir);
    // Every run, through the host's socket: none answers an internal error, at most 2 are not found.
    const transport = new NodeTransport({ socketPath: socketPathFor(dir) });
    const statuses = new Map<number, string[]>();
    let noted = 0;
    for (const id of ids) {
      const reply = await transport.request('GET', `/api/v1/runs/${id}`);
      statuses.set(reply.status, [...(statuses.get(reply.status) ?? []), id]);
      if (reply.status === 200 && (reply.body as RunResult).notes.some((n) => n.startsWith("Warden's history database was damaged"))) noted++;
    }
    // Clients of the host (MCP, the UI) are told too: GET /host carries the line.
    const info = (await transport.request('GET', '/api/v1/host')).body as { historyNotices: { line: string }[] };
    expect(info.historyNotices.map((n) => n.line).join('\n')).toMatch(/history database .* was (found damaged while in use|damaged) \(/);
    transport.close();
    expect(statuses.has(500)).toBe(false);
    expect(statuses.get(200)!.length).toBeGreaterThanOrEqual(298);
    expect(noted).toBeGreaterThan(0);
    // And the host's one `warden show` of a run that was damaged, as a person sees it.
    const shown = await warden(dir, ['show', statuses.get(200)![0]!]);
    expect(shown.exitCode).toBe(0);
    const listed = await warden(dir, ['list', '--json', '--limit', '1000']);
    expect((JSON.parse(listed.stdout) as RunSummary[]).length).toBeGreaterThanOrEqual(298);
    child.kill('SIGTERM');
    const done = await child;
    expect(done.stderr).toMatch(/history: Warden's history database .* was (found damaged while in use|damaged) \(/);
  }, 180_000);
});
