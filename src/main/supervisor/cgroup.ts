// Every run's cgroup: its memory limit, the kill of everything in it at
// teardown, and the evidence the verdict needs to say "the out-of-memory
// killer ended it" as a fact (docs/architecture.md, "Verdicts": killed with
// oom.confirmed).
//
// Backends, looked for once (detectMemoryBackend):
// - cgroup v2 where a writable delegated subtree has the memory controller (a
//   desktop under systemd: user@UID.service/...). Warden's parent cgroup is
//   made under the nearest ancestor of its own cgroup that has `memory` in
//   cgroup.controllers and a writable cgroup.subtree_control (its own cgroup
//   holds processes, so "no internal processes" rules it out unless it is the
//   root);
// - else cgroup v1's memory controller when writable (our build machines, as
//   root): the parent is made under Warden's own memory cgroup, else the mount;
// - else nothing: a run with a memory limit is refused with a one-line reason,
//   never run without its limit.
//
// Each run gets `<parent>/<ownerPid>.<ownerStartTicks>.<ownerPidNs>-<runId>`.
// The owner in the name lets a sweep (removeStaleCgroups) tell a crashed
// Warden's leftovers from a live Warden's run, even one whose process has not
// joined yet or one of a Warden in another PID namespace (cgroup-owner.ts:
// what it cannot judge it leaves alone).
//
// The command joins the cgroup BEFORE it executes: `wrap(argv)` runs it through
// `/bin/sh -c '<join>; exec "$@"' warden-cgroup <dir> argv...`. The command's
// words are positional parameters, never parsed by the shell; when the join
// fails the command is not run and the wrapper exits 125 with a line naming
// the cgroup (joinFailure() turns that into the exact cause).
//
// A v1 cgroup without a limit is entered from birth instead (spawnInside):
// the spawning thread moves in for the fork, so no shell runs first. Not with
// a limit (Node's own page faults would count against it), not on v2 (whole
// processes only), and only while the kernel's attach is warm: a cold attach
// waits for an RCU grace period, which the event loop must not (figures in
// bench/README.md, issue 20 item 11).
//
// Everything here is synchronous file I/O on cgroupfs (each read or write is a
// few microseconds) except the bounded waits in killAll() and remove().

import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CLI_ERROR_EXIT } from '../../shared/errors';
import type { OomReport } from '../../shared/result';
import { readSize, SIZE_FORMS } from '../../shared/size';
import { bytes } from '../../shared/format';
import { WardenInputError } from './errors';
import { judgeOwner, lookAtPid, ownerTagText, ownIdentity, type OwnIdentity } from './cgroup-owner';

// ---------------------------------------------------------------------------
// --memory

/** Below this even the wrapper shell cannot start. */
export const MIN_MEMORY_BYTES = 1024 ** 2;

/**
 * `--memory` and the API's `memory`: "2Gi", "512Mi", "1G", "500M", "512m",
 * "1.5GiB" (powers of 1024, src/shared/size.ts), "1048576". A number is
 * bytes. Throws a WardenInputError with one line.
 */
export function parseMemory(value: string | number, name = 'memory'): number {
  let result: number | undefined;
  if (typeof value === 'number') {
    result = Number.isSafeInteger(value) ? value : undefined;
  } else if (typeof value === 'string') {
    const read = readSize(value);
    if (!read.ok) throw new WardenInputError(`${name} ${read.why}.`);
    result = read.bytes;
  }
  if (result === undefined) {
    throw new WardenInputError(`${name} must be ${SIZE_FORMS}, not ${JSON.stringify(value)}.`);
  }
  if (result < MIN_MEMORY_BYTES) {
    throw new WardenInputError(`${name} must be at least 1 MiB, not ${JSON.stringify(value)} (${bytes(result)}).`);
  }
  return result;
}

// ---------------------------------------------------------------------------
// Backend detection

/** Thrown (or returned as `reason`) when no writable memory cgroup exists; a WardenInputError, so a request gets a 4xx / exit 125. */
export class MemoryLimitUnavailable extends WardenInputError {
  override name = 'MemoryLimitUnavailable';
}

export interface DetectOptions {
  /** Where the cgroup hierarchies are mounted (default /sys/fs/cgroup): v2 at the root or at <root>/unified, v1 memory at <root>/memory. */
  cgroupRoot?: string;
  /** The text of /proc/self/cgroup (default: read it). */
  selfCgroup?: string;
  /** Warden's parent cgroup's name under the chosen ancestor (default 'warden'). Tests use their own. */
  parentName?: string;
}

export type Detection = { ok: true; backend: MemoryBackend } | { ok: false; reason: string };

const DEFAULT_ROOT = '/sys/fs/cgroup';

/** Looks for a writable memory cgroup; makes Warden's parent cgroup in it. Never throws. */
export function detectMemoryBackend(options: DetectOptions = {}): Detection {
  const root = resolve(options.cgroupRoot ?? DEFAULT_ROOT);
  const parentName = options.parentName ?? 'warden';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(parentName) || parentName === '.' || parentName === '..') {
    return { ok: false, reason: `The memory cgroup parent name ${JSON.stringify(parentName)} is not a plain name.` };
  }
  let self = options.selfCgroup;
  if (self === undefined) {
    try {
      self = readFileSync('/proc/self/cgroup', 'utf8');
    } catch {
      self = '';
    }
  }
  const v2 = findV2(root, self, parentName);
  if (typeof v2 !== 'string') return { ok: true, backend: new MemoryBackend(2, v2.parent, v2.mount) };
  const v1 = findV1(root, self, parentName);
  if (typeof v1 !== 'string') return { ok: true, backend: new MemoryBackend(1, v1.parent, v1.mount) };
  return { ok: false, reason: `No writable memory cgroup, so a memory limit cannot be enforced: ${v2}, and ${v1}.` };
}

const detected = new Map<string, Detection>();

/** detectMemoryBackend() once per process for the same root and parent name (the engine's entry point). */
export function memoryBackendOnce(options: Omit<DetectOptions, 'selfCgroup'> = {}): Detection {
  const key = `${resolve(options.cgroupRoot ?? DEFAULT_ROOT)}\0${options.parentName ?? 'warden'}`;
  let found = detected.get(key);
  if (found === undefined) {
    found = detectMemoryBackend(options);
    detected.set(key, found);
  }
  return found;
}

/** detectMemoryBackend(), throwing MemoryLimitUnavailable with its one-line reason. */
export function requireMemoryBackend(options: DetectOptions = {}): MemoryBackend {
  const found = detectMemoryBackend(options);
  if (!found.ok) throw new MemoryLimitUnavailable(found.reason);
  return found.backend;
}

/** The cgroup path of this process in the v2 hierarchy ("0::/a/b") or in the v1 hierarchy holding `controller`. */
export function ownCgroupPath(selfCgroup: string, controller: 'v2' | 'memory'): string | undefined {
  for (const line of selfCgroup.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (controller === 'v2' ? m[1] === '0' && m[2] === '' : m[2]!.split(',').includes(controller)) return m[3];
  }
  return undefined;
}

/** The cgroup at `path` below `mount` and each ancestor up to the mount, nearest first; the mount alone when `path` is not there. */
function ancestors(mount: string, path: string | undefined): string[] {
  let dir = path !== undefined ? resolve(mount, `.${sep}${path}`) : mount;
  const rel = relative(mount, dir);
  if (rel.startsWith('..') || !existsSync(dir)) dir = mount;
  const out = [dir];
  while (dir !== mount && dirname(dir) !== dir) {
    dir = dirname(dir);
    out.push(dir);
  }
  return out;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function words(text: string | undefined): string[] {
  return (text ?? '').split(/\s+/).filter(Boolean);
}

function findV2(root: string, self: string, parentName: string): { parent: string; mount: string } | string {
  const mount = existsSync(join(root, 'cgroup.controllers')) ? root : existsSync(join(root, 'unified', 'cgroup.controllers')) ? join(root, 'unified') : undefined;
  if (mount === undefined) return `cgroup v2 is not mounted at ${root}`;
  let sawMemory = false;
  for (const dir of ancestors(mount, ownCgroupPath(self, 'v2'))) {
    if (!words(readText(join(dir, 'cgroup.controllers'))).includes('memory')) continue;
    sawMemory = true;
    // Moving a process needs write access to the common ancestor's cgroup.procs.
    if (!writable(dir) || !writable(join(dir, 'cgroup.subtree_control')) || !writable(join(dir, 'cgroup.procs'))) continue;
    if (!enableMemory(dir)) continue; // a non-root cgroup holding processes cannot delegate controllers
    const parent = join(dir, parentName);
    try {
      mkdirSync(parent, { recursive: true });
      // The kernel makes memory.max in a run's cgroup only when the parent delegates memory.
      if (enableMemory(parent)) return { parent, mount };
    } catch {
      // not writable after all; look further up
    }
  }
  return sawMemory
    ? `cgroup v2 at ${mount} has a memory controller but no subtree delegated to this user here (no writable cgroup.subtree_control)`
    : `cgroup v2 at ${mount} has no memory controller delegated here`;
}

/** Makes `memory` available to dir's children; false when it cannot. */
function enableMemory(dir: string): boolean {
  const file = join(dir, 'cgroup.subtree_control');
  if (words(readText(file)).includes('memory')) return true;
  try {
    writeFileSync(file, '+memory');
  } catch {
    return false;
  }
  return words(readText(file)).includes('memory');
}

function findV1(root: string, self: string, parentName: string): { parent: string; mount: string } | string {
  const mount = join(root, 'memory');
  if (!existsSync(join(mount, 'memory.limit_in_bytes'))) return `cgroup v1's memory controller is not mounted at ${mount}`;
  for (const dir of ancestors(mount, ownCgroupPath(self, 'memory'))) {
    if (!writable(dir)) continue;
    const parent = join(dir, parentName);
    try {
      mkdirSync(parent, { recursive: true });
    } catch {
      continue;
    }
    if (writable(join(parent, 'memory.limit_in_bytes'))) return { parent, mount };
  }
  return `cgroup v1's memory controller at ${mount} is not writable here`;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Child cgroups of `dir` (directories), deepest last. */
function childCgroups(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name));
  } catch {
    return [];
  }
}

/** Every pid in `dir` and the cgroups below it. */
function pidsUnder(dir: string): number[] {
  const pids = words(readText(join(dir, 'cgroup.procs'))).map(Number).filter((n) => Number.isInteger(n) && n > 0);
  for (const child of childCgroups(dir)) pids.push(...pidsUnder(child));
  return pids;
}

/** rmdir depth first; throws the first error (EBUSY while processes remain). */
function removeTree(dir: string): void {
  for (const child of childCgroups(dir)) removeTree(child);
  try {
    rmdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

async function removeWithRetry(dir: string, retryMs: number): Promise<boolean> {
  const end = performance.now() + retryMs;
  for (;;) {
    try {
      removeTree(dir);
      return true;
    } catch {
      if (performance.now() >= end) return false;
      await sleep(20);
    }
  }
}

export interface StaleSweep {
  /** Cgroups removed: their owner is gone and nothing ran in them. */
  removed: string[];
  /** Cgroups of a gone owner that still hold processes (left alone unless `kill`). */
  busy: string[];
  /** Pids sent SIGKILL because `kill` was asked. */
  killed: number[];
  /** Cgroups whose owner cannot be judged from here (another PID namespace, an older Warden's name): never touched. */
  leftAlone: { path: string; why: string }[];
}

export class MemoryBackend {
  constructor(
    readonly version: 1 | 2,
    /** Warden's parent cgroup: every run's cgroup is made directly under it. */
    readonly parent: string,
    /** Where this hierarchy is mounted. */
    readonly mount?: string,
  ) {}

  /** This process as a run cgroup's owner, read once (undefined: /proc does not say). */
  private identity?: OwnIdentity | null;

  private self(): OwnIdentity | undefined {
    if (this.identity === undefined) this.identity = ownIdentity() ?? null;
    return this.identity ?? undefined;
  }

  /**
   * Makes the run's cgroup and sets its limit (swap cannot hide it); with a
   * null limit, a cgroup only to hold the run's processes (no process can
   * leave it, so teardown finds them all). Throws an Error with one line when it cannot.
   */
  createRunCgroup(runId: string, limitBytes: number | null): RunCgroup {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(runId) || runId === '.' || runId === '..') throw new Error(`The run id ${JSON.stringify(runId)} cannot name a cgroup.`);
    if (limitBytes !== null && (!Number.isSafeInteger(limitBytes) || limitBytes <= 0)) throw new Error(`The memory limit must be a positive number of bytes, not ${limitBytes}.`);
    // Without its identity (no /proc) the name says only the pid: no Warden ever sweeps such a cgroup.
    const self = this.self();
    const path = join(this.parent, `${self ? ownerTagText(self.tag) : process.pid}-${runId}`);
    try {
      // The parent may have been removed by hand (or by a sweep of an older Warden).
      if (!existsSync(this.parent)) {
        mkdirSync(this.parent, { recursive: true });
        if (this.version === 2) writeFileSync(join(this.parent, 'cgroup.subtree_control'), '+memory');
      }
      mkdirSync(path);
    } catch (error) {
      throw new Error(`Could not make the memory cgroup ${path}: ${(error as Error).message}.`);
    }
    if (limitBytes === null) return new RunCgroup(this.version, path, 0, this.mount !== undefined ? { mount: this.mount } : {});
    try {
      if (this.version === 2) {
        writeFileSync(join(path, 'memory.max'), String(limitBytes));
        if (existsSync(join(path, 'memory.swap.max'))) writeFileSync(join(path, 'memory.swap.max'), '0');
      } else {
        writeFileSync(join(path, 'memory.limit_in_bytes'), String(limitBytes));
        // memory+swap: without it (no swap accounting), at least keep this cgroup out of swap.
        if (existsSync(join(path, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(path, 'memory.memsw.limit_in_bytes'), String(limitBytes));
        else if (existsSync(join(path, 'memory.swappiness'))) writeFileSync(join(path, 'memory.swappiness'), '0');
      }
    } catch (error) {
      try {
        rmdirSync(path);
      } catch {
        // removeStaleCgroups() takes it later
      }
      throw new Error(`Could not set the ${bytes(limitBytes)} limit on the memory cgroup ${path}: ${(error as Error).message}.`);
    }
    return new RunCgroup(this.version, path, limitBytes);
  }

  /**
   * Removes cgroups under the parent left by a Warden that is provably gone
   * (judgeOwner: its PID namespace is ours and no process with its pid and
   * start time runs) once their processes are gone. With `kill`, the
   * processes left in such cgroups are SIGKILLed first (a crashed Warden's
   * orphans). A cgroup whose owner cannot be judged is left alone and listed
   * in `leftAlone`. Never throws.
   */
  async removeStaleCgroups(options: { kill?: boolean; retryMs?: number } = {}): Promise<StaleSweep> {
    const sweep: StaleSweep = { removed: [], busy: [], killed: [], leftAlone: [] };
    const self = this.self();
    for (const dir of childCgroups(this.parent)) {
      const owner = judgeOwner(dir.slice(dir.lastIndexOf(sep) + 1), self, (pid) => lookAtPid(pid));
      if (owner.kind === 'alive') continue;
      if (owner.kind === 'unknown') {
        sweep.leftAlone.push({ path: dir, why: owner.why });
        continue;
      }
      if (options.kill) {
        const report = await new RunCgroup(this.version, dir, 0).killAll();
        sweep.killed.push(...report.killed);
      }
      if (pidsUnder(dir).length > 0) {
        sweep.busy.push(dir);
        continue;
      }
      if (await removeWithRetry(dir, options.retryMs ?? 200)) sweep.removed.push(dir);
      else sweep.busy.push(dir);
    }
    return sweep;
  }

  /** Removes Warden's parent cgroup when no run's cgroup is left in it (tests; a host shutting down). Never throws. */
  removeParentIfEmpty(): boolean {
    try {
      rmdirSync(this.parent);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
  }
}

// ---------------------------------------------------------------------------
// One run's cgroup

/** The wrapper's name ($0): the shell prefixes its own error messages with it. */
export const WRAPPER_NAME = 'warden-cgroup';
/** The wrapper's exit status when it could not join: Warden's own error, as in the result contract. */
export const JOIN_FAILED_STATUS = CLI_ERROR_EXIT;
const JOIN_FAILED_TEXT = 'could not join the memory cgroup';
// $1 is the cgroup's directory, the rest is the command. `exec "$@"` keeps each
// word as it is: nothing the command's words contain is parsed by the shell.
const WRAPPER_SCRIPT = `if ! echo $$ > "$1/cgroup.procs"; then echo "${WRAPPER_NAME}: ${JOIN_FAILED_TEXT} $1, so the command was not run" >&2; exit ${JOIN_FAILED_STATUS}; fi; shift; exec "$@"`;
// Without a limit the cgroup only helps teardown: a failed join is no reason not to run the command.
const SOFT_WRAPPER_SCRIPT = `{ echo $$ > "$1/cgroup.procs"; } 2>/dev/null; shift; exec "$@"`;

export interface KillReport {
  /** Pids sent SIGKILL (each once). */
  killed: number[];
  /** Pids still in the cgroup when the budget ran out. */
  survivors: number[];
  elapsedMs: number;
}

export interface ExitSeen {
  exitCode: number | null;
  signal: string | null;
}

/** When this process last attached a task to a cgroup (a thread moved, or a wrapper spawned to join). */
let lastAttachMs = Number.NEGATIVE_INFINITY;
/** Well inside the 16-32 ms a write keeps the next one from waiting for a grace period. */
const ATTACH_WARM_MS = 10;

/** Whether a cgroup write now is likely to cost microseconds rather than a grace period (see the top of this file). */
export function cgroupAttachWarm(): boolean {
  return performance.now() - lastAttachMs < ATTACH_WARM_MS;
}

/** The calling thread's id and its cgroup directory in the v1 memory hierarchy mounted at `mount`; undefined when unknown. */
function threadMemoryCgroup(mount: string): { tid: string; dir: string } | undefined {
  try {
    const tid = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1];
    const path = ownCgroupPath(readFileSync('/proc/thread-self/cgroup', 'utf8'), 'memory');
    return tid === undefined || path === undefined ? undefined : { tid, dir: resolve(mount, `.${sep}${path}`) };
  } catch {
    return undefined;
  }
}

export class RunCgroup {
  private sampledPeak = 0;
  private sampler?: NodeJS.Timeout;
  /** Where this hierarchy is mounted (spawnInside needs it to find the thread's own cgroup). */
  private readonly mount?: string;

  constructor(
    readonly version: 1 | 2,
    /** The cgroup's directory. */
    readonly path: string,
    readonly limitBytes: number,
    options: { sampleEveryMs?: number; mount?: string } = {},
  ) {
    if (options.mount !== undefined) this.mount = options.mount;
    // Without memory.peak (cgroup v2 before Linux 5.19) the peak is the highest memory.current seen.
    if (version === 2 && limitBytes > 0 && !existsSync(join(path, 'memory.peak'))) {
      this.sampler = setInterval(() => this.sample(), options.sampleEveryMs ?? 100);
      this.sampler.unref();
    }
  }

  /**
   * The argv to spawn instead of `argv`: the process writes its pid into the
   * cgroup, then execs argv unchanged (same pid, so the same process group
   * when spawned detached). Spawn it without a shell.
   */
  wrap(argv: string[]): string[] {
    if (argv.length === 0) throw new Error('No command to wrap.');
    lastAttachMs = performance.now(); // the wrapper joins about now
    return ['/bin/sh', '-c', this.limitBytes > 0 ? WRAPPER_SCRIPT : SOFT_WRAPPER_SCRIPT, WRAPPER_NAME, this.path, ...argv];
  }

  /**
   * Calls `spawn` (a synchronous fork and exec, such as spawnCommand) with the
   * calling thread moved into this cgroup, and moves the thread back before
   * returning, whatever happens: the child is born in the cgroup, so it is in
   * there before it runs anything and no wrapper is executed. Only cgroup v1
   * without a limit (see the top of this file). Returns undefined, without
   * calling `spawn`, when the thread cannot be moved in; the caller then wraps.
   */
  spawnInside<T>(spawn: () => T): T | undefined {
    if (this.version !== 1 || this.limitBytes > 0 || this.mount === undefined) return undefined;
    const home = threadMemoryCgroup(this.mount);
    // Never from a run's cgroup (a move back that failed): that one would be its home.
    if (home === undefined || home.dir === this.path || home.dir.startsWith(`${dirname(this.path)}${sep}`)) return undefined;
    try {
      writeFileSync(join(this.path, 'tasks'), home.tid);
    } catch {
      return undefined;
    }
    try {
      return spawn();
    } finally {
      // A cgroup we were just in accepts us back; once more should the first write be interrupted.
      if (!tryWrite(join(home.dir, 'tasks'), home.tid)) tryWrite(join(home.dir, 'tasks'), home.tid);
      lastAttachMs = performance.now();
    }
  }

  /**
   * Makes the attach warm for a run that may start next, off the event loop:
   * a thread of libuv's pool writes 0 (itself) into the tasks file of this
   * process's own cgroup, a move to where it is, which waits for any grace
   * period there. Never touches the event loop's thread. v1 only; never throws.
   */
  warmAttach(): void {
    if (this.version !== 1 || this.mount === undefined) return;
    let home: string | undefined;
    try {
      home = ownCgroupPath(readFileSync('/proc/self/cgroup', 'utf8'), 'memory');
    } catch {
      return;
    }
    if (home === undefined) return;
    writeFile(join(resolve(this.mount, `.${sep}${home}`), 'tasks'), '0').then(
      () => (lastAttachMs = performance.now()),
      () => undefined,
    );
  }

  /**
   * The exact cause when the wrapper could not put the process in the cgroup
   * (it then exits 125 without running the command), else undefined. Give it
   * the run's exit code and the start of its stderr.
   */
  joinFailure(exitCode: number | null, stderr: string): string | undefined {
    if (exitCode !== JOIN_FAILED_STATUS || this.limitBytes <= 0) return undefined;
    const ours = `${WRAPPER_NAME}: ${JOIN_FAILED_TEXT} ${this.path}, so the command was not run`;
    const lines = stderr.split('\n');
    const at = lines.indexOf(ours);
    if (at < 0) return undefined;
    // The shell's own line before ours says why: "warden-cgroup: 1: cannot create .../cgroup.procs: Permission denied".
    const why = lines
      .slice(0, at)
      .filter((l) => l.startsWith(`${WRAPPER_NAME}:`))
      .map((l) => l.replace(/^warden-cgroup:( line)? \d+: /, '').split(`${this.path}/`).join(''))
      .pop();
    return `The command was not run: it could not be placed in its memory cgroup ${this.path}${why ? ` (${why})` : ''}.`;
  }

  /** OOM kills counted in this cgroup (and below it), or null when the kernel does not count them. */
  readOomKills(): number | null {
    if (this.version === 2) return flatKeyed(readText(join(this.path, 'memory.events')), 'oom_kill');
    // v1 counts an OOM kill only in the victim's own cgroup: add up the ones below.
    const count = (dir: string): number | null => {
      const own = flatKeyed(readText(join(dir, 'memory.oom_control')), 'oom_kill');
      if (own === null) return null;
      return childCgroups(dir).reduce((sum, child) => sum + (count(child) ?? 0), own);
    };
    return count(this.path);
  }

  /** Memory charged to the cgroup now, in bytes. */
  readCurrentBytes(): number | undefined {
    return number(readText(join(this.path, this.version === 2 ? 'memory.current' : 'memory.usage_in_bytes')));
  }

  /** The highest memory use of the cgroup so far, in bytes (page cache included, as the limit counts it). */
  readPeakBytes(): number | undefined {
    const peak = number(readText(join(this.path, this.version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes')));
    if (peak !== undefined) return peak;
    this.sample();
    return this.sampledPeak > 0 ? this.sampledPeak : undefined;
  }

  /** Takes one memory.current sample for the peak (v2 without memory.peak); the handle also does this every 100 ms. */
  sample(): void {
    const now = this.readCurrentBytes();
    if (now !== undefined && now > this.sampledPeak) this.sampledPeak = now;
  }

  /** Every pid in the cgroup and in cgroups a process made below it. */
  pids(): number[] {
    return pidsUnder(this.path);
  }

  /**
   * The `oom` object of the result, from the counter read before the command
   * started and read now. A kill-like exit (SIGKILL, or 137 from a shell) with
   * no rise yet is re-read for up to 100 ms: the kernel counts the kill right
   * after it sends SIGKILL.
   */
  async observeOom(killsBefore: number | null, exit?: ExitSeen): Promise<OomReport> {
    let after = this.readOomKills();
    const killLike = exit !== undefined && (exit.signal === 'SIGKILL' || exit.exitCode === 137);
    const end = performance.now() + 100;
    while (killLike && !risen(killsBefore, after) && performance.now() < end) {
      await sleep(10);
      after = this.readOomKills();
    }
    return oomReport({ killsBefore, killsAfter: after, peakBytes: this.readPeakBytes(), limitBytes: this.limitBytes });
  }

  /**
   * SIGKILL to everything in the cgroup (and below it) until it is empty or
   * the budget runs out. cgroup v2 uses cgroup.kill when the kernel has it
   * (5.14+), else freezes the cgroup while it kills so nothing forks in between.
   * Never throws.
   */
  async killAll(options: { budgetMs?: number; spare?: number[]; onFound?: (pid: number) => void } = {}): Promise<KillReport> {
    const t0 = performance.now();
    const end = t0 + (options.budgetMs ?? 2_000);
    const killed = new Set<number>();
    // Never this process, should it ever be found in a run's cgroup.
    const spare = new Set([...(options.spare ?? []), process.pid]);
    // cgroup.kill ends everything in it: not when one process (a session's interpreter, or this one) must stay.
    const useKillFile = this.version === 2 && (options.spare ?? []).length === 0 && !this.pids().includes(process.pid) && existsSync(join(this.path, 'cgroup.kill'));
    const freeze = this.version === 2 && !useKillFile && existsSync(join(this.path, 'cgroup.freeze'));
    const alive = () => this.pids().filter((pid) => !spare.has(pid));
    let pids = alive();
    while (pids.length > 0) {
      // Each one newly found, before its kill (the report names it from /proc while it is still there).
      for (const pid of pids) if (!killed.has(pid)) options.onFound?.(pid);
      if (useKillFile) {
        for (const pid of pids) killed.add(pid);
        tryWrite(join(this.path, 'cgroup.kill'), '1');
      } else {
        if (freeze) tryWrite(join(this.path, 'cgroup.freeze'), '1');
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
            killed.add(pid);
          } catch {
            // gone already
          }
        }
        // A frozen process still dies of SIGKILL once thawed.
        if (freeze) tryWrite(join(this.path, 'cgroup.freeze'), '0');
      }
      if (performance.now() >= end) break;
      await sleep(10);
      pids = alive();
    }
    return { killed: [...killed], survivors: alive(), elapsedMs: performance.now() - t0 };
  }

  /**
   * Removes the cgroup and any below it once its processes are gone, retrying
   * for `retryMs` (default 1 s). Stops the peak sampler. Never throws: false
   * when it is still there (removeStaleCgroups() takes it later).
   */
  async remove(options: { retryMs?: number } = {}): Promise<boolean> {
    clearInterval(this.sampler);
    this.sampler = undefined;
    return removeWithRetry(this.path, options.retryMs ?? 1_000);
  }
}

/** The result's `oom`: confirmed when the counter rose; the peak and limit as known. */
export function oomReport(o: { killsBefore: number | null; killsAfter: number | null; peakBytes?: number; limitBytes?: number }): OomReport {
  return {
    confirmed: risen(o.killsBefore, o.killsAfter),
    ...(o.peakBytes !== undefined ? { peakBytes: o.peakBytes } : {}),
    ...(o.limitBytes !== undefined ? { limitBytes: o.limitBytes } : {}),
  };
}

function risen(before: number | null, after: number | null): boolean {
  return before !== null && after !== null && after > before;
}

/** A value from a flat-keyed cgroup file ("oom_kill 3" in memory.events or memory.oom_control). */
export function flatKeyed(text: string | undefined, key: string): number | null {
  if (text === undefined) return null;
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k === key) return number(v) ?? null;
  }
  return null;
}

function number(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(n) ? n : undefined;
}

function tryWrite(path: string, value: string): boolean {
  try {
    writeFileSync(path, value);
    return true;
  } catch {
    // the cgroup is gone or the kernel refused: the next pass looks again
    return false;
  }
}
