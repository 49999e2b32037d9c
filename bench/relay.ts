// (u) The local host relaying a remote (what the app and the web UI use:
// src/main/host/remote-hosts.ts, federated-api.ts), against the same remote
// reached directly over its link (what `warden --remote` uses). Debian's sshd
// on 127.0.0.1 (src/cli/sshd-testkit.ts), so the figures are the relay's and
// ssh's costs, not a network's. This machine's host is a background host in
// its own process, as the app's or `warden serve`'s would be.
//   1. GET /runs/ID@box through this machine's host against GET /runs/ID over
//      the link, kept-alive connections both, interleaved call by call.
//   2. An event's latency: a python3 child on box printing
//      time.monotonic_ns() every 20 ms, its output events received from this
//      machine's host (relayed, runId ID@box) against from the link directly;
//      received - printed per line (one machine, one monotonic clock),
//      alternating rounds.

import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { remoteLink } from '../src/client/remotes';
import { NodeTransport, socketPathFor } from '../src/client/transport';
import { HttpWardenApi, ROUTES } from '../src/shared/http-api';
import { check, median, ms, quantile, ratio, type Figure } from './lib';
import { withRemoteBox } from './remote';

const BIN = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'warden.mjs');

export interface RelayBenchOptions {
  gets: number;
  latencyRounds: number;
  latencyLines: number;
}

/** received - printed (ms) per line of a python3 child on box, started through `api` (on box), its events read on `transport`. */
async function latencies(api: HttpWardenApi, start: (code: string) => Promise<string>, transport: NodeTransport, lines: number): Promise<number[]> {
  const seen: number[] = [];
  let runId = '';
  const early: { runId: string; text: string; at: bigint }[] = [];
  let partial = '';
  const take = (text: string, at: bigint) => {
    partial += text;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) if (/^\d+$/.test(line)) seen.push(Number(at - BigInt(line)) / 1e6);
  };
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const close = transport.events(ROUTES.events, {
    onConnect: connected,
    onEvent: (event) => {
      const at = process.hrtime.bigint();
      if (event.type !== 'output' || event.stream !== 'stdout') return;
      if (runId === '') early.push({ runId: event.runId, text: event.text, at });
      else if (event.runId === runId) take(event.text, at);
    },
  });
  await ready;
  const code = `import time\nfor i in range(${lines}):\n    print(time.monotonic_ns(), flush=True)\n    time.sleep(0.02)\n`;
  runId = await start(code);
  for (const e of early) if (e.runId === runId) take(e.text, e.at);
  await api.wait(runId);
  await new Promise((r) => setTimeout(r, 200)); // the last events' frames
  close();
  return seen;
}

export async function benchRelay(options: RelayBenchOptions): Promise<Figure> {
  return withRemoteBox('wbench-relay-', async ({ localDir, env }) => {
    // The background host starts with this environment (WARDEN_SSH), as a user's would with theirs.
    if (spawnSync(process.execPath, [BIN, 'run', '--', 'true'], { env, stdio: 'ignore' }).status !== 0) throw new Error('could not start the local host');
    const localTransport = new NodeTransport({ socketPath: socketPathFor(localDir) });
    const relay = new HttpWardenApi(localTransport);
    for (let i = 0; i < 300 && (await relay.hosts()).find((h) => h.name === 'box')?.state !== 'connected'; i++) await new Promise((r) => setTimeout(r, 100));
    const link = remoteLink(localDir, 'box');

    // 1. One run's snapshot, both ways, interleaved.
    const run = await link.api.start({ argv: ['sleep', '120'], limitMs: 300_000 });
    const relayedId = `${run.id}@box`;
    for (let i = 0; i < 10; i++) {
      await relay.get(relayedId);
      await link.api.get(run.id);
    }
    const viaRelay: number[] = [];
    const viaLink: number[] = [];
    for (let i = 0; i < options.gets; i++) {
      const sides: [number[], () => Promise<unknown>][] = [
        [viaRelay, () => relay.get(relayedId)],
        [viaLink, () => link.api.get(run.id)],
      ];
      if (i % 2 === 1) sides.reverse();
      for (const [into, call] of sides) {
        const t = performance.now();
        await call();
        into.push(performance.now() - t);
      }
    }
    await link.api.stop(run.id);

    // 2. Event latency, alternating rounds.
    const overRelay: number[] = [];
    const overLink: number[] = [];
    for (let round = 0; round < options.latencyRounds; round++) {
      const sides: [number[], () => Promise<number[]>][] = [
        [overRelay, () => latencies(relay, async (code) => (await relay.start({ argv: ['python3', '-c', code], cwd: tmpdir() }, { host: 'box' })).id, localTransport, options.latencyLines)],
        [overLink, () => latencies(link.api, async (code) => (await link.api.start({ argv: ['python3', '-c', code], cwd: tmpdir() })).id, link.transport, options.latencyLines)],
      ];
      if (round % 2 === 1) sides.reverse();
      for (const [into, measure] of sides) into.push(...(await measure()));
    }
    localTransport.close();
    link.transport.close();

    const gr = median(viaRelay);
    const gl = median(viaLink);
    const er = median(overRelay);
    const el = median(overLink);
    return {
      title: '(u) the local host relaying a remote (the app and web UI across hosts; loopback sshd)',
      lines: [
        `GET one run's snapshot, ${options.gets} calls per side, interleaved:`,
        `  over the link (warden --remote's path): median ${ms(gl, 2)} (p90 ${ms(quantile(viaLink, 0.9), 2)})`,
        `  through this machine's host, ID@box: median ${ms(gr, 2)} (p90 ${ms(quantile(viaRelay, 0.9), 2)}), ${ratio(gr, gl)}, +${ms(gr - gl, 2)}`,
        `event latency (python3 on box printing every 20 ms, ${options.latencyRounds} alternating rounds of ${options.latencyLines} lines):`,
        `  over the link: median ${ms(el, 2)}, p90 ${ms(quantile(overLink, 0.9), 2)} (${overLink.length} lines)`,
        `  relayed by this machine's host: median ${ms(er, 2)}, p90 ${ms(quantile(overRelay, 0.9), 2)} (${overRelay.length} lines), ${ratio(er, el)}, +${ms(er - el, 2)}`,
      ],
      checks: [
        check('every line arrived both ways', overLink.length === options.latencyRounds * options.latencyLines && overRelay.length === overLink.length),
        // Absolute, not a ratio: the relay's cost is a fixed local hop (this host's socket, a parse and a write), which a real network's round trip dwarfs; against loopback ssh a ratio says little.
        check('the relay adds <= 5 ms to a call (medians)', gr - gl <= 5),
        check('the relay adds <= 5 ms to an event (medians)', er - el <= 5),
      ],
    };
  });
}
