// `warden search`: its words as a query (a table), the answer as rg -n -C
// text (groups merged, `--` between them, gaps and the call to go on), and
// the command through a real background host: exit statuses as grep's, the
// printed continuation run as written.

import { execa } from 'execa';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SearchAnswer, SearchMatch } from '../shared/search';
import { parseSearchArgs } from './search';
import { searchText } from './search-text';
import { stopBackgroundHosts } from './testkit';

describe('warden search words', () => {
  it.each<[string[], Record<string, unknown>]>([
    [['Traceback'], { pattern: 'Traceback' }],
    [['3f2a1b2c3d4e', 'a.b'], { id: '3f2a1b2c3d4e', pattern: 'a.b' }],
    [['-F', '-i', 'x', '--stream', 'stderr', '-C', '0', '-m', '5'], { pattern: 'x', literal: true, ignoreCase: true, stream: 'stderr', context: 0, maxMatches: 5 }],
    [['-e', '-x', 'abcdef'], { pattern: '-x', id: 'abcdef' }],
    [['abcdef', '--', '-x'], { id: 'abcdef', pattern: '-x' }],
    [['x', '--verdict', 'failed', '--runs', '3'], { pattern: 'x', verdict: 'failed', maxRuns: 3 }],
    [['--cursor', 'Wz', '-m', '7'], { cursor: 'Wz', maxMatches: 7 }],
  ])('%j', (args, query) => {
    expect(parseSearchArgs(args).query).toEqual(query);
  });

  it('takes --since as a time that far back, and --json', () => {
    const { query, json } = parseSearchArgs(['x', '--since', '1h', '--json']);
    expect(json).toBe(true);
    expect(Math.abs((query.since as number) - (Date.now() - 3_600_000))).toBeLessThan(60_000);
  });

  it.each<[string[], string]>([
    [[], 'warden search needs a PATTERN: warden search [ID] PATTERN (see warden search --help).'],
    [['a', 'b', 'c'], 'warden search takes [ID] PATTERN, not 3 words: quote a pattern with spaces.'],
    [['not-an-id', 'x'], '"not-an-id" is not a run id (6 to 32 hex characters; see warden list): warden search [ID] PATTERN.'],
    [['x', '-C', '21'], '-C takes a whole number from 0 to 20, not "21".'],
    [['x', '-m', '0'], '-m takes a whole number from 1 to 200, not "0".'],
    [['x', '--runs', '51'], '--runs takes a whole number from 1 to 50, not "51".'],
    [['x', '--stream', 'all'], '--stream takes stdout, stderr or both, not "all".'],
    [['x', '--since', 'soon'], '--since takes a duration such as 30m or 1h, not "soon".'],
    [['abcdef', 'x', '--runs', '2'], '--since, --verdict and --runs choose runs for a search without ID: give them or an ID, not both.'],
    [['--cursor', 'Wz', 'x'], '--cursor carries the search it continues: give it without ID or PATTERN.'],
    [['x', '--bogus'], 'Unknown option --bogus for warden search (see warden search --help).'],
  ])('%j is refused: %s', (args, message) => {
    expect(() => parseSearchArgs(args)).toThrow(message);
  });
});

describe('the answer as text', () => {
  const match = (line: number, over: Partial<SearchMatch> = {}): SearchMatch => ({ run: 'aaaaaa', stream: 'stdout', line, offset: line * 10, text: `hit ${line}`, before: [`b${line - 1}`], after: [`a${line + 1}`], ...over });
  const answer = (over: Partial<SearchAnswer>): SearchAnswer => ({
    pattern: 'hit',
    literal: false,
    ignoreCase: false,
    matches: [],
    gaps: [],
    runs: [{ id: 'aaaaaa', command: 'make test', state: 'ended', verdict: 'failed', exitCode: 2, signal: null }],
    more: false,
    stoppedBy: null,
    cursor: null,
    scannedChars: 12_345,
    missing: [],
    ...over,
  });
  const text = (a: SearchAnswer) => searchText(a, { escape: (t) => t.replace(/\r/g, '\\r'), next: (c) => `search --cursor ${c}` });

  it('merges groups whose context touches, and puts -- between the others', () => {
    const out = text(answer({ matches: [match(5), match(7), match(20, { stream: 'stdout', text: 'hit\r20' })] }));
    expect(out.split('\n')).toEqual([
      'run aaaaaa (make test; failed, exit 2), stdout:',
      '4-b4',
      '5:50:hit 5',
      '6-a6',
      '7:70:hit 7',
      '8-a8',
      '--',
      '19-b19',
      '20:200:hit\\r20',
      '21-a21',
      '3 matching lines in 1 of 1 run (12,345 characters searched). Lines are LINE:OFFSET:TEXT (show takes the OFFSET) and LINE-TEXT around them.',
    ]);
  });

  it('a match line in another match\'s context is shown as a match', () => {
    const out = text(answer({ matches: [match(5, { after: ['hit 6', 'x'] }), match(6, { before: ['hit 5'], after: [] })] }));
    expect(out.split('\n').slice(1, 5)).toEqual(['4-b4', '5:50:hit 5', '6:60:hit 6', '7-x']);
  });

  it('says no match honestly, with the gaps, the runs gone, and how to go on', () => {
    const out = text(
      answer({
        gaps: [{ run: 'aaaaaa', stream: 'stdout', line: 10_001, offset: 999_000, droppedChars: 2_500_000 }],
        missing: ['bbbbbb'],
        more: true,
        stoppedBy: 'text',
        cursor: 'CUR',
        ignoreCase: true,
      }),
    );
    expect(out.split('\n')).toEqual([
      'No line matches the pattern "hit" (any case) in run aaaaaa (make test; failed, exit 2) (12,345 characters searched so far).',
      '[warden: stdout of run aaaaaa was not kept whole: 2,500,000 characters were dropped at line 10,001 (the cap keeps its head and tail), and nothing in them could be searched; lines after it are numbered in what was kept]',
      '[warden: run bbbbbb is no longer in the history; it was not searched]',
      'To go on (it stopped at the 50,000,000 characters one call looks through): search --cursor CUR',
    ]);
  });

  it.each<[SearchAnswer['stoppedBy'], boolean, string]>([
    ['matches', true, 'it stopped at maxMatches; more lines may match'],
    ['time', true, 'it stopped at the 2 s one call may take'],
    [null, false, 'the run is still going; this continues in what it prints next'],
  ])('names why it stopped (%s)', (stoppedBy, more, why) => {
    expect(text(answer({ matches: [match(1)], stoppedBy, more, cursor: 'C' }))).toContain(`To go on (${why}): search --cursor C`);
  });
});

const BIN = resolve(__dirname, '../../bin/warden.mjs');
const dir = mkdtempSync(join(tmpdir(), 'wsearch-cli-'));
afterAll(() => stopBackgroundHosts([dir]), 60_000);
const warden = (args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: dir, WARDEN_HOST_IDLE: '30s' }, stdin: 'ignore', timeout: 60_000 });

describe('warden search through a host', { timeout: 60_000 }, () => {
  it('prints rg -n -C lines, exits 0 on a match and 1 on none, and its printed continuation runs as written', async () => {
    const run = await warden(['run', '--json', '--', 'bash', '-c', 'for i in $(seq 1 50); do echo "row $i"; done; echo "boom: bad thing" >&2; exit 2']);
    const id = (JSON.parse(run.stdout) as { id: string }).id;
    const hit = await warden(['search', id, 'boom', '-C', '0']);
    expect(hit.exitCode).toBe(0);
    expect(hit.stdout.split('\n')).toEqual([
      `run ${id} (bash -c for i in $(seq 1 50); do echo "row $i"; done; echo "boom: bad thing" >&2; exit 2; failed, exit 2), stderr:`,
      '1:0:boom: bad thing',
      expect.stringMatching(/^1 matching line in 1 of 1 run \([\d,]+ characters searched\)\./),
    ]);
    const none = await warden(['search', id, 'nothing-like-this']);
    expect(none.exitCode).toBe(1);
    expect(none.stdout).toMatch(/^No line matches the pattern "nothing-like-this" in run /);
    const bad = await warden(['search', id, '(unclosed']);
    expect(bad.exitCode).toBe(125);
    expect(bad.stderr).toMatch(/^warden: pattern is not a valid regular expression \(JavaScript, u flag\): Unterminated group\./);

    const first = await warden(['search', id, 'row [0-9]+$', '--stream', 'stdout', '-m', '20', '-C', '1']);
    const go = /^To go on \(it stopped at maxMatches; more lines may match\): (.*)$/m.exec(first.stdout)![1]!;
    expect(go).toMatch(/^"[^"]+" "[^"]+warden\.mjs" search --cursor [A-Za-z0-9_-]+ --max-matches 20$/);
    const rest = await execa('bash', ['-c', go], { reject: false, env: { WARDEN_STATE_DIR: dir } });
    expect(rest.exitCode).toBe(0);
    expect(rest.stdout).toContain('21:');
    expect(rest.stdout).toContain('40:');
    const json = JSON.parse((await warden(['search', id, 'row 5\\d', '--json'])).stdout) as SearchAnswer;
    expect(json.matches.map((m) => m.line)).toEqual([50]);
    expect(json).toMatchObject({ more: false, cursor: null, pattern: 'row 5\\d' });
  });
});
