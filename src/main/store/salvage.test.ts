// The pure parts of salvage.ts: finding run records in raw pages, and the
// line that says what was saved and what was not.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runIdsIn, runRecordsInFile, salvageLine, type SalvageReport } from './salvage';

const dir = mkdtempSync(join(tmpdir(), 'wsalvage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const record = (id: string, kind = 'command') => `{"id":"${id}","kind":"${kind}","argv":["x"]}`;

describe('runIdsIn', () => {
  it.each([
    ['one command record', record('a1'), ['a1']],
    ['a python record', record('p9', 'python'), ['p9']],
    ['the same id twice (an old copy of the row) counts once', record('a1') + '\0\0' + record('a1'), ['a1']],
    ['two records between page bytes', `\x0d\x00${record('a1')}\xff\xfe${record('b2')}`, ['a1', 'b2']],
    ['a remote id keeps its @', record('abc@box'), ['abc@box']],
    ['another kind is not a run record', record('z', 'service'), []],
    ['an id without kind right after is not one', '{"id":"a1","verdict":"failed"}', []],
    ['an event detail with an id is not one', '{"runId":"a1","kind":"command"}', []],
    ['an empty id is not one', record(''), []],
    ['an id with a quote is cut out', '{"id":"a\\"b","kind":"command"}', []],
  ])('%s', (_name, text, ids) => expect([...runIdsIn(text)].sort()).toEqual(ids));
});

describe('runRecordsInFile', () => {
  it('counts the records of the file and its WAL once each, whatever chunk boundaries cut them', () => {
    const path = join(dir, 'h.db');
    const filler = (n: number) => 'x'.repeat(n);
    const body = [filler(5), record('r1'), filler(61), record('r2'), filler(3), record('r3'), filler(200), record('r1')].join('');
    writeFileSync(path, body);
    writeFileSync(`${path}-wal`, filler(40) + record('w1') + record('r2'));
    // Every chunk size from smaller than a record to the whole file: the boundary falls inside each record somewhere.
    for (let chunk = 8; chunk <= body.length + 1; chunk += 7) expect(runRecordsInFile(path, chunk)).toBe(4);
  });
  it('is null for a file that cannot be read, and counts without a WAL', () => {
    expect(runRecordsInFile(join(dir, 'none.db'))).toBeNull();
    const path = join(dir, 'alone.db');
    writeFileSync(path, record('q1'));
    expect(runRecordsInFile(path)).toBe(1);
  });
});

describe('salvageLine', () => {
  const report = (over: Partial<SalvageReport>): SalvageReport => ({ whole: 0, partial: [], skipped: 0, lost: [], ...over });
  it.each([
    ['all saved', report({ whole: 3 }), '3 run(s) saved into the fresh history; none lost'],
    ['some in part', report({ whole: 1, partial: [{ id: 'b', missing: 'its stdout' }] }), '2 run(s) saved into the fresh history, 1 of them in part: b (without its stdout); none lost'],
    ['some lost', report({ whole: 1, lost: ['run c'] }), '1 run(s) saved into the fresh history; NOT saved: run c'],
    ['no table reads, 300 records in the pages', report({ unreadable: { runsInFile: 300 } }), 'its header or list of tables cannot be read, so no run in it could be read: 0 run(s) saved into the fresh history; NOT saved: up to 300 run(s) (records found in its raw pages)'],
    ['no table reads, none found', report({ unreadable: { runsInFile: 0 } }), 'its header or list of tables cannot be read, so no run in it could be read: 0 run(s) saved into the fresh history; NOT saved: no run record Warden could find'],
    ['no table reads, the file unreadable', report({ unreadable: { runsInFile: null } }), 'its header or list of tables cannot be read, so no run in it could be read: 0 run(s) saved into the fresh history; NOT saved: an unknown number of runs'],
  ])('%s', (_name, r, line) => expect(salvageLine(r)).toBe(line));
});
