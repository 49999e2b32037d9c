// (s) A remote host over ssh: what the link costs. Debian's sshd on
// 127.0.0.1 (src/cli/sshd-testkit.ts: generated keys, a second state dir for
// the "other machine"), so the figures are ssh's and the bridge's costs, not a
// network's.
//   1. `warden --remote box run --json -- true` with the ssh session kept
//      (ControlMaster up), against `warden run --json -- true` through this
//      machine's running host, interleaved call by call (which side goes first
//      turns). Both hosts are running before the first timed call.
//   2. The same remote call with a cold ssh session (the master ended with
//      `ssh -O exit` before each call): a new login, then the call.
//   3. An event's latency: a python3 child printing time.monotonic_ns() every
//      20 ms, its output events received over the remote link (ssh channel +
//      dial-stdio) against over this machine's socket; received - printed per
//      line (the same machine, the same monotonic clock), alternating rounds.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlPath, remoteLink } from '../src/client/remotes';
import { NodeTransport, socketPathFor } from '../src/client/transport';
import { HttpWardenApi, ROUTES, type HttpTransport } from '../src/shared/http-api';
import { masterPid, startSshd } from '../src/cli/sshd-testkit';
import { stopBackgroundHosts } from '../src/cli/testkit';
import { check, median, ms, quantile, ratio, type Figure } from './lib';

const BIN = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'warden.mjs');

export interface RemoteBenchOptions {
  calls: number;
  coldCalls: number;
  latencyRounds: number;
  latencyLines: number;
}

function timeCall(args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`warden ${args.join(' ')} exited ${result.status}: ${String(result.stderr).trim().split('\n').pop()}`);
  return elapsed;
}

/** received - printed (ms) for each line of a python3 child printing monotonic_ns every 20 ms, over `transport`. */
async function latencies(api: HttpWardenApi, transport: HttpTransport, lines: number): Promise<number[]> {
  const seen: number[] = [];
  let runId = '';
  const early: { text: string; at: bigint }[] = [];
  let partial = '';
  const take = (text: string, at: bigint) => {
    partial += text;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) if (/^\d+$/.test(line)) seen.push(Number(at - BigInt(line)) / 1e6);
  };
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const close = (transport as NodeTransport).events(ROUTES.events, {
    onConnect: connected,
    onEvent: (event) => {
      const at = process.hrtime.bigint();
      if (event.type !== 'output' || event.stream !== 'stdout') return;
      if (runId === '') early.push({ text: event.text, at });
      else if (event.runId === runId) take(event.text, at);
    },
  });
  await ready;
  const code = `import time\nfor i in range(${lines}):\n    print(time.monotonic_ns(), flush=True)\n    time.sleep(0.02)\n`;
  const started = await api.start({ argv: ['python3', '-c', code], cwd: tmpdir() });
  runId = started.id;
  for (const e of early) take(e.text, e.at);
  await api.wait(started.id);
  await new Promise((r) => setTimeout(r, 200)); // the last events' frames
  close();
  return seen;
}

/** What a bench against remote "box" holds: Debian's sshd on 127.0.0.1, this machine's state dir, and the env its warden commands get. */
export interface RemoteBox {
  sshd: Exclude<Awaited<ReturnType<typeof startSshd>>, { skip: string }>;
  localDir: string;
  env: NodeJS.ProcessEnv;
  /** The ssh ControlMaster socket of remote box. */
  control: string;
}

/** Runs `body` with remote "box" added over a loopback sshd, then ends the ssh session, the hosts and the dirs. */
export async function withRemoteBox<T>(prefix: string, body: (box: RemoteBox) => Promise<T>): Promise<T> {
  const sshd = await startSshd();
  if ('skip' in sshd) throw new Error(`no sshd: ${sshd.skip}`);
  const localDir = mkdtempSync(join(tmpdir(), prefix));
  const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_STATE_DIR: localDir, WARDEN_SSH: sshd.ssh, WARDEN_HOST_IDLE: '120s' };
  delete env.WARDEN_REMOTE;
  delete env.WARDEN_EMBEDDED;
  const previousSsh = process.env.WARDEN_SSH;
  process.env.WARDEN_SSH = sshd.ssh;
  const control = controlPath(localDir, 'box')!;
  try {
    if (spawnSync(process.execPath, [BIN, 'remote', 'add', 'box', sshd.url, '--warden', sshd.warden], { env, stdio: 'ignore' }).status !== 0) throw new Error('remote add failed');
    return await body({ sshd, localDir, env, control });
  } finally {
    spawnSync(sshd.ssh, ['-o', `ControlPath=${control}`, '-O', 'exit', 'x'], { stdio: 'ignore' });
    if (previousSsh === undefined) delete process.env.WARDEN_SSH;
    else process.env.WARDEN_SSH = previousSsh;
    await sshd.stop();
    await stopBackgroundHosts([sshd.remoteStateDir, localDir]);
    for (const dir of [sshd.dir, sshd.remoteStateDir, localDir]) rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchRemote(options: RemoteBenchOptions): Promise<Figure> {
  return withRemoteBox('wbench-local-', async ({ sshd, localDir, env, control }) => {
    const endSession = () => spawnSync(sshd.ssh, ['-o', `ControlPath=${control}`, '-O', 'exit', 'x'], { stdio: 'ignore' });
    const local = ['run', '--json', '--', 'true'];
    const remote = ['--remote', 'box', ...local];
    // Warm-up: both hosts started, the ssh session up, the bundle built.
    for (let i = 0; i < 3; i++) {
      timeCall(local, env);
      timeCall(remote, env);
    }
    const localTimes: number[] = [];
    const remoteTimes: number[] = [];
    for (let i = 0; i < options.calls; i++) {
      const pair: [number[], string[]][] = [
        [localTimes, local],
        [remoteTimes, remote],
      ];
      if (i % 2 === 1) pair.reverse();
      for (const [into, args] of pair) into.push(timeCall(args, env));
    }
    const coldTimes: number[] = [];
    for (let i = 0; i < options.coldCalls; i++) {
      endSession();
      for (let t = 0; t < 50 && masterPid(sshd.ssh, control) !== null; t++) await new Promise((r) => setTimeout(r, 20));
      coldTimes.push(timeCall(remote, env));
    }

    const localTransport = new NodeTransport({ socketPath: socketPathFor(localDir) });
    const localApi = new HttpWardenApi(localTransport);
    const link = remoteLink(localDir, 'box');
    const overLocal: number[] = [];
    const overRemote: number[] = [];
    for (let round = 0; round < options.latencyRounds; round++) {
      const sides: [number[], HttpWardenApi, HttpTransport][] = [
        [overLocal, localApi, localTransport],
        [overRemote, link.api, link.transport],
      ];
      if (round % 2 === 1) sides.reverse();
      for (const [into, api, transport] of sides) into.push(...(await latencies(api, transport, options.latencyLines)));
    }
    localTransport.close();
    link.transport.close();

    const lm = median(localTimes);
    const rm = median(remoteTimes);
    const cm = median(coldTimes);
    const el = median(overLocal);
    const er = median(overRemote);
    return {
      title: '(s) a remote host over ssh (loopback sshd)',
      lines: [
        `run --json -- true, ${options.calls} calls per side, interleaved:`,
        `  through this machine's host: median ${ms(lm)} (p90 ${ms(quantile(localTimes, 0.9))})`,
        `  through remote box, ssh session kept: median ${ms(rm)} (p90 ${ms(quantile(remoteTimes, 0.9))}), ${ratio(rm, lm)}, +${ms(rm - lm)}`,
        `  through remote box, cold ssh session (${options.coldCalls} calls): median ${ms(cm)}, ${ratio(cm, lm)}; the login adds ${ms(cm - rm)}`,
        `event latency (python3 printing every 20 ms, ${options.latencyRounds} alternating rounds of ${options.latencyLines} lines):`,
        `  over this machine's socket: median ${ms(el, 2)}, p90 ${ms(quantile(overLocal, 0.9), 2)} (${overLocal.length} lines)`,
        `  over the ssh link and dial-stdio: median ${ms(er, 2)}, p90 ${ms(quantile(overRemote, 0.9), 2)} (${overRemote.length} lines), ${ratio(er, el)}`,
      ],
      checks: [
        check('every line arrived over both', overLocal.length === options.latencyRounds * options.latencyLines && overRemote.length === overLocal.length),
        check('kept-session call <= 3x the local one (medians)', rm <= 3 * lm),
        check('event latency over the link median <= 20 ms', er <= 20),
      ],
    };
  });
}
