// The hub's two variants of an ended event, over real HTTP against the real
// engine: a summary client (?ended=summary, a page) gets each ended run without
// its output, with its length; a whole client (the CLI, MCP, a relay) on the
// same hub gets the output; both get every output chunk.

import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { BATCH_EVENT } from '../../shared/http-api';
import { Supervisor } from '../supervisor/supervisor';
import { EventHub } from './event-hub';
import { until as waitUntil } from '../../../test/kit/until';

interface Reader {
  events: RunEvent[];
  bytes: number;
  close(): void;
}

/** Reads an SSE stream, whole frames or batches, into events. */
function read(port: number, query: string): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const reader: Reader = { events: [], bytes: 0, close: () => undefined };
    let buffer = '';
    const req = get({ host: '127.0.0.1', port, path: `/events?${query}` }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        reader.bytes += Buffer.byteLength(chunk);
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (!data) continue;
          const parsed = JSON.parse(data.slice(6)) as RunEvent | RunEvent[];
          if (frame.includes(`event: ${BATCH_EVENT}`)) reader.events.push(...(parsed as RunEvent[]));
          else reader.events.push(parsed as RunEvent);
        }
      });
      resolve(reader);
    });
    reader.close = () => req.destroy();
    req.on('error', reject);
  });
}

async function until(ok: () => boolean): Promise<void> {
  await waitUntil('the stream to get there', ok);
}

describe('the event hub, summary and whole clients', () => {
  let supervisor: Supervisor;
  let hub: EventHub;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    supervisor = new Supervisor({ sampleRateHz: 0 });
    hub = new EventHub(supervisor, 'test');
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      hub.attach(res, { batch: url.searchParams.get('batch') === '1', summary: url.searchParams.get('ended') === 'summary', lastEventId: url.searchParams.get('lastEventId') });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    hub.close();
    await new Promise((r) => server.close(r));
  });

  it('sends each the ended run it asked for, and the same output chunks', async () => {
    const clients = {
      summary: await read(port, 'ended=summary'),
      summaryBatch: await read(port, 'batch=1&ended=summary'),
      whole: await read(port, ''),
      wholeBatch: await read(port, 'batch=1'),
    };
    await until(() => hub.stats().clients === 4);
    // 200,000 characters on stdout, a line on stderr.
    const started = supervisor.start({ argv: ['python3', '-c', 'import sys\nfor i in range(20000): print("%09d" % i)\nprint("bye", file=sys.stderr)'] });
    const result = await supervisor.wait(started.id);
    const endOf = (r: Reader) => r.events.find((e): e is Extract<RunEvent, { type: 'ended' }> => e.type === 'ended' && e.runId === started.id);
    await until(() => Object.values(clients).every((c) => endOf(c) !== undefined));
    for (const name of ['summary', 'summaryBatch'] as const) {
      const ended = endOf(clients[name])!.result;
      expect(ended.stdout).toBe('');
      expect(ended.stderr).toBe('');
      expect(ended.outputChars).toEqual({ stdout: 200_000, stderr: 4 });
      expect(ended.stdoutTruncated).toBe(0);
      expect({ ...ended, stdout: result.stdout, stderr: result.stderr, outputChars: undefined }).toEqual({ ...result, outputChars: undefined });
    }
    for (const name of ['whole', 'wholeBatch'] as const) {
      const ended = endOf(clients[name])!.result;
      expect(ended).toEqual(result);
      expect(ended.outputChars).toBeUndefined();
    }
    for (const client of Object.values(clients)) {
      const text = client.events.flatMap((e) => (e.type === 'output' && e.runId === started.id && e.stream === 'stdout' ? [e.text] : [])).join('');
      expect(text).toBe(result.stdout);
    }
    // The summary clients were sent the output once (as chunks), the whole ones twice.
    expect(clients.summary.bytes).toBeLessThan(clients.whole.bytes - 190_000);

    // Resuming from before the end replays it in the variant asked for.
    const firstId = `test-1`;
    const resumed = { summary: await read(port, `ended=summary&lastEventId=${firstId}`), whole: await read(port, `lastEventId=${firstId}`) };
    await until(() => endOf(resumed.summary) !== undefined && endOf(resumed.whole) !== undefined);
    expect(endOf(resumed.summary)!.result.stdout).toBe('');
    expect(endOf(resumed.whole)!.result.stdout).toBe(result.stdout);
    for (const client of [...Object.values(clients), ...Object.values(resumed)]) client.close();
  });
});
