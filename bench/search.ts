// (t) Search over stored output: 1,000,000 lines kept in the history (20 runs
// of 50,000 lines, about 43,000,000 characters, under one call's 50,000,000),
// searched through a host over its socket as an agent's call does (the host
// reads each run, from memory or the store, and its worker scans it), for a
// rare literal and for a regular expression; against `grep -c` (and
// `grep -cE`) on a file of the same text, alternating, after a warm-up.
// Then a pattern that backtracks without end: the time until the call says
// it is too slow.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpWardenApi } from '../src/shared/http-api';
import { NodeTransport } from '../src/client/transport';
import { startHost } from '../src/main/host/host';
import type { SearchAnswer, SearchQuery } from '../src/shared/search';
import { check, median, ms, quantile, ratio, type Figure } from './lib';

const RUNS = 20;
const LINES = 50_000;
/** The one line of the million the literal finds: run 13, line 31,337. */
const RARE_RUN = 13;
const RARE_LINE = 31_337;

function script(run: number): string {
  return [
    'import sys',
    'w = sys.stdout.write',
    `for i in range(1, ${LINES + 1}):`,
    `    if ${run === RARE_RUN ? `i == ${RARE_LINE}` : 'False'}: w(f"12:00:{i % 60:02d}.{i % 1000:03d} ERROR w{i % 16:02d} rare-needle-5f3a conn reset\\n")`,
    `    else: w(f"12:00:{i % 60:02d}.{i % 1000:03d} INFO w{i % 16:02d} req {i * 7 + ${run}:07d} ok {i % 97}ms\\n")`,
  ].join('\n');
}

function timeGrep(args: string[], file: string): { ms: number; count: number } {
  const started = performance.now();
  const result = spawnSync('grep', [...args, file], { encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (result.status !== 0 && result.status !== 1) throw new Error(`grep ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms: elapsed, count: Number(result.stdout.trim()) };
}

async function timeSearch(api: HttpWardenApi, query: SearchQuery): Promise<{ ms: number; answer: SearchAnswer }> {
  const started = performance.now();
  const answer = await api.search(query);
  return { ms: performance.now() - started, answer };
}

export async function benchSearch(options: { rounds: number }): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'wbench-search-'));
  const host = await startHost({ stateDir: join(dir, 'state'), webRoot: null });
  try {
    const api = new HttpWardenApi(new NodeTransport({ socketPath: host.socketPath }));
    const texts: string[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const started = await api.start({ argv: ['python3', '-c', script(run)], outputCapChars: 3_000_000 });
      const done = await api.wait(started.id, { timeoutMs: 120_000 });
      if (done.verdict !== 'completed' || done.stdoutTruncated !== 0) throw new Error(`run ${run} of the corpus: ${done.verdict}, ${done.stdoutTruncated} dropped`);
      texts.unshift(done.stdout); // the search looks newest first
    }
    const corpus = texts.join('');
    const lines = corpus.split('\n').length - 1;
    const file = join(dir, 'corpus.log');
    writeFileSync(file, corpus);
    const literal: SearchQuery = { pattern: 'rare-needle-5f3a', literal: true, maxRuns: RUNS };
    const regex: SearchQuery = { pattern: 'ERROR w\\d+ .* reset$', maxRuns: RUNS };
    const grepLiteral = ['-c', '-F', 'rare-needle-5f3a'];
    const grepRegex = ['-c', '-E', 'ERROR w[0-9]+ .* reset$'];

    // Warm-up (the host's worker thread starts, the store's pages are read once), and the answers checked.
    const first = await timeSearch(api, literal);
    for (const [query, grepArgs] of [[literal, grepLiteral], [regex, grepRegex]] as const) {
      const { answer } = await timeSearch(api, query);
      const grep = timeGrep(grepArgs, file);
      if (answer.more || answer.matches.length !== 1 || grep.count !== 1) throw new Error(`${query.pattern}: ${answer.matches.length} matches (more ${answer.more}, ${answer.stoppedBy}), grep ${grep.count}`);
      if (answer.matches[0]!.line !== RARE_LINE) throw new Error(`${query.pattern}: found at line ${answer.matches[0]!.line}, not ${RARE_LINE}`);
    }
    const times = { literal: [] as number[], regex: [] as number[], grepLiteral: [] as number[], grepRegex: [] as number[] };
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? ['grep', 'warden'] : ['warden', 'grep'];
      for (const side of order) {
        if (side === 'grep') {
          times.grepLiteral.push(timeGrep(grepLiteral, file).ms);
          times.grepRegex.push(timeGrep(grepRegex, file).ms);
        } else {
          times.literal.push((await timeSearch(api, literal)).ms);
          times.regex.push((await timeSearch(api, regex)).ms);
        }
      }
    }

    // A pattern that backtracks without end: answered "too slow" at the hard stop (2 s + 0.5 s).
    const slow = await api.start({ argv: ['bash', '-c', `echo ${'a'.repeat(30)}!`] });
    await api.wait(slow.id, { timeoutMs: 60_000 });
    const slowStarted = performance.now();
    let slowAnswer = 'answered';
    try {
      await api.search({ id: slow.id, pattern: '(a+)+$' });
    } catch (error) {
      slowAnswer = error instanceof Error ? error.message : String(error);
    }
    const slowMs = performance.now() - slowStarted;
    const tooSlow = /too slow/.test(slowAnswer);

    const l = median(times.literal);
    const r = median(times.regex);
    const gl = median(times.grepLiteral);
    const gr = median(times.grepRegex);
    return {
      title: `(t) search over ${lines.toLocaleString('en-US')} stored lines (${RUNS} runs, ${corpus.length.toLocaleString('en-US')} characters; ${options.rounds} rounds, alternating)`,
      lines: [
        `rare literal: warden ${ms(l)} median (p90 ${ms(quantile(times.literal, 0.9))}; the first search ${ms(first.ms)}), grep -c -F ${ms(gl)}: ${ratio(l, gl)}`,
        `regex ${JSON.stringify(regex.pattern)}: warden ${ms(r)} median (p90 ${ms(quantile(times.regex, 0.9))}), grep -c -E ${ms(gr)}: ${ratio(r, gr)}`,
        `warden: through the host's socket, the runs read from its memory or its store, scanned in its worker; grep: the same text in one file`,
        `(a+)+$ on 30 a's and "!": ${tooSlow ? 'answered too slow' : `not stopped (${slowAnswer.slice(0, 80)})`} after ${ms(slowMs)}`,
      ],
      checks: [
        check(`rare literal <= 300 ms (${ms(l)})`, l <= 300),
        check(`regex <= 1 s (${ms(r)})`, r <= 1000),
        check(`a pattern too slow is stopped in under 3 s (${ms(slowMs)})`, tooSlow && slowMs < 3000),
      ],
    };
  } finally {
    await host.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}
