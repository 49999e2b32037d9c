// The host in this process, its clients over the real unix socket: what one
// client starts, another sees live (list and the event stream) and waits on;
// the event stream resumes with Last-Event-ID; one host per state dir; a
// shutdown stops and records every live run.

import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../shared/events';
import { HttpWardenApi, ROUTES } from '../../shared/http-api';
import { openStore } from '../store';
import { NodeTransport, SseParser } from '../../client/transport';
import { HostRunningError, startHost, type Host } from './host';
import { until as waitUntil } from '../../../test/kit/until';

const hosts: Host[] = [];

function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'wh-'));
}

async function host(dir = stateDir(), options: Parameters<typeof startHost>[0] = {}): Promise<Host> {
  const h = await startHost({ stateDir: dir, webRoot: null, ...options });
  hosts.push(h);
  return h;
}

function client(h: Host): HttpWardenApi {
  return new HttpWardenApi(new NodeTransport({ socketPath: h.socketPath }));
}

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
});

/** Resolves once `predicate` holds for the collected values; polls, no wall-clock assertion. */
async function until<T>(read: () => T, predicate: (value: T) => boolean, what: string): Promise<T> {
  let value = read();
  await waitUntil(what, () => predicate((value = read())), { progress: read });
  return value;
}

interface Frame {
  id: string;
  event: string;
  data: string;
}

/** A raw SSE connection, so the test controls Last-Event-ID itself. */
function rawStream(socketPath: string, path: string, lastEventId?: string) {
  const frames: Frame[] = [];
  const parser = new SseParser((frame) => frames.push(frame));
  const req = request({ socketPath, path, headers: { Host: 'localhost', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) } });
  let status = 0;
  req.on('response', (res) => {
    status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (text: string) => parser.push(text));
  });
  req.on('error', () => undefined);
  req.end();
  return { frames, status: () => status, close: () => req.destroy() };
}

const seqOf = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1));

describe('the host over its unix socket', () => {
  it("shows a run one client started live in another client's list and event stream, and returns its result by wait", async () => {
    const h = await host();
    const a = client(h);
    const b = client(h);
    const seen: RunEvent[] = [];
    const unsubscribe = b.subscribe((event) => seen.push(event));
    // The stream is connected once the host counts a client.
    await until(() => h.hub.stats().clients, (n) => n === 1, 'the event stream to connect');
    const started = await a.start({ argv: ['bash', '-c', 'echo first; read -t 30 line < /dev/null; sleep 0.5; echo second'] });
    expect(started.state).toBe('running');
    const live = await b.list();
    expect(live.find((r) => r.id === started.id)?.state).toBe('running');
    await until(() => seen.filter((e) => e.runId === started.id && e.type === 'output').length, (n) => n >= 1, 'live output on the stream');
    // The history page shows the live run where it stands now, not as it was stored at its start.
    const page = await b.history({ state: 'live' });
    expect(page.runs.find((r) => r.id === started.id)).toMatchObject({ state: 'running' });
    expect(page.runs.find((r) => r.id === started.id)!.elapsedMs).toBeGreaterThan(0);
    const result = await b.wait(started.id);
    expect(result).toMatchObject({ id: started.id, verdict: 'completed', stdout: 'first\nsecond\n' });
    await until(() => seen.some((e) => e.runId === started.id && e.type === 'ended'), Boolean, 'the ended event');
    unsubscribe();
    const types = seen.filter((e) => e.runId === started.id).map((e) => e.type);
    expect(types[0]).toBe('started');
    expect(types.at(-1)).toBe('ended');
    const text = seen.flatMap((e) => (e.runId === started.id && e.type === 'output' && e.stream === 'stdout' ? [e.text] : [])).join('');
    expect(text).toBe('first\nsecond\n');
    // get answers for the ended run too, and the history has it.
    expect((await a.get(started.id))?.verdict).toBe('completed');
    expect((await a.history({ limit: 5 })).runs.map((r) => r.id)).toContain(started.id);
  });

  it('a client reconnecting with Last-Event-ID gets exactly the events it missed', async () => {
    const h = await host();
    const api = client(h);
    const first = rawStream(h.socketPath, ROUTES.events);
    await until(() => h.hub.stats().clients, (n) => n === 1, 'the stream');
    const one = await api.start({ argv: ['bash', '-c', 'for i in 1 2 3; do echo a$i; done'] });
    await api.wait(one.id);
    await until(() => first.frames.filter((f) => f.event === 'message').length, (n) => n >= 3, 'events of the first run');
    const messages = first.frames.filter((f) => f.event === 'message');
    // Disconnect part-way: keep only up to the second event.
    first.close();
    const lastSeen = messages[1]!.id;
    // Events the client misses while it is away.
    const two = await api.start({ argv: ['bash', '-c', 'echo missed-1; echo missed-2'] });
    await api.wait(two.id);
    const emitted = h.hub.stats().emitted;
    const again = rawStream(h.socketPath, ROUTES.events, lastSeen);
    await until(() => again.frames.filter((f) => f.event === 'message').length, (n) => n >= emitted - seqOf(lastSeen), 'the replay');
    again.close();
    const replayed = again.frames.filter((f) => f.event === 'message');
    // Contiguous from the one after the last seen, to the last emitted: nothing missed, nothing twice.
    expect(replayed.map((f) => seqOf(f.id))).toEqual(Array.from({ length: emitted - seqOf(lastSeen) }, (_, i) => seqOf(lastSeen) + 1 + i));
    const missed = replayed.map((f) => JSON.parse(f.data) as RunEvent).filter((e) => e.runId === two.id && e.type === 'output');
    expect(missed.map((e) => (e.type === 'output' ? e.text : '')).join('')).toBe('missed-1\nmissed-2\n');
    expect(again.frames.some((f) => f.event === 'gap')).toBe(false);
  });

  it('tells a client resuming from another host life, or from events no longer buffered, that it has a gap', async () => {
    const h = await host(stateDir(), { events: { maxEvents: 4 } });
    const api = client(h);
    // Three runs: at least six events (a start and an end each) however a loaded machine joins
    // their output, so the first ones have left a ring of four.
    for (let i = 0; i < 3; i++) await api.wait((await api.start({ argv: ['true'] })).id);
    expect(h.hub.stats().emitted).toBeGreaterThanOrEqual(6);
    const old = rawStream(h.socketPath, ROUTES.events, `${h.hub.epoch}-1`);
    const foreign = rawStream(h.socketPath, ROUTES.events, 'someotherhost-5');
    await until(() => old.frames.length + foreign.frames.length, (n) => n >= 2, 'the gap events');
    old.close();
    foreign.close();
    expect(old.frames[0]!.event).toBe('gap');
    expect(foreign.frames[0]!.event).toBe('gap');
  });

  it('?batch=1 (browsers): few messages, each an array of events with the id of its last; nothing lost, resumable', async () => {
    const h = await host();
    const api = client(h);
    const stream = rawStream(h.socketPath, `${ROUTES.events}?batch=1`);
    await until(() => h.hub.stats().clients, (n) => n === 1, 'the stream');
    const run = await api.start({ argv: ['bash', '-c', 'for i in $(seq 1 2000); do echo "line $i"; done'] });
    const result = await api.wait(run.id);
    const emitted = h.hub.stats().emitted;
    await until(() => stream.frames.filter((f) => f.event === 'batch').map((f) => seqOf(f.id)).at(-1) ?? 0, (n) => n >= emitted, 'the last batch');
    stream.close();
    const batches = stream.frames.filter((f) => f.event === 'batch');
    const events = batches.flatMap((f) => JSON.parse(f.data) as RunEvent[]);
    const text = events.flatMap((e) => (e.type === 'output' && e.runId === run.id && e.stream === 'stdout' ? [e.text] : [])).join('');
    expect(text).toBe(result.stdout);
    expect(events.at(-1)).toMatchObject({ type: 'ended', runId: run.id });
    // Fewer messages than events: output chunks are joined and events of a frame share one message.
    expect(batches.length).toBeLessThan(emitted);
    // Ids only grow, so a reconnect with the last one resumes after it.
    const ids = batches.map((f) => seqOf(f.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Resuming after the first event replays the rest, batched.
    const again = rawStream(h.socketPath, `${ROUTES.events}?batch=1`, `${h.hub.epoch}-1`);
    await until(() => again.frames.filter((f) => f.event === 'batch').map((f) => seqOf(f.id)).at(-1) ?? 0, (n) => n >= emitted, 'the replay');
    again.close();
    const replayed = again.frames.filter((f) => f.event === 'batch').flatMap((f) => JSON.parse(f.data) as RunEvent[]);
    expect(replayed[0]).not.toMatchObject({ type: 'started' });
    expect(replayed.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.text] : [])).join('')).toBe(result.stdout);
    expect(replayed.at(-1)).toMatchObject({ type: 'ended' });
  });

  it('?run=ID&since=start replays that run from its start and nothing of other runs', async () => {
    const h = await host();
    const api = client(h);
    const other = await api.start({ argv: ['echo', 'other'] });
    const mine = await api.start({ argv: ['echo', 'mine'] });
    await Promise.all([api.wait(other.id), api.wait(mine.id)]);
    const stream = rawStream(h.socketPath, `${ROUTES.events}?run=${mine.id}&since=start`);
    await until(() => stream.frames.some((f) => f.data.includes('"type":"ended"')), Boolean, 'the replayed end');
    stream.close();
    const events = stream.frames.filter((f) => f.event === 'message').map((f) => JSON.parse(f.data) as RunEvent);
    expect(new Set(events.map((e) => e.runId))).toEqual(new Set([mine.id]));
    expect(events[0]!.type).toBe('started');
  });

  it('refuses a second host on the same state dir, and frees the lock when the first stops', async () => {
    const dir = stateDir();
    const first = await host(dir);
    const second = startHost({ stateDir: dir, webRoot: null });
    await expect(second).rejects.toBeInstanceOf(HostRunningError);
    await expect(second).rejects.toThrow(new RegExp(`already running for .* \\(pid ${process.pid}`));
    // The first one still serves.
    expect((await client(first).host()).hostId).toBe(first.supervisor.hostId);
    await first.shutdown();
    const third = await host(dir);
    expect((await client(third).host()).hostId).toBe(third.supervisor.hostId);
  });

  it('a shutdown stops every live run with the stop sequence and records it before the store closes', async () => {
    const dir = stateDir();
    const h = await host(dir);
    const api = client(h);
    const ids = await Promise.all([
      api.start({ argv: ['sleep', '60'] }),
      api.start({ argv: ['bash', '-c', "trap '' INT; echo stubborn; sleep 60"] }),
      api.start({ code: 'import time\nprint("py", flush=True)\ntime.sleep(60)', session: 'shut' }),
    ]).then((runs) => runs.map((r) => r.id));
    await until(() => h.supervisor.list().filter((r) => r.state === 'running').length, (n) => n === 3, 'three live runs');
    // The stubborn one has set its trap (it prints after), and the script runs: a shutdown before would find them elsewhere.
    await until(() => h.supervisor.get(ids[1]!)!.stdout + h.supervisor.get(ids[2]!)!.stdout, (out) => out.includes('stubborn') && out.includes('py'), 'both to print');
    await h.shutdown();
    // The start of a new run is refused from now on; the store is closed: read it afresh.
    const store = openStore({ dir });
    try {
      for (const id of ids) {
        const stored = store.get(id);
        expect(stored, id).not.toBeNull();
        expect(stored).toMatchObject({ state: 'ended', verdict: 'stopped', stop: { reason: 'shutdown' } });
      }
      // The one that ignored SIGINT went on to SIGTERM.
      expect(store.get(ids[1]!)?.stop?.endedBy).toBe('terminate');
    } finally {
      store.close();
    }
  });

  it('takes no new runs while shutting down (503), and removes its socket and token file when done', async () => {
    const h = await host(stateDir(), { port: 0 });
    const api = client(h);
    const live = await api.start({ argv: ['sleep', '60'] });
    const closing = h.shutdown();
    await expect(api.start({ argv: ['true'] })).rejects.toMatchObject({ status: 503 });
    await closing;
    expect(h.supervisor.get(live.id)?.verdict).toBe('stopped');
    const { existsSync } = await import('node:fs');
    expect(existsSync(h.socketPath)).toBe(false);
    expect(existsSync(h.tcp!.tokenPath)).toBe(false);
  });
});
