// One long-lived `python3 -X faulthandler` running runtime/warden_runtime.py:
// its pipes (ops on fd 3, messages on fd 4, output on fd 1 and fd 2 split at
// the end markers), its start until `ready`, its signals and its exit
// (runtime/PROTOCOL.md is the protocol, followed exactly).

import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { constants } from 'node:os';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { OutputStream } from '../../../shared/events';
import { seconds } from '../../../shared/format';
import { MarkerSplitter } from '../marker';
import type { RunCgroup } from '../cgroup';
import { readStat } from '../procfs';
import { checkSpawnable, describeSpawnError, spawnProcess, type Subprocess } from '../spawn';
import { parseReaperLine, reaperArgv } from '../reaper';
import type { SessionSettings } from './settings';

/** runtime/warden_runtime.py, looked for upwards from this file (src/main/supervisor/python, or out/main when built). */
export function findRuntime(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  let dir = here;
  for (let i = 0; i < 6; i += 1) {
    const candidate = join(dir, 'runtime', 'warden_runtime.py');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return resolve(here, '../../../../runtime/warden_runtime.py');
}

export interface Exit {
  exitCode: number | null;
  signal: string | null;
}

type ScriptStatus = 'ok' | 'error' | 'interrupted' | 'cancelled';

export interface ResultMessage {
  type: 'result';
  id: string;
  status: ScriptStatus;
  line: number | null;
  error: string | null;
  /** When the script ended, on the machine's monotonic clock in ns (the runtime's word: see stalls.ts); null when not said. */
  endedNs: bigint | null;
}

type Ready = { ok: true } | { ok: false; cause: string; status: 126 | 127 };

export function describeExit(exit: Exit): string {
  if (exit.signal !== null) return `it was ended by ${exit.signal}`;
  if (exit.exitCode !== null) return `it exited with code ${exit.exitCode}`;
  return 'it ended without an exit status';
}

const LEFTOVER_CAP_BYTES = 1_000_000;

/** A signal's name from its number, as Node reports signals. */
function signalName(n: number): string | null {
  for (const [name, value] of Object.entries(constants.signals)) if (value === n) return name;
  return null;
}

/** The script whose output the interpreter passes on: a PythonRun (run.ts), named by what is used so the two files do not import each other. */
export interface OutputOwner {
  readonly id: string;
  pushOutput(stream: OutputStream, chunk: Uint8Array): void;
  markerSeen(stream: OutputStream): void;
  addNote(note: string): void;
}

/** One interpreter process and its pipes. */
export class Interpreter {
  readonly child: Subprocess;
  /** The interpreter's pid: under the subreaper, told by it (or by the runtime's ready) a moment after the spawn. */
  pid: number | undefined;
  /**
   * The subreaper the interpreter runs under where no cgroup holds it
   * (reaper.ts): what a script starts and orphans is re-parented to it, so
   * teardown finds it by parentage, and it ends them if Warden dies.
   */
  shim?: { pid: number; pipe: Duplex; adopting: boolean };
  readonly startedWallMs = Date.now();
  /** Processes started before this (clock ticks after boot) cannot carry a script's marker. */
  startTicks?: number;
  nonce?: string;
  python?: string;
  exit?: Exit;
  readonly exited: Promise<Exit>;
  readonly ready: Promise<Ready>;
  /** Both output pipes ended (bounded by the caller). */
  readonly outputEnded: Promise<void>;
  /** Set once the interpreter said ready. */
  isReady = false;
  /** It never became ready (spawn failure, died or hung at start). */
  startFailed = false;
  /** Warden sent it SIGKILL (after the grace, a restart, a close): its death needs no "died" note. */
  killedByUs = false;
  /** The memory cgroup's counters as the interpreter exited, before the cgroup was removed. */
  countersAtExit?: { oomKills: number | null; peakBytes: number | null };
  closing = false;
  /** The script the output is for now, per stream (until its end marker); without one, output waits for the next script. */
  readonly owners: Partial<Record<OutputStream, OutputOwner>> = {};
  /** The script running now (its result not yet handled). */
  owner?: OutputOwner;
  /** Killed by a restart of its session. */
  restarted = false;
  /** The script sent and not yet reported on. */
  underScript?: string;
  /** The last script that ran here. */
  lastRunId?: string;
  /** Output written after the last script's end marker, for the next script (PROTOCOL.md: it belongs to the next). */
  readonly leftover: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  leftoverBytes = 0;
  leftoverDropped = 0;
  private readonly startupStderr: Buffer[] = [];
  private readonly waiters = new Map<string, { key: string; resolve: (message: ResultMessage) => void }>();
  /** Per script sent and not reported on: the key its result and end markers are sealed with (PROTOCOL.md). */
  private readonly keys = new Map<string, string>();
  private readonly splitters: Partial<Record<OutputStream, MarkerSplitter>> = {};
  private readonly pending: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  private messageBuffer = '';
  private readonly ops?: Writable;
  private resolveReady!: (ready: Ready) => void;

  constructor(
    readonly generation: number,
    readonly cwd: string,
    env: Record<string, string | undefined>,
    private readonly settings: SessionSettings,
    private readonly onLog: (text: string) => void,
    /** The interpreter's memory cgroup, when its session has a memory limit. */
    readonly cgroup?: RunCgroup,
  ) {
    this.ready = new Promise((r) => (this.resolveReady = r));
    void this.ready.then((ready) => (this.startFailed = !ready.ok));
    const runtime = settings.runtimePath ?? findRuntime();
    let child: Subprocess | undefined;
    let failure: Ready | undefined;
    if (!existsSync(runtime)) {
      failure = { ok: false, cause: `The Python runtime was not found at ${runtime}.`, status: 126 };
    } else {
      try {
        const argv = [settings.pythonCommand, '-X', 'faulthandler', '-u', runtime];
        // Without a cgroup, the subreaper forks the interpreter into a group of its own and says its pid on fd 5.
        const reaper = cgroup || env.WARDEN_SCOPE === undefined || checkSpawnable({ argv: [settings.pythonCommand], shell: false, cwd, env }) ? null : (settings.reaper?.() ?? null);
        if (reaper) {
          const { WARDEN_SCOPE: scope, ...rest } = env;
          const [file, ...args] = reaperArgv(reaper, argv, scope!, 5);
          child = spawnProcess(file!, args, { cwd, env: rest, stdin: 'ignore', extraPipes: 3 });
        } else {
          // The wrapper joins the cgroup and execs the interpreter: same pid, same group.
          const [file, ...args] = cgroup ? cgroup.wrap(argv) : argv;
          child = spawnProcess(file!, args, { cwd, env, stdin: 'ignore', extraPipes: 2 });
        }
      } catch (error) {
        failure = this.spawnFailure(error as NodeJS.ErrnoException, env);
      }
    }
    this.child = child ?? (undefined as unknown as Subprocess);
    const status = child?.pid !== undefined ? (child.stdio[5] as Duplex | null | undefined) : undefined;
    this.pid = status ? undefined : child?.pid;
    if (!child || child.pid === undefined) {
      let resolveExit!: (exit: Exit) => void;
      this.exited = new Promise((r) => (resolveExit = r));
      this.outputEnded = Promise.resolve();
      this.exit = { exitCode: null, signal: null };
      resolveExit(this.exit);
      if (failure) this.resolveReady(failure);
      else child!.once('error', (error: NodeJS.ErrnoException) => this.resolveReady(this.spawnFailure(error, env)));
      return;
    }
    child.on('error', () => undefined);
    if (settings.procRoot !== null && this.pid !== undefined) this.startTicks = readStat(settings.procRoot, this.pid)?.startTicks;
    this.ops = child.stdio[3] as Writable;
    this.ops.on('error', () => undefined);
    const messages = child.stdio[4] as Readable;
    messages.on('data', (chunk: Buffer) => this.onMessages(chunk));
    messages.on('error', () => undefined);
    const ends: Promise<void>[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = child[stream]!;
      readable.on('data', (chunk: Buffer) => this.onOutput(stream, chunk));
      readable.on('error', () => undefined);
      ends.push(new Promise((r) => { readable.once('end', r); readable.once('close', r); }));
    }
    this.outputEnded = Promise.all(ends).then(() => {
      for (const stream of ['stdout', 'stderr'] as const) this.splitters[stream]?.flush();
    });
    this.exited = new Promise((r) => {
      const exited = (exit: Exit) => {
        if (this.exit !== undefined) return;
        this.exit = exit;
        r(exit);
      };
      // Under the subreaper its exit is the interpreter's as the shim tells it (or the shim's own, if it died first).
      if (status) this.listenToShim(child.pid!, status, exited);
      child.once('exit', (code, signal) => exited({ exitCode: code, signal }));
    });
    // Once the interpreter is gone the shim ends what it still holds (orphans of its scripts) and exits.
    if (this.shim) void this.exited.then(() => this.releaseShim());
    const timer = setTimeout(() => {
      this.kill();
      this.resolveReady({ ok: false, cause: `The Python runtime did not report ready within ${seconds(settings.readyTimeoutMs)}; it was killed.`, status: 126 });
    }, settings.readyTimeoutMs);
    void this.exited.then(async (exit) => {
      clearTimeout(timer);
      if (this.isReady) return;
      // Let the pipes end so its last words are in the cause.
      await Promise.race([this.outputEnded, new Promise((r) => setTimeout(r, 500))]);
      const said = Buffer.concat(this.startupStderr).toString('utf8').trim().split('\n').filter(Boolean).pop();
      this.resolveReady({
        ok: false,
        cause: `The Python runtime (${settings.pythonCommand} ${runtime}) ${describeExit(exit).replace(/^it /, '')} before it was ready${said ? `: ${said}` : ''}.`,
        status: 126,
      });
    });
    void this.ready.then(() => clearTimeout(timer));
  }

  private listenToShim(shimPid: number, pipe: Duplex, exited: (exit: Exit) => void): void {
    this.shim = { pid: shimPid, pipe, adopting: true };
    pipe.on('error', () => undefined);
    createInterface({ input: pipe }).on('line', (line) => {
      const message = parseReaperLine(line, signalName);
      if (message?.type === 'pid' && this.pid === undefined) this.takePid(message.pid);
      else if (message?.type === 'exit') exited({ exitCode: message.exitCode, signal: message.signal });
      else if (message?.type === 'error' && this.shim) this.shim.adopting = false;
    });
  }

  private killPending = false;

  private takePid(pid: number): void {
    this.pid = pid;
    if (this.killPending) this.signal('SIGKILL');
    if (this.settings.procRoot !== null) this.startTicks = readStat(this.settings.procRoot, pid)?.startTicks;
  }

  /** Scripts of this interpreter kept their descendants as asked: its shim leaves what it adopted alone. */
  keepAdopted = false;

  private releaseShim(): void {
    const shim = this.shim;
    if (!shim) return;
    shim.pipe.end(this.keepAdopted ? 'keep\n' : undefined);
    const timer = setTimeout(() => {
      try {
        process.kill(shim.pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }, 2_000);
    timer.unref();
    this.child.once('exit', () => clearTimeout(timer));
  }

  private spawnFailure(error: NodeJS.ErrnoException, env: Record<string, string | undefined>): Ready {
    const spec = { argv: [this.settings.pythonCommand], shell: false, cwd: this.cwd, env };
    const failure = checkSpawnable(spec) ?? describeSpawnError(error, spec);
    return { ok: false, cause: failure.cause, status: failure.status };
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Sends one op; false when the pipe is gone. */
  send(op: object): boolean {
    if (!this.ops || this.ops.destroyed || !this.ops.writable) return false;
    this.ops.write(`${JSON.stringify(op)}\n`);
    return true;
  }

  /**
   * The result message for one script: only one sealed with `key`, the
   * secret sent on its exec op, which the script's code cannot read; a result
   * the script wrote to fd 4 itself is ignored (and noted).
   */
  resultFor(id: string, key: string): Promise<ResultMessage> {
    this.keys.set(id, key);
    return new Promise((resolve) => this.waiters.set(id, { key, resolve }));
  }

  signal(signal: NodeJS.Signals): boolean {
    if (this.pid === undefined && this.shim && this.exit === undefined && signal === 'SIGKILL') {
      // Under the subreaper before it said the pid: the kill lands as soon as it does.
      this.killPending = true;
      return true;
    }
    if (this.pid === undefined || this.exit !== undefined) return false;
    try {
      process.kill(this.pid, signal); // the interpreter only, never its group
      return true;
    } catch {
      return false;
    }
  }

  kill(): boolean {
    this.killedByUs = true;
    return this.signal('SIGKILL');
  }

  /** Output after the last end marker: moved out, for the next script. */
  takeLeftover(): { stdout: Buffer; stderr: Buffer; dropped: number } | undefined {
    if (this.leftoverBytes === 0 && this.leftoverDropped === 0) return undefined;
    const taken = { stdout: Buffer.concat(this.leftover.stdout), stderr: Buffer.concat(this.leftover.stderr), dropped: this.leftoverDropped };
    this.leftover.stdout = [];
    this.leftover.stderr = [];
    this.leftoverBytes = 0;
    this.leftoverDropped = 0;
    return taken;
  }

  private onOutput(stream: OutputStream, chunk: Buffer): void {
    if (!this.isReady) {
      // Before ready there is no nonce: keep it until the splitter exists (and for a start failure's cause).
      this.pending[stream].push(chunk);
      if (stream === 'stderr') this.startupStderr.push(chunk);
      return;
    }
    this.splitters[stream]!.push(chunk);
  }

  private route(stream: OutputStream, chunk: Buffer): void {
    const owner = this.owners[stream];
    if (owner) {
      owner.pushOutput(stream, chunk);
      return;
    }
    if (this.leftoverBytes + chunk.length > LEFTOVER_CAP_BYTES) {
      this.leftoverDropped += chunk.length;
      return;
    }
    this.leftover[stream].push(Buffer.from(chunk));
    this.leftoverBytes += chunk.length;
  }

  private onMessages(chunk: Buffer): void {
    this.messageBuffer += chunk.toString('utf8');
    let newline = this.messageBuffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.messageBuffer.slice(0, newline);
      this.messageBuffer = this.messageBuffer.slice(newline + 1);
      if (line.trim().length > 0) this.onMessage(line);
      newline = this.messageBuffer.indexOf('\n');
    }
  }

  private onMessage(line: string): void {
    let message: { type?: unknown; [key: string]: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      this.onLog(`The runtime sent a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (message.type === 'ready' && !this.isReady && typeof message.nonce === 'string') {
      this.nonce = message.nonce;
      if (this.pid === undefined && typeof message.pid === 'number' && Number.isSafeInteger(message.pid) && message.pid > 1) this.takePid(message.pid);
      this.python = typeof message.python === 'string' ? message.python : undefined;
      for (const stream of ['stdout', 'stderr'] as const) {
        const splitter = new MarkerSplitter(
          message.nonce,
          (data) => this.route(stream, data),
          (id) => this.onMarker(stream, id),
        );
        this.splitters[stream] = splitter;
        for (const chunk of this.pending[stream].splice(0)) splitter.push(chunk);
      }
      this.isReady = true;
      this.resolveReady({ ok: true });
    } else if (message.type === 'sealed' && typeof message.id === 'string' && typeof message.body === 'string' && typeof message.mac === 'string') {
      const waiter = this.waiters.get(message.id);
      if (!waiter || !sealedBy(waiter.key, message.body, message.mac)) return this.forged(message.id, 'a result');
      let inner: { type?: unknown; [key: string]: unknown };
      try {
        inner = JSON.parse(message.body) as typeof inner;
      } catch {
        return this.forged(message.id, 'a result');
      }
      if (inner.type !== 'result' || inner.id !== message.id) return this.forged(message.id, 'a result');
      this.waiters.delete(message.id);
      const status = inner.status as ScriptStatus;
      waiter.resolve({
        type: 'result',
        id: message.id,
        status: ['ok', 'error', 'interrupted', 'cancelled'].includes(status) ? status : 'error',
        line: typeof inner.line === 'number' ? inner.line : null,
        error: typeof inner.error === 'string' ? inner.error : null,
        endedNs: typeof inner.endedNs === 'string' && /^\d{1,20}$/.test(inner.endedNs) ? BigInt(inner.endedNs) : null,
      });
    } else if (message.type === 'result') {
      this.forged(typeof message.id === 'string' ? message.id : '?', 'a result');
    } else if (message.type === 'log' && typeof message.text === 'string') {
      this.onLog(message.text);
    }
  }

  /** Something on the runtime's channels the runtime did not seal: the script's own code wrote it. Ignored, and said once per script. */
  private forged(id: string, what: string): void {
    const owner = this.owner;
    const line = `${what[0]!.toUpperCase()}${what.slice(1)} for run ${id} that the runtime did not seal was ignored: the script's own code wrote it (to fd 4 or as an end marker), and the run went on under its limit.`;
    if (owner && !this.forgeries.has(`${owner.id}\0${what}`)) {
      this.forgeries.add(`${owner.id}\0${what}`);
      owner.addNote(line);
    }
    this.onLog(line);
  }

  private readonly forgeries = new Set<string>();

  private onMarker(stream: OutputStream, sealed: string): void {
    const owner = this.owners[stream];
    // The marker names the run and carries a tag only the runtime can make (PROTOCOL.md).
    const [id, tag] = sealed.split(':');
    const key = id === undefined ? undefined : this.keys.get(id);
    // A marker of a script already reported on (late, after the bound) is passed over as before.
    if (key === undefined) return;
    if (tag === undefined || tag !== markerTag(key, id!)) return this.forged(id!, 'an end marker');
    if (owner && owner.id === id) {
      // What follows the marker is not this script's.
      this.owners[stream] = undefined;
      owner.markerSeen(stream);
    }
  }

  /** The script's result and markers are in: its key is no longer needed. */
  forget(id: string): void {
    this.keys.delete(id);
    this.waiters.delete(id);
  }
}

/** True when `mac` is the HMAC-SHA256 of `body` under `key` (hex), compared in constant time. */
function sealedBy(key: string, body: string, mac: string): boolean {
  const expected = createHmac('sha256', key).update(body, 'utf8').digest();
  const given = Buffer.from(mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The tag a script's end markers carry: the first 16 hex digits of HMAC-SHA256(key, "end:" + id). */
export function markerTag(key: string, id: string): string {
  return createHmac('sha256', key).update(`end:${id}`, 'utf8').digest('hex').slice(0, 16);
}
