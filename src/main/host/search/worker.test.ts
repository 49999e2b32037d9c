// The search worker with real worker threads: it answers as the scanner
// does in this thread, a pattern that backtracks without end is terminated
// at its hard stop and answered "too slow", and the scans after it get a
// fresh worker; scans queue, one at a time.

import { afterEach, describe, expect, it } from 'vitest';
import { searchScanner, type ScanJob } from './scan';
import { ScanTooSlowError, SearchWorker } from './worker';

let worker: SearchWorker;
afterEach(async () => {
  await worker?.close();
});

function job(text: string, pattern: string, over: Partial<ScanJob> = {}): ScanJob {
  return { region: text, base: 0, scanFrom: 0, scanTo: text.length, fromLine: 1, pattern, literal: false, ignoreCase: false, context: 1, maxMatches: 50, budgetMs: 60_000, gap: null, wantEndLine: true, ...over };
}

describe('SearchWorker', () => {
  it('answers what the scanner answers in this thread', async () => {
    worker = new SearchWorker();
    const text = Array.from({ length: 20_000 }, (_, i) => (i % 1000 === 7 ? `\x1b[1mTraceback\x1b[0m ${i}\r` : `line ${i}`)).join('\n');
    const there = await worker.scan(job(text, 'Traceback \\d+$'), 30_000);
    expect(there.matches).toHaveLength(20);
    expect(there).toEqual(searchScanner().scan(job(text, 'Traceback \\d+$')));
  });

  it('terminates a pattern that backtracks without end at its hard stop; the next scan gets a fresh worker', async () => {
    worker = new SearchWorker();
    const slow = worker.scan(job(`${'a'.repeat(30)}!\n`, '(a+)+$'), 300);
    // Queued behind it: answered once the slow one is stopped.
    const after = worker.scan(job('ok\n', 'ok'), 30_000);
    await expect(slow).rejects.toThrow(ScanTooSlowError);
    await expect(slow).rejects.toThrow(/^The pattern was still running 0\.3 s into one stretch of output and was stopped: it is too slow for this text/);
    expect((await after).matches.map((m) => m.text)).toEqual(['ok']);
    expect(worker.terminated).toBe(1);
  });

  it('answers a scan error (a bad pattern that got past the host) as bad input, and goes on', async () => {
    worker = new SearchWorker();
    await expect(worker.scan(job('x\n', '(unclosed'), 30_000)).rejects.toMatchObject({ kind: 'bad-input' });
    expect((await worker.scan(job('x\n', 'x'), 30_000)).matches).toHaveLength(1);
  });

  it('refuses scans once closed', async () => {
    worker = new SearchWorker();
    await worker.close();
    await expect(worker.scan(job('x\n', 'x'), 30_000)).rejects.toMatchObject({ kind: 'shutting-down' });
  });
});
