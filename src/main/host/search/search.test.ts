// GET /api/v1/search against a real host, real processes and its real
// worker thread: matches with the kept text's lines and offsets, cursors
// whose pages put end to end are one large call, the text and time bounds,
// a gap the cap left, a live run continued in what it prints next, several
// runs at once, a pattern too slow stopped, and one-line refusals.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWardenApi } from '../../../shared/http-api';
import type { SearchAnswer, SearchMatch, SearchQuery } from '../../../shared/search';
import { NodeTransport } from '../../../client/transport';
import { startHost, type Host, type HostOptions } from '../host';

const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
});

async function hostWith(options: Partial<HostOptions> = {}): Promise<{ host: Host; api: HttpWardenApi }> {
  const host = await startHost({ stateDir: mkdtempSync(join(tmpdir(), 'wsearch-')), webRoot: null, ...options });
  hosts.push(host);
  return { host, api: new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath })) };
}

async function ran(api: HttpWardenApi, argv: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const started = await api.start({ argv, ...extra });
  const done = await api.wait(started.id, { timeoutMs: 60_000 });
  expect(done.state).toBe('ended');
  return done.id;
}

/** Every page of a search, from its first answer on, following each cursor; a live run's final cursor is not followed. */
async function allPages(api: HttpWardenApi, query: SearchQuery, maxMatches?: number): Promise<{ matches: SearchMatch[]; pages: SearchAnswer[] }> {
  const pages: SearchAnswer[] = [await api.search(query)];
  while (pages.at(-1)!.more) {
    if (pages.length > 500) throw new Error('the cursor does not move on');
    pages.push(await api.search({ cursor: pages.at(-1)!.cursor!, ...(maxMatches !== undefined ? { maxMatches } : {}) }));
  }
  return { matches: pages.flatMap((p) => p.matches), pages };
}

const PY_LOG = [
  'import sys',
  'for i in range(1, 30001):',
  '    if i % 1000 == 0: print(f"\\x1b[31mERROR\\x1b[0m code {i}\\r")',
  '    elif i % 777 == 0: print(f"warning {i}", file=sys.stderr)',
  '    else: print(f"info {i} ok")',
].join('\n');

describe('search', { timeout: 60_000 }, () => {
  it("finds lines with the kept text's numbers and offsets, and show's offset starts at the match", async () => {
    const { api } = await hostWith();
    const id = await ran(api, ['python3', '-c', PY_LOG]);
    const answer = await api.search({ id, pattern: 'ERROR code \\d+$', context: 1, maxMatches: 200 });
    expect(answer).toMatchObject({ more: false, stoppedBy: null, cursor: null, gaps: [], missing: [], pattern: 'ERROR code \\d+$' });
    expect(answer.runs).toEqual([expect.objectContaining({ id, state: 'ended', verdict: 'completed', exitCode: 0 })]);
    expect(answer.matches).toHaveLength(30);
    // stdout's line n is i = n plus the lines that went to stderr before it.
    const first = answer.matches[0]!;
    expect(first).toMatchObject({ run: id, stream: 'stdout', line: 999, text: 'ERROR code 1000', before: ['info 999 ok'], after: ['info 1001 ok'] });
    const page = await api.output(id, { stream: 'stdout', offset: first.offset, limit: 10 });
    // The offset is the kept text's: its colour sequence sits between the match's letters.
    expect(page.text).toBe('ERROR\x1b[0m ');
    const warnings = await api.search({ id, pattern: 'warning', stream: 'stderr', literal: true, maxMatches: 200 });
    expect(warnings.matches.map((m) => m.line)).toEqual(Array.from({ length: 38 }, (_, i) => i + 1));
    expect(warnings.matches.every((m) => m.stream === 'stderr')).toBe(true);
  });

  it('pages by cursor that put end to end are one large call, at maxMatches and at the text bound', async () => {
    const { api } = await hostWith({ searchBounds: { textBudgetChars: 20_000 } });
    const id = await ran(api, ['python3', '-c', PY_LOG]);
    const one = (await allPages(api, { id, pattern: 'ERROR|warning', maxMatches: 200, context: 3 })).matches;
    expect(one).toHaveLength(30 + 38);
    const byThree = await allPages(api, { id, pattern: 'ERROR|warning', maxMatches: 3, context: 3 }, 3);
    expect(byThree.matches).toEqual(one);
    expect(byThree.pages.length).toBeGreaterThan(20);
    const stops = new Set(byThree.pages.map((p) => p.stoppedBy));
    expect(stops).toContain('matches');
    expect(stops).toContain('text');
    // A text-bound page looked through about the bound (to the end of a line), never the whole.
    expect(Math.max(...byThree.pages.map((p) => p.scannedChars))).toBeLessThan(20_100);
  });

  it('stops at its time bound with a cursor that moves on', async () => {
    const { api } = await hostWith({ searchBounds: { timeBudgetMs: 1 } });
    // 5.8 MB, all kept: a regular expression scans every stretch, and the clock is looked at between them.
    const id = await ran(api, ['python3', '-c', 'for i in range(60000): print("a" * 90, i)\nprint("NEEDLE at the end")'], { outputCapChars: 10_000_000 });
    const { matches, pages } = await allPages(api, { id, pattern: 'NEEDLE|never-there' });
    expect(matches.map((m) => m.line)).toEqual([60_001]);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0]!.stoppedBy).toBe('time');
  });

  it('names the gap the cap left, never matches its marker, and numbers lines after it in the kept text', async () => {
    const { api } = await hostWith();
    const id = await ran(api, ['python3', '-c', 'for i in range(1, 2001): print(f"row {i} dropped")'], { outputCapChars: 2000 });
    const answer = await api.search({ id, pattern: 'dropped|warden', maxMatches: 200 });
    expect(answer.gaps).toHaveLength(1);
    const gap = answer.gaps[0]!;
    expect(gap).toMatchObject({ run: id, stream: 'stdout' });
    expect(gap.droppedChars).toBeGreaterThan(10_000);
    const whole = (await api.get(id))!.stdout;
    expect(whole.split('\n')[gap.line - 1]).toMatch(/^\[warden: [\d,]+ characters dropped here\]$/);
    expect(whole.slice(gap.offset, gap.offset + 8)).toBe('[warden:');
    expect(answer.matches.some((m) => m.line === gap.line)).toBe(false);
    expect(answer.matches[0]!.line).toBe(1);
    const after = answer.matches.find((m) => m.line > gap.line)!;
    expect(whole.split('\n')[after.line - 1]).toBe(after.text);
  });

  it('searches a live run and continues, by its cursor, in what it prints next', async () => {
    const { api } = await hostWith();
    const go = join(mkdtempSync(join(tmpdir(), 'wsearch-go-')), 'go');
    const started = await api.start({ argv: ['python3', '-u', '-c', `import os, time\nprint("step 1 done")\nwhile not os.path.exists(${JSON.stringify(go)}): time.sleep(0.02)\nprint("step 2 done")\ntime.sleep(30)`] });
    const first = async () => {
      for (let i = 0; i < 200; i++) {
        const a = await api.search({ id: started.id, pattern: 'step \\d done' });
        if (a.matches.length > 0) return a;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the run printed nothing');
    };
    const a = await first();
    expect(a.matches.map((m) => [m.line, m.text])).toEqual([[1, 'step 1 done']]);
    expect(a).toMatchObject({ more: false, stoppedBy: null });
    expect(a.cursor).not.toBeNull();
    expect(a.runs[0]!.state).toBe('running');
    // Nothing new yet: the cursor finds nothing again, and gives the same place to go on from.
    const again = await api.search({ cursor: a.cursor! });
    expect(again.matches).toEqual([]);
    expect(again.cursor).toBe(a.cursor);
    writeFileSync(go, '');
    let next = again;
    for (let i = 0; i < 200 && next.matches.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      next = await api.search({ cursor: again.cursor! });
    }
    // Only what it printed since, numbered as the kept text numbers it.
    expect(next.matches.map((m) => [m.line, m.text, m.before])).toEqual([[2, 'step 2 done', ['step 1 done']]]);
    await api.stop(started.id, { force: true });
  });

  it('searches the newest runs without an id, narrowed by verdict, and names a run gone from the history', async () => {
    const { api } = await hostWith();
    const ok = await ran(api, ['bash', '-c', 'echo "needle in ok"']);
    const bad = await ran(api, ['bash', '-c', 'echo "needle in bad" >&2; exit 3']);
    const all = await api.search({ pattern: 'needle', literal: true });
    expect(all.runs.map((r) => r.id)).toEqual([bad, ok]);
    expect(all.matches.map((m) => [m.run, m.stream, m.text])).toEqual([
      [bad, 'stderr', 'needle in bad'],
      [ok, 'stdout', 'needle in ok'],
    ]);
    const failed = await api.search({ pattern: 'needle', literal: true, verdict: 'failed', since: Date.now() - 3_600_000 });
    expect(failed.matches.map((m) => m.run)).toEqual([bad]);
    const one = await api.search({ pattern: 'needle', maxRuns: 1 });
    expect(one.runs.map((r) => r.id)).toEqual([bad]);
  });

  it('stops a pattern that backtracks without end and says it is too slow; the host goes on', async () => {
    const { api } = await hostWith();
    const id = await ran(api, ['bash', '-c', `echo ${'a'.repeat(30)}!`]);
    await expect(api.search({ id, pattern: '(a+)+$' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^The pattern was still running [\d.]+ s into one stretch of output and was stopped: it is too slow/) });
    expect((await api.search({ id, pattern: 'a+!$' })).matches).toHaveLength(1);
  });

  it('refuses bad searches in one line: 400, or 404 for a run it does not know', async () => {
    const { api } = await hostWith();
    const id = await ran(api, ['true']);
    const refused = async (query: SearchQuery) => {
      try {
        await api.search(query);
      } catch (error) {
        const e = error as Error & { status: number };
        expect(e.message.split('\n')).toHaveLength(1);
        return `${e.status} ${e.message}`;
      }
      throw new Error('accepted');
    };
    expect(await refused({ id, pattern: '(a' })).toBe('400 pattern is not a valid regular expression (JavaScript, u flag): Unterminated group. To search for the text as it is, make it literal (warden search -F).');
    expect(await refused({ id })).toMatch(/^400 search needs a pattern/);
    expect(await refused({ id, pattern: '' })).toMatch(/^400 search needs a pattern/);
    expect(await refused({ id, pattern: 'a\nb' })).toMatch(/^400 pattern holds a line break/);
    expect(await refused({ id, pattern: 'x', context: 21 })).toBe('400 context takes a whole number from 0 to 20, not 21.');
    expect(await refused({ id, pattern: 'x', maxMatches: 0 })).toBe('400 maxMatches takes a whole number from 1 to 200, not 0.');
    expect(await refused({ pattern: 'x', maxRuns: 51 })).toBe('400 maxRuns takes a whole number from 1 to 50, not 51.');
    expect(await refused({ id, pattern: 'x', verdict: 'failed' })).toMatch(/^400 since, verdict and maxRuns choose runs for a search without id/);
    expect(await refused({ id: 'abcdef123456', pattern: 'x' })).toMatch(/^404 No run with id "abcdef123456"/);
    expect(await refused({ cursor: 'garbage!' })).toMatch(/^400 cursor is not one a search answered/);
    const { cursor } = await api.search({ id, pattern: 'x', maxMatches: 1 });
    expect(cursor).toBeNull();
    const live = await api.start({ argv: ['sleep', '30'] });
    const c = (await api.search({ id: live.id, pattern: 'x' })).cursor!;
    expect(await refused({ cursor: c, pattern: 'y' })).toBe('400 cursor carries the search it continues: give it alone (with maxMatches at most), not with pattern.');
    await api.stop(live.id, { force: true });
  });
});
