// `warden k8s verdict NS/POD [FILE]`: a termination message a real
// `warden run --termination-log` wrote (the "pod" is a state dir of its
// own) read into this machine's history as a run of host k8s:NS/POD, seen by
// `warden list` and `warden show` directly and through a running host (what
// the app reads); read twice, recorded once; and everything that is not
// Warden's message refused in one line.

import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../main/store';
import { value } from '../../main/store/sql';
import type { RunResult } from '../../shared/result';
import { serveFor, stopBackgroundHosts, WARDEN_BIN } from '../testkit';
import { MAX_INPUT_BYTES, parseMessage, runFromMessage } from './verdict';

const dir = mkdtempSync(join(tmpdir(), 'wk8sverdict-'));
const servers: ResultPromise[] = [];
const stateDirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.kill('SIGTERM');
    await server;
  }
});
afterAll(async () => {
  await stopBackgroundHosts(stateDirs);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

let n = 0;
const fresh = (name: string) => {
  const path = join(dir, `${name}-${++n}`);
  stateDirs.push(path);
  return path;
};

/** A termination message from a real run in the "pod" (its own state dir), as the file Kubernetes reads. */
async function podMessage(args: string[], command: string[], embedded = true): Promise<string> {
  const log = join(dir, `message-${++n}.json`);
  await execa(process.execPath, [WARDEN_BIN, 'run', ...(embedded ? ['--embedded'] : []), ...args, '--termination-log', log, '--', ...command], { reject: false, env: { WARDEN_STATE_DIR: fresh('pod'), KUBERNETES_SERVICE_HOST: '10.96.0.1' }, stdin: 'ignore' });
  return readFileSync(log, 'utf8');
}

async function warden(args: string[], stateDir: string, input?: string): Promise<{ status: number; out: string; err: string }> {
  const done = await execa(process.execPath, [WARDEN_BIN, ...args], { reject: false, env: { WARDEN_STATE_DIR: stateDir }, ...(input !== undefined ? { input } : { stdin: 'ignore' }) });
  return { status: done.exitCode ?? -1, out: done.stdout, err: done.stderr };
}

function hostIdOf(stateDir: string, id: string): string | undefined {
  const store = openStore({ dir: stateDir });
  try {
    return value<string>(store.db, 'SELECT host_id FROM runs WHERE id = ?', id);
  } finally {
    store.close();
  }
}

describe('warden k8s verdict', () => {
  it("records a pod's run under k8s:NS/POD, shown by list and show, read twice recorded once", async () => {
    const message = await podMessage(['--limit', '1h'], ['bash', '-c', 'echo from-the-pod; echo its-error >&2; exit 3']);
    const id = (JSON.parse(message) as { id: string }).id;
    const here = fresh('here');
    const file = join(dir, 'message.json');
    writeFileSync(file, message);

    const first = await warden(['k8s', 'verdict', 'ml/train-0', file], here);
    expect(first.status, first.err).toBe(0);
    expect(first.err).toBe(`warden: recorded: run ${id} of k8s:ml/train-0, failed, exit 3; see warden show ${id}`);
    expect(hostIdOf(here, id)).toBe('k8s:ml/train-0');

    const listed = JSON.parse((await warden(['list', '--json'], here)).out) as { runs: RunResult[] } | RunResult[];
    const runs = Array.isArray(listed) ? listed : listed.runs;
    expect(runs.map((r) => [r.id, r.verdict, r.exitCode])).toEqual([[id, 'failed', 3]]);
    const shown = JSON.parse((await warden(['show', id, '--json'], here)).out) as RunResult;
    expect(shown).toMatchObject({ id, kind: 'command', argv: ['bash', '-c', 'echo from-the-pod; echo its-error >&2; exit 3'], verdict: 'failed', exitCode: 3, limitMs: 3_600_000, stdout: 'from-the-pod\n', stderr: 'its-error\n' });
    expect(shown.notes[0]).toMatch(/^Ran in pod ml\/train-0; warden there exited 3, k8s\/v1\. Read from its termination message/);
    expect(shown.startedAt).toBe((JSON.parse(message) as { startedAt: string }).startedAt);
    expect(Date.parse(shown.endedAt!) - Date.parse(shown.startedAt)).toBe(Math.floor(shown.elapsedMs));

    // Piped as kubectl prints it (no newline at the end), a second time: nothing changes.
    const again = await warden(['k8s', 'verdict', 'ml/train-0'], here, message.trim());
    expect(again.status).toBe(0);
    expect(again.err).toBe(`warden: already recorded: run ${id} of k8s:ml/train-0, failed, exit 3; see warden show ${id}`);
    const relisted = JSON.parse((await warden(['list', '--json'], here)).out) as { runs: RunResult[] } | RunResult[];
    expect((Array.isArray(relisted) ? relisted : relisted.runs).length).toBe(1);

    // The same id from another pod is not written over the first.
    const clash = await warden(['k8s', 'verdict', 'ml/train-1', file], here);
    expect(clash.status).toBe(125);
    expect(clash.err).toBe(`warden: The history already has a run ${id} of another host (k8s:ml/train-0): the pod's run is not recorded over it.\n`.trimEnd());
  }, 60_000);

  it('a running host (what the app reads) lists it; an OOM kill keeps oom and the contract', async (context) => {
    const message = await podMessage(['--memory', '64M', '--oom-exit-code', '75'], ['python3', '-c', 'a = []\nwhile True: a.append(bytearray(10**6))']);
    const parsed = JSON.parse(message) as { verdict: string | null; id: string };
    if (parsed.verdict === null) return context.skip(`no writable memory cgroup here: ${message}`);
    const here = fresh('here');
    await serveFor(here, servers);
    const recorded = await warden(['k8s', 'verdict', 'ml/oom-0/task', '--json'], here, message);
    expect(recorded.status, recorded.err).toBe(0);
    expect(JSON.parse(recorded.out)).toMatchObject({ id: parsed.id, verdict: 'killed', signal: 'SIGKILL', oom: { confirmed: true } });
    const viaHost = JSON.parse((await warden(['list', '--json', '--verdict', 'killed'], here)).out) as { runs: RunResult[] } | RunResult[];
    expect((Array.isArray(viaHost) ? viaHost : viaHost.runs).map((r) => r.id)).toEqual([parsed.id]);
    const shown = JSON.parse((await warden(['show', parsed.id, '--json'], here)).out) as RunResult;
    expect(shown.notes[0]).toMatch(/warden there exited 75, k8s\/v1/);
    expect(hostIdOf(here, parsed.id)).toBe('k8s:ml/oom-0/task');
  }, 60_000);

  it('a run Warden refused to start is recorded spawn-failed with why, under one id however often it is read', async () => {
    const message = await podMessage(['--owner-pid', '4194305'], ['true'], false);
    const here = fresh('here');
    const first = await warden(['k8s', 'verdict', 'ml/p', '--json'], here, message);
    expect(first.status, first.err).toBe(0);
    const run = JSON.parse(first.out) as RunResult;
    expect(run).toMatchObject({ verdict: 'spawn-failed', advice: '--owner-pid 4194305: no such process is running.', exitCode: null });
    expect(run.notes[0]).toMatch(/refused the run before it started \(exit status 125, k8s\/v1\)/);
    const second = await warden(['k8s', 'verdict', 'ml/p'], here, message);
    expect(second.err).toMatch(new RegExp(`^warden: already recorded: run ${run.id} `));
  }, 60_000);

  // One case a test: each is a CLI call, and a loaded machine takes seconds for one.
  const GOOD = '<the message of a run of `true`>';
  const refusals: [string[], string | undefined, RegExp][] = [
    [['k8s', 'verdict', 'ml/p'], '', /^warden: The termination message is empty/],
    [['k8s', 'verdict', 'ml/p'], 'Traceback (most recent call last):\n  killed\n', /^warden: This is not a termination message warden run wrote \(it is not JSON\)\. With terminationMessagePolicy: FallbackToLogsOnError/],
    [['k8s', 'verdict', 'ml/p'], `${GOOD} ${GOOD}`, /^warden: The text holds more than one termination message/],
    [['k8s', 'verdict', 'ml/p'], '[1,2]', /not a JSON object/],
    [['k8s', 'verdict', 'ml/p'], '{"hello":"world"}', /^warden: This is not a termination message warden run wrote \(id: /],
    [['k8s', 'verdict', 'ml/p'], `${GOOD}"exit":999`, /\(exit: /],
    [['k8s', 'verdict', 'ml/p'], `${GOOD}"id":"../../etc"`, /\(id: /],
    [['k8s', 'verdict', 'ml/p'], `${GOOD}"verdict":"pwned"`, /\(verdict: /],
    [['k8s', 'verdict', 'ml/p'], `${GOOD}"state":"running"`, /^warden: The message is of a run that had not ended \(state "running"\)/],
    [['k8s', 'verdict', 'ml/p'], `${GOOD}"signal":"SIGKILL; rm -rf /"`, /\(signal: /],
    [['k8s', 'verdict', 'ml/p'], `${GOOD}"startedAt":"yesterday"`, /\(startedAt: /],
    [['k8s', 'verdict', 'ML/p'], GOOD, /^warden: A namespace is 1 to 63/],
    [['k8s', 'verdict', 'ml'], GOOD, /^warden: Name a pod as NAMESPACE\/POD/],
    [['k8s', 'verdict'], GOOD, /^warden: warden k8s verdict takes NAMESPACE\/POD/],
    [['k8s', 'verdict', 'ml/p', '<dir>/no-such-file'], undefined, /^warden: Cannot read .*no-such-file: no such file\.$/],
    [['k8s', 'verdict', 'ml/p', '<dir>'], undefined, /^warden: Cannot read .*: it is a directory\.$/],
  ];
  let good = '';
  const goodWith = (input: string): string => {
    const change = input.startsWith(GOOD) ? input.slice(GOOD.length) : '';
    if (!change.startsWith('"')) return input.split(GOOD).join(good.trim());
    // A field of the good message, replaced by the case's value.
    const key = /^"([a-zA-Z]+)":/.exec(change)![1]!;
    return good.replace(new RegExp(`"${key}":("[^"]*"|[^,}]*)`), change);
  };

  it.each(refusals)('refuses %j (input %j) in one line with 125, writing nothing', async (args, input, error) => {
    const here = fresh('here');
    if (good === '') good = await podMessage([], ['true']);
    const r = await warden(
      args.map((a) => a.replace('<dir>', dir)),
      here,
      input === undefined ? undefined : goodWith(input),
    );
    expect(r.status, r.err).toBe(125);
    expect(r.err).toMatch(error);
    expect(r.err.split('\n'), r.err).toHaveLength(1);
    expect((await warden(['list', '--json'], here)).out).not.toMatch(/"id"/);
  });

  it('refuses a file or an input over 64 KiB', async () => {
    const here = fresh('here');
    const big = join(dir, 'big.json');
    writeFileSync(big, ' '.repeat(MAX_INPUT_BYTES + 1));
    expect((await warden(['k8s', 'verdict', 'ml/p', big], here)).err).toMatch(/is over 65536 bytes/);
    expect((await warden(['k8s', 'verdict', 'ml/p'], here, ' '.repeat(MAX_INPUT_BYTES + 1))).err).toMatch(/^warden: The input is over 65536 bytes/);
  });
});

describe('runFromMessage', () => {
  const ref = { namespace: 'ns', pod: 'p' };
  const ended = { id: 'abcdef123456', verdict: 'timed-out', state: 'ended', exit: 124, exitCodes: 'k8s/v1', kind: 'command', argv: ['sleep', '9'], startedAt: '2026-01-02T03:04:05.000Z', exitCode: null, signal: 'SIGINT', elapsedMs: 1500, limitMs: 1000, oom: null, advice: 'Raise the limit.', stderr: 'e', stdout: 'o' };

  it('keeps every field the message has, and times from its start', () => {
    const run = runFromMessage(parseMessage(JSON.stringify(ended)), ref, '', 0);
    expect(run).toEqual({
      id: 'abcdef123456', kind: 'command', argv: ['sleep', '9'], cwd: '', state: 'ended', verdict: 'timed-out', exitCode: null, signal: 'SIGINT',
      startedAt: '2026-01-02T03:04:05.000Z', endedAt: '2026-01-02T03:04:06.500Z', elapsedMs: 1500, limitMs: 1000, advice: 'Raise the limit.',
      notes: [expect.stringMatching(/^Ran in pod ns\/p; warden there exited 124, k8s\/v1\./)], stdout: 'o', stderr: 'e', stdoutTruncated: 0, stderrTruncated: 0,
    });
  });

  it('an older message (no start, kind, argv or contract): ended now, a command, no contract named', () => {
    const { startedAt: _s, kind: _k, argv: _a, exitCodes: _c, ...old } = ended;
    const run = runFromMessage(parseMessage(JSON.stringify({ ...old, oom: false })), ref, '', Date.parse('2026-01-01T00:00:10.000Z'));
    expect(run).toMatchObject({ kind: 'command', startedAt: '2026-01-01T00:00:08.500Z', endedAt: '2026-01-01T00:00:10.000Z', oom: { confirmed: false } });
    expect(run).not.toHaveProperty('argv');
    expect(run.notes[0]).toMatch(/warden there exited 124\. Read/);
  });

  it('a Python script keeps no argv; a missing advice is null', () => {
    const { advice: _a, ...rest } = ended;
    const run = runFromMessage(parseMessage(JSON.stringify({ ...rest, kind: 'python' })), ref, '', 0);
    expect(run.kind).toBe('python');
    expect(run).not.toHaveProperty('argv');
    expect(run.advice).toBeNull();
  });

  it("a not-started message's id comes from the pod and the text", () => {
    const text = JSON.stringify({ verdict: null, state: 'not-started', exit: 125, error: 'no' });
    const a = runFromMessage(parseMessage(text), ref, text, 0);
    expect(a.id).toMatch(/^[0-9a-f]{12}$/);
    expect(runFromMessage(parseMessage(text), ref, `${text}\n`, 5).id).toBe(a.id);
    expect(runFromMessage(parseMessage(text), { ...ref, pod: 'q' }, text, 0).id).not.toBe(a.id);
    expect(runFromMessage(parseMessage(text), ref, text.replace('no', 'other'), 0).id).not.toBe(a.id);
    expect(a.notes[0]).toBe('Warden in pod ns/p refused the run before it started (exit status 125). Read from its termination message by warden k8s verdict.');
  });
});
