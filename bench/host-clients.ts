// SSE clients for (k) host, run in their own Node process so the host's CPU is
// measured alone: `node --import tsx bench/host-clients.ts <socket> <clients>
// <first seq> <lines per run>`. Each client is a NodeTransport event stream
// (the one every Node client uses, reconnecting with Last-Event-ID) over the
// host's unix socket, and checks what it receives:
//   - ids `<epoch>-<seq>`: contiguous from <first seq>, no gap, no duplicate;
//   - per run, stdout output events at contiguous offsets, and the numbered
//     lines the run printed (0 .. lines-1), each exactly once.
// Protocol on stdio, one JSON object a line: it prints {"ready":true} once every
// client is connected; the parent then writes {"until":<last seq>,"runs":[ids]};
// it prints its report once every client has received up to that seq (or after
// 60 s) and exits.

import { createInterface } from 'node:readline';
import { NodeTransport } from '../src/client/transport';
import type { RunEvent } from '../src/shared/events';
import { ROUTES } from '../src/shared/http-api';

interface RunLines {
  nextOffset: number;
  rest: string;
  seen: Uint8Array;
  present: number;
  duplicateLines: number;
  badLines: number;
  offsetBreaks: number;
}

interface Client {
  expectSeq: number;
  received: number;
  missing: number;
  duplicates: number;
  gapEvents: number;
  connects: number;
  disconnects: number;
  otherEpoch: number;
  output: number;
  runs: Map<string, RunLines>;
  close: () => void;
}

export interface ClientReport {
  received: number;
  firstSeq: number;
  lastSeq: number;
  /** Ids skipped in the sequence, plus those never reached at the end. */
  dropped: number;
  duplicates: number;
  gapEvents: number;
  reconnects: number;
  outputEvents: number;
  /** Over the runs asked about. */
  runsComplete: number;
  missingLines: number;
  duplicateLines: number;
  badLines: number;
  offsetBreaks: number;
}

export interface ClientsReport {
  clients: ClientReport[];
  /** This process's CPU (user + system) from the first connection to the report. */
  cpuMs: number;
  wallMs: number;
  timedOut: boolean;
}

const [socketPath, countText, firstSeqText, linesText] = process.argv.slice(2);
const count = Number(countText);
const firstSeq = Number(firstSeqText);
const linesPerRun = Number(linesText);
if (!socketPath || !(count > 0) || !(firstSeq > 0) || !(linesPerRun > 0)) {
  console.error('usage: host-clients.ts <socket> <clients> <first seq> <lines per run>');
  process.exit(2);
}

const cpuStart = process.cpuUsage();
const wallStart = performance.now();
let epoch: string | null = null;
let connected = 0;
let target = Infinity;
let onProgress: (() => void) | null = null;

function lines(client: Client, event: Extract<RunEvent, { type: 'output' }>): void {
  let run = client.runs.get(event.runId);
  if (!run) {
    run = { nextOffset: 0, rest: '', seen: new Uint8Array(linesPerRun), present: 0, duplicateLines: 0, badLines: 0, offsetBreaks: 0 };
    client.runs.set(event.runId, run);
  }
  if (event.stream !== 'stdout') {
    run.badLines += 1;
    return;
  }
  if (event.offset !== run.nextOffset) run.offsetBreaks += 1;
  run.nextOffset = event.offset + event.text.length;
  const text = run.rest + event.text;
  let start = 0;
  let newline: number;
  while ((newline = text.indexOf('\n', start)) >= 0) {
    const n = Number(text.slice(start, newline));
    start = newline + 1;
    if (!Number.isInteger(n) || n < 0 || n >= linesPerRun) run.badLines += 1;
    else if (run.seen[n]) run.duplicateLines += 1;
    else {
      run.seen[n] = 1;
      run.present += 1;
    }
  }
  run.rest = text.slice(start);
}

function makeClient(): Client {
  const client: Client = {
    expectSeq: firstSeq,
    received: 0,
    missing: 0,
    duplicates: 0,
    gapEvents: 0,
    connects: 0,
    disconnects: 0,
    otherEpoch: 0,
    output: 0,
    runs: new Map(),
    close: () => undefined,
  };
  const transport = new NodeTransport({ socketPath: socketPath! });
  client.close = transport.events(ROUTES.events, {
    onConnect: () => {
      client.connects += 1;
      if (client.connects === 1 && ++connected === count) console.log(JSON.stringify({ ready: true }));
    },
    onDisconnect: () => {
      client.disconnects += 1;
    },
    onGap: () => {
      client.gapEvents += 1;
    },
    onEvent: (event, id) => {
      const dash = id.lastIndexOf('-');
      const idEpoch = id.slice(0, dash);
      epoch ??= idEpoch;
      if (idEpoch !== epoch) {
        client.otherEpoch += 1;
        return;
      }
      const seq = Number(id.slice(dash + 1));
      if (seq < client.expectSeq) {
        client.duplicates += 1;
        return;
      }
      if (seq > client.expectSeq) client.missing += seq - client.expectSeq;
      client.expectSeq = seq + 1;
      client.received += 1;
      if (event.type === 'output') {
        client.output += 1;
        lines(client, event);
      }
      if (seq >= target) onProgress?.();
    },
  });
  return client;
}

const clients = Array.from({ length: count }, makeClient);

function report(runIds: string[], timedOut: boolean): ClientsReport {
  const cpu = process.cpuUsage(cpuStart);
  return {
    clients: clients.map((c) => {
      let runsComplete = 0;
      let missingLines = 0;
      let duplicateLines = 0;
      let badLines = 0;
      let offsetBreaks = 0;
      for (const id of runIds) {
        const run = c.runs.get(id);
        const present = run?.present ?? 0;
        if (present === linesPerRun) runsComplete += 1;
        missingLines += linesPerRun - present;
        duplicateLines += run?.duplicateLines ?? 0;
        badLines += (run?.badLines ?? 0) + (run && run.rest !== '' ? 1 : 0);
        offsetBreaks += run?.offsetBreaks ?? 0;
      }
      const lastSeq = c.expectSeq - 1;
      return {
        received: c.received,
        firstSeq,
        lastSeq,
        dropped: c.missing + Math.max(0, target - lastSeq) + c.otherEpoch,
        duplicates: c.duplicates,
        gapEvents: c.gapEvents,
        reconnects: c.connects - 1,
        outputEvents: c.output,
        runsComplete,
        missingLines,
        duplicateLines,
        badLines,
        offsetBreaks,
      };
    }),
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: performance.now() - wallStart,
    timedOut,
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const ask = JSON.parse(line) as { until: number; runs: string[] };
  target = ask.until;
  const done = () => clients.every((c) => c.expectSeq > target);
  let timedOut = false;
  if (!done()) {
    timedOut = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), 60_000);
      onProgress = () => {
        if (!done()) return;
        clearTimeout(timer);
        resolve(false);
      };
    });
  }
  const result = report(ask.runs, timedOut);
  for (const c of clients) c.close();
  console.log(JSON.stringify(result));
  break;
}
process.exit(0);
