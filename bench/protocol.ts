// (n) The app:// handler (src/main/app/protocol.ts) serving a page load: its
// guards (parse, decode, resolve, realpath of the file) against the
// same files read and answered with the same headers and no checks at all, in
// alternating rounds in this process. The files are the sizes electron-vite
// builds into out/renderer (index.html, one 1 MB script, one 50 kB stylesheet).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appProtocolHandler } from '../src/main/app/protocol';
import { CONTENT_SECURITY_POLICY } from '../src/shared/csp';
import { check, median, ms, ratio, type Figure } from './lib';

const FILES: [string, number][] = [
  ['index.html', 700],
  ['assets/index-abc.js', 1_000_000],
  ['assets/index-abc.css', 50_000],
];

export async function benchProtocol(options: { loads: number; rounds: number }): Promise<Figure> {
  const root = mkdtempSync(join(tmpdir(), 'wbench-proto-'));
  try {
    mkdirSync(join(root, 'assets'));
    for (const [name, size] of FILES) writeFileSync(join(root, name), Buffer.alloc(size, 'x'));
    const handle = appProtocolHandler(root);
    const viaHandler = async () => {
      for (const [name] of FILES) await (await handle(new Request(`app://warden/${name}`))).arrayBuffer();
    };
    // The same answer (body and headers), without looking at the path at all.
    const unchecked = async () => {
      for (const [name] of FILES) {
        const body = new Uint8Array(await readFile(join(root, name)));
        const headers = { 'Content-Security-Policy': CONTENT_SECURITY_POLICY, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache', 'Content-Type': 'text/javascript; charset=utf-8', 'Content-Length': String(body.length) };
        await new Response(body, { status: 200, headers }).arrayBuffer();
      }
    };
    const timeLoads = async (load: () => Promise<void>) => {
      const started = performance.now();
      for (let i = 0; i < options.loads; i++) await load();
      return (performance.now() - started) / options.loads;
    };
    await timeLoads(viaHandler);
    await timeLoads(unchecked);
    const handler: number[] = [];
    const baseline: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      // Which side goes first turns each round, so neither always gets a warm cache.
      if (round % 2 === 0) {
        handler.push(await timeLoads(viaHandler));
        baseline.push(await timeLoads(unchecked));
      } else {
        baseline.push(await timeLoads(unchecked));
        handler.push(await timeLoads(viaHandler));
      }
    }
    const h = median(handler);
    const b = median(baseline);
    return {
      title: `(n) app:// page load (3 files, 1.05 MB) through the handler vs the same files read unchecked, ${options.rounds} rounds of ${options.loads} loads`,
      lines: [
        `handler: median ${ms(h, 3)} per page load (rounds: ${handler.map((v) => v.toFixed(3)).join(', ')} ms)`,
        `unchecked (readFile + the same Response): median ${ms(b, 3)} (rounds: ${baseline.map((v) => v.toFixed(3)).join(', ')} ms)`,
        `ratio ${ratio(h, b)}`,
      ],
      checks: [check('handler <= 2.0x unchecked (median)', h <= 2 * b)],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
